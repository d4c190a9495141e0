"""Snippets of hits without a matching message (issue 14 review): the title, else the git
metadata that matched, else the commit; and one rule for content against tool-call text. The
server (a real one, over HTTP) and the local search give the same snippet."""

from __future__ import annotations

from loomsync import MemoryThreadStore, Thread
from tests.client.conftest import LiveServer, make_client

SHA = "0294234f00dfeed5ab1e0123456789abcdef0123"


def thread() -> Thread:
    return Thread.model_validate(
        {
            "metadata": {"title": "Refactor the router"},
            "git_branch": "feature/zanzibar-login",
            "git_remote_url": "https://github.com/acme/okapiweb.git",
            "git_commits": [SHA],
            "conversation": {
                "messages": [
                    {"role": "user", "content": "Please look at it."},
                    {
                        "role": "assistant",
                        "content": "The tapir config is read once.",
                        "tool_calls": [
                            {
                                "id": "c1",
                                "tool_name": "shell",
                                "arguments_json": {"command": "grep tapir tapir.cfg tapir.log"},
                            }
                        ],
                    },
                ]
            },
        }
    )


def test_metadata_and_commit_hits_get_snippets_alike_on_server_and_locally(
    live_server: LiveServer, account: str
) -> None:
    client = make_client(live_server.url, account)
    local = MemoryThreadStore()
    doc = local.save(thread())
    client.put_thread(doc, base_version=0)
    expected = {
        "router": ("Refactor the <b>router</b>", None),
        "zanzibar": ("<b>zanzibar</b>", None),
        "okapiweb": ("<b>okapiweb</b>", None),
        "0294234": ("commit <b>0294234</b>…", None),
        "tapir": ("<b>tapir</b>", 1),
    }
    for q, (marked, index) in expected.items():
        server = client.search(q).hits
        mine = local.search(q).hits
        assert [h.thread.id for h in server] == [str(doc.id)], q
        assert [h.thread.id for h in mine] == [str(doc.id)], q
        assert server[0].snippet is not None, q
        assert marked in server[0].snippet, (q, server[0].snippet)
        assert server[0].snippet == mine[0].snippet, q
        assert (server[0].message_index, mine[0].message_index) == (index, index), q
