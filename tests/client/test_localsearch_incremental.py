"""Local search on the thread logs (issue 15 item 3): a thread that only grew since it was
indexed gets only its new messages indexed; a rewritten one (a new generation) is indexed again
whole; either way the index equals one built from scratch."""

from __future__ import annotations

from pathlib import Path

from loomsync import LocalThreadStore, Thread
from loomsync.store.localsearch import INDEX_NAME, LocalIndex
from tests.client.conftest import new_thread, with_turns


def _thread(title: str, *contents: str) -> Thread:
    messages = [{"role": "user", "content": c} for c in contents]
    return new_thread(0, metadata={"title": title}, conversation={"messages": messages})


def _docs(store: LocalThreadStore, thread_id: str) -> dict[int, int]:
    """seq → doc row of one thread's indexed documents (a row kept is a message not redone)."""
    with LocalIndex.open(store.root / INDEX_NAME) as index:
        query = (
            "SELECT seq, doc FROM docs JOIN threads USING (tid) WHERE threads.id = ? ORDER BY seq"
        )
        return dict(index.db.execute(query, (thread_id,)).fetchall())


def _state(path: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """What searches depend on: totals, and each thread's counts (not row ids)."""
    with LocalIndex.open(path) as index:
        totals = index.db.execute("SELECT * FROM totals ORDER BY kind").fetchall()
        threads = index.db.execute(
            "SELECT id, archived, summary, messages, (SELECT count(*) FROM docs d WHERE d.tid = "
            "t.tid), (SELECT count(*) FROM postings p JOIN docs d USING (doc) WHERE d.tid = "
            "t.tid) FROM threads t ORDER BY id"
        ).fetchall()
    return totals, threads


def test_one_more_turn_indexes_that_turn_only(tmp_path: Path) -> None:
    store = LocalThreadStore(tmp_path)
    thread = store.save(_thread("zoo", *(f"message {i} about the wombat" for i in range(30))))
    assert [h.thread.id for h in store.search("wombat").hits] == [str(thread.id)]
    before = _docs(store, str(thread.id))
    assert len(before) == 31  # 30 messages and the thread's own document (seq -1)

    thread = store.save(with_turns(thread, "a numbat appears", "and a quokka"))
    (hit,) = store.search("numbat").hits
    assert hit.message_index == 30
    assert hit.thread.message_count == 32
    after = _docs(store, str(thread.id))
    assert {seq: after[seq] for seq in range(30)} == {seq: before[seq] for seq in range(30)}
    assert set(after) == set(before) | {30, 31}

    fresh = tmp_path / "fresh.sqlite3"  # the same threads indexed from scratch
    with LocalIndex.open(fresh) as index:
        index.refresh(store.search_source())
    assert _state(fresh) == _state(tmp_path / INDEX_NAME)


def test_a_change_of_title_alone_redoes_the_thread_document_not_the_messages(
    tmp_path: Path,
) -> None:
    store = LocalThreadStore(tmp_path)
    thread = store.save(_thread("wombat notes", "first", "second"))
    store.search("wombat")
    before = _docs(store, str(thread.id))
    metadata = thread.metadata.model_copy(update={"title": "numbat notes"})
    store.save(thread.model_copy(update={"metadata": metadata}))
    assert store.search("wombat").hits == []
    assert [h.thread.title for h in store.search("numbat").hits] == ["numbat notes"]
    after = _docs(store, str(thread.id))
    assert (after[0], after[1]) == (before[0], before[1])
    assert after[-1] != before[-1]


def test_a_rewritten_log_is_indexed_again_whole(tmp_path: Path) -> None:
    store = LocalThreadStore(tmp_path)
    thread = store.save(_thread("zoo", "the wombat burrows", "and sleeps"))
    store.search("wombat")
    rewritten = _thread("zoo", "a numbat digs").model_copy(update={"id": thread.id})
    store.save(rewritten)  # not an append: the file is rewritten (a new generation)
    assert store.search("wombat").hits == []
    assert [h.message_index for h in store.search("numbat").hits] == [0]
    assert set(_docs(store, str(thread.id))) == {-1, 0}
    fresh = tmp_path / "fresh.sqlite3"
    with LocalIndex.open(fresh) as index:
        index.refresh(store.search_source())
    assert _state(fresh) == _state(tmp_path / INDEX_NAME)
