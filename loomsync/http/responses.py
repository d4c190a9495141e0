"""Reading a 2xx body as API.md section 6 says it is shaped, trusting nothing the server sent.

A broken or hostile server may answer 200 with anything. Two outcomes, never a ``KeyError`` or
a pydantic ``ValidationError``:

- the body as a whole is unusable (not JSON, not an object, a required key missing or of the
  wrong type, a thread document that does not validate): :class:`InvalidResponseError`, with the
  request and status, and what is wrong in one line;
- one entry of a list or search page is unusable (not an object, an id that is not a thread id
  such as ``../../etc``, a field of the wrong type): that entry is left out as a
  :class:`SkippedEntry` naming it, and the rest of the page is used.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from loomsync.core.document import codec
from loomsync.core.document.ids import InvalidThreadId, ThreadId
from loomsync.core.document.model import Thread

if TYPE_CHECKING:  # annotations only: importing httpx costs ~0.1 s of the CLI's start-up
    import httpx
from loomsync.errors import InvalidResponseError
from loomsync.store.summary import SearchHit, ThreadSummary
from loomsync.terminal import clip

log = logging.getLogger(__name__)
_MAX_SHOWN = 80  # characters of a bad id named in a message
Row = TypeVar("Row", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class SkippedEntry:
    """An entry of a server page the client left out.

    Attributes:
        id: the entry's ``id`` as the server sent it (``repr`` of a non-string, cut to 80
            characters), or None when it had none.
        reason: why it was left out, one line.
    """

    id: str | None
    reason: str

    def __str__(self) -> str:
        """``skipped entry '../../etc' from the server: not a thread id`` (raw: print it through
        :func:`loomsync.terminal.printable`)."""
        name = f"entry {self.id!r}" if self.id is not None else "an entry"
        return f"skipped {name} from the server: {self.reason}"


def invalid(response: httpx.Response, what: str) -> InvalidResponseError:
    """The error for a 2xx ``response`` whose body is unusable (``what``: one line)."""
    request = response.request
    return InvalidResponseError(
        f"{request.method} {request.url.path}: the server's answer is not valid: {what}",
        method=request.method,
        url=str(request.url),
        status=response.status_code,
        detail=what,
        request_id=response.headers.get("x-request-id"),
    )


def json_object(response: httpx.Response, **keys: type | tuple[type, ...]) -> dict[str, Any]:
    """The body as a JSON object holding each of ``keys`` with a value of its type(s).

    Raises:
        InvalidResponseError: not JSON, not an object, or a key missing or mistyped.
    """
    try:
        body = codec.loads(response.content)
    except (ValueError, RecursionError):
        raise invalid(response, "not JSON") from None
    if not isinstance(body, dict):
        raise invalid(response, f"expected a JSON object, got {type(body).__name__}")
    for key, kind in keys.items():
        if key not in body:
            raise invalid(response, f"no {key!r}")
        value = body[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _tuple(kind)):
            raise invalid(response, f"{key!r} is {type(value).__name__}")
    return body


def next_cursor(response: httpx.Response, body: dict[str, Any]) -> str | None:
    """A page's ``next_cursor``: a string, or None (null or absent: the last page).

    Raises:
        InvalidResponseError: any other type.
    """
    cursor = body.get("next_cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise invalid(response, f"'next_cursor' is {type(cursor).__name__}")
    return cursor


def _tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def thread(response: httpx.Response) -> Thread:
    """The body as a thread document (API.md section 2).

    Raises:
        InvalidResponseError: it does not parse or validate (the first problem, one line).
    """
    try:
        return codec.decode_thread(response.content)
    except ValueError as exc:
        raise invalid(response, str(exc)) from None


def _shown(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    return clip(text, _MAX_SHOWN)


def _first_error(exc: ValidationError) -> str:
    first = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "entry"
    return f"{where}: {first['msg']}"


def rows(
    items: list[Any], model: type[Row], summary_of: Callable[[Row], ThreadSummary]
) -> tuple[list[Row], list[SkippedEntry]]:
    """Validate each item of a page as ``model``; ``summary_of(row)`` is its thread summary,
    whose ``id`` must be a thread id (``T-<uuid>``, :class:`loomsync.core.document.ids.ThreadId`).

    Returns the usable rows in order, and a :class:`SkippedEntry` for each other item (each
    also logged as a warning, for callers that drop the list).
    """
    good: list[Row] = []
    skipped: list[SkippedEntry] = []
    for item in items:
        try:
            row = model.model_validate(item)
            ThreadId.parse(summary_of(row).id)
        except ValidationError as exc:
            skipped.append(SkippedEntry(_name(item), _first_error(exc)))
            continue
        except InvalidThreadId:
            skipped.append(SkippedEntry(_name(item), "not a thread id"))
            continue
        good.append(row)
    for entry in skipped:
        log.warning("%s", entry)
    return good, skipped


def _name(item: object) -> str | None:
    """How a skipped entry is named: its id, shown printable and clipped; None without one."""
    raw_id = _raw_id(item)
    return None if raw_id is None else _shown(raw_id)


def _raw_id(item: object) -> object:
    if not isinstance(item, dict):
        return None
    inner = item.get("thread")
    return inner.get("id") if isinstance(inner, dict) else item.get("id")


def summaries(items: list[Any]) -> tuple[list[ThreadSummary], list[SkippedEntry]]:
    """A list page's ``threads``: see :func:`rows`."""
    return rows(items, ThreadSummary, lambda row: row)


def hits(items: list[Any]) -> tuple[list[SearchHit], list[SkippedEntry]]:
    """A search page's ``hits``: see :func:`rows`."""
    return rows(items, SearchHit, lambda hit: hit.thread)


__all__ = [
    "SkippedEntry",
    "hits",
    "invalid",
    "json_object",
    "next_cursor",
    "rows",
    "summaries",
    "thread",
]
