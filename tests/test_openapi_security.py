"""The OpenAPI document's security requirements match what each operation really does
(app/openapi.py ``security_of``): /docs shows a lock exactly where a token is required.

Each operation is called without a token, on a fresh id: one declared bearer-only answers 401,
one declared open (no requirement, or an empty alternative) does not.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from loomsync.core.document.ids import ThreadId

BEARER = [{"bearer": []}]


def _concrete(path: str) -> str:
    return (
        path.replace("{thread_id}", str(ThreadId.new()))
        .replace("{link_id}", str(uuid.uuid4()))
        .replace("{secret}", "A" * 43)
    )


async def test_there_is_no_global_security_and_each_operation_declares_its_own(
    client: httpx.AsyncClient,
) -> None:
    document = (await client.get("/openapi.json")).json()
    assert "security" not in document  # a global [{bearer}, {}] made every lock optional
    operations = {
        (method, path): operation
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
    }
    assert all("security" in op for op in operations.values())
    assert operations[("get", "/health")]["security"] == []
    assert operations[("get", "/health/ready")]["security"] == []
    assert operations[("get", "/api/shared/{secret}")]["security"] == []
    assert operations[("get", "/api/threads/{thread_id}")]["security"] == [{"bearer": []}, {}]
    for key in [
        ("get", "/api/threads"),
        ("post", "/api/threads"),
        ("put", "/api/threads/{thread_id}"),
        ("delete", "/api/threads/{thread_id}"),
        ("post", "/api/threads/{thread_id}/share-links"),
        ("get", "/api/audit"),
    ]:
        assert operations[key]["security"] == BEARER, key


async def test_every_declared_requirement_is_what_the_server_enforces(
    client: httpx.AsyncClient,
) -> None:
    document: dict[str, Any] = (await client.get("/openapi.json")).json()
    checked = 0
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            body = {} if method in ("post", "put", "patch") else None
            answer = await client.request(method.upper(), _concrete(path), json=body)
            if operation["security"] == BEARER:
                assert answer.status_code == 401, (method, path, answer.status_code)
            else:
                assert answer.status_code != 401, (method, path, answer.text)
            checked += 1
    assert checked >= 15
