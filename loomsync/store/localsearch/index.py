"""The local search index: SQLite tables of the server's vectors, kept next to the threads
(issue 14 item 3: ``loomsync search --local`` has the server's semantics).

Tables (plain SQLite, no FTS extension):

- ``threads``: one row per indexed thread: its id, the version its source gave (a file's
  stamp), archived or not, last activity, its summary (JSON, redacted), the messages indexed
  and where in the thread's log the indexed commit is (generation, offset);
- ``docs``: one row per message (``seq`` its index) and one per thread vector (``seq`` -1),
  with the vector's length (distinct lexemes); ``texts``: the indexed text of each (content and
  tool-call text, zlib), for snippets;
- ``lexemes`` (id, text) and ``postings`` (lexeme, doc, positions): each lexeme's positions and
  weights in each document, as PostgreSQL's ``WordEntryPos`` (:mod:`.vectors`);
- ``commits``: the commit SHAs each thread names, for prefix search;
- ``totals``: messages and threads indexed and their summed lengths (exact IDF and averages).

:meth:`LocalIndex.refresh` brings it up to date from a :class:`~.source.ThreadSource` in one
``BEGIN IMMEDIATE`` transaction (two processes never index the same change twice; a search
never sees half an update): threads gone are dropped; a thread whose version changed is asked
for what it gained since the indexed commit, and when its log only grew (same generation) only
the new messages are indexed, with its thread-level row (title, git fields, commits, summary)
made again (issue 15 item 3: O(turn), not O(thread)); a rewritten log (another generation) is
indexed again whole. A file whose schema or analyzer differs (:data:`SCHEMA_VERSION`,
:data:`ANALYZER`) is emptied and rebuilt; one that is not a database is deleted and rebuilt.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loomsync import edits
from loomsync.core.document import codec
from loomsync.core.textsearch.fields import message_fields, thread_fields
from loomsync.core.textsearch.vectors import VERSION as VECTORS_VERSION
from loomsync.store.localsearch.ranking import THREAD_SEQ
from loomsync.store.localsearch.source import Read, ThreadSource
from loomsync.store.localsearch.vectors import Vector, entries, pack
from loomsync.store.summary import ThreadSummary

log = logging.getLogger(__name__)

INDEX_NAME = ".search.sqlite3"
SCHEMA_VERSION = 2
#: Which analyzer made the postings: an index made by another one is rebuilt.
ANALYZER = f"loomsync.core.textsearch {VECTORS_VERSION}"
BUSY_TIMEOUT_SECONDS = 60.0
#: About how long one refresh transaction indexes before it commits.
BATCH_SECONDS = 1.0
_SHA_CHARS = frozenset("0123456789abcdef")

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE threads (
    tid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, version TEXT NOT NULL,
    archived INTEGER NOT NULL, activity REAL NOT NULL, summary TEXT NOT NULL,
    messages INTEGER NOT NULL, generation TEXT, offset INTEGER);
CREATE TABLE docs (
    doc INTEGER PRIMARY KEY, tid INTEGER NOT NULL, seq INTEGER NOT NULL,
    length INTEGER NOT NULL);
CREATE UNIQUE INDEX docs_thread ON docs (tid, seq);
CREATE TABLE texts (doc INTEGER PRIMARY KEY, content BLOB, tool BLOB);
CREATE TABLE lexemes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
CREATE TABLE postings (
    lexeme INTEGER NOT NULL, doc INTEGER NOT NULL, pos BLOB NOT NULL,
    PRIMARY KEY (lexeme, doc)) WITHOUT ROWID;
CREATE INDEX postings_doc ON postings (doc);
CREATE TABLE commits (
    sha TEXT NOT NULL, tid INTEGER NOT NULL, PRIMARY KEY (sha, tid)) WITHOUT ROWID;
CREATE INDEX commits_thread ON commits (tid);
CREATE TABLE totals (kind INTEGER PRIMARY KEY, docs INTEGER NOT NULL, length INTEGER NOT NULL);
INSERT INTO totals VALUES (0, 0, 0), (1, 0, 0);
"""
MESSAGES, THREADS = 0, 1


def _compress(text: str) -> bytes | None:
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 1) if text else None


def decompress(data: bytes | None) -> str:
    """Text stored by the index (``texts`` columns); empty for NULL."""
    return zlib.decompress(data).decode("utf-8", "surrogatepass") if data else ""


def commit_shas(doc: dict[str, Any]) -> list[str]:
    """The lowercase commit SHAs (4 to 64 hex characters) a thread document names, as the
    server indexes them (``app.threads.documents.commit_shas``)."""
    candidates = [
        *(doc.get("git_commits") or []),
        doc.get("git_initial_commit_sha"),
        doc.get("git_current_commit_sha"),
    ]
    shas = (v.strip().lower() for v in candidates if isinstance(v, str))
    return list(dict.fromkeys(s for s in shas if 4 <= len(s) <= 64 and set(s) <= _SHA_CHARS))


class LocalIndex:
    """One SQLite index (a file, or in memory). Not shared between threads: open one per use
    (:meth:`open` is cheap)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        """Wrap an open connection (use :meth:`open`)."""
        self.db = connection
        self._lexicon: dict[str, int] | None = None

    @classmethod
    @contextlib.contextmanager
    def open(cls, path: Path | None) -> Iterator[LocalIndex]:
        """The index at ``path`` (None: in memory), created or rebuilt as needed; closed on
        exit. Raises ``sqlite3.OperationalError`` when another process holds it locked for
        longer than :data:`BUSY_TIMEOUT_SECONDS`."""
        connection = cls._connect(path)
        try:
            yield cls(connection)
        finally:
            connection.close()

    @classmethod
    def _connect(cls, path: Path | None) -> sqlite3.Connection:
        target = ":memory:" if path is None else str(path)
        for attempt in (1, 2):
            db = sqlite3.connect(target, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
            try:
                cls._prepare(db)
                return db
            except sqlite3.OperationalError:
                db.close()
                raise
            except sqlite3.DatabaseError as exc:  # not a database, or damaged
                db.close()
                if path is None or attempt == 2:
                    raise
                log.warning("search index %s is unreadable (%s); rebuilding it", path, exc)
                for suffix in ("", "-wal", "-shm", "-journal"):
                    with contextlib.suppress(FileNotFoundError):
                        Path(f"{path}{suffix}").unlink()
        raise AssertionError("unreachable")

    @staticmethod
    def _prepare(db: sqlite3.Connection) -> None:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        (version,) = db.execute("PRAGMA user_version").fetchone()
        if version == SCHEMA_VERSION:
            row = db.execute("SELECT value FROM meta WHERE key = 'analyzer'").fetchone()
            if row is not None and row[0] == ANALYZER:
                return
        db.execute("BEGIN IMMEDIATE")
        try:
            (version,) = db.execute("PRAGMA user_version").fetchone()  # another process won
            if (
                version == SCHEMA_VERSION
                and db.execute(
                    "SELECT 1 FROM meta WHERE key = 'analyzer' AND value = ?", (ANALYZER,)
                ).fetchone()
            ):
                db.execute("COMMIT")
                return
            tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            for table in tables:
                db.execute(f'DROP TABLE "{table}"')
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT INTO meta VALUES ('analyzer', ?)", (ANALYZER,))
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    # -- keeping up to date ------------------------------------------------------------------

    def refresh(self, source: ThreadSource, *, batch_seconds: float = BATCH_SECONDS) -> int:
        """Index what changed in ``source`` since the last refresh; the threads (re)indexed.

        Work is committed every ``batch_seconds`` or so (each batch one ``BEGIN IMMEDIATE``
        transaction, what changed worked out again under its lock), so a first build that is
        interrupted keeps what it did, and another process's search waits for a batch at most.
        """
        done = 0
        while True:
            known = dict(self.db.execute("SELECT id, version FROM threads"))
            first = source.changed_since(known)
            if not first.changed and not first.gone:
                return done
            finished, count = self._batch(source, batch_seconds)
            done += count
            if finished:
                return done

    def _batch(self, source: ThreadSource, seconds: float) -> tuple[bool, int]:
        self.db.execute("BEGIN IMMEDIATE")
        self._lexicon = None  # another process may have added lexemes
        try:
            known = dict(self.db.execute("SELECT id, version FROM threads"))  # under the lock
            changes = source.changed_since(known)
            for thread_id in changes.gone:
                self._drop(thread_id)
            started = time.monotonic()
            count = 0
            finished = True
            for thread_id, version in changes.changed.items():
                if count and time.monotonic() - started > seconds:
                    finished = False
                    break
                self._update(source, thread_id, version)
                count += 1
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        finally:
            self._lexicon = None
        return finished, count

    def _update(self, source: ThreadSource, thread_id: str, version: str) -> None:
        """Index what ``thread_id`` gained since its row was made, or the whole thread."""
        query = "SELECT tid, messages, generation, offset FROM threads WHERE id = ?"
        row = self.db.execute(query, (thread_id,)).fetchone()
        since = (row[2], row[3]) if row is not None and row[2] is not None else None
        found = source.read(thread_id, since)
        if found is not None and row is not None and found.first and found.first == row[1]:
            self._drop_docs(row[0], only_thread=True)  # the thread-level document: made again
            self.db.execute("DELETE FROM commits WHERE tid = ?", (row[0],))
            self.db.execute("DELETE FROM threads WHERE tid = ?", (row[0],))
            self._add(thread_id, version, found, tid=row[0])
            return
        self._drop(thread_id)
        if found is not None and found.first == 0:
            self._add(thread_id, version, found)
        elif found is not None:  # the source answered from a position the index lacks
            whole = source.read(thread_id)
            if whole is not None:
                self._add(thread_id, version, whole)

    def _drop_docs(self, tid: int, *, only_thread: bool = False) -> None:
        """Remove a thread's documents (only its thread-level one if ``only_thread``), the
        totals adjusted."""
        kinds = (
            ((THREADS, "seq < 0"),)
            if only_thread
            else ((MESSAGES, "seq >= 0"), (THREADS, "seq < 0"))
        )
        condition = "seq < 0" if only_thread else "1"
        for kind, which in kinds:
            self.db.execute(
                "UPDATE totals SET docs = docs - (SELECT count(*) FROM docs WHERE tid = :t AND "
                f"{which}), length = length - (SELECT coalesce(sum(length), 0) FROM docs "
                f"WHERE tid = :t AND {which}) WHERE kind = :k",
                {"t": tid, "k": kind},
            )
        docs = f"SELECT doc FROM docs WHERE tid = ? AND {condition}"
        self.db.execute(f"DELETE FROM postings WHERE doc IN ({docs})", (tid,))
        self.db.execute(f"DELETE FROM texts WHERE doc IN ({docs})", (tid,))
        self.db.execute(f"DELETE FROM docs WHERE tid = ? AND {condition}", (tid,))

    def _drop(self, thread_id: str) -> None:
        row = self.db.execute("SELECT tid FROM threads WHERE id = ?", (thread_id,)).fetchone()
        if row is None:
            return
        tid = row[0]
        self._drop_docs(tid)
        self.db.execute("DELETE FROM commits WHERE tid = ?", (tid,))
        self.db.execute("DELETE FROM threads WHERE tid = ?", (tid,))

    def _lexeme_ids(self, lexemes: set[str]) -> dict[str, int]:
        if self._lexicon is None:
            self._lexicon = dict(self.db.execute("SELECT text, id FROM lexemes"))
        new = [lex for lex in lexemes if lex not in self._lexicon]
        for lexeme in new:
            cursor = self.db.execute("INSERT INTO lexemes (text) VALUES (?)", (lexeme,))
            assert cursor.lastrowid is not None
            self._lexicon[lexeme] = cursor.lastrowid
        return self._lexicon

    def _add(self, thread_id: str, version: str, found: Read, *, tid: int | None = None) -> None:
        """Index a read: its thread-level row and document, and its messages (from message
        ``found.first`` on: the earlier ones are indexed already, under row ``tid``)."""
        thread = found.thread
        doc = codec.document(thread)
        count = found.first + len(thread.messages)
        summary = ThreadSummary.of(thread).model_copy(update={"message_count": count})
        generation, offset = found.position if found.position is not None else (None, None)
        cursor = self.db.execute(
            "INSERT INTO threads (tid, id, version, archived, activity, summary, messages, "
            "generation, offset) VALUES (?,?,?,?,?,?,?,?,?)",
            (
                tid,
                thread_id,
                version,
                1 if edits.archived_at(thread) else 0,
                summary.sort_key[0].timestamp(),
                summary.model_dump_json(),
                count,
                generation,
                offset,
            ),
        )
        tid = cursor.lastrowid
        title, git = thread_fields(doc)
        documents: list[tuple[int, Vector, str, str]] = [
            (THREAD_SEQ, entries([title, git]), title[0], "")
        ]
        messages = (doc.get("conversation") or {}).get("messages") or []
        for seq, message in enumerate(messages, start=found.first):
            content, tool = message_fields(message if isinstance(message, dict) else {})
            documents.append((seq, entries([content, tool]), content[0], tool[0]))
        added = {MESSAGES: [0, 0], THREADS: [0, 0]}
        ids = self._lexeme_ids({lex for _, vector, _, _ in documents for lex in vector})
        for seq, vector, content_text, tool_text in documents:
            row = self.db.execute(
                "INSERT INTO docs (tid, seq, length) VALUES (?, ?, ?)", (tid, seq, len(vector))
            ).lastrowid
            kind = added[THREADS if seq == THREAD_SEQ else MESSAGES]
            kind[0] += 1
            kind[1] += len(vector)
            if not vector:
                continue
            self.db.execute(
                "INSERT INTO texts VALUES (?, ?, ?)",
                (row, _compress(content_text), _compress(tool_text)),
            )
            self.db.executemany(
                "INSERT INTO postings VALUES (?, ?, ?)",
                ((ids[lex], row, pack(found)) for lex, found in vector.items()),
            )
        self.db.executemany(
            "UPDATE totals SET docs = docs + ?, length = length + ? WHERE kind = ?",
            [(count, length, kind) for kind, (count, length) in added.items()],
        )
        self.db.executemany(
            "INSERT INTO commits VALUES (?, ?)", ((sha, tid) for sha in commit_shas(doc))
        )

    def totals(self) -> tuple[int, float, int, float]:
        """Messages indexed, their average length, threads indexed, their average length."""
        query = "SELECT kind, docs, length FROM totals"
        rows = {kind: (docs, length) for kind, docs, length in self.db.execute(query)}
        messages, message_length = rows.get(MESSAGES, (0, 0))
        threads, thread_length = rows.get(THREADS, (0, 0))
        return (
            messages,
            message_length / messages if messages else 1.0,
            threads,
            thread_length / threads if threads else 1.0,
        )


__all__ = ["ANALYZER", "INDEX_NAME", "SCHEMA_VERSION", "LocalIndex", "commit_shas", "decompress"]
