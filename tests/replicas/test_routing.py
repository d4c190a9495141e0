"""Which database a request runs on (app/replicas/routing.py): list and search on the replica
once it has caught up, the GET of one thread and every write on the primary. Each server's own
statement log (``log_statement = all``) is the witness, with the routing counters."""

from __future__ import annotations

import uuid

import httpx

from loomsync.core.document.ids import ThreadId
from tests.documents import thread_doc
from tests.replicas.support import Setup, reads

#: Text of the list statement and of the search's ranking statement, as the server logs them.
LIST_SQL = "ORDER BY threads.last_activity_at DESC, threads.id DESC"
SEARCH_SQL = "search_vector"
#: The GET of one thread reads its messages in runs (app/threads/reads.py, _RUN).
GET_SQL = "string_agg"


def test_list_and_search_run_on_the_replica_and_get_on_the_primary(setup: Setup) -> None:
    primary, replica = setup.cluster.primary, setup.cluster.replicas[0]
    headers = setup.headers(f"router-{uuid.uuid4().hex[:8]}")
    word = "quokka" + uuid.uuid4().hex[:6].translate(str.maketrans("0123456789", "ghijklmnop"))
    tid = ThreadId.new()
    with httpx.Client(base_url=setup.a.base_url, headers=headers, timeout=30) as a:
        put = a.put(f"/api/threads/{tid}", json=thread_doc(tid, f"about the {word}"))
        assert put.status_code == 201, put.text
    setup.cluster.wait_replayed()
    before = reads(setup.b.base_url)
    marks = primary.log_size(), replica.log_size()
    with httpx.Client(base_url=setup.b.base_url, headers=headers, timeout=30) as b:
        listed = b.get("/api/threads")
        found = b.get("/api/threads/search", params={"q": word})
        on_primary, on_replica = primary.log_since(marks[0]), replica.log_since(marks[1])
        marks = primary.log_size(), replica.log_size()
        got = b.get(f"/api/threads/{tid}")
    assert listed.status_code == found.status_code == got.status_code == 200
    assert [t["id"] for t in listed.json()["threads"]] == [str(tid)]
    assert [h["thread"]["id"] for h in found.json()["hits"]] == [str(tid)]
    assert LIST_SQL in on_replica
    assert SEARCH_SQL in on_replica
    assert LIST_SQL not in on_primary
    assert SEARCH_SQL not in on_primary
    assert "pg_current_wal_lsn" in on_primary  # where the replica had to be
    get_primary, get_replica = primary.log_since(marks[0]), replica.log_since(marks[1])
    assert GET_SQL in get_primary
    assert GET_SQL not in get_replica
    after = reads(setup.b.base_url)
    assert after[("replica", "caught-up")] - before.get(("replica", "caught-up"), 0) == 2


def test_writes_never_touch_the_replica(setup: Setup) -> None:
    replica = setup.cluster.replicas[0]
    headers = setup.headers(f"writer-{uuid.uuid4().hex[:8]}")
    mark = replica.log_size()
    tid = ThreadId.new()
    with httpx.Client(base_url=setup.a.base_url, headers=headers, timeout=30) as a:
        assert a.put(f"/api/threads/{tid}", json=thread_doc(tid, "one")).status_code == 201
        append = a.post(
            f"/api/threads/{tid}/messages",
            json={"messages": [{"role": "assistant", "content": "two"}]},
            headers={"If-Match": '"1"'},
        )
        assert append.status_code == 200, append.text
        assert a.delete(f"/api/threads/{tid}", headers={"If-Match": '"2"'}).status_code == 204
    written = replica.log_since(mark)
    assert "INSERT" not in written
    assert "UPDATE" not in written
