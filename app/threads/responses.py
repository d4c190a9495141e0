"""JSON responses of the thread routes, from ready bytes or JSON-able values."""

from __future__ import annotations

from typing import Any

from fastapi import Response

from app.threads.documents import dump_json


def json_response(
    content: bytes | Any, status_code: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """A JSON response from ready bytes or a JSON-able value (lone surrogates escaped safely)."""
    body = content if isinstance(content, bytes) else dump_json(content).encode()
    return Response(body, status_code=status_code, headers=headers, media_type="application/json")
