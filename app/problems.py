"""Problem-details models (RFC 9457) for the OpenAPI document, and ``responses=`` helpers."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class FieldError(BaseModel):
    """One validation error: where (``loc``) and what (``msg``); the input is never echoed.
    ``kind``: for a credential refused under ``LOOMSYNC_SECRET_SCAN=reject``, its kind
    (``aws-access-key``, ...; issue 12 item 4), never its value."""

    loc: list[str | int]
    msg: str
    kind: str | None = None


class Problem(BaseModel):
    """RFC 9457 problem details, as every error of this API is rendered (API.md §7)."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    errors: list[FieldError] | None = None


DESCRIPTIONS = {
    400: "Malformed request (JSON, header, id, cursor or query)",
    401: "Missing, invalid or expired bearer token",
    403: "Not allowed to the caller",
    404: "No such thread, or not readable by the caller",
    405: "Method not allowed; Allow lists those that are",
    408: "The request head or body did not arrive in time; the connection is closed",
    409: "Version conflict; the body holds the current thread",
    410: "The thread was deleted",
    413: "Body or message count over the limit",
    422: "Valid JSON that is not a valid document, or one holding credentials the server refuses"
    " (LOOMSYNC_SECRET_SCAN=reject)",
    428: "If-Match is required",
    429: "Too many requests; retry after Retry-After seconds",
    431: "Request head over LOOMSYNC_MAX_HEADER_BYTES; the connection is closed",
    500: "A bug; the body quotes the request id",
    503: "The database is unavailable or the request timed out; retry after Retry-After seconds",
}
RETRY_AFTER = {
    "description": "Seconds to wait before retrying",
    "schema": {"type": "integer", "minimum": 1},
}
#: Statuses whose answers carry a ``Retry-After`` header.
RETRY_STATUSES = frozenset({429, 503})


def problem_response(status: int, model: str = "Problem") -> dict[str, Any]:
    """The OpenAPI response object of one problem status."""
    response: dict[str, Any] = {
        "description": DESCRIPTIONS[status],
        "content": {
            "application/problem+json": {"schema": {"$ref": f"#/components/schemas/{model}"}}
        },
    }
    if status in RETRY_STATUSES:
        response["headers"] = {"Retry-After": {**RETRY_AFTER, "required": True}}
    return response


def problem_responses(
    *statuses: int, models: dict[int, str] | None = None
) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route: each status documented with its problem body (``models``
    names a more specific body schema for some statuses)."""
    models = models or {}
    return {status: problem_response(status, models.get(status, "Problem")) for status in statuses}
