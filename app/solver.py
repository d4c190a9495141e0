"""Routes whose dependencies are solved by a plan made once, when the route is built, instead of
by FastAPI's generic solver on every request (issue 18 item 1).

FastAPI's ``solve_dependencies`` walks a route's dependency tree on each request: for each
dependency it classifies the callable, computes a cache key from its OAuth scopes, runs the
parameter extraction of every kind (path, query, header, cookie) through pydantic, and builds a
dict of results. On an append (eight dependencies) that was a quarter of the app's Python time
under cProfile, about nine times what the dependencies' own code cost. Planned (and with the
threads router matched first, app/main.py), an append runs 18% fewer instructions and a PUT 6%
fewer (bench/RESULTS.md, "Write path, planned dependencies").
:class:`PlannedRoute` does the classifying once, when the route is built, into a
:class:`Plan`, and solves a request with it: the same callables, called in the same order with
the same arguments, cached per request the same way (one call per callable and scope unless
``use_cache=False``), generator dependencies entered with FastAPI's own helper into the same
exit stacks. Errors raised by a dependency or the endpoint propagate as they do through FastAPI
(its exception handlers answer them).

Only what needs no validation is planned: the ``Request``, path parameters typed ``str`` with
no constraints, header parameters with an explicit ``alias`` typed ``str | None`` or
``list[str] | None`` (default None), and ``async def`` dependencies (plain or generator) made of
the same. The endpoint must be ``async def`` and annotated to return a ``Response``, so there is
no response model to apply. Any other route (a query parameter, a body model, a sync
dependency, security scopes …) gets FastAPI's own handler, as does every request while
``app.dependency_overrides`` is set (tests overriding a dependency get FastAPI's semantics).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Coroutine
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from fastapi import params
from fastapi.dependencies.models import Dependant
from fastapi.dependencies.utils import get_typed_return_annotation
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

try:  # FastAPI's own entry of generator dependencies (shielded cleanup), as its solver uses
    from fastapi.dependencies.utils import _solve_generator
except ImportError:  # pragma: no cover - another FastAPI: every route keeps FastAPI's handler
    _solve_generator = None  # type: ignore[assignment]

try:  # FastAPI >= 0.160: an included route is built again for its inclusion (its prefix, deps)
    from fastapi.routing import _effective_route_context_var
except ImportError:  # pragma: no cover - older FastAPI builds included routes afresh
    _effective_route_context_var = None  # type: ignore[assignment]

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class NotPlannable(Exception):
    """The route uses something :class:`Plan` does not do; FastAPI's handler serves it."""


@dataclass(frozen=True, slots=True)
class Header:
    """A header parameter: the endpoint argument ``name``, the header ``alias``, and whether
    every line is wanted (``list[str] | None``: ``getlist``, None when absent) or the first."""

    name: str
    alias: str
    many: bool


@dataclass(frozen=True, slots=True)
class Step:
    """One dependency: its ``plan`` (its own parameters), the ``dependant`` FastAPI built, and
    ``key``, its per-request cache key (the callable and its scope, as FastAPI keys it when no
    OAuth scopes are involved)."""

    dependant: Dependant
    plan: Plan
    key: tuple[Any, str]
    generator: bool


@dataclass(frozen=True, slots=True)
class Plan:
    """What a callable needs, in FastAPI's order: its dependencies (``steps``), then path
    parameters (``(argument, path key)``), headers and the request (argument names)."""

    steps: tuple[Step, ...]
    paths: tuple[tuple[str, str], ...]
    headers: tuple[Header, ...]
    requests: tuple[str, ...]

    async def solve(self, request: Request, cache: dict[tuple[Any, str], Any]) -> dict[str, Any]:
        """The arguments of the callable for ``request``, calling its dependencies (each
        result cached in ``cache``, one dict per request) as FastAPI's ``solve_dependencies``
        would. Raises what a dependency raises."""
        values: dict[str, Any] = {}
        for step in self.steps:
            sub_values = await step.plan.solve(request, cache)
            dependant = step.dependant
            if dependant.use_cache and step.key in cache:
                solved = cache[step.key]
            elif step.generator:
                stack = request.scope[
                    "fastapi_function_astack"
                    if dependant.scope == "function"
                    else "fastapi_inner_astack"
                ]
                assert _solve_generator is not None
                assert isinstance(stack, AsyncExitStack)
                solved = await _solve_generator(
                    request=request, dependant=dependant, stack=stack, sub_values=sub_values
                )
            else:
                assert dependant.call is not None
                solved = await dependant.call(**sub_values)
            if dependant.name is not None:
                values[dependant.name] = solved
            cache.setdefault(step.key, solved)
        if self.paths:
            path_params = request.path_params
            for name, key in self.paths:
                values[name] = path_params[key]
        if self.headers:
            headers = request.headers
            for header in self.headers:
                if header.many:
                    values[header.name] = headers.getlist(header.alias) or None
                else:
                    values[header.name] = headers.get(header.alias)
        for name in self.requests:
            values[name] = request
        return values


def _header(field: Any) -> Header:
    info = field.field_info
    if not isinstance(info, params.Header) or info.validation_alias not in (None, info.alias):
        raise NotPlannable("a header with another validation alias")
    if not info.alias or info.metadata or info.default is not None:
        raise NotPlannable("a header without an explicit alias, constrained or defaulted")
    # ``X | None`` equals ``Optional[X]``: one comparison covers both spellings
    if info.annotation == str | None:
        return Header(field.name, info.alias, many=False)
    if info.annotation == list[str] | None:
        return Header(field.name, info.alias, many=True)
    raise NotPlannable(f"a header typed {info.annotation!r}")


def _path(field: Any) -> tuple[str, str]:
    info = field.field_info
    if not isinstance(info, params.Path) or info.metadata or info.annotation is not str:
        raise NotPlannable("a path parameter that needs validation")
    if info.validation_alias not in (None, field.alias):
        raise NotPlannable("a path parameter with another validation alias")
    return field.name, field.alias


def plan_of(dependant: Dependant) -> Plan:
    """The :class:`Plan` of ``dependant`` (a route's or a dependency's).

    Raises:
        NotPlannable: it needs what a plan does not do (module docstring).
    """
    unsupported = (
        dependant.query_params,
        dependant.cookie_params,
        dependant.body_params,
        dependant.websocket_param_name,
        dependant.response_param_name,
        dependant.background_tasks_param_name,
        dependant.security_scopes_param_name,
        dependant.own_oauth_scopes,
        dependant.parent_oauth_scopes,
    )
    if any(unsupported):
        raise NotPlannable("query, cookie, body, response, background or security parameters")
    steps = []
    for sub in dependant.dependencies:
        call = sub.call
        generator = inspect.isasyncgenfunction(call)
        if not (
            isinstance(call, types.FunctionType)
            and (generator or inspect.iscoroutinefunction(call))
        ):
            raise NotPlannable(f"a dependency that is not an async function: {call!r}")
        if sub.concurrency is not None or (generator and _solve_generator is None):
            raise NotPlannable("a dependency with a concurrency limit, or no generator helper")
        steps.append(Step(sub, plan_of(sub), (call, sub.scope or ""), generator))
    requests = tuple(
        name
        for name in (dependant.request_param_name, dependant.http_connection_param_name)
        if name is not None
    )
    return Plan(
        tuple(steps),
        tuple(_path(field) for field in dependant.path_params),
        tuple(_header(field) for field in dependant.header_params),
        requests,
    )


class PlannedRoute(APIRoute):
    """An ``APIRoute`` whose requests are solved by a :class:`Plan` when the route allows one
    (module docstring), else by FastAPI's handler. :attr:`planned` says which it got (for the
    tests, and for a benchmark to tell)."""

    planned: bool = False

    def get_route_handler(self) -> Handler:
        """The request handler: a planned one, or FastAPI's (``super()``) when the route
        cannot be planned or while dependency overrides are set."""
        fastapi_handler = super().get_route_handler()
        route: Any = self
        context = _effective_route_context_var.get() if _effective_route_context_var else None
        if context is not None and context.original_route is self:
            route = context
        try:
            endpoint_plan = _endpoint_plan(route)
        except NotPlannable:
            return fastapi_handler
        self.planned = True
        overrides = route.dependency_overrides_provider
        call = route.dependant.call

        async def handler(request: Request) -> Response:
            if overrides is not None and getattr(overrides, "dependency_overrides", None):
                return await fastapi_handler(request)
            values = await endpoint_plan.solve(request, {})
            response = await call(**values)
            assert isinstance(response, Response), "a planned endpoint returns a Response"
            return response

        return handler


def _endpoint_plan(route: Any) -> Plan:
    """The plan of ``route``'s endpoint and its dependencies.

    Raises:
        NotPlannable: the endpoint is not ``async def ... -> Response``, or it has a body
            field, or :func:`plan_of` refuses its dependant.
    """
    call = route.dependant.call
    if route.body_field is not None or not inspect.iscoroutinefunction(call):
        raise NotPlannable("a body model, or an endpoint that is not async")
    try:
        returns = get_typed_return_annotation(call)
    except Exception as exc:  # an annotation that does not resolve: leave it to FastAPI
        raise NotPlannable(f"an unresolved return annotation: {exc}") from None
    if not (isinstance(returns, type) and issubclass(returns, Response)):
        raise NotPlannable("an endpoint that may return something other than a Response")
    return plan_of(route.dependant)
