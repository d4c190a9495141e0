"""One logging configuration at start-up: console lines or one JSON object a line.

Every record logged while a request is being served carries that request's id: the request-id
middleware sets :data:`request_id_var` for the request's task, and :class:`RequestIdFilter`
copies it onto each record (``-`` outside requests).
"""

from __future__ import annotations

import json
import logging
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from app.config import Settings

#: The id of the request being served by the current task (None outside requests).
request_id_var: ContextVar[str | None] = ContextVar("loomsync_request_id", default=None)

#: ``extra=`` keys that the JSON formatter writes out as fields of their own.
EXTRA_FIELDS = ("method", "path", "route", "status", "duration_ms", "client")

#: Loggers that uvicorn configures with handlers of its own; they are sent to the root handler.
UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access")


class RequestIdFilter(logging.Filter):
    """Sets ``record.request_id`` from :data:`request_id_var` (keeps one set explicitly)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Annotate the record; never drops it."""
        if getattr(record, "request_id", None) is None:
            record.request_id = request_id_var.get() or "-"
        return True


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "message", "request_id", ...extras, "exc"?}``, UTC times."""

    def format(self, record: logging.LogRecord) -> str:
        """Render one record as a JSON line."""
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat().replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or request_id_var.get() or "-",
        }
        for key in EXTRA_FIELDS:
            value = getattr(record, key, None)
            if value is not None:
                entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=True, default=str)


CONSOLE_FORMAT = "%(asctime)s %(levelname)-7s [%(request_id)s] %(name)s: %(message)s"


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
        handler.setFormatter(logging.Formatter(CONSOLE_FORMAT))
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
