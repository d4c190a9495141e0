"""The pure sync logic: push plans and merges never lose a message (hypothesis properties)."""

from __future__ import annotations

from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from loomsync.core.document import codec
from loomsync.core.document.model import Thread
from loomsync.store import threadlog
from loomsync.sync.legacybase import digests
from loomsync.sync.merge import (
    chain_of,
    merge_fields,
    merge_save,
    plan_push,
    resolve_conflict,
    snapshot,
    split,
    sync_base,
)
from tests.client.conftest import new_thread

words = st.lists(st.text(min_size=0, max_size=12), min_size=0, max_size=6)


def thread_of(contents: list[str], **fields: object) -> Thread:
    messages = [{"role": "user", "content": c} for c in contents]
    return Thread.model_validate(
        {
            "id": "T-019b0000-0000-7000-8000-00000000abcd",
            "conversation": {"messages": messages},
            **fields,
        }
    )


def contents(thread: Thread) -> list[str]:
    return [m.content for m in thread.messages]


@settings(max_examples=150, deadline=None)
@given(common=words, mine=words, theirs=words)
def test_a_conflict_merge_never_drops_a_message(
    common: list[str], mine: list[str], theirs: list[str]
) -> None:
    base = sync_base(thread_of(common), 1)
    local, server = thread_of(common + mine), thread_of(common + theirs, version=2)
    resolution = resolve_conflict(local, base, server)
    merged = contents(resolution.merged)
    if resolution.kind == "diverged":
        assert merged == common + theirs  # the server's copy; the caller forks the local side
        assert common + mine != merged[: len(common + mine)]
        assert common + theirs != (common + mine)[: len(common + theirs)]
    else:
        assert merged[: len(common + mine)] == common + mine
        assert merged[: len(common + theirs)] == common + theirs


@settings(max_examples=100, deadline=None)
@given(common=words, new=words)
def test_new_messages_on_top_of_the_base_are_an_append_of_exactly_those(
    common: list[str], new: list[str]
) -> None:
    base = sync_base(thread_of(common), 3)
    plan = plan_push(thread_of(common + new), base)
    if new:
        assert plan.kind == "append"
        assert [m.content for m in plan.messages] == new
    else:
        assert plan.kind == "none"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.sampled_from(["lone \ud800 surrogate", "\x00", "é日本", "1e16"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(messages=st.lists(json_values, max_size=8), prefix=st.integers(0, 10))
def test_one_pass_digests_equal_hashing_each_list(messages: list[object], prefix: int) -> None:
    head, whole = digests(messages, prefix)
    assert whole == codec.digest(messages)
    assert head == (codec.digest(messages[:prefix]) if prefix <= len(messages) else "")


@settings(max_examples=100, deadline=None)
@given(common=words, new=words)
def test_a_plan_carries_the_snapshot_of_the_thread_it_planned(
    common: list[str], new: list[str]
) -> None:
    thread = thread_of(common + new, agent_state={"kind": "idle"})
    plan = plan_push(thread, sync_base(thread_of(common), 3))
    assert plan.snapshot == snapshot(thread)
    assert plan.snapshot.messages_digest == chain_of(thread.messages)


rich_messages = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant", "tool"]),
            "content": st.text(),
            # local times a day inside the model's range, so any offset stays in it in UTC
            "created_at": st.datetimes(
                min_value=datetime(1, 1, 2),
                max_value=datetime(9999, 12, 30),
                timezones=st.timezones(),
            )
            | st.none(),
            "tool_calls": st.lists(
                st.fixed_dictionaries({"id": st.text(max_size=4), "arguments_json": json_values}),
                max_size=2,
            ),
            "x_unknown": json_values,
        }
    ),
    max_size=5,
)


@settings(max_examples=150, deadline=None)
@given(messages=rich_messages, extra=json_values)
def test_snapshots_hash_exactly_the_normalised_messages(
    messages: list[dict[str, object]], extra: object
) -> None:
    thread = Thread.model_validate(
        {"conversation": {"messages": messages}, "metadata": {"extra": {"k": extra}}}
    )
    normalised, fields = split(thread)
    taken = snapshot(thread)
    canonical = [codec.dumps(m, sort_keys=True) for m in normalised]  # as the old digest hashed
    assert taken.messages_digest == threadlog.chain(threadlog.EMPTY_CHAIN, canonical)
    assert taken.message_count == len(normalised)
    assert taken.fields == fields


def test_other_changes_need_a_full_put() -> None:
    base = sync_base(thread_of(["a", "b"]), 3)
    assert plan_push(thread_of(["a", "b", "c"], metadata={"title": "t"}), base).kind == "put"
    assert plan_push(thread_of(["a", "x"]), base).kind == "put"  # history rewritten
    assert plan_push(thread_of(["a"]), base).kind == "put"  # truncated
    assert plan_push(thread_of(["a", "b"]), None).kind == "put"  # never uploaded


def test_state_and_git_changes_ride_along_with_an_append() -> None:
    base = sync_base(thread_of(["a"], git_commits=["1" * 40]), 3)
    local = thread_of(
        ["a", "b"],
        git_commits=["1" * 40, "2" * 40],
        git_branch="main",
        agent_state={"kind": "error"},
    )
    plan = plan_push(local, base)
    assert plan.kind == "append"
    assert plan.fields["git_commits"] == ["2" * 40]
    assert plan.fields["git_branch"] == "main"
    assert plan.fields["agent_state"]["kind"] == "error"
    cleared = thread_of(["a", "b"], git_commits=[])
    assert plan_push(cleared, base).kind == "put"  # an append cannot remove commits


def test_fields_merge_three_ways() -> None:
    base = {"title": "old", "tags": ["x"], "meta": {"a": 1, "b": 1}, "git_commits": ["1"]}
    mine = {"title": "mine", "tags": ["x"], "meta": {"a": 2, "b": 1}, "git_commits": ["1", "2"]}
    theirs = {"title": "old", "tags": ["y"], "meta": {"a": 1, "b": 3}, "git_commits": ["1", "3"]}
    assert merge_fields(base, mine, theirs) == {
        "title": "mine",
        "tags": ["y"],
        "meta": {"a": 2, "b": 3},
        "git_commits": ["1", "3", "2"],
    }


def test_a_stale_writer_keeps_what_others_changed_and_forks_on_divergence() -> None:
    previous = snapshot(new_thread(2))
    writer = thread_of(["turn 0", "turn 1", "mine"])
    renamed = thread_of(["turn 0", "turn 1"], metadata={"title": "renamed"}, visibility="public")
    merged = merge_save(writer, previous, renamed)
    assert not merged.fork
    assert contents(merged.thread) == ["turn 0", "turn 1", "mine"]
    assert (merged.thread.metadata.title, merged.thread.visibility) == ("renamed", "public")

    pulled = thread_of(["turn 0", "turn 1", "theirs"])
    assert merge_save(writer, previous, pulled).fork
    rewritten = thread_of(["turn 0 edited"])
    assert contents(merge_save(rewritten, previous, thread_of(["turn 0", "turn 1"])).thread) == [
        "turn 0 edited"
    ]


def message_thread(*messages: dict[str, str]) -> Thread:
    return Thread.model_validate(
        {"id": "T-019b0000-0000-7000-8000-00000000abcd", "conversation": {"messages": messages}}
    )


def test_a_message_that_is_wholly_a_marker_is_no_redaction_of_another_one() -> None:
    """Review P2-10: both sides added a tool message since the ancestor; the file's is a
    marker. Taking it for a redaction of the writer's would drop the writer's message."""
    base = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]
    previous = snapshot(message_thread(*base))
    current = message_thread(*base, {"role": "tool", "content": "[REDACTED:private-key]"})
    writer = message_thread(*base, {"role": "tool", "content": "Tests: 130 passed in 4.2s"})
    merged = merge_save(writer, previous, current)
    assert merged.fork  # nothing lost: the writer's copy goes to a fork
    assert contents(merged.thread)[-1] == "Tests: 130 passed in 4.2s"
    server_side = resolve_conflict(writer, sync_base(previous, 1), current)
    assert server_side.kind == "diverged"
