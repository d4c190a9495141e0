"""``loomsync scan``, ``redact`` and ``share`` (issue 12, items 3 and 5) and the configuration
they read (``default_visibility``, ``[redaction]``), driven as a person would.

Unredacted copies are written as an older client would have left them (the thread file
itself), or seeded on a server whose own scan is off (``LOOMSYNC_SECRET_SCAN=off``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.auth import create_token
from app.config import Settings
from loomsync.core.document import codec
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Thread
from loomsync.importers.run import token_subject
from tests.client import planted
from tests.client.conftest import LiveServer, Person, login
from tests.client.test_redaction import AWS, GH, holds_no_secret, leaky

THREAD = "T-019c8a59-e9dd-71f0-9ae3-4079fe9726a9"


def write_raw(person: Person, thread_id: str = THREAD) -> str:
    folder = person.paths.threads_dir
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{thread_id}.json").write_bytes(codec.encode_thread(leaky(id=thread_id)))
    return thread_id


def headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def scan_off_server(database_url: str, settings: Settings, tmp_path: Path) -> Iterator[LiveServer]:
    """A server that stores what it is sent (its own scan off), so credentials can reach it."""
    assert settings.jwt_secret is not None
    server = LiveServer(database_url, settings.jwt_secret.get_secret_value(), tmp_path)
    server.env["LOOMSYNC_SECRET_SCAN"] = "off"
    server.start()
    yield server
    server.stop()


def test_scan_reports_kind_thread_message_path_and_preview_never_the_value(person: Person) -> None:
    write_raw(person)
    clean = person.agent().save(leaky()).id  # saved by this client: redacted already
    found = person("scan")
    assert found.code == 1
    assert holds_no_secret(found.out + found.err)
    out = found.out.splitlines()  # piped: the table, tab-separated, nothing cut
    assert out[0].split("\t") == ["THREAD", "WHERE", "PATH", "KIND", "PREVIEW"]
    rows = [line.split("\t") for line in out[1:]]
    assert len(rows) == 4
    assert [THREAD, "message 0", "conversation.messages.0.content", "aws-access-key"] in [
        row[:4] for row in rows
    ]
    assert [THREAD, "metadata", "metadata.title", "github-token"] in [row[:4] for row in rows]
    assert all(len(row) == 5 and "(" in row[4] for row in rows)  # the masked preview
    assert found.err.splitlines()[-1] == (  # the summary: stderr, so stdout is the table
        "4 credential(s) in 1 of 2 thread(s); `loomsync redact` replaces them."
    )
    as_json = person("scan", "--json")
    assert as_json.code == 1
    report = json.loads(as_json.out)
    assert report["threads_scanned"] == 2
    reported = [{k: v for k, v in f.items() if k != "preview"} for f in report["findings"]]
    assert {
        "thread_id": THREAD,
        "kind": "aws-access-key",
        "message_index": 0,
        "path": ["conversation", "messages", 0, "content"],
    } in reported
    quiet = person("scan", str(clean))
    assert (quiet.code, quiet.out) == (0, "No credentials found in 1 thread(s).\n")


def test_scan_reports_a_credential_held_in_a_message_or_tool_call_id(person: Person) -> None:
    """Ids are client-chosen strings: a token there is a finding like anywhere else."""
    thread = Thread.model_validate(
        {
            "id": THREAD,
            "conversation": {
                "messages": [
                    {
                        "role": "assistant",
                        "content": "hi",
                        "id": GH,
                        "tool_calls": [{"id": GH, "tool_name": "x", "arguments_json": {}}],
                    },
                    {"role": "tool", "content": "ok", "tool_call_id": GH},
                ]
            },
        }
    )
    folder = person.paths.threads_dir
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{THREAD}.json").write_bytes(codec.encode_thread(thread))
    found = person("scan", "--json")
    assert found.code == 1
    assert holds_no_secret(found.out + found.err)
    paths = sorted(f["path"] for f in json.loads(found.out)["findings"])
    assert paths == [
        ["conversation", "messages", 0, "id"],
        ["conversation", "messages", 0, "tool_calls", 0, "id"],
        ["conversation", "messages", 1, "tool_call_id"],
    ]


def test_redact_rewrites_the_local_copy_and_says_what_it_replaced(person: Person) -> None:
    write_raw(person)
    done = person("redact")
    assert done.code == 0, done.err
    assert done.out == (
        f"{THREAD}: replaced 4 (aws-access-key 2, github-token 2); saved locally (not logged in).\n"
    )
    assert holds_no_secret((person.paths.threads_dir / f"{THREAD}.jsonl").read_bytes())
    for name in (".index.sqlite3", ".index.sqlite3-wal"):  # the summary index
        index = person.paths.threads_dir / name
        assert not index.exists() or holds_no_secret(index.read_bytes())
    assert person("scan").code == 0
    assert person("redact").out == f"{THREAD}: nothing to redact.\n"


def test_redact_replaces_a_server_copy_that_reached_the_server_unredacted(
    person: Person, scan_off_server: LiveServer, account: str
) -> None:
    thread_id = f"T-{uuid.uuid4()}"  # ids are global on the server: one per test
    seeded = leaky(id=thread_id).model_dump(mode="json", exclude_unset=True)
    put = httpx.put(
        f"{scan_off_server.url}/api/threads/{thread_id}",
        json=seeded,
        headers={**headers(account), "If-Match": '"0"'},
    )
    assert put.status_code == 201
    assert AWS in put.text  # the premise: the server holds the credential
    assert login(person, scan_off_server, account).code == 0
    done = person("redact", thread_id)
    assert done.code == 0, done.err
    assert done.out == f"{thread_id}: replaced 4 (aws-access-key 2, github-token 2); synced.\n"
    copy = httpx.get(f"{scan_off_server.url}/api/threads/{thread_id}", headers=headers(account))
    assert copy.status_code == 200
    assert holds_no_secret(copy.text)
    for value in (AWS, GH):
        hits = httpx.get(
            f"{scan_off_server.url}/api/threads/search",
            params={"q": value},
            headers=headers(account),
        )
        assert hits.status_code == 200
        assert holds_no_secret(hits.text.replace("<b>", "").replace("</b>", ""))


def test_list_and_search_print_a_raw_server_copy_redacted(
    person: Person, scan_off_server: LiveServer, account: str
) -> None:
    """``list --server``, ``search`` and their ``--json`` forms redact the server's titles,
    tags and snippets (stored raw under the server's scan ``off``), as ``show`` does."""
    thread_id = f"T-{uuid.uuid4()}"
    seeded = leaky(id=thread_id).model_dump(mode="json", exclude_unset=True)
    put = httpx.put(
        f"{scan_off_server.url}/api/threads/{thread_id}",
        json=seeded,
        headers={**headers(account), "If-Match": '"0"'},
    )
    assert put.status_code == 201
    assert login(person, scan_off_server, account).code == 0
    for args in (("list", "--server"), ("search", "deploy"), ("search", "key")):
        for extra in ((), ("--json",)):
            printed = person(*args, *extra)
            assert printed.code == 0, printed.err
            assert thread_id in printed.out
            text = printed.out.replace("<b>", "").replace("</b>", "")
            assert holds_no_secret(text + printed.err), (args, extra)
            assert "[REDACTED:" in text, (args, extra)
    hits = json.loads(person("search", "key", "--json").out)["hits"]
    # the server redacts before it cuts (issue 27 item 5), so the highlight survives
    assert hits[0]["snippet"] == "my <b>key</b> is [REDACTED:aws-access-key]"
    listed = json.loads(person("list", "--server", "--json").out)
    assert listed[0]["title"] == "deploy with [REDACTED:github-token]"
    assert listed[0]["tags"] == ["[REDACTED:aws-access-key]"]


def test_share_refuses_while_a_credential_remains_then_shares_once_redacted(
    person: Person, live_server: LiveServer, settings: Settings
) -> None:
    suffix = uuid.uuid4().hex[:10]
    owner = create_token(settings, f"owner-{suffix}", org=f"acme-{suffix}")
    mate = create_token(settings, f"mate-{suffix}", org=f"acme-{suffix}")
    assert login(person, live_server, owner).code == 0
    thread_id = write_raw(person, f"T-{uuid.uuid4()}")
    refused = person("share", thread_id, "--visibility", "organization")
    assert refused.code == 1
    assert holds_no_secret(refused.out + refused.err)
    assert "aws-access-key" in refused.err
    assert f"not shared. Run `loomsync redact {thread_id}` first." in refused.err
    absent = httpx.get(f"{live_server.url}/api/threads/{thread_id}", headers=headers(mate))
    assert absent.status_code == 404
    assert person("redact", thread_id).code == 0
    shared = person("share", thread_id, "--visibility", "organization")
    assert shared.code == 0, shared.err
    assert "visible to your organization (organization)" in shared.out
    seen = httpx.get(f"{live_server.url}/api/threads/{thread_id}", headers=headers(mate))
    assert seen.status_code == 200
    assert holds_no_secret(seen.text)


def test_new_threads_get_the_configured_visibility_and_existing_ones_keep_theirs(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    person.paths.config_file.write_text(
        person.paths.config_file.read_text() + 'default_visibility = "organization"\n'
    )
    transcript, thread_id = planted.session_copy(
        person.home / "sessions", str(token_subject(account))
    )
    imported = person("import", "claude-code", str(transcript))
    assert imported.code == 0, imported.err
    copy = httpx.get(f"{live_server.url}/api/threads/{thread_id}", headers=headers(account))
    assert copy.json()["visibility"] == "organization"
    assert person("share", thread_id, "--visibility", "private").code == 0
    again = person("import", "claude-code", str(transcript))
    assert again.code == 0
    assert "0 created, 0 updated, 1 unchanged" in again.out
    agent = person.agent()
    assert agent.load(thread_id).visibility == "private"
    assert agent.save(leaky()).visibility == "private"  # the agent's store reads no config


def test_configuration_errors_name_the_bad_value(person: Person) -> None:
    person.paths.config_dir.mkdir(parents=True)
    person.paths.config_file.write_text('default_visibility = "team"\n')
    bad = person("list")
    assert bad.code == 1
    assert bad.err == (
        "error: invalid client configuration: default_visibility: must be one of private, "
        "organization, public, not 'team'\n"
    )
    person.paths.config_file.write_text('[redaction]\nallow_patterns = ["sk-(live"]\n')
    broken = person("scan")
    assert broken.code == 1
    assert "redaction.allow_patterns: pattern 'sk-(live' is not a valid regex" in broken.err


def test_allow_list_keeps_what_the_user_says_is_not_a_secret(person: Person) -> None:
    person.paths.config_dir.mkdir(parents=True)
    person.paths.config_file.write_text(
        f'[redaction]\nallow = ["{AWS}"]\nallow_patterns = ["ghp_[A-Za-z0-9]{{36}}"]\n'
    )
    assert person("import", "claude-code", str(planted.DATA)).code == 0
    machine = (person.paths.config_dir / "import-owner").read_text().strip()  # not logged in
    thread_id = ThreadId.owned(machine, planted.THREAD_ID)
    stored = (person.paths.threads_dir / f"{thread_id}.jsonl").read_text()
    assert AWS in stored
    assert planted.GITHUB in stored
    assert "-----BEGIN RSA PRIVATE KEY-----" not in stored
    assert person("scan").code == 0
