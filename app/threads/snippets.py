"""Snippets of a search page: the best message's indexed text, highlighted in Python (issue 14).

For each hit of a page the ranking names its best message (``best_seq``; None for a hit on the
title, git metadata or a commit only). Its snippet is cut by
:func:`loomsync.core.textsearch.highlight.snippet` from the very text the index holds
(:func:`loomsync.core.textsearch.fields.message_fields`: content capped head and tail, tool names and
tool-call arguments), normalised and analysed by the same analyzer, so it marks what matched
and never misses a match because of its Unicode spelling (issue 14, "Snippets miss the match"):

1. The first :data:`BODY_PREFIX_CHARS` characters of each best message's JSON text
   (PostgreSQL reads only that slice of a large TOASTed value: about 4 ms for a 14 MB message,
   measured, where decoding ``->>`` parses all of it: 35 ms): read by the search's ranking
   statement itself (:func:`app.threads.search.with_heads`, passed as ``heads``), else by
   :data:`HEADS`. A body that fits is parsed whole and gives exactly the indexed fields; a
   longer one gives its content's head.
2. Only for a long body whose head holds no match, a second statement reads its tool name, tool
   calls and the last :data:`MESSAGE_TAIL_CHARS` characters of its content (the indexed tail),
   each parsed by PostgreSQL (about 100 ms for 14 MB).
3. Content and tool text are both highlighted; the one with more marks wins (content on a
   tie: :func:`loomsync.core.textsearch.highlight.message_snippet`, the local search's rule too).
   A hit with no matching message text gets a snippet of its title when the title matches.
4. A hit still without one (git metadata or a commit matched) reads its git fields and commit
   SHAs (:data:`METADATA`) for :func:`loomsync.core.textsearch.highlight.metadata_snippet`: the
   matching branch / remote / workspace text highlighted, else ``commit <b>0294234</b>…``. Highlighting runs in a worker thread, off the event loop, when the
   page's texts are long (:data:`INLINE_CHARS`).

Everything else runs under :data:`SNIPPET_BUDGET_MS`: each statement under its own
``statement_timeout`` inside a savepoint, the Python work checked against the same deadline.
Past it, the hits not yet done get ``snippet`` null (API.md section 6 allows it; the page never
fails for its snippets); their ``message_index`` is kept.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from loomsync.core.document import jsontext
from loomsync.core.textsearch.fields import (
    MESSAGE_HEAD_CHARS,
    MESSAGE_TAIL_CHARS,
    THREAD_TEXT_CHARS,
    cap,
    message_fields,
    thread_fields,
    tool_text,
)
from loomsync.core.textsearch.highlight import message_snippet, metadata_snippet, snippet
from loomsync.core.textsearch.query import Query

SNIPPET_BUDGET_MS = 500
QUERY_CANCELED = "57014"
#: Characters of a message's JSON text read for its snippet (enough for the indexed head of
#: its content, :data:`MESSAGE_HEAD_CHARS`, and what precedes it in the object).
BODY_PREFIX_CHARS = 130_000
_LEXEME = re.compile(r"(!?)\s*'((?:[^']|'')*)'")
_CONTENT = re.compile(r'"content":"([^"\\]*(?:\\.[^"\\]*)*)')
_CUT_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{0,3})?$|\\u[dD][89abAB][0-9a-fA-F]{2}$")

Page = Sequence[tuple[uuid.UUID, str | None, int | None]]
"""(thread id, title, seq of the best matching message or None) of each hit, in order."""

#: The heads of the best messages; parameters: thread ids, seqs, characters (asyncpg's ``$n``).
HEADS = """
SELECT m.thread_id, m.seq, substr(CAST(m.body AS text), 1, $3) AS head
FROM unnest(CAST($1 AS uuid[]), CAST($2 AS int[])) AS p(thread_id, seq)
JOIN thread_messages m ON m.thread_id = p.thread_id AND m.seq = p.seq
"""
#: Tool text and content tail of the best messages; parameters: ids, seqs, tail characters.
TAILS = """
SELECT m.thread_id, m.seq, m.body->>'tool_name' AS tool_name,
       CAST(m.body->'tool_calls' AS text) AS tool_calls,
       right(m.body->>'content', $3) AS tail
FROM unnest(CAST($1 AS uuid[]), CAST($2 AS int[])) AS p(thread_id, seq)
JOIN thread_messages m ON m.thread_id = p.thread_id AND m.seq = p.seq
"""
#: Git metadata and commit SHAs of hits; parameters: thread ids (asyncpg's ``$n``).
METADATA = """
SELECT t.id, t.git_branch, t.document->>'git_initial_branch' AS git_initial_branch,
       t.git_remote_url, t.workspace_root, t.provider, t.model,
       ARRAY(SELECT c.sha FROM thread_commits c WHERE c.thread_id = t.id ORDER BY c.sha) AS shas
FROM threads t WHERE t.id = ANY(CAST($1 AS uuid[]))
"""
#: Texts of a page up to this many characters in all are highlighted on the event loop (well
#: under a millisecond); longer ones in a worker thread (a 10 MB text costs a few ms).
INLINE_CHARS = 100_000


def lexemes(tsquery_text: str) -> list[str]:
    """The lexemes a tsquery's text form (``'run' & !'x' <-> 'y'``) asks for, negated ones left
    out, in order, without repeats."""
    found: list[str] = []
    for negated, quoted in _LEXEME.findall(tsquery_text):
        lexeme = quoted.replace("''", "'")
        if not negated and lexeme and lexeme not in found:
            found.append(lexeme)
    return found


def tsquery_text(words: Sequence[str], operator: str = "|") -> str:
    """The tsquery text ``'a' | 'b' | …`` (or with ``&``) of ``words`` (lexemes)."""
    quoted = ("'" + w.replace("\\", "\\\\").replace("'", "''") + "'" for w in words)
    return f" {operator} ".join(quoted)


def timed_out(exc: DBAPIError) -> bool:
    """True when ``exc`` is PostgreSQL's ``query_canceled`` (SQLSTATE 57014): the statement ran
    past its ``statement_timeout``."""
    return getattr(exc.orig, "sqlstate", None) == QUERY_CANCELED


def content_head(body_prefix: str) -> str:
    """The start of a message's ``content`` string from the first characters of its JSON text
    (compact, as stored); "" when no string content starts there. An escape cut in half at
    the end (``\\u00``, half of a surrogate pair) is dropped, never decoded wrong."""
    match = _CONTENT.search(body_prefix)
    if match is None:
        return ""
    encoded = match.group(1)
    if match.end() == len(body_prefix):  # the prefix ends inside the string
        encoded = _CUT_ESCAPE.sub("", encoded)
    try:
        decoded: str = json.loads(f'"{encoded}"')
    except ValueError:
        return ""
    return decoded[:MESSAGE_HEAD_CHARS]


class _Sources:
    """What is known of each hit's best message: its indexed texts, and whether more of it
    (tool text, content tail) is still to be read."""

    def __init__(self) -> None:
        self.texts: dict[uuid.UUID, list[str]] = {}
        self.partial: set[uuid.UUID] = set()

    def add_head(self, thread_id: uuid.UUID, head: str) -> None:
        if len(head) < BODY_PREFIX_CHARS:
            try:
                message = jsontext.loads(head)
            except ValueError:
                message = None
            if isinstance(message, dict):
                self.texts[thread_id] = [field for field, _ in message_fields(message)]
                return
        self.texts[thread_id] = [content_head(head)]
        self.partial.add(thread_id)

    def add_tail(self, thread_id: uuid.UUID, row: Mapping[str, Any]) -> None:
        """Add the tool text and content tail of a :data:`TAILS` row (a mapping)."""
        calls: Any = None
        if row["tool_calls"]:
            try:
                calls = jsontext.loads(row["tool_calls"])
            except ValueError:
                calls = None
        message = {
            "tool_name": row["tool_name"],
            "tool_calls": calls if isinstance(calls, list) else [],
        }
        tail = row["tail"] or ""
        self.texts[thread_id] = [*self.texts.get(thread_id, []), tool_text(message), tail]


def _highlight(
    page: Page, query: Query, sources: _Sources, deadline: float, only: set[uuid.UUID] | None
) -> dict[uuid.UUID, str | None]:
    """Snippets of the hits (all, or ``only`` these), until ``deadline`` (``time.monotonic``)."""
    out: dict[uuid.UUID, str | None] = {}
    for thread_id, title, seq in page:
        if only is not None and thread_id not in only:
            continue
        if time.monotonic() > deadline:
            break
        texts = sources.texts.get(thread_id, [])
        found = message_snippet(texts, query) if seq is not None else None
        if found is None and not (
            seq is not None and thread_id in sources.partial and only is None
        ):
            found = snippet(cap(title or "", THREAD_TEXT_CHARS), query) if title else None
        out[thread_id] = found
    return out


async def _statement(
    session: AsyncSession, sql: str, args: Sequence[Any], deadline: float
) -> list[Any] | None:
    """Rows of ``sql`` (asyncpg ``$n`` parameters ``args``) under the time left before
    ``deadline``; None when that time ran out (or had already).

    Issued on the session's own connection and transaction (a search page reads one snapshot),
    by asyncpg directly: ``SAVEPOINT`` and ``SET LOCAL statement_timeout`` go in one round trip
    (the simple protocol), then the statement; a timeout rolls back to the savepoint, so the
    transaction stays usable. A success leaves the savepoint open (it ends with the
    transaction). Four round trips and SQLAlchemy's per-statement work were a third of the
    snippets' cost on bench.search's medium words."""
    left = int((deadline - time.monotonic()) * 1000)
    if left < 1:
        return None
    connection = await session.connection()
    raw: Any = (await connection.get_raw_connection()).driver_connection  # asyncpg
    if not raw.is_in_transaction():
        await session.execute(text("SELECT 1"))  # SQLAlchemy begins its transaction lazily
    await raw.execute(f"SAVEPOINT snippets; SET LOCAL statement_timeout = {left}")
    try:
        return list(await raw.fetch(sql, *args))
    except Exception as exc:  # asyncpg's QueryCanceledError (asyncpg ships no type hints)
        if getattr(exc, "sqlstate", None) != QUERY_CANCELED:
            raise
        await raw.execute("ROLLBACK TO SAVEPOINT snippets")
        return None


async def _off_loop(
    page: Page, query: Query, sources: _Sources, deadline: float, only: set[uuid.UUID] | None
) -> dict[uuid.UUID, str | None]:
    """:func:`_highlight`, in a worker thread when the texts hold more than
    :data:`INLINE_CHARS` characters in all (else the thread hand-off costs more than it saves)."""
    size = sum(len(t) for texts in sources.texts.values() for t in texts)
    size += sum(len(title or "") for _, title, _ in page)
    if size <= INLINE_CHARS:
        return _highlight(page, query, sources, deadline, only)
    return await asyncio.to_thread(_highlight, page, query, sources, deadline, only)


async def snippets(
    session: AsyncSession,
    query: Query,
    page: Page,
    budget_ms: int = SNIPPET_BUDGET_MS,
    heads: Mapping[uuid.UUID, str] | None = None,
) -> dict[uuid.UUID, tuple[int | None, str | None]]:
    """For each hit of ``page`` ((thread id, title, best message seq or None), see
    :data:`Page`): (message index, snippet) by thread id. The message index is ``best_seq``;
    the snippet is HTML-escaped with matches in ``<b>…</b>`` (API.md section 6), from the best
    message's content or tool text, else from the title when it matches, else None; None too
    for hits not done within ``budget_ms`` milliseconds (module docstring). Never raises for
    a slow page; database errors other than a statement timeout propagate. ``heads`` (thread
    id → the first :data:`BODY_PREFIX_CHARS` characters of its best message's JSON text), when
    the caller read them already (the ranking statement does), replace step 1's statement."""
    if not page:
        return {}
    deadline = time.monotonic() + budget_ms / 1000
    sources = _Sources()
    with_seq = [(thread_id, seq) for thread_id, _, seq in page if seq is not None]
    if heads is not None:
        for thread_id, _ in with_seq:
            if thread_id in heads:
                sources.add_head(thread_id, heads[thread_id])
    elif with_seq:
        args = ([t for t, _ in with_seq], [s for _, s in with_seq], BODY_PREFIX_CHARS)
        for row in await _statement(session, HEADS, args, deadline) or []:
            sources.add_head(row["thread_id"], row["head"] or "")
    found = await _off_loop(page, query, sources, deadline, None)
    unread = [(t, s) for t, s in with_seq if t in sources.partial and found.get(t, "") is None]
    if unread:
        args = ([t for t, _ in unread], [s for _, s in unread], MESSAGE_TAIL_CHARS)
        for row in await _statement(session, TAILS, args, deadline) or []:
            sources.add_tail(row["thread_id"], row)
        again = await _off_loop(page, query, sources, deadline, {t for t, _ in unread})
        found.update({t: s for t, s in again.items() if s is not None})
        for thread_id, title, _ in page:
            if thread_id in sources.partial and found.get(thread_id) is None and title:
                found[thread_id] = snippet(cap(title, THREAD_TEXT_CHARS), query)
    bare = [t for t, _, _ in page if found.get(t) is None]
    if bare:
        for row in await _statement(session, METADATA, [bare], deadline) or []:
            git = thread_fields(dict(row))[1][0]
            found[row["id"]] = metadata_snippet(query, None, git, list(row["shas"]))
    return {thread_id: (seq, found.get(thread_id)) for thread_id, _, seq in page}
