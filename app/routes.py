"""How requests find routes: the router every module uses (:class:`ApiRouter`: HEAD wherever
GET), trailing-slash redirects that never read ``Host``, and the app's routes as one flat
list, whatever way FastAPI nests included routers.

The flat list is used where a request must be matched outside the router: a 405's ``Allow``
header, and the route template of an answer given before routing (for metrics).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote, quote_from_bytes

from fastapi import APIRouter
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import Receive, Scope, Send


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


class ApiRouter(APIRouter):
    """An ``APIRouter`` whose GET routes also answer HEAD (RFC 9110 section 9.3.2: HEAD is GET
    without the content; its headers, ``ETag`` and ``Content-Length`` included, are GET's).

    FastAPI's routes, unlike Starlette's, serve only the methods they name, so every
    ``@router.get`` answered HEAD with 405. Here each GET route gets a HEAD twin with the same
    endpoint, dependencies and responses, left out of the OpenAPI document (HEAD is implied by
    GET there); uvicorn sends the twin's headers and drops its body. A 405's ``Allow`` lists
    HEAD wherever GET is (:func:`allowed_methods` reads the twins). Every router of the app is
    one of these; FastAPI solves its routes' dependencies.
    """

    def add_api_route(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        """Add the route, and its HEAD twin when it serves GET (FastAPI's default method)."""
        super().add_api_route(path, endpoint, **kwargs)
        methods = {method.upper() for method in kwargs.get("methods") or ("GET",)}
        if "GET" in methods and "HEAD" not in methods:
            twin = {**kwargs, "methods": ["HEAD"], "include_in_schema": False}
            twin.pop("operation_id", None)
            super().add_api_route(path, endpoint, **twin)


#: What a path keeps unescaped in a ``Location`` (RFC 3986 ``pchar`` and ``/``); the rest,
#: ``%`` included, is percent-encoded.
_PATH_SAFE = "/!$&'()*+,;=:@-._~"
#: The same for a query string, which arrives encoded already: its ``%`` escapes are kept.
_QUERY_SAFE = _PATH_SAFE + "?%"


def slash_twin_location(routes: list[Any], scope: Scope) -> str | None:
    """The relative ``Location`` (``/api/threads?limit=5``) of the route ``scope`` missed only
    by a trailing slash, or None.

    The path is the request's with its trailing slashes removed, or one added; it is always a
    path-absolute reference (one leading ``/``), never ``//…``, which a browser would read as
    another host (RFC 3986 section 4.2). The query string is kept, percent-encoded.
    """
    path: str = scope["path"]
    twin = path.rstrip("/") if path.endswith("/") else path + "/"
    if not twin.startswith("/") or twin.startswith("//"):
        return None
    twin_scope = {**scope, "path": twin}
    if not any(route.matches(twin_scope)[0] is not Match.NONE for route in routes):
        return None
    location = quote(twin, safe=_PATH_SAFE)
    query: bytes = scope.get("query_string", b"")
    return f"{location}?{quote_from_bytes(query, safe=_QUERY_SAFE)}" if query else location


def redirect_slashes_relatively(router: APIRouter) -> None:
    """Make ``router`` answer a path that differs from a route's only by a trailing slash
    (``/api/threads/``) with ``307`` and a relative ``Location`` (``/api/threads``), same method
    and body (RFC 9110 section 15.4.8).

    Starlette's own redirect (``redirect_slashes``) builds an absolute URL from the request's
    ``Host`` header, so any client could make the server answer
    ``Location: http://<whatever Host said>/…``; this one never reads ``Host``. It runs only
    for requests no route matched, so other requests pay nothing.
    """
    router.redirect_slashes = False
    not_found = router.default

    async def default(scope: Scope, receive: Receive, send: Send) -> None:
        location = slash_twin_location(router.routes, scope) if scope["type"] == "http" else None
        if location is None:
            await not_found(scope, receive, send)
            return
        await Response(status_code=307, headers={"Location": location})(scope, receive, send)

    router.default = default
