"""The app's routes as one flat list, whatever way FastAPI nests included routers.

Used where a request must be matched outside the router: a 405's ``Allow`` header, and the
route template of an answer given before routing (for metrics).
"""

from __future__ import annotations

from typing import Any

from starlette.routing import Match
from starlette.types import Scope


def flat_routes(routes: list[Any]) -> list[Any]:
    """Every route, with its full path: FastAPI ≥ 0.160 keeps included routers nested (and
    offers ``iter_route_contexts`` to flatten them); older versions keep a flat list."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # pragma: no cover - older FastAPI
        return list(routes)
    return list(iter_route_contexts(routes))


def allowed_methods(routes: list[Any], scope: Scope) -> set[str]:
    """The methods some route serves at the path of ``scope``."""
    methods: set[str] = set()
    for route in flat_routes(routes):
        if route.matches(scope)[0] is not Match.NONE:
            methods |= set(getattr(route, "methods", None) or ())
    return methods


def template_of(routes: list[Any], scope: Scope) -> str | None:
    """The path template (``/api/threads/{thread_id}``) of the route for ``scope``, if any."""
    route = scope.get("route")
    if route is None:
        route = next(
            (r for r in flat_routes(routes) if r.matches(scope)[0] is not Match.NONE), None
        )
    path = getattr(route, "path_format", None) or getattr(route, "path", None)
    return path if isinstance(path, str) else None
