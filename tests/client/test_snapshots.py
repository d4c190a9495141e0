"""Chain snapshots and bases (issue 15 item 2): the plan from a thread file's tail equals the
plan from the whole thread, a commit's snapshot equals the thread's, and bases an older client
wrote are upgraded, never trusted blindly. Through real thread logs (loomsync.store.threadlog)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from filelock import FileLock
from hypothesis import given, settings
from hypothesis import strategies as st

from loomsync.core.document import codec
from loomsync.core.document.model import Message, Thread
from loomsync.store import threadlog
from loomsync.sync.legacybase import upgraded
from loomsync.sync.merge import plan_appended, plan_push
from loomsync.sync.snapshots import (
    SyncBase,
    canonical,
    chain_of,
    snapshot,
    snapshot_of_head,
    split,
    sync_base,
)
from loomsync.sync.threadstates import REDACTED_BASE

THREAD_ID = "T-019b0000-0000-7000-8000-00000000abcd"
words = st.lists(st.text(max_size=12), max_size=6)
extra_fields = st.fixed_dictionaries(
    {},
    optional={
        "agent_state": st.sampled_from([{"kind": "idle"}, {"kind": "error", "detail": "x"}]),
        "git_branch": st.sampled_from(["main", "dev"]),
        "git_commits": st.lists(st.sampled_from(["1" * 40, "2" * 40]), max_size=2, unique=True),
        "metadata": st.fixed_dictionaries({"title": st.text(max_size=5)}),
        "last_activity_at": st.sampled_from(["2026-01-01T00:00:00Z", "2026-02-01T10:00:00.5Z"]),
    },
)


def thread_of(contents: list[str], **fields: Any) -> Thread:
    messages = [{"role": "user", "content": c} for c in contents]
    return Thread.model_validate(
        {"id": THREAD_ID, "conversation": {"messages": messages}, **fields}
    )


def fields_doc(thread: Thread) -> dict[str, Any]:
    """The commit fields a store writes: the document without its messages."""
    exclude: Any = {"conversation": {"messages"}}
    return thread.model_dump(mode="python", exclude_unset=True, by_alias=True, exclude=exclude)


def docs(messages: list[Message]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="python", exclude_unset=True, by_alias=True) for m in messages]


def written(path: Path, thread: Thread) -> threadlog.Head:
    """The thread as a fresh log file (write_full)."""
    lock = FileLock(str(path) + ".lock")
    digest = chain_of(thread.messages)
    return threadlog.write_full(
        path, THREAD_ID, fields_doc(thread), docs(thread.messages), digest, lock=lock
    )


def appended(path: Path, head: threadlog.Head, thread: Thread) -> threadlog.Head:
    """Append the thread's messages after ``head.count`` and a commit of its fields."""
    new = thread.messages[head.count :]
    return threadlog.append(
        path, head, docs(new), fields_doc(thread), chain_of(new, previous=head.chain)
    )


@settings(max_examples=60, deadline=None)
@given(common=words, new=words, before=extra_fields, after=extra_fields)
def test_the_plan_from_the_tail_equals_the_plan_from_the_whole_thread(
    tmp_path_factory: Any, common: list[str], new: list[str], before: Any, after: Any
) -> None:
    path = tmp_path_factory.mktemp("log") / f"{THREAD_ID}.jsonl"
    old, now = thread_of(common, **before), thread_of(common + new, **after)
    base = sync_base(old, 3, written(path, old))
    assert base.locates()
    head = appended(path, threadlog.read_head(path), now)
    since = threadlog.messages_since(path, head.generation, base.offset or 0)
    assert since is not None
    messages = [Message.model_validate(doc) for doc in since[1]]
    fast, whole = plan_appended(since[0], messages, base), plan_push(now, base)
    assert fast is not None
    assert (fast.kind, fast.fields, fast.snapshot) == (whole.kind, whole.fields, whole.snapshot)
    assert [m.content for m in fast.messages] == [m.content for m in whole.messages]


rich_messages = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant", "tool"]),
            "content": st.text(),
            "created_at": st.datetimes(timezones=st.timezones()) | st.none(),
            "x_unknown": st.integers()
            | st.text()
            | st.floats(allow_nan=False, allow_infinity=False),
        }
    ),
    max_size=4,
)


@settings(max_examples=80, deadline=None)
@given(messages=rich_messages, fields=extra_fields)
def test_a_commit_snapshot_equals_the_snapshot_of_its_thread(
    tmp_path_factory: Any, messages: list[dict[str, Any]], fields: Any
) -> None:
    thread = Thread.model_validate(
        {"id": THREAD_ID, "conversation": {"messages": messages}, **fields}
    )
    path = tmp_path_factory.mktemp("log") / f"{THREAD_ID}.jsonl"
    assert snapshot_of_head(written(path, thread)) == snapshot(thread)
    assert snapshot_of_head(threadlog.read_head(path)) == snapshot(thread)


def legacy_base(thread: Thread, version: int = 3) -> SyncBase:
    """A base as the client before issue 15 wrote it: digest of the normalised message list."""
    messages, fields = split(thread)
    data = {"message_count": len(messages), "messages_digest": codec.digest(messages)}
    return SyncBase.model_validate({**data, "fields": fields, "version": version})


def test_an_older_clients_base_is_upgraded_when_it_holds_the_local_prefix() -> None:
    old = thread_of(["a", "b"], agent_state={"kind": "idle"})
    base = legacy_base(old)
    assert base.digest is None
    assert not base.locates()
    plan = plan_push(thread_of(["a", "b", "c"], agent_state={"kind": "idle"}), base)
    assert plan.kind == "append"
    assert [m.content for m in plan.messages] == ["c"]
    assert plan.base is not None
    assert plan.base.digest == "chain"
    assert plan.base.messages_digest == chain_of(old.messages)
    assert plan_push(old, base).kind == "none"
    assert plan_push(old, base).base == sync_base(old, 3)


def test_an_older_clients_base_that_differs_is_left_to_a_full_put() -> None:
    base = legacy_base(thread_of(["a", "b"]))
    assert plan_push(thread_of(["a", "x", "c"]), base).kind == "put"
    assert plan_push(thread_of(["a"]), base).kind == "put"
    items = [canonical(m) for m in thread_of(["a", "x"]).messages]
    assert upgraded(base, items) is base  # not upgraded: it matches no copy


def test_a_redacted_or_unlocated_base_never_plans_from_the_tail(tmp_path: Path) -> None:
    thread = thread_of(["a"])
    path = tmp_path / f"{THREAD_ID}.jsonl"
    head = written(path, thread)
    base = sync_base(thread, 1, head)
    grown = thread_of(["a", "b"])
    tail = grown.messages[1:]
    later = appended(path, head, grown)
    assert plan_appended(later, tail, base) is not None
    redacted = base.model_copy(update={"messages_digest": REDACTED_BASE})
    assert plan_appended(later, tail, redacted) is None
    assert plan_appended(later, tail, base.model_copy(update={"generation": "other"})) is None
    assert plan_appended(later, [], base) is None  # the count does not add up
    wrong = [Message(role="user", content="not b")]
    assert plan_appended(later, wrong, base) is None  # the chain does not continue
    assert sync_base(thread, 1, later).generation is None  # a head of other messages
