"""Errors as RFC 9457 problem details (API.md section 7), rendered by one set of handlers."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.routes import allowed_methods
from loomsync.core.document import jsontext

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"
MAX_LISTED_ERRORS = 20
RETRY_AFTER_SECONDS = 2

_STATUS_CODES = {
    400: ("invalid_request", "Bad request"),
    401: ("unauthorized", "Unauthorized"),
    403: ("forbidden", "Forbidden"),
    404: ("not_found", "Not found"),
    405: ("method_not_allowed", "Method not allowed"),
    406: ("not_acceptable", "Not acceptable"),
    408: ("request_timeout", "Request timeout"),
    409: ("version_conflict", "Version conflict"),
    410: ("gone", "Gone"),
    413: ("payload_too_large", "Payload too large"),
    415: ("unsupported_media_type", "Unsupported media type"),
    422: ("validation_error", "Validation error"),
    428: ("precondition_required", "Precondition required"),
    429: ("rate_limited", "Too many requests"),
    500: ("internal_error", "Internal server error"),
    503: ("unavailable", "Service unavailable"),
}


def problem(
    status: int,
    detail: str,
    *,
    code: str | None = None,
    title: str | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    """Build an ``application/problem+json`` response ``{type, title, status, detail, code, ...}``."""
    default_code, default_title = _STATUS_CODES.get(status, ("error", "Error"))
    code = code or default_code
    body = {
        "type": f"https://loomsync.dev/problems/{code.replace('_', '-')}",
        "title": title or default_title,
        "status": status,
        "detail": detail,
        "code": code,
        **extra,
    }
    return _ProblemResponse(body, status_code=status, headers=headers, media_type=PROBLEM_JSON)


class _ProblemResponse(JSONResponse):
    """JSONResponse that escapes lone surrogates (a 409's ``current`` thread may hold them)."""

    def render(self, content: Any) -> bytes:
        try:  # jsontext: the numbers of a 409's thread are written as they were read
            return jsontext.dumps(content).encode()
        except UnicodeEncodeError:
            return jsontext.dumps(content, ensure_ascii=True).encode()


class AppError(Exception):
    """Base of the server's error tree; each subclass knows its status and problem ``code``."""

    status = 500
    code = "internal_error"
    title = "Internal server error"

    def __init__(self, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = extra

    def headers(self) -> dict[str, str] | None:
        """Extra response headers for this error, if any."""
        return None

    def to_response(self) -> JSONResponse:
        """Render as problem JSON."""
        return problem(
            self.status,
            self.detail,
            code=self.code,
            title=self.title,
            headers=self.headers(),
            **self.extra,
        )


class BadRequest(AppError):
    """400: the request cannot be understood (bad JSON, header or cursor)."""

    status, code, title = 400, "invalid_request", "Bad request"


class Unauthorized(AppError):
    """401: missing claims, bad signature, expired or otherwise invalid bearer token (API.md §3)."""

    status, code, title = 401, "unauthorized", "Unauthorized"

    def __init__(self, detail: str, *, token_sent: bool = True) -> None:
        super().__init__(detail)
        self.token_sent = token_sent

    def headers(self) -> dict[str, str]:
        """RFC 6750 section 3: ``Bearer error="invalid_token"`` for a bad token; a bare
        ``Bearer`` challenge when no token was sent (section 3.1)."""
        if not self.token_sent:
            return {"WWW-Authenticate": 'Bearer realm="loomsync"'}
        return {"WWW-Authenticate": 'Bearer error="invalid_token"'}


class Forbidden(AppError):
    """403: the caller may read the thread but not write it (API.md §4)."""

    status, code, title = 403, "forbidden", "Forbidden"


class NotFound(AppError):
    """404: no such thread, or one the caller may not read (API.md §4)."""

    status, code, title = 404, "not_found", "Not found"


class RequestTimeout(AppError):
    """408: the request body did not arrive in time (``LOOMSYNC_BODY_TIMEOUT``); the
    connection is closed (RFC 9110 section 15.5.9)."""

    status, code, title = 408, "request_timeout", "Request timeout"

    def headers(self) -> dict[str, str]:
        """``Connection: close``: the rest of the body is not awaited."""
        return {"Connection": "close"}


class Conflict(AppError):
    """409: version mismatch; ``extra`` holds ``server_version``, ``client_version``, ``current``."""

    status, code, title = 409, "version_conflict", "Version conflict"


class Gone(AppError):
    """410: the thread was deleted (API.md §5); ``Gone()`` says so in :data:`THREAD_DELETED`."""

    status, code, title = 410, "gone", "Gone"

    def __init__(self, detail: str | None = None, **extra: Any) -> None:
        super().__init__(THREAD_DELETED if detail is None else detail, **extra)


#: The detail of a read (or a replayed answer) of a deleted thread.
THREAD_DELETED = "The thread was deleted."


class UnsupportedMediaType(AppError):
    """415: a request body the server cannot read, such as one with a content coding; says
    ``Accept-Encoding: identity`` (RFC 9110 section 12.5.3)."""

    status, code, title = 415, "unsupported_media_type", "Unsupported media type"

    def headers(self) -> dict[str, str]:
        """``Accept-Encoding: identity``: the codings a request body may have."""
        return {"Accept-Encoding": "identity"}


class PayloadTooLarge(AppError):
    """413: request body or message count over the configured limit (API.md §8)."""

    status, code, title = 413, "payload_too_large", "Payload too large"


class ValidationFailed(AppError):
    """422: the body is JSON but not a valid document; ``errors`` lists at most 20 ``{loc, msg}``."""

    status, code, title = 422, "validation_error", "Validation error"


class PreconditionRequired(AppError):
    """428: append without ``If-Match`` (API.md §6)."""

    status, code, title = 428, "precondition_required", "Precondition required"


class RateLimited(AppError):
    """429: the caller's request budget is spent; retry after ``Retry-After`` seconds."""

    status, code, title = 429, "rate_limited", "Too many requests"

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        """``Retry-After`` in seconds (RFC 6585 section 4)."""
        return {"Retry-After": str(self.retry_after)}


class Unavailable(AppError):
    """503: the database cannot be reached; retry after ``Retry-After`` seconds (API.md §7)."""

    status, code, title = 503, "unavailable", "Service unavailable"

    def headers(self) -> dict[str, str]:
        """``Retry-After`` in seconds (RFC 9110 section 10.2.3)."""
        return {"Retry-After": str(RETRY_AFTER_SECONDS)}


MAX_LOC_CHARS = 64


def short_part(part: str) -> str:
    """A location part as shown in a 422: field names are client input too, so long ones are cut."""
    return part if len(part) <= MAX_LOC_CHARS else part[:MAX_LOC_CHARS] + "…"


def validation_errors(errors: Any) -> list[dict[str, Any]]:
    """Reduce pydantic errors to at most 20 ``{loc, msg}`` items, never echoing input values."""
    out: list[dict[str, Any]] = []
    for err in list(errors)[:MAX_LISTED_ERRORS]:
        loc = [
            part if isinstance(part, int) else short_part(part)
            for part in err.get("loc", ())
            if isinstance(part, (str, int))
        ]
        out.append({"loc": loc, "msg": str(err.get("msg", "invalid value"))})
    return out


#: SQLSTATEs that mean "the database is going away or not there", not "your statement is wrong":
#: class 08 (connection exceptions), admin/crash shutdown, cannot connect now, too many
#: connections, and a statement cancelled (statement_timeout, or a cancel during shutdown).
_OUTAGE_SQLSTATES = frozenset({"57P01", "57P02", "57P03", "53300", "57014"})


def _is_database_outage(exc: DBAPIError) -> bool:
    if isinstance(exc, (OperationalError, InterfaceError)) or exc.connection_invalidated:
        return True
    sqlstate = getattr(exc.orig, "sqlstate", None)
    return isinstance(sqlstate, str) and (
        sqlstate.startswith("08") or sqlstate in _OUTAGE_SQLSTATES
    )


def _allowed_methods(request: Request) -> str:
    """Every method some route serves at this path (a 405's ``Allow``, RFC 9110 §15.5.6).

    Starlette answers 405 from the first route whose path matches, listing only its methods;
    here each HTTP method has a route of its own, so all of them are collected."""
    return ", ".join(sorted(allowed_methods(request.app.router.routes, request.scope)))


def install_handlers(app: FastAPI) -> None:
    """Register the handlers that turn every error into problem JSON."""

    @app.exception_handler(AppError)
    async def _app_error(_: Request, exc: AppError) -> JSONResponse:
        return exc.to_response()

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return problem(400, "The request body is not valid JSON.")
        return problem(
            422, "The request does not match the schema.", errors=validation_errors(errors)
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else "Request failed."
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = _allowed_methods(request)
        return problem(exc.status_code, detail, headers=headers)

    @app.exception_handler(RecursionError)
    async def _too_deep(_: Request, __: RecursionError) -> JSONResponse:
        return problem(400, "The JSON nesting is too deep.")

    @app.exception_handler(DBAPIError)
    async def _database(request: Request, exc: DBAPIError) -> JSONResponse:
        request_id = request.scope.get("state", {}).get("request_id", "-")
        if _is_database_outage(exc):
            log.warning("database unavailable (request %s): %s", request_id, exc.orig)
            return Unavailable("The database is unavailable; retry shortly.").to_response()
        log.error("database error (request %s)", request_id, exc_info=exc)
        return problem(
            500, f"Internal error; quote request id {request_id}.", request_id=request_id
        )

    @app.exception_handler(PoolTimeout)
    async def _pool_exhausted(request: Request, exc: PoolTimeout) -> JSONResponse:
        request_id = request.scope.get("state", {}).get("request_id", "-")
        log.warning("no database connection free in time (request %s): %s", request_id, exc)
        return Unavailable("The server is busy; retry shortly.").to_response()

    @app.exception_handler(OSError)
    async def _unreachable(request: Request, exc: OSError) -> JSONResponse:
        request_id = request.scope.get("state", {}).get("request_id", "-")
        log.warning("database unreachable (request %s): %s", request_id, exc)
        return Unavailable("The database is unavailable; retry shortly.").to_response()
