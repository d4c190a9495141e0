"""The one way pages show a time: ``2026-01-02 16:39 UTC`` (``seconds=True``: with seconds,
for a message's own time), always converted to UTC so every time on a page is in one zone.

Used by the thread lists and search hits (app/web/views.py), the thread header
(app/web/render/header.py) and each message (app/web/render/messages.py).
"""

from __future__ import annotations

from datetime import UTC, datetime

from app.web.render.text import clean

#: The most characters of an unparseable time shown as written.
MAX_RAW_CHARS = 40


def page_time(value: datetime | str | None, *, seconds: bool = False) -> str:
    """``value`` (an aware datetime, or RFC 3339 / ISO 8601 text) in UTC as ``YYYY-MM-DD
    HH:MM UTC`` (``HH:MM:SS`` with ``seconds``); a naive time is taken as UTC. None is "";
    text that is not a time is shown as written (hidden controls made visible by
    :func:`app.web.render.text.clean`, at most 40 characters), never an error."""
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            return clean(value)[:MAX_RAW_CHARS]
    else:
        moment = value
    utc = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%d %H:%M:%S UTC" if seconds else "%Y-%m-%d %H:%M UTC")
