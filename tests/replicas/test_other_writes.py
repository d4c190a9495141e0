"""Read-your-writes for the writes besides PUT and append (issue 18 review): a PATCH, a fork and
a DELETE through one instance are seen by the very next list and search through the other, with
those reads served by the replica (which applies each commit 150 ms late, so they had to wait
for it: tests/replicas/support.py)."""

from __future__ import annotations

import uuid

import httpx

from loomsync.core.document.ids import ThreadId
from tests.documents import thread_doc
from tests.replicas.load import rare_word
from tests.replicas.support import Setup, reads


def _on_replica(setup: Setup) -> float:
    return reads(setup.b.base_url).get(("replica", "caught-up"), 0)


def test_patch_fork_and_delete_are_seen_by_the_next_list_and_search(setup: Setup) -> None:
    headers = setup.headers(f"other-writes-{uuid.uuid4().hex[:8]}")
    tid = ThreadId.new()
    before = _on_replica(setup)
    with (
        httpx.Client(base_url=setup.a.base_url, headers=headers, timeout=30) as a,
        httpx.Client(base_url=setup.b.base_url, headers=headers, timeout=30) as b,
    ):

        def listed() -> list[str]:
            page = b.get("/api/threads", params={"scope": "mine"})
            assert page.status_code == 200, page.text
            return [t["id"] for t in page.json()["threads"]]

        def found(word: str) -> list[str]:
            page = b.get("/api/threads/search", params={"q": word})
            assert page.status_code == 200, page.text
            return [h["thread"]["id"] for h in page.json()["hits"]]

        assert a.put(f"/api/threads/{tid}", json=thread_doc(tid, "plain")).status_code == 201
        word = rare_word()
        patched = a.patch(
            f"/api/threads/{tid}",
            json={"metadata": {"title": f"now about {word}"}},
            headers={"If-Match": '"1"'},
        )
        assert patched.status_code == 200, patched.text
        assert found(word) == [str(tid)]
        fork = a.post(f"/api/threads/{tid}/fork", json={})
        assert fork.status_code == 201, fork.text
        forked = fork.json()["id"]
        assert set(listed()) == {str(tid), forked}
        etag = patched.headers["ETag"]
        assert a.delete(f"/api/threads/{tid}", headers={"If-Match": etag}).status_code == 204
        assert listed() == [forked]
        assert str(tid) not in found(word)
    assert _on_replica(setup) - before == 4  # every one of those reads ran on the replica
