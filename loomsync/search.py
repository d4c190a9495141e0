"""Local search: the fallback when the server cannot be reached, and the search of local stores.

Case-insensitive substring search. The query is split on white space and every word must match
somewhere in the thread: its title, tags, branch, remote URL, workspace, a commit SHA (by
prefix) or a message's content. Scores weigh where words matched (title and tags above git
metadata above message text, as the server ranks), ties newest first.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from loomsync.model import Thread
from loomsync.summary import SearchHit, ThreadSummary
from loomsync.terminal import whole_units

TITLE_WEIGHT = 4.0
GIT_WEIGHT = 2.0
CONTENT_WEIGHT = 1.0
SNIPPET_CONTEXT = 60  # characters either side of the first match
_HEX = re.compile(r"[0-9a-f]{4,40}")
#: Words made only of these characters appear verbatim in a thread file's JSON text.
_PLAIN = re.compile(r"[A-Za-z0-9_.,:/@+=#%-]+")


def query_words(query: str) -> list[str]:
    """The lowercased words of a query (white space separates words)."""
    return [word.lower() for word in query.split()]


def may_match(raw: str, words: list[str]) -> bool:
    """Cheap pre-check on a thread file's lowercased JSON text: False only if no match is possible.

    A word with characters that JSON escapes is not checked (True), so nothing is missed.
    """
    return all(word in raw for word in words if _PLAIN.fullmatch(word))


def _commit_match(word: str, thread: Thread) -> bool:
    if not _HEX.fullmatch(word):
        return False
    shas = [*thread.git_commits, thread.git_initial_commit_sha, thread.git_current_commit_sha]
    return any(sha and sha.lower().startswith(word) for sha in shas)


def _snippet(content: str, words: list[str]) -> str:
    lowered = content.lower()
    first = min((i for i in (lowered.find(w) for w in words) if i >= 0), default=0)
    start = max(0, first - SNIPPET_CONTEXT)
    end = min(len(content), first + SNIPPET_CONTEXT * 2)
    start, end = whole_units(content, start, end)  # never half an escape sequence
    window = content[start:end].replace("\x00", "")
    pattern = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)), re.I)
    out: list[str] = []
    position = 0
    for match in pattern.finditer(window):
        out.append(html.escape(window[position : match.start()]))
        out.append(f"<b>{html.escape(match.group())}</b>")
        position = match.end()
    out.append(html.escape(window[position:]))
    text = "".join(out).replace("\n", " ")
    return ("…" if start else "") + text + ("…" if end < len(content) else "")


def score_thread(thread: Thread, words: list[str]) -> SearchHit | None:
    """Score one thread against the query words; None when some word matches nowhere."""
    if not words:
        return None
    meta = " ".join([thread.metadata.title or "", *thread.metadata.tags]).lower()
    git = " ".join(
        value or "" for value in (thread.git_branch, thread.git_remote_url, thread.workspace_root)
    ).lower()
    contents = [message.content.lower() for message in thread.messages]
    score = 0.0
    best_index: int | None = None
    for word in words:
        found = False
        if word in meta:
            score += TITLE_WEIGHT
            found = True
        if word in git or _commit_match(word, thread):
            score += GIT_WEIGHT
            found = True
        hits = [i for i, text in enumerate(contents) if word in text]
        if hits:
            score += CONTENT_WEIGHT * min(len(hits), 10) / 10 + CONTENT_WEIGHT
            found = True
            if best_index is None:
                best_index = hits[-1]
        if not found:
            return None
    snippet = (
        _snippet(thread.messages[best_index].content, words) if best_index is not None else None
    )
    return SearchHit(
        thread=ThreadSummary.of(thread), score=score, snippet=snippet, message_index=best_index
    )


def search_threads(threads: Iterable[Thread], query: str, *, limit: int = 20) -> list[SearchHit]:
    """Search threads; the best ``limit`` hits, highest score first, ties newest first.

    Raises:
        ValueError: ``limit`` < 1.
    """
    if limit < 1:
        raise ValueError("limit must be at least 1")
    words = query_words(query)
    hits = [hit for thread in threads if (hit := score_thread(thread, words)) is not None]
    hits.sort(key=lambda hit: (hit.score, hit.thread.sort_key), reverse=True)
    return hits[:limit]


__all__ = ["may_match", "query_words", "score_thread", "search_threads"]
