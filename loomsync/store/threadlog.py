"""The local thread file: an append-only JSON Lines log (issue 15 item 1; API.md section 9
leaves the local format to the client).

One file per thread, ``<id>.jsonl``, mode 0600, one JSON object per line::

    {"loomsync_thread":2,"id":"T-…","generation":"9f2c…"}          the header, line 1
    {"message":{"role":"user","content":"…"}}                       one line per message
    {"message":{"role":"assistant","content":"…"}}
    {"commit":{"count":2,"chain":"…","fields":{…}},"check":"…"}    after every save

A save of N new messages appends N message lines and one commit line in one ``write`` and one
``fsync``: O(N) bytes whatever the thread's length. The commit line holds everything but the
messages (``fields``: the thread document without ``conversation.messages``), the number of
messages committed and their chain digest (:func:`chain`), and ``check``: the first 16 hex digits
of the SHA-256 of the commit object's bytes as written, so a torn or zero-filled commit line is
recognised and never served. What counts is the last valid commit: lines after it are an
unfinished save (a kill -9 in the middle of ``write``) and are ignored by readers and cut off by
the next writer (:func:`append`); a message line inside the committed part that does not parse
(a power cut that lost pages) sends the reader back to the last commit before it.

Edits that are not appends (a history rewritten by a merge or a fork up to a message, a
migrated file) rewrite the file whole with :func:`write_full`: temporary file, fsync, rename,
fsync of the folder; it starts a new ``generation``, so a reader holding an offset into the old
file (the sync base, the local search index) knows its offset is void.

Readable with ordinary tools: ``jq -c .message file.jsonl``, ``tail -1 file.jsonl | jq .commit``.
This module reads and writes lines; it knows nothing of pydantic models (the store,
:mod:`loomsync.store.local`, turns documents into a :class:`~loomsync.core.document.model.Thread`).
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import BaseFileLock

from loomsync.core.document import codec
from loomsync.store.files import FILE_MODE, atomic_write

FORMAT = 2
SUFFIX = ".jsonl"
#: The chain digest of no message (:func:`chain`).
EMPTY_CHAIN = hashlib.sha256(b"loomsync message chain 1").hexdigest()

#: How every thread log begins (its header line).
HEADER_START = b'{"loomsync_thread":'
_COMMIT = b'{"commit":'
_CHECK = b',"check":"'
_CHECK_LEN = 16
_TAIL_LEN = len(_CHECK) + _CHECK_LEN + len(b'"}\n')
_FIRST_READ = 8 * 1024  # a commit line is ~1 KB; a longer one is found by reading 4x more each time


@dataclass(frozen=True, slots=True)
class Head:
    """The last valid commit of a thread file.

    Attributes:
        generation: random hex naming this version of the file; new on every whole rewrite.
        count: messages committed.
        chain: chain digest of those messages (:func:`chain`).
        fields: the thread document without ``conversation.messages`` (codec form: exact
            numbers kept, unset fields absent).
        offset: byte offset where the commit line starts.
        end: byte offset just past it (the file's committed length).
    """

    generation: str
    count: int
    chain: str
    fields: dict[str, Any]
    offset: int
    end: int


def is_thread_file(name: str) -> bool:
    """True for ``T-<uuid>.jsonl`` names (not temp files, locks, indexes or old ``.json``)."""
    return name.startswith("T-") and name.endswith(SUFFIX) and len(name) == 38 + len(SUFFIX)


def thread_id_of(name: str) -> str:
    """The thread id of a thread file's name (or a temporary file's target name)."""
    return name.removesuffix(SUFFIX)


def canonical(message: Any) -> bytes:
    """The bytes :func:`chain` hashes for a message model: canonical JSON, defaults included."""
    return codec.dumps(message.model_dump(mode="python", by_alias=True), sort_keys=True)


def chain(previous: str, items: Iterable[bytes]) -> str:
    """The chain digest after messages whose canonical JSON (:func:`canonical`: sorted keys,
    compact, defaults included, the bytes the old whole-list digest hashed per item) is
    ``items``, starting from ``previous`` (:data:`EMPTY_CHAIN` for
    none). ``c[k] = sha256(c[k-1] ‖ sha256(message k))``: the digest of a prefix is known at
    every commit without reading the messages again, so an append costs the new messages only."""
    value = bytes.fromhex(previous)
    for item in items:
        value = hashlib.sha256(value + hashlib.sha256(item).digest()).digest()
    return value.hex()


def _commit_line(count: int, chain_digest: str, fields: dict[str, Any]) -> tuple[bytes, Any]:
    """The commit line, and ``fields`` in the form :func:`read_head` gives them back (parsed
    JSON), so a head is the same whether it was just written or read."""
    body = codec.dumps({"count": count, "chain": chain_digest, "fields": fields})
    check = hashlib.sha256(body).hexdigest()[:_CHECK_LEN].encode()
    return _COMMIT + body + _CHECK + check + b'"}\n', codec.loads(body)["fields"]


def _parse_commit(line: bytes) -> dict[str, Any] | None:
    """The commit object of a whole line (newline included), or None if it is not a valid one."""
    if not (line.startswith(_COMMIT) and line.endswith(b'"}\n') and len(line) > _TAIL_LEN + 10):
        return None
    body, tail = line[len(_COMMIT) : -_TAIL_LEN], line[-_TAIL_LEN:]
    if not tail.startswith(_CHECK):
        return None
    check = tail[len(_CHECK) : len(_CHECK) + _CHECK_LEN]
    if hashlib.sha256(body).hexdigest()[:_CHECK_LEN].encode() != check:
        return None
    try:
        value = codec.loads(body)
    except ValueError:
        return None
    if not (
        isinstance(value, dict)
        and isinstance(value.get("count"), int)
        and isinstance(value.get("chain"), str)
        and isinstance(value.get("fields"), dict)
    ):
        return None
    return value


def _header_line(thread_id: str, generation: str) -> bytes:
    header = {"loomsync_thread": FORMAT, "id": thread_id, "generation": generation}
    return codec.dumps(header) + b"\n"


def _parse_header(line: bytes) -> dict[str, Any]:
    """The header object of line 1.

    Raises:
        ValueError: not a loomsync thread log of this format.
    """
    try:
        value = codec.loads(line)
    except ValueError:
        raise ValueError("the first line is not a thread log header") from None
    if not isinstance(value, dict) or value.get("loomsync_thread") != FORMAT:
        raise ValueError("the first line is not a thread log header")
    if not isinstance(value.get("generation"), str) or not isinstance(value.get("id"), str):
        raise ValueError("the header lacks id or generation")
    return value


def message_line(doc: dict[str, Any]) -> bytes:
    """One message line (the message as its codec document)."""
    return b'{"message":' + codec.dumps(doc) + b"}\n"


def encode(
    thread_id: str,
    fields: dict[str, Any],
    messages: Sequence[dict[str, Any]],
    chain_digest: str,
    generation: str | None = None,
) -> tuple[bytes, Head]:
    """A whole thread log's bytes (header, messages, one commit) and its head: what
    :func:`write_full` writes; ``generation`` defaults to a fresh random one. Arguments as
    :func:`write_full`'s."""
    generation = generation or secrets.token_hex(8)
    parts = [_header_line(thread_id, generation)]
    parts.extend(message_line(doc) for doc in messages)
    offset = sum(len(part) for part in parts)
    commit, written = _commit_line(len(messages), chain_digest, fields)
    parts.append(commit)
    head = Head(generation, len(messages), chain_digest, written, offset, offset + len(commit))
    return b"".join(parts), head


def write_full(
    path: Path,
    thread_id: str,
    fields: dict[str, Any],
    messages: Sequence[dict[str, Any]],
    chain_digest: str,
    *,
    lock: BaseFileLock,
) -> Head:
    """Rewrite the file whole (atomically and durably, :func:`loomsync.store.files.atomic_write`)
    with a new generation; the caller holds the thread's lock.

    Args:
        path: the thread file.
        thread_id: written in the header.
        fields: the thread document without its messages.
        messages: message documents, in order.
        chain_digest: :func:`chain` of ``messages``.
        lock: the thread's (re-entrant) lock, held by the caller.

    Raises:
        OSError: the write failed; the old file is then unchanged.
    """
    data, head = encode(thread_id, fields, messages, chain_digest)
    atomic_write(path, data, lock=lock)
    return head


def append(
    path: Path,
    head: Head,
    messages: Sequence[dict[str, Any]],
    fields: dict[str, Any],
    chain_digest: str,
) -> Head:
    """Append messages and a commit to a file whose last valid commit is ``head`` (from
    :func:`read_head` or a write, under the same lock the caller still holds): one ``write`` of
    the new lines after cutting off any unfinished save past ``head.end``, then ``fsync``.

    Args:
        messages: the new message documents (may be empty: a change of fields only).
        fields: the thread document without its messages, after this save.
        chain_digest: :func:`chain` continued from ``head.chain`` over ``messages``.

    Raises:
        OSError: the write failed; readers still see ``head`` (the partial lines are cut off by
            the next append).
    """
    data = b"".join(message_line(doc) for doc in messages)
    offset = head.end + len(data)
    commit, written = _commit_line(head.count + len(messages), chain_digest, fields)
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC, FILE_MODE)
    try:
        if os.fstat(fd).st_size != head.end:
            os.ftruncate(fd, head.end)
        os.lseek(fd, head.end, os.SEEK_SET)
        view = memoryview(data + commit)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    count = head.count + len(messages)
    return Head(head.generation, count, chain_digest, written, offset, offset + len(commit))


def _generation(handle: Any) -> str:
    handle.seek(0)
    return str(_parse_header(handle.readline(1 << 20))["generation"])


def read_head(path: Path) -> Head:
    """The last valid commit, read from the end of the file: O(size of that commit line).

    Raises:
        FileNotFoundError: no file.
        ValueError: not a thread log, or no valid commit in it.
    """
    with open(path, "rb") as handle:
        generation = _generation(handle)
        size = os.fstat(handle.fileno()).st_size
        want = _FIRST_READ
        while True:
            start = max(0, size - want)
            handle.seek(start)
            chunk = handle.read(size - start)
            found = _last_commit(chunk, start)
            if found is not None:
                value, offset, end = found
                return Head(
                    generation, value["count"], value["chain"], value["fields"], offset, end
                )
            if start == 0:
                raise ValueError("no valid commit in the thread log")
            want *= 4


def _last_commit(chunk: bytes, start: int) -> tuple[dict[str, Any], int, int] | None:
    """The last valid commit line wholly inside ``chunk`` (which begins at file offset
    ``start``; its first line may be cut, and is only used when ``start`` is 0)."""
    end = len(chunk)
    if end and chunk[end - 1 : end] != b"\n":
        end = chunk.rfind(b"\n") + 1  # an unfinished last line
    while end > 0:
        begin = chunk.rfind(b"\n", 0, end - 1) + 1
        if begin == 0 and start > 0:
            return None  # this line may begin before the chunk
        line = chunk[begin:end]
        if line.startswith(_COMMIT):
            value = _parse_commit(line)
            if value is not None:
                return value, start + begin, start + end
        end = begin
    return None


def read(path: Path) -> tuple[Head, list[dict[str, Any]]]:
    """The whole file: its last valid commit and the messages it commits (documents).

    A commit is valid when its line checks and it counts exactly the message lines before it;
    a message line that does not parse voids every commit after it.

    Raises:
        FileNotFoundError: no file.
        ValueError: not a thread log, or no valid commit in it.
    """
    with open(path, "rb") as handle:
        data = handle.read()
    return parse(data)


def parse(data: bytes) -> tuple[Head, list[dict[str, Any]]]:
    """:func:`read` of a file's bytes.

    Raises:
        ValueError: not a thread log, or no valid commit in it.
    """
    first = data.find(b"\n") + 1
    if first == 0:
        raise ValueError("the thread log has no header line")
    generation = str(_parse_header(data[:first])["generation"])
    messages: list[dict[str, Any]] = []
    best: tuple[Head, int] | None = None
    position = first
    broken = False
    while position < len(data):
        end = data.find(b"\n", position)
        if end < 0:
            break  # an unfinished last line
        line = data[position : end + 1]
        if line.startswith(_COMMIT):
            value = _parse_commit(line)
            if value is not None and not broken and value["count"] == len(messages):
                head = Head(
                    generation, value["count"], value["chain"], value["fields"], position, end + 1
                )
                best = (head, len(messages))
        elif not broken:
            doc = _message_of(line)
            if doc is None:
                broken = True
            else:
                messages.append(doc)
        position = end + 1
    if best is None:
        raise ValueError("no valid commit in the thread log")
    head, count = best
    del messages[count:]
    return head, messages


def _message_of(line: bytes) -> dict[str, Any] | None:
    try:
        value = codec.loads(line)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("message"), dict):
        return None
    message: dict[str, Any] = value["message"]
    return message


def messages_since(
    path: Path, generation: str, offset: int
) -> tuple[Head, list[dict[str, Any]]] | None:
    """The messages committed after the commit line at ``offset`` of ``generation``, and the
    file's last valid commit: O(what was appended since), for a push or an index update.

    Returns None when the file was rewritten since (another generation), or ``offset`` is not a
    valid commit line of it: the caller then reads the whole file.

    Raises:
        FileNotFoundError: no file.
        ValueError: not a thread log.
    """
    head = read_head(path)
    if head.generation != generation or offset > head.offset:
        return None
    with open(path, "rb") as handle:
        handle.seek(offset)
        data = handle.read(head.end - offset)
    first = data.find(b"\n") + 1
    base = _parse_commit(data[:first]) if first else None
    if base is None:
        return None
    messages: list[dict[str, Any]] = []
    for line in data[first:].splitlines(keepends=True):
        if line.startswith(_COMMIT):
            continue
        doc = _message_of(line)
        if doc is None:
            return None
        messages.append(doc)
    if base["count"] + len(messages) != head.count:
        return None
    return head, messages


__all__ = [
    "EMPTY_CHAIN",
    "FORMAT",
    "HEADER_START",
    "SUFFIX",
    "Head",
    "append",
    "canonical",
    "chain",
    "encode",
    "is_thread_file",
    "message_line",
    "messages_since",
    "parse",
    "read",
    "read_head",
    "thread_id_of",
    "write_full",
]
