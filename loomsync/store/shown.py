"""Thread text the CLI prints and ``loomsync mcp`` returns, redacted first (issue 12 item 1: a
credential is never shown; issue 17 item 3).

A server may hold a thread unredacted (stored under ``LOOMSYNC_SECRET_SCAN=off``, or by an
older client), so ``loomsync list --server``, ``loomsync search`` and their ``--json`` forms
redact each row and hit with the client's configured :class:`~loomsync.store.redaction.Redaction`
before printing, as ``loomsync show`` does for a thread.

A snippet marks matches with ``<b>…</b>`` around HTML-escaped text, so a highlight may split a
token in two runs. Detection therefore runs on the snippet's text with the tags removed and
unescaped; a snippet with a finding is printed as that redacted text, escaped again and
without its highlighting (only snippets that held a credential lose it).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from loomsync.store.redaction import Redaction
from loomsync.store.summary import SearchHit, SearchResults, ThreadSummary

_TAG_RE = re.compile(r"</?b>")


def snippet(redaction: Redaction, text: str) -> str:
    """A ``<b>``-highlighted, HTML-escaped snippet with every credential replaced by its
    marker; the same object when nothing was found (highlighting kept)."""
    plain = html.unescape(_TAG_RE.sub("", text))
    redacted = redaction.text(plain)
    return text if redacted is plain else html.escape(redacted, quote=False)


def summary(redaction: Redaction, row: ThreadSummary) -> ThreadSummary:
    """A listing row with every string redacted (title, tags, workspace, remote URL, extra
    fields); the same object when nothing was found."""
    data = row.model_dump(mode="json")
    new = redaction.value(data)
    return row if new is data else ThreadSummary.model_validate(new)


def summaries(redaction: Redaction, rows: Sequence[ThreadSummary]) -> list[ThreadSummary]:
    """Each row redacted (see :func:`summary`)."""
    return [summary(redaction, row) for row in rows]


def hit(redaction: Redaction, found: SearchHit) -> SearchHit:
    """A search hit with its thread summary, its snippet and any extra field redacted; the
    same object when nothing was found."""
    row = summary(redaction, found.thread)
    text = snippet(redaction, found.snippet) if found.snippet else found.snippet
    extra = found.model_extra or {}
    new_extra = redaction.value(extra) if extra else extra
    if row is found.thread and text is found.snippet and new_extra is extra:
        return found
    return SearchHit.model_validate(
        {**found.model_dump(mode="json"), **new_extra, "thread": row.model_dump(mode="json"),
         "snippet": text}
    )  # fmt: skip


def results(redaction: Redaction, found: SearchResults) -> SearchResults:
    """Search results with every hit redacted (see :func:`hit`)."""
    hits = [hit(redaction, h) for h in found.hits]
    if all(a is b for a, b in zip(hits, found.hits, strict=True)):
        return found
    return found.model_copy(update={"hits": hits})


__all__ = ["hit", "results", "snippet", "summaries", "summary"]
