"""The thread log format (loomsync.store.threadlog): a save torn at any byte is never served and
is cut off by the next append; heads read from the end equal heads just written."""

from __future__ import annotations

from pathlib import Path

from filelock import FileLock
from hypothesis import given, settings
from hypothesis import strategies as st

from loomsync.core.document.model import Message
from loomsync.store import threaddocs, threadlog


def _log(path: Path, contents: list[str]) -> threadlog.Head:
    messages = [Message(role="user", content=c) for c in contents]
    docs = threaddocs.message_docs(messages)
    digest = threaddocs.chain_of(threadlog.EMPTY_CHAIN, messages)
    lock = FileLock(str(path) + ".lock")
    return threadlog.write_full(path, "T-x", {"metadata": {"title": "t"}}, docs, digest, lock=lock)


def _append(path: Path, head: threadlog.Head, contents: list[str]) -> threadlog.Head:
    messages = [Message(role="user", content=c) for c in contents]
    digest = threaddocs.chain_of(head.chain, messages)
    return threadlog.append(path, head, threaddocs.message_docs(messages), {"n": 1}, digest)


@settings(max_examples=60, deadline=None)
@given(
    first=st.lists(st.text(max_size=40), max_size=4),
    more=st.lists(st.text(), min_size=1, max_size=3),
)
def test_a_save_torn_at_any_byte_is_never_served_and_the_next_append_cuts_it(
    tmp_path_factory: object, first: list[str], more: list[str]
) -> None:
    folder = tmp_path_factory.mktemp("log")  # type: ignore[attr-defined]
    path = folder / "T-x.jsonl"
    head = _log(path, first)
    whole = _append(path, head, more)
    data = path.read_bytes()
    for cut in range(head.end, len(data)):
        path.write_bytes(data[:cut])
        read, docs = threadlog.parse(data[:cut])
        assert read == threadlog.read_head(path) == head  # the torn save is not served
        assert [d["content"] for d in docs] == first
        again = _append(path, read, more)  # the torn tail is cut off first
        assert (again.count, again.chain) == (whole.count, whole.chain)
        assert threadlog.read(path)[1] == threadlog.parse(data)[1]


def test_heads_read_equal_heads_written_and_messages_since_gives_the_appended(
    tmp_path: Path,
) -> None:
    path = tmp_path / "T-x.jsonl"
    head = _log(path, ["a", "b"])
    assert threadlog.read_head(path) == head
    later = _append(path, head, ["c"])
    assert threadlog.read_head(path) == later
    since = threadlog.messages_since(path, head.generation, head.offset)
    assert since is not None
    assert [d["content"] for d in since[1]] == ["c"]
    assert threadlog.messages_since(path, "another", head.offset) is None
    big = _append(path, later, ["x" * 300_000])  # a commit far from the first read window
    assert threadlog.read_head(path) == big
