"""The corpus and the four systems bench.search_quality compares.

Every system is a callable ``search(query) -> list[Answer]``: threads best first, each with the
message it points to and its snippet (None when the system makes none).

- **server**: loomsync's ``GET /api/threads/search`` on a real uvicorn over a fresh database,
  the corpus loaded by ``PUT`` through the SDK (``ThreadSyncClient``) with a token.
- **local**: ``LocalThreadStore.search`` (what ``loomsync search --local`` runs) over a folder
  the corpus was saved into.
- **bm25**: Okapi BM25 (k1 1.2, b 0.75, Lucene's IDF) over messages, implemented here; a
  thread's score is its best message's, and that message is the one it points to.
- **fts5**: a Loom-style SQLite FTS5 phrase search over messages (see :class:`Fts5Search`).

Indexed text of a message, for bm25 and fts5: its content, its tool name and its tool calls'
names and arguments (what the server indexes as weights C and D); thread titles and git
metadata are not (they are not messages).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import sqlite3
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from app.auth import create_token
from app.config import Settings
from bench.harness import (
    ROOT,
    asyncpg_dsn,
    database_dsn,
    fresh_database,
    server_dsn,
    uvicorn_server,
)
from loomsync.core.document.model import Message, Thread
from loomsync.http.client import ThreadSyncClient
from loomsync.importers import import_path
from loomsync.store.local import LocalThreadStore

DATA = (ROOT.parent / "shared" / "data").resolve()
TRANSCRIPTS = DATA / "transcripts"
DATABASE = "loomsync_bench_quality"
FETCH = 20  # hits asked of every system (the API's default page)


@dataclass(frozen=True)
class Answer:
    """One hit: thread id, message index (or None), snippet (or None) and the system's own
    score (higher is better; scales differ between systems)."""

    thread: str
    message: int | None
    snippet: str | None = None
    score: float | None = None


Search = Callable[[str], list[Answer]]


def load_corpus(root: Path = TRANSCRIPTS) -> list[Thread]:
    """Every thread the importers read under ``root``, one per id (the one with most messages:
    ``e9fb405b-turn-1.jsonl`` is a prefix of ``turn-2`` and gets the same id), sorted by id.

    Raises:
        RuntimeError: an importer warned (a file could not be read).
    """
    result = import_path(root)
    if result.warnings:
        raise RuntimeError(f"importing {root}: {result.warnings}")
    best: dict[str, Thread] = {}
    for thread in result.threads:
        kept = best.get(str(thread.id))
        if kept is None or len(thread.messages) > len(kept.messages):
            best[str(thread.id)] = thread
    return [best[key] for key in sorted(best)]


def message_text(message: Message) -> str:
    """A message's indexed text: content, tool name, tool-call names and arguments."""
    parts = [message.content, message.tool_name or ""]
    for call in message.tool_calls or []:
        arguments = call.arguments_json
        parts += [
            call.tool_name or "",
            arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False),
        ]
    return " ".join(part for part in parts if part)


# --- bm25 ----------------------------------------------------------------------------------

#: A letter/digit run (underscores split words), or one CJK character (Han, kana, Hangul).
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\W_]+")


def tokens(text: str) -> list[str]:
    """NFKC, lowercase, then :data:`_TOKEN` matches: ``missing_colon.py`` is ``missing``,
    ``colon``, ``py``; ``技術`` is ``技``, ``術``; no stemming, no stop words."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).lower())


class Bm25Search:
    """Okapi BM25 over every message of ``threads`` (any term of the query may match)."""

    def __init__(self, threads: list[Thread], k1: float = 1.2, b: float = 0.75) -> None:
        """Index the messages; ``k1`` and ``b`` are BM25's usual parameters."""
        self.k1, self.b = k1, b
        self.keys: list[tuple[str, int]] = []
        self.lengths: list[int] = []
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for thread in threads:
            for index, message in enumerate(thread.messages):
                counts = Counter(tokens(message_text(message)))
                doc = len(self.keys)
                self.keys.append((str(thread.id), index))
                self.lengths.append(sum(counts.values()))
                for term, count in counts.items():
                    self.postings.setdefault(term, []).append((doc, count))
        self.mean_length = sum(self.lengths) / max(1, len(self.lengths))

    def __call__(self, query: str) -> list[Answer]:
        """The best :data:`FETCH` threads by their best message's BM25 score."""
        scores: dict[int, float] = {}
        n = len(self.keys)
        for term in set(tokens(query)):
            postings = self.postings.get(term, [])
            idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
            for doc, tf in postings:
                norm = self.k1 * (1 - self.b + self.b * self.lengths[doc] / self.mean_length)
                scores[doc] = scores.get(doc, 0.0) + idf * tf * (self.k1 + 1) / (tf + norm)
        ordered = sorted(scores, key=lambda doc: (-scores[doc], doc))
        return _best_per_thread(((*self.keys[doc], scores[doc]) for doc in ordered), FETCH)


def _best_per_thread(keys: Iterator[tuple[str, int, float]], limit: int) -> list[Answer]:
    out: dict[str, Answer] = {}
    for thread, message, value in keys:
        if thread not in out:
            out[thread] = Answer(thread, message, score=value)
            if len(out) == limit:
                break
    return list(out.values())


# --- fts5 ----------------------------------------------------------------------------------


class Fts5Search:
    """Loom-style search (Geoffrey Huntley's Loom, ``loom-server`` thread repository): the whole
    query as one FTS5 phrase (``"`` + query with ``"`` blanked + ``"``), ``unicode61``
    tokenizer, ``ORDER BY bm25()`` then ``last_activity_at DESC``. Loom keeps one FTS row per
    thread (title, all message text, git fields, tags); here a row is a message, so a thread is
    ranked by its best message and points to it.
    """

    def __init__(self, threads: list[Thread]) -> None:
        """Build an in-memory FTS5 table of every message."""
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, last_activity_at TEXT)")
        self.db.execute(
            "CREATE VIRTUAL TABLE message_fts USING fts5("
            "thread_id UNINDEXED, seq UNINDEXED, content, tokenize = 'unicode61')"
        )
        for thread in threads:
            activity = thread.last_activity_at.isoformat() if thread.last_activity_at else ""
            self.db.execute("INSERT INTO threads VALUES (?, ?)", (str(thread.id), activity))
            self.db.executemany(
                "INSERT INTO message_fts (thread_id, seq, content) VALUES (?, ?, ?)",
                [(str(thread.id), i, message_text(m)) for i, m in enumerate(thread.messages)],
            )

    def __call__(self, query: str) -> list[Answer]:
        """The best :data:`FETCH` threads; none when the phrase is empty or FTS5 refuses it."""
        phrase = '"' + query.replace('"', " ") + '"'
        try:
            rows = self.db.execute(
                "SELECT f.thread_id, f.seq, bm25(message_fts) FROM message_fts f JOIN threads t ON t.id = f.thread_id"
                " WHERE message_fts MATCH ? ORDER BY bm25(message_fts), t.last_activity_at DESC",
                (phrase,),
            ).fetchall()
        except sqlite3.OperationalError:
            return []
        hits = ((thread, int(seq), -value) for thread, seq, value in rows)
        return _best_per_thread(hits, FETCH)


# --- loomsync ------------------------------------------------------------------------------


def local_search(threads: list[Thread], folder: Path) -> Search:
    """Save ``threads`` into a :class:`LocalThreadStore` at ``folder``; return its search."""
    store = LocalThreadStore(folder)
    for thread in threads:
        store.save(thread)

    def search(query: str) -> list[Answer]:
        hits = store.search(query, limit=FETCH).hits
        return [Answer(str(h.thread.id), h.message_index, h.snippet, h.score) for h in hits]

    return search


def analyze(dsn: str) -> None:
    """``ANALYZE`` the loaded database, as autovacuum does within a minute of a load this size
    (``autovacuum_analyze_threshold`` 50 rows plus 10%): search ranks by the statistics it
    keeps (app/threads/searchstats.py), and a server right after a bulk load, before any
    statistics, ranks with uniform IDFs instead."""

    async def run() -> None:
        conn = await asyncpg.connect(asyncpg_dsn(dsn))
        try:
            await conn.execute("ANALYZE")
        finally:
            await conn.close()

    asyncio.run(run())


@contextmanager
def server_search(threads: list[Thread]) -> Iterator[Search]:
    """A real uvicorn on a fresh ``loomsync_bench_quality`` database holding ``threads`` (PUT
    through the SDK as user ``quality``); yields its search (``scope=mine``)."""
    dsn = fresh_database(server_dsn(), DATABASE)
    with uvicorn_server(dsn) as (base, secret):
        url = database_dsn(server_dsn(), DATABASE)
        settings = Settings(jwt_secret=secret, database_url=url, _env_file=None)
        token = create_token(settings, "quality", org="quality")
        with ThreadSyncClient(base, token, timeout=120) as client:
            for thread in threads:
                client.put_thread(thread, base_version=0)
            analyze(url)

            def search(query: str) -> list[Answer]:
                hits = client.search(query, limit=FETCH).hits
                return [Answer(str(h.thread.id), h.message_index, h.snippet, h.score) for h in hits]

            yield search
