"""Issue 16, items 2 and 3: the one count of the sync queue (:mod:`loomsync.sync.counts`) that
``loomsync sync`` and ``loomsync status`` print: a failed entry is counted as failed (never as
"failed 0"), an entry the server answered 401 stays pending and is counted as waiting for a
login, and dropping the failed entries leaves the pending ones. A real queue file on disk."""

from __future__ import annotations

from pathlib import Path

from loomsync import LocalThreadStore, SyncingThreadStore
from loomsync.sync.counts import QueueCounts, queue_counts
from loomsync.sync.queue import QUEUE_FILE, PendingEntry, PendingSyncQueue

IDS = [f"T-0b8a3f2e-6a3c-4d7e-9f1a-2b3c4d5e6f7{i}" for i in range(4)]


def _entry(queue: PendingSyncQueue, thread_id: str) -> PendingEntry:
    return next(e for e in queue.entries() if e.thread_id == thread_id)


def test_counts_say_pending_failed_and_waiting_for_login(tmp_path: Path) -> None:
    queue = PendingSyncQueue(tmp_path / QUEUE_FILE)
    assert queue_counts(queue.entries()) == QueueCounts(0, 0, 0)
    for thread_id in IDS:
        queue.add(thread_id, "save")
    queue.fail(_entry(queue, IDS[0]), "refused by the server (413): too big")
    queue.wait_for_login(_entry(queue, IDS[1]), "the server refused the token")
    queue.retry_later(_entry(queue, IDS[2]), "cannot reach", base=1, cap=2)

    counts = queue_counts(PendingSyncQueue(tmp_path / QUEUE_FILE).entries())  # from disk

    assert counts == QueueCounts(pending=3, failed=1, waiting_for_login=1)
    assert counts.total == 4
    assert counts.as_dict() == {"pending": 3, "failed": 1, "waiting_for_login": 1}
    refused = _entry(queue, IDS[1])
    assert (refused.retry_count, refused.next_attempt_at, refused.failed) == (0, None, False)
    assert refused.last_error == "the server refused the token"


def test_a_later_attempt_or_a_new_save_ends_the_wait_for_login(tmp_path: Path) -> None:
    queue = PendingSyncQueue(tmp_path / QUEUE_FILE)
    queue.add(IDS[0], "save")
    queue.add(IDS[1], "patch", {"archived": True})
    queue.wait_for_login(_entry(queue, IDS[0]), "refused token")
    queue.wait_for_login(_entry(queue, IDS[1]), "refused token")
    assert queue_counts(queue.entries()).waiting_for_login == 2
    queue.retry_later(_entry(queue, IDS[0]), "cannot reach", base=1, cap=2)  # now offline
    queue.add(IDS[1], "patch", {"archived": False})  # enqueued again: a new attempt is due
    assert queue_counts(queue.entries()) == QueueCounts(pending=2, failed=0, waiting_for_login=0)


def test_drop_failed_removes_only_failed_entries(tmp_path: Path) -> None:
    queue = PendingSyncQueue(tmp_path / QUEUE_FILE)
    for thread_id in IDS[:3]:
        queue.add(thread_id, "save")
    queue.add(IDS[0], "patch", {"archived": True})
    queue.fail(_entry(queue, IDS[0]), "refused")
    queue.fail(_entry(queue, IDS[1]), "refused")
    patch = next(e for e in queue.entries() if e.op == "patch")
    queue.fail(patch, "refused (403)")

    one = queue.drop_failed(IDS[0])
    assert sorted(e.op for e in one) == ["patch", "save"]
    assert queue_counts(queue.entries()) == QueueCounts(pending=1, failed=1)
    rest = queue.drop_failed()
    assert [e.thread_id for e in rest] == [IDS[1]]
    assert [e.thread_id for e in queue.entries()] == [IDS[2]]  # the pending one stays
    assert queue.drop_failed() == []


def test_the_store_counts_what_its_queue_holds(tmp_path: Path) -> None:
    store = SyncingThreadStore(
        LocalThreadStore(tmp_path / "threads"), None, sync_dir=tmp_path / "sync", background=False
    )
    store.queue.add(IDS[0], "save")
    store.queue.add(IDS[1], "delete")
    store.queue.fail(_entry(store.queue, IDS[1]), "forbidden (403)")
    assert store.counts() == QueueCounts(pending=1, failed=1)
    assert store.counts() == queue_counts(store.status())
    store.close()
