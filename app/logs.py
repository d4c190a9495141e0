"""One logging configuration at start-up: console lines or one JSON object a line."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from app.config import Settings


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "message", "exc"?}``, timestamps in UTC."""

    def format(self, record: logging.LogRecord) -> str:
        """Render one record as a JSON line."""
        entry = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat().replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=True)


def configure_logging(settings: Settings) -> None:
    """Configure the root logger from ``LOOMSYNC_LOG_LEVEL`` and ``LOOMSYNC_LOG_FORMAT``."""
    handler = logging.StreamHandler()
    if settings.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level.upper())
    logging.getLogger("pgserver").setLevel(logging.WARNING)
