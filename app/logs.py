"""One logging configuration at start-up: console lines or one JSON object a line.

Every record logged while a request is being served carries that request's id: the request-id
middleware sets :data:`request_id_var` for the request's task, and :class:`RequestIdFilter`
copies it onto each record (``-`` outside requests).

Logged values are client input (a path may hold ``%0a``, ``%1b``, ``%00``), so both formatters
escape control characters in every value they write (:func:`escape_controls`): one record is
one line, a forged second line or a terminal escape sequence never reaches the log. Doing it
in the formatters means no log call can forget.

A request's path is logged as the client sent it, still percent-encoded
(:func:`logged_target`): decoded, ``%20`` would be a space and the path could imitate the
fields after it (``GET /x%0a200%20OK`` once logged as ``GET /x\x0a200 OK 404 …``).
"""

from __future__ import annotations

import copy
import json
import logging
import re
import textwrap
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, unquote_to_bytes

from starlette.types import Scope

from app.config import Settings

#: The id of the request being served by the current task (None outside requests).
request_id_var: ContextVar[str | None] = ContextVar("loomsync_request_id", default=None)

#: ``extra=`` keys that the JSON formatter writes out as fields of their own.
EXTRA_FIELDS = ("method", "path", "route", "status", "duration_ms", "client")

#: Loggers that uvicorn configures with handlers of its own; they are sent to the root handler.
UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access")


#: Characters never written raw: C0 controls but newline (apart, for tracebacks), DEL, C1
#: controls, the Unicode line and paragraph separators, and the bidirectional controls (ALM,
#: LRM, RLM, embeddings and overrides, isolates) that make a terminal or viewer show text in
#: another order than it was written.
_CONTROLS = "\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\n{_CONTROLS}]")
_CONTROL_BUT_NEWLINE = re.compile(f"[{_CONTROLS}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with each control character written as a visible escape: ``\\x0a``, ``\\x1b``,
    ``\\x9b``, ``\\u2028``, ``\\u202e`` (the characters are listed in :data:`_CONTROLS`).

    ``keep_newlines`` leaves ``\\n`` as it is, for tracebacks. Text without controls is returned
    as it is (one regular-expression scan).
    """
    pattern = _CONTROL_BUT_NEWLINE if keep_newlines else _CONTROL
    return pattern.sub(_escape, text) if pattern.search(text) else text


#: Bytes of a request target written as they are: printable ASCII but space, ``"`` and ``\\``
#: (``%`` too, so that what the client encoded stays as it encoded it).
_TARGET_SAFE = bytes(c for c in range(0x21, 0x7F) if c not in b'"\\').decode()


#: Routes whose next segment is a share link's secret (app/sharing: the JSON route and the
#: viewer's page and fragments): the secret opens a thread, so it is never logged. Matched on
#: the decoded path, the one the router matches (:func:`masked_target`).
_SECRET_SEGMENT = re.compile(rb"^(/s/|/api/shared/)[^/]*")
#: One unit of a raw path that decodes to one byte: a ``%XX`` escape or any other byte.
_ENCODED_BYTE = re.compile(rb"%[0-9A-Fa-f]{2}|.", re.S)


def masked_target(raw: bytes) -> bytes:
    """``raw`` (a request path as sent, percent-encoded) with a share link's secret replaced
    by ``{secret}``, however the client encoded it.

    The router matches the percent-decoded path (uvicorn decodes it for ``scope["path"]``), so
    ``/%73/<secret>`` and ``/s/%41<rest>`` serve a share link as ``/s/<secret>`` does; the
    secret route is looked for in the decoded path, and everything up to the end of its secret
    segment is written as the route's decoded prefix and ``{secret}``. The rest of the path
    (``/messages``, ``/m/3/body``) is kept as sent.
    """
    decoded = unquote_to_bytes(raw)
    found = _SECRET_SEGMENT.match(decoded)
    if found is None:
        return raw
    end = position = 0
    for unit in _ENCODED_BYTE.finditer(raw):  # each unit is one byte of ``decoded``
        if end == found.end():
            break
        end, position = end + 1, unit.end()
    return found.group(1) + b"{secret}" + raw[position:]


def logged_target(scope: Scope) -> str:
    """The path of an ASGI HTTP ``scope`` as logged: the raw path the client sent
    (``scope["raw_path"]``, still percent-encoded; the decoded ``path`` UTF-8 encoded when a
    server gives no raw path), with every byte outside printable ASCII, and space, ``"`` and
    ``\\``, percent-encoded (``%0A``, ``%20``, ``%22``). The result never holds a space, a quote
    or a control character, so it cannot pass for the fields logged after it.

    A share link's secret is written ``{secret}`` (``/s/{secret}``, ``/api/shared/{secret}``),
    whatever encoding the path used (:func:`masked_target`): only its hash is kept anywhere
    (issue 13), logs included.
    """
    raw = scope.get("raw_path")
    if not isinstance(raw, bytes) or not raw:
        raw = str(scope.get("path", "")).encode("utf-8", "surrogateescape")
    return quote(masked_target(raw), safe=_TARGET_SAFE)


def _escaped_value(value: Any) -> Any:
    return escape_controls(value) if isinstance(value, str) else value


def _traceback_text(formatter: logging.Formatter, record: logging.LogRecord) -> str:
    """The record's exception and stack text, escaped (its own newlines kept), or ``""``."""
    parts = []
    if record.exc_info:
        parts.append(formatter.formatException(record.exc_info))
    elif record.exc_text:
        parts.append(record.exc_text)
    if record.stack_info:
        parts.append(formatter.formatStack(record.stack_info))
    return escape_controls("\n".join(parts), keep_newlines=True)


class RequestIdFilter(logging.Filter):
    """Sets ``record.request_id`` from :data:`request_id_var` (keeps one set explicitly)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Annotate the record; never drops it."""
        if getattr(record, "request_id", None) is None:
            record.request_id = request_id_var.get() or "-"
        return True


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "message", "request_id", ...extras, "exc"?}``, UTC times.

    Every string value is escaped (:func:`escape_controls`); ``exc`` (the traceback and stack,
    if any) keeps its newlines, which JSON writes as ``\\n``: a record is always one line.
    """

    def format(self, record: logging.LogRecord) -> str:
        """Render one record as a JSON line."""
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat().replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": escape_controls(record.name),
            "message": escape_controls(record.getMessage().rstrip("\n")),
            "request_id": _escaped_value(
                getattr(record, "request_id", None) or request_id_var.get() or "-"
            ),
        }
        for key in EXTRA_FIELDS:
            value = getattr(record, key, None)
            if value is not None:
                entry[key] = _escaped_value(value)
        traceback = _traceback_text(self, record)
        if traceback:
            entry["exc"] = traceback
        return json.dumps(entry, ensure_ascii=True, default=lambda v: escape_controls(str(v)))


CONSOLE_FORMAT = "%(asctime)s %(levelname)-7s [%(request_id)s] %(name)s: %(message)s"
#: What starts each line of a traceback under a console record: only a record's first line
#: begins at the margin, so a line a client forged inside an exception's message cannot pass
#: for a record of its own (nor be split off as one by a log shipper).
TRACEBACK_INDENT = "    "


class ConsoleFormatter(logging.Formatter):
    """:data:`CONSOLE_FORMAT` lines, every value of the record escaped (:func:`escape_controls`),
    so that a record is one line; a traceback follows on lines indented by
    :data:`TRACEBACK_INDENT`."""

    def __init__(self, fmt: str = CONSOLE_FORMAT) -> None:
        super().__init__(fmt)
        #: The record attributes ``fmt`` writes (``message`` and ``asctime`` are made here).
        self.fields = frozenset(re.findall(r"%\((\w+)\)", fmt)) - {"message", "asctime"}

    def format(self, record: logging.LogRecord) -> str:
        """Render one record: its line, then its traceback and stack, if any."""
        safe = copy.copy(record)
        for key in self.fields:
            value = getattr(record, key, None)
            if isinstance(value, str):
                setattr(safe, key, escape_controls(value))
        safe.msg, safe.args = escape_controls(record.getMessage().rstrip("\n")), None
        safe.exc_info = safe.exc_text = safe.stack_info = None
        line = super().format(safe)
        traceback = _traceback_text(self, record)
        if not traceback:
            return line
        return line + "\n" + textwrap.indent(traceback, TRACEBACK_INDENT, lambda _: True)


def configure_logging(settings: Settings) -> None:
    """Configure the root logger from ``LOOMSYNC_LOG_LEVEL`` and ``LOOMSYNC_LOG_FORMAT``.

    uvicorn's own loggers are routed to the same handler, so that with ``json`` every line the
    process writes is one JSON object; its access lines are left out (``app.access`` writes one
    per request, with more in it).
    """
    handler = logging.StreamHandler()
    handler.addFilter(RequestIdFilter())
    if settings.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(ConsoleFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level.upper())
    for name in UVICORN_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
        logger.setLevel(logging.NOTSET)
    # app.access logs each request with its route, status, duration and request id
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
    logging.getLogger("pgserver").setLevel(logging.WARNING)
