"""LocalThreadStore: atomic files, quarantine of corrupt files, stray temp files, the summary
index (10,000 threads listed without parsing them), local search."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest
from filelock import FileLock
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loomsync import CorruptThreadError, LocalThreadStore, Thread, ThreadId, atomic_write
from loomsync.store.localsearch import search_threads
from tests.client.conftest import new_thread, with_turns
from tests.client.threadfiles import stored_doc


def test_atomic_write_leaves_one_whole_private_file(tmp_path: Path) -> None:
    target = tmp_path / "file.json"
    atomic_write(target, b'{"a": 1}')
    atomic_write(target, b'{"a": 2}')
    assert json.loads(target.read_text()) == {"a": 2}
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == [
        "file.json"
    ]


def test_thread_files_are_json_lines_named_by_id(tmp_path: Path) -> None:
    store = LocalThreadStore(tmp_path)
    saved = store.save(new_thread(2))
    lines = [json.loads(line) for line in (tmp_path / f"{saved.id}.jsonl").read_text().splitlines()]
    assert lines[0]["id"] == str(saved.id)
    assert [line["message"]["content"] for line in lines[1:3]] == ["turn 0", "turn 1"]
    assert lines[3]["commit"]["count"] == 2
    assert (
        stored_doc(tmp_path / f"{saved.id}.jsonl")["conversation"]["messages"][1]["content"]
        == "turn 1"
    )


def test_corrupt_file_is_reported_and_moved_aside_never_emptied(tmp_path: Path) -> None:
    store = LocalThreadStore(tmp_path)
    saved = store.save(new_thread(3))
    path = tmp_path / f"{saved.id}.jsonl"
    path.write_text('{"id": "' + str(saved.id) + '", "conversation": {"mess')  # not a log

    with pytest.raises(CorruptThreadError) as caught:
        store.load(str(saved.id))
    moved = caught.value.quarantined_to
    assert moved is not None
    assert moved.read_text().endswith('{"mess')  # the bad bytes are kept, not emptied
    assert not path.exists()
    assert store.problems == [caught.value]
    assert store.list() == []

    fresh = store.save(with_turns(saved, "rewritten"))  # a real save may take the id again
    assert len(store.load(str(fresh.id)).messages) == 4


def test_listing_reports_corrupt_files_and_keeps_the_rest(tmp_path: Path) -> None:
    store = LocalThreadStore(tmp_path)
    good = store.save(new_thread(1))
    bad_id = ThreadId.new()
    (tmp_path / f"{bad_id}.jsonl").write_text("")
    assert [s.id for s in store.list()] == [str(good.id)]
    assert [p.thread_id for p in store.problems] == [bad_id]
    assert list((tmp_path / ".quarantine").iterdir())


def test_a_file_holding_another_thread_is_corrupt(tmp_path: Path) -> None:
    store = LocalThreadStore(tmp_path)
    other = store.save(new_thread(1))
    wrong = tmp_path / f"{ThreadId.new()}.jsonl"
    wrong.write_bytes((tmp_path / f"{other.id}.jsonl").read_bytes())
    with pytest.raises(CorruptThreadError, match="holds thread"):
        store.load(wrong.stem)


def test_stray_temp_files_are_removed_on_start_unless_a_writer_holds_the_lock(
    tmp_path: Path,
) -> None:
    LocalThreadStore(tmp_path)
    stray_id, busy_id = ThreadId.new(), ThreadId.new()
    stray = tmp_path / f".{stray_id}.jsonl.4242.deadbeef.tmp"
    busy = tmp_path / f".{busy_id}.jsonl.4243.cafebabe.tmp"
    stray.write_text("{")
    busy.write_text("{")
    holder = FileLock(str(tmp_path / ".locks" / f"{busy_id}.lock"))
    done = threading.Event()
    held = threading.Event()

    def hold() -> None:
        with holder:
            held.set()
            done.wait(10)

    worker = threading.Thread(target=hold)
    worker.start()
    held.wait(5)
    try:
        store = LocalThreadStore(tmp_path)
        assert store.removed_temp_files == [stray]
        assert busy.exists()
    finally:
        done.set()
        worker.join()


def test_threads_saving_concurrently_in_one_process_never_tear_a_file(tmp_path: Path) -> None:
    store = LocalThreadStore(tmp_path)
    thread = store.save(new_thread(0))
    errors: list[BaseException] = []

    def writer(name: str) -> None:
        copy = thread
        try:
            for index in range(30):
                copy = store.save(with_turns(copy, f"{name} {index}"))
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=writer, args=(n,)) for n in "abc"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert len(store.load(str(thread.id)).messages) == 30
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def search_fixture() -> list[Thread]:
    return [
        new_thread(
            0,
            metadata={"title": "Fix login redirect", "tags": ["auth", "bug"]},
            git_branch="feature/auth-redirect",
            git_remote_url="github.com/acme/webapp",
            git_commits=["0123456789abcdef0123456789abcdef01234567"],
            conversation={
                "messages": [{"role": "user", "content": "The <login> page loops forever"}]
            },
        ),
        new_thread(
            0,
            metadata={"title": "Speed up the build"},
            conversation={"messages": [{"role": "tool", "content": "webpack took 93 seconds"}]},
        ),
    ]


@pytest.mark.parametrize(
    ("query", "title"),
    [
        ("login", "Fix login redirect"),
        ("AUTH", "Fix login redirect"),
        ("feature/auth", "Fix login redirect"),
        ("acme/webapp", "Fix login redirect"),
        ("0123456", "Fix login redirect"),
        ("webpack seconds", "Speed up the build"),
        ("loops forever", "Fix login redirect"),
    ],
)
def test_local_search_matches_title_tags_git_commits_and_content(query: str, title: str) -> None:
    hits = search_threads(search_fixture(), query)
    assert [h.thread.title for h in hits] == [title]


def test_local_search_ranks_threads_holding_some_words_and_escapes_snippets() -> None:
    found = search_threads(search_fixture(), "webpack login")  # no word is required (issue 14)
    assert sorted(h.thread.title or "" for h in found) == [
        "Fix login redirect",
        "Speed up the build",
    ]
    assert search_threads(search_fixture(), "3456789") == []  # commits match by prefix only
    (hit,) = search_threads(search_fixture(), "loops")
    assert hit.snippet == "The &lt;login&gt; page <b>loops</b> forever"
    assert hit.message_index == 0


def test_local_store_search_skips_archived_threads(tmp_path: Path) -> None:
    store = LocalThreadStore(tmp_path)
    kept, hidden = (store.save(t) for t in search_fixture())
    store.archive(str(hidden.id))
    assert [h.thread.id for h in store.search("webpack login").hits] == [str(kept.id)]
    assert os.listdir(tmp_path)


any_text = st.text(st.characters(blacklist_categories=()), max_size=40)  # NUL, lone surrogates
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | any_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
    max_leaves=8,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    contents=st.lists(any_text, max_size=5),
    unknown=st.dictionaries(
        st.text("abcdefghij_", min_size=1, max_size=8).map("x_".__add__), json_values, max_size=3
    ),
)
def test_any_text_and_unknown_fields_round_trip_through_the_files(
    tmp_path: Path, contents: list[str], unknown: dict[str, object]
) -> None:
    store = LocalThreadStore(tmp_path)
    messages = [{"role": "user", "content": c, **unknown} for c in contents]
    thread = Thread.model_validate({"conversation": {"messages": messages}, **unknown})
    saved = store.save(thread)
    loaded = store.load(str(saved.id))
    assert loaded.model_dump() == saved.model_dump()
    assert [m.content for m in loaded.messages] == contents
