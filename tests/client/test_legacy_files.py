"""Thread files of the first client, which wrote no ``visibility`` (its default was
``organization``, and the server holds its threads so): never shown as ``private``, and the
server's sharing is written into them when a server copy arrives (review P1-7)."""

from __future__ import annotations

import json
from pathlib import Path

from loomsync import SyncingThreadStore
from tests.client.conftest import Devices, LiveServer, Person, login, new_thread
from tests.client.threadfiles import stored_doc, write_log


def as_old_client_wrote(path: Path, **changes: object) -> None:
    """Rewrite a thread file the way the first client left it: no sharing keys."""
    doc = stored_doc(path)
    doc.pop("visibility")
    doc.pop("is_shared_with_support", None)
    doc.update(changes)
    write_log(path, doc)


def written_sharing(store: SyncingThreadStore, thread_id: str) -> tuple[object, object]:
    doc = stored_doc(store.local.path(thread_id))
    return doc.get("visibility"), doc.get("is_shared_with_support")


def test_an_old_client_file_shows_what_the_server_holds_not_private(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    thread_id = str(person.agent().save(new_thread(2, visibility="organization")).id)
    assert person("sync").code == 0
    as_old_client_wrote(person.paths.threads_dir / f"{thread_id}.jsonl")
    listed = person("list", "--json")
    assert listed.code == 0, listed.err
    [row] = [r for r in json.loads(listed.out) if r["id"] == thread_id]
    assert row["visibility"] == "organization"
    shown = person("show", thread_id, "--json")
    assert json.loads(shown.out)["visibility"] == "organization"
    assert person.agent().load(thread_id).visibility == "organization"


def test_a_server_copy_writes_its_sharing_into_an_old_client_file(devices: Devices) -> None:
    a = devices("a")
    pulled = a.save_and_sync(new_thread(2, visibility="organization"))
    thread_id = pulled.thread_id
    as_old_client_wrote(a.local.path(thread_id))
    b = devices("b")
    b.update_metadata(thread_id, {"title": "renamed elsewhere"})
    assert b.sync_thread(thread_id).status == "synced"
    assert any(o.status == "pulled" for o in a.pull())
    assert written_sharing(a, thread_id) == ("organization", False)
    assert a.load(thread_id).metadata.title == "renamed elsewhere"


def test_a_put_answer_writes_its_sharing_into_an_old_client_file(devices: Devices) -> None:
    a = devices("a")
    thread_id = a.save_and_sync(new_thread(2, visibility="organization")).thread_id
    metadata = {"title": "renamed by the old client"}
    as_old_client_wrote(a.local.path(thread_id), metadata=metadata)
    a.queue.add(thread_id, "save")  # the old client's pending upload
    assert a.sync_thread(thread_id).status == "synced"
    assert written_sharing(a, thread_id) == ("organization", False)
    assert a.client is not None
    assert a.client.get_thread(thread_id).visibility == "organization"
    assert a.pending_count() == 0
