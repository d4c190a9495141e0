"""Planned dependency solving (app/solver.py): a planned route answers exactly what FastAPI's own
solver answers, dependency calls, caching, cleanup and errors included; what a plan cannot do
keeps FastAPI's handler; the app's hot write routes are planned."""

from collections.abc import AsyncIterator
from typing import Annotated, Any

import httpx
import pytest
from fastapi import Depends, FastAPI, Header, HTTPException, Path, Query, Request
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from pydantic import BaseModel

from app.routes import ApiRouter, flat_routes
from app.solver import PlannedRoute

Log = list[str]


def build(route_class: type[APIRoute], log: Log) -> FastAPI:
    """One app of test routes served by ``route_class`` (router dependency, nested and
    cached dependencies, a generator dependency, headers, path parameters)."""

    async def caller(request: Request) -> str:
        log.append("caller")
        who = request.headers.get("x-user")
        if who == "forbidden":
            raise HTTPException(403, "no")
        return who or "anonymous"

    async def resource(request: Request) -> AsyncIterator[str]:
        log.append("open")
        try:
            yield "resource"
        finally:
            log.append("close")

    async def counted(who: Annotated[str, Depends(caller)]) -> str:
        log.append("counted")
        return who

    async def uncached(who: Annotated[str, Depends(caller, use_cache=False)]) -> str:
        return who

    async def limit(who: Annotated[str, Depends(caller)]) -> None:
        log.append(f"limit {who}")

    router = ApiRouter(prefix="/r", route_class=route_class)

    @router.put("/{item_id}")
    async def put_item(
        item_id: Annotated[str, Path()],
        who: Annotated[str, Depends(counted)],
        again: Annotated[str, Depends(caller)],
        fresh: Annotated[str, Depends(uncached)],
        held: Annotated[str, Depends(resource)],
        request: Request,
        if_match: Annotated[list[str] | None, Header(alias="If-Match")] = None,
        key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
    ) -> Response:
        log.append("endpoint")
        if item_id == "boom":
            raise HTTPException(409, "conflict", headers={"X-Why": "boom"})
        body = {
            "id": item_id,
            "who": [who, again, fresh],
            "held": held,
            "if_match": if_match,
            "key": key,
            "path": request.url.path,
        }
        return JSONResponse(body, headers={"X-Seen": str(len(log))})

    @router.get("/query")
    async def with_query(q: Annotated[int, Query()] = 1) -> Response:
        return JSONResponse({"q": q})

    class Item(BaseModel):
        name: str

    @router.post("/body")
    async def with_body(item: Item) -> Response:
        return JSONResponse({"name": item.name})

    app = FastAPI()
    app.include_router(router, dependencies=[Depends(limit)])
    app.state.caller = caller
    return app


REQUESTS: list[tuple[str, str, dict[str, Any]]] = [
    ("PUT", "/r/one", {}),
    ("PUT", "/r/two", {"headers": {"x-user": "ann", "If-Match": '"3"'}}),
    ("PUT", "/r/three", {"headers": [("If-Match", '"1"'), ("if-match", '"2", "4"')]}),
    ("PUT", "/r/four", {"headers": {"Idempotency-Key": "k-1", "x-user": "bob"}}),
    ("PUT", "/r/boom", {"headers": {"x-user": "cy"}}),
    ("PUT", "/r/five", {"headers": {"x-user": "forbidden"}}),
    ("GET", "/r/query", {"params": {"q": "7"}}),
    ("GET", "/r/query", {"params": {"q": "x"}}),
    ("POST", "/r/body", {"json": {"name": "n"}}),
    ("POST", "/r/body", {"json": {"nom": "n"}}),
]


async def _answers(app: FastAPI, log: Log) -> list[tuple[Any, ...]]:
    transport = httpx.ASGITransport(app=app)
    out = []
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        for method, path, kwargs in REQUESTS:
            log.clear()
            response = await client.request(method, path, **kwargs)
            headers = {k: v for k, v in response.headers.items() if k != "content-length"}
            out.append((method, path, response.status_code, headers, response.text, list(log)))
    return out


async def test_planned_routes_answer_what_fastapi_answers() -> None:
    planned_log: Log = []
    fastapi_log: Log = []
    planned = build(PlannedRoute, planned_log)
    reference = build(APIRoute, fastapi_log)
    got = await _answers(planned, planned_log)
    expected = await _answers(reference, fastapi_log)
    assert got == expected
    first = got[1]
    assert first[2] == 200
    assert first[5] == [
        "caller",
        "limit ann",
        "counted",
        "caller",  # use_cache=False: called again, as FastAPI does
        "open",
        "endpoint",
        "close",  # the generator's cleanup runs after the answer
    ]
    assert [answer[2] for answer in got] == [200, 200, 200, 200, 409, 403, 200, 422, 200, 422]


def _planned(app: FastAPI) -> dict[tuple[str, str], bool]:
    return {
        (method, route.path): getattr(getattr(route, "original_route", route), "planned", False)
        for route in flat_routes(app.router.routes)
        if isinstance(getattr(route, "original_route", route), APIRoute)
        for method in route.methods
    }


def test_only_what_a_plan_can_do_is_planned() -> None:
    planned = _planned(build(PlannedRoute, []))
    assert planned == {
        ("PUT", "/r/{item_id}"): True,
        ("GET", "/r/query"): False,  # a query parameter: pydantic validates it
        ("HEAD", "/r/query"): False,
        ("POST", "/r/body"): False,  # a body model
    }


async def test_overrides_get_fastapi_semantics() -> None:
    log: Log = []
    app = build(PlannedRoute, log)

    async def stand_in() -> str:
        return "stand-in"

    app.dependency_overrides[app.state.caller] = stand_in
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.put("/r/x", headers={"x-user": "forbidden"})
    assert response.status_code == 200, response.text
    assert response.json()["who"] == ["stand-in"] * 3


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/threads"),
        ("PUT", "/api/threads/{thread_id:thread_id}"),
        ("GET", "/api/threads/{thread_id:thread_id}"),
        ("PATCH", "/api/threads/{thread_id:thread_id}"),
        ("POST", "/api/threads/{thread_id:thread_id}/messages"),
    ],
)
def test_the_hot_routes_are_planned(app: FastAPI, method: str, path: str) -> None:
    assert _planned(app)[(method, path)] is True
