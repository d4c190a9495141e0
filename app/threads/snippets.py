"""Snippets of a search page: a bounded window of the one best message, highlighted in time.

``ts_headline`` reads the whole text it is given and its cost grows with text length times
query size (issue 11 item 4: 17 s for one 80 KB message). So for each hit of a page:

1. The best matching message is chosen by ``ts_rank`` over the message vectors (no body read),
   and only the first ``BODY_PREFIX_CHARS`` of its JSON text are read, which hold the start of
   its content (up to ``MESSAGE_HEAD_CHARS``). A match only in the indexed tail of a longer
   message gets a snippet of the content's start, without marks.
2. Python finds where the query's lexemes (read back from the tsquery PostgreSQL built) occur,
   by word prefix, and cuts up to :data:`WINDOWS` windows of at most :data:`WINDOW_CHARS`
   around the places where most of them meet (the start of the text when none is found).
3. One statement keeps, per hit, the first window whose own vector matches the query (else the
   first window; a title hit with no matching window gets no snippet) and runs ``ts_headline``
   on it alone, marking the query's words (:func:`marks`). Windows are HTML-escaped before PostgreSQL cuts the headline (see
   :func:`escape`), then the markers become ``<b>…</b>``.

All of it runs under its own ``statement_timeout`` of :data:`SNIPPET_BUDGET_MS` inside a
savepoint: past the budget, the page is answered with ``snippet`` and ``message_index`` null
rather than failing or holding the connection (API.md section 6 allows a null snippet).
"""

from __future__ import annotations

import html
import json
import re
import uuid
from collections import Counter
from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from app.threads.indexing import (
    MESSAGE_HEAD_CHARS,
    TEXT_SEARCH_CONFIG,
    cap,
    clean,
)

WINDOW_CHARS = 1_000
WINDOWS = 3
#: How far before the first matched word a window starts.
LEAD_CHARS = 300
#: Matches looked at per text to place windows.
MAX_MATCHES = 256
SNIPPET_BUDGET_MS = 500
QUERY_CANCELED = "57014"

_START, _STOP = "\x02", "\x03"
HEADLINE_OPTIONS = (
    f"StartSel={_START}, StopSel={_STOP}, MaxWords=30, MinWords=12, MaxFragments=2,"
    " FragmentDelimiter= … "
)
_CONFIG = f"'{TEXT_SEARCH_CONFIG}'::regconfig"
_LEXEME = re.compile(r"(!?)\s*'((?:[^']|'')*)'")

#: Characters of a message's JSON text read for its snippet: PostgreSQL reads just this prefix
#: of a large (TOASTed) value, where decoding the content (``->>``) would read, decompress and
#: parse all of it (10 MB: about 100 ms, measured).
BODY_PREFIX_CHARS = 130_000
BEST_MESSAGES = """
SELECT best.thread_id, best.seq, substr(CAST(m.body AS text), 1, :prefix) AS head
FROM (
    SELECT DISTINCT ON (m.thread_id) m.thread_id, m.seq
    FROM thread_messages m
    WHERE m.thread_id = ANY(CAST(:ids AS uuid[])) AND m.search_vector @@ {tsquery}
    ORDER BY m.thread_id, ts_rank(m.search_vector, {tsquery}, 32) DESC, m.seq
) AS best
JOIN thread_messages m ON m.thread_id = best.thread_id AND m.seq = best.seq
"""
HEADLINES = f"""
WITH w AS (
    SELECT u.hit, u.ord, u.t, u.must_match, to_tsvector({_CONFIG}, u.t) @@ {{tsquery}} AS matches
    FROM unnest(CAST(:texts AS text[]), CAST(:hits AS int[]), CAST(:must_match AS boolean[]))
         WITH ORDINALITY AS u(t, hit, must_match, ord)
), best AS (
    SELECT DISTINCT ON (hit) hit, t, must_match, matches FROM w ORDER BY hit, matches DESC, ord
)
SELECT hit, CASE WHEN must_match AND NOT matches THEN NULL
                 ELSE ts_headline({_CONFIG}, t, CAST(:marks AS tsquery), :options) END AS headline
FROM best
"""


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


def marks(words: Sequence[str]) -> str:
    """What ``ts_headline`` marks: the tsquery text ``'a' | 'b' | …`` of ``words`` (lexemes).

    Not the search's own query: ``ts_headline`` looks for covers of the whole query, and for a
    phrase whose words repeat (``"x x x … x"``) over a text of those words that search grows
    exponentially with the phrase (measured over 1,000 characters: 8 words 0.25 s, 12 words
    2.2 s, 16 words 39 s). An ``or`` of the words marks the same words in linear time.
    """
    return tsquery_text(words, "|")


def _prefix_pattern(words: Sequence[str]) -> re.Pattern[str] | None:
    """Words starting like a lexeme (its last letter dropped when longer than 3: English stems
    end where the word may go on, ``happi`` for ``happy``)."""
    prefixes = sorted({w[:-1] if len(w) > 3 else w for w in words}, key=len, reverse=True)
    if not prefixes:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, prefixes)) + ")", re.IGNORECASE)


def _cut(source: str, start: int) -> str:
    """At most ``WINDOW_CHARS`` of ``source`` from about ``start``, on word boundaries."""
    start = max(0, start)
    end = min(len(source), start + WINDOW_CHARS)
    if start > 0:
        space = source.find(" ", start, min(end, start + 40))
        start = space + 1 if space >= 0 else start
    if end < len(source):
        space = source.rfind(" ", max(start, end - 40), end)
        end = space if space > start else end
    return source[start:end]


def windows(source: str, words: Sequence[str]) -> list[str]:
    """Up to ``WINDOWS`` windows of ``source`` (each at most ``WINDOW_CHARS``) where most of
    ``words`` (lexemes) occur, best first; the start of ``source`` when none occurs."""
    pattern = _prefix_pattern(words)
    matches: list[tuple[int, str]] = []
    if pattern is not None:
        for i, match in enumerate(pattern.finditer(source)):
            if i >= MAX_MATCHES:
                break
            matches.append((match.start(), match.group(0).casefold()))
    if not matches:
        return [_cut(source, 0)]
    scored = []
    inside: Counter[str] = Counter()
    low = high = 0
    for position, _ in matches:  # two pointers: the matches inside each match's window
        start = position - LEAD_CHARS
        while high < len(matches) and matches[high][0] < start + WINDOW_CHARS:
            inside[matches[high][1]] += 1
            high += 1
        while matches[low][0] < start:
            inside[matches[low][1]] -= 1
            if not inside[matches[low][1]]:
                del inside[matches[low][1]]
            low += 1
        scored.append((-len(inside), position))
    chosen: list[int] = []
    for _, position in sorted(scored):
        if all(abs(position - other) >= WINDOW_CHARS for other in chosen):
            chosen.append(position)
        if len(chosen) == WINDOWS:
            break
    return [_cut(source, p - LEAD_CHARS) for p in chosen]


def escape(window: str) -> str:
    """A window fit for ``ts_headline``: cleaned, markers blanked and HTML-escaped *before* the
    headline is cut. PostgreSQL's parser drops raw tags such as ``<script>`` from a headline but
    keeps entities (``&lt;``) whole, so escaping first keeps code like ``a < b`` visible and
    leaves nothing to break out of the snippet."""
    return html.escape(clean(window).replace(_START, " ").replace(_STOP, " "), quote=False)


def render_snippet(headline: str | None) -> str | None:
    """Turn the markers of a ``ts_headline`` of escaped text into ``<b>…</b>``."""
    if not headline:
        return None
    return headline.replace(_START, "<b>").replace(_STOP, "</b>")


async def _budget(session: AsyncSession, milliseconds: int) -> None:
    """``SET LOCAL statement_timeout`` for the rest of the transaction (or savepoint)."""
    await session.execute(
        text("SELECT set_config('statement_timeout', :ms, true)"), {"ms": f"{milliseconds}ms"}
    )


def timed_out(exc: DBAPIError) -> bool:
    """True when ``exc`` is PostgreSQL's ``query_canceled`` (SQLSTATE 57014): the statement ran
    past its ``statement_timeout``."""
    return getattr(exc.orig, "sqlstate", None) == QUERY_CANCELED


async def snippets(
    session: AsyncSession,
    tsquery_sql: str,
    params: dict[str, str],
    words: Sequence[str],
    page: list[tuple[uuid.UUID, str | None]],
    budget_ms: int = SNIPPET_BUDGET_MS,
) -> dict[uuid.UUID, tuple[int | None, str | None]]:
    """For each (thread id, title) of a result page: (index of its best matching message,
    snippet). The snippet comes from that message or, for title and metadata hits, from the
    title when the title matches; else it is None. Both are None for the whole page when the
    work takes longer than ``budget_ms`` milliseconds.

    ``tsquery_sql`` is the SQL of the query's tsquery with its bound ``params``; ``words`` are
    its lexemes (:func:`lexemes`).
    """
    if not page:
        return {}
    try:
        async with session.begin_nested():
            await _budget(session, budget_ms)
            return await _snippets(session, tsquery_sql, params, words, page)
    except DBAPIError as exc:
        if not timed_out(exc):
            raise
        return {thread_id: (None, None) for thread_id, _ in page}


_CONTENT = re.compile(r'"content":"([^"\\]*(?:\\.[^"\\]*)*)')


def content_head(body_prefix: str) -> str:
    """The start of a message's ``content`` string from the first characters of its JSON text
    (compact, as ``dump_json`` writes it); "" when no string content starts there."""
    match = _CONTENT.search(body_prefix)
    if match is None:
        return ""
    encoded = match.group(1)
    cut = match.end() == len(body_prefix)  # the prefix ends inside the string
    for drop in range(7 if cut else 1):  # an escape cut in half is at most 6 characters
        try:
            decoded: str = json.loads(f'"{encoded[: len(encoded) - drop]}"')
        except ValueError:
            continue
        return decoded[:MESSAGE_HEAD_CHARS]
    return ""


async def _snippets(
    session: AsyncSession,
    tsquery_sql: str,
    params: dict[str, str],
    words: Sequence[str],
    page: list[tuple[uuid.UUID, str | None]],
) -> dict[uuid.UUID, tuple[int | None, str | None]]:
    rows = await session.execute(
        text(BEST_MESSAGES.format(tsquery=tsquery_sql)),
        {**params, "ids": [thread_id for thread_id, _ in page], "prefix": BODY_PREFIX_CHARS},
    )
    best = {row.thread_id: (row.seq, content_head(row.head or "")) for row in rows}
    texts: list[str] = []
    hits: list[int] = []
    must_match: list[bool] = []
    for i, (thread_id, title) in enumerate(page):
        source = best[thread_id][1] if thread_id in best else cap(title or "", MESSAGE_HEAD_CHARS)
        for window in windows(source, words):
            texts.append(escape(window))
            hits.append(i)
            must_match.append(thread_id not in best)
    headlines = await session.execute(
        text(HEADLINES.format(tsquery=tsquery_sql)),
        {
            **params,
            "texts": texts,
            "hits": hits,
            "must_match": must_match,
            "marks": marks(words),
            "options": HEADLINE_OPTIONS,
        },
    )
    by_hit = {int(hit): headline for hit, headline in headlines}
    return {
        thread_id: (
            best[thread_id][0] if thread_id in best else None,
            render_snippet(by_hit.get(i)),
        )
        for i, (thread_id, _) in enumerate(page)
    }
