"""Share links from the client (issue 13 item 1): the SDK's methods and ``loomsync share ID
--link / --links / --revoke``, against the real server over HTTP. What the CLI prints is what
docs/client.md shows.

Isolation: every test works as its own users (``account``, fresh tokens).
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import datetime

import httpx
import pytest
from rich.cells import cell_len

from app.auth import create_token
from app.config import Settings
from loomsync import GoneError, InvalidInputError, RefusedError, RemoteNotFoundError, ShareLink
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Thread
from loomsync.errors import AuthError, NetworkError
from tests.client.conftest import (
    LiveServer,
    Person,
    login,
    make_client,
    new_thread,
    on_a_terminal,
)
from tests.client.test_cli_view import screen
from tests.client.test_redaction import holds_no_secret
from tests.client.test_secrets_cli import write_raw


def _stored(url: str, token: str, **fields: object) -> str:
    """A thread stored on the server as its owner would; its id."""
    with make_client(url, token) as client:
        thread = new_thread(2, id=str(ThreadId.new()), **fields)
        return str(client.put_thread(thread, base_version=0).id)


def test_the_sdk_makes_lists_reads_through_and_revokes_a_link(
    live_server: LiveServer, account: str
) -> None:
    thread_id = _stored(live_server.url, account)
    with (
        make_client(live_server.url, account) as owner,
        make_client(live_server.url, None) as anyone,
    ):
        link = owner.create_share_link(thread_id, expires_in=3600)
        assert isinstance(link, ShareLink)
        assert link.url is not None
        assert link.url.startswith(f"{live_server.url}/s/")
        assert link.thread_id == thread_id
        assert link.expires_at is not None
        read = anyone.get_shared_thread(link.url)  # the URL, or its secret alone
        assert read == anyone.get_shared_thread(link.url.rsplit("/", 1)[1])
        assert read.id == owner.get_thread(thread_id).id
        assert [m.content for m in read.messages] == ["turn 0", "turn 1"]
        with pytest.raises(RemoteNotFoundError):
            anyone.get_thread(thread_id)  # private: only the link opens it
        [listed] = owner.list_share_links(thread_id)
        assert (listed.id, listed.state, listed.use_count, listed.url) == (link.id, "live", 2, None)
        owner.revoke_share_link(thread_id, link.id)
        with pytest.raises(GoneError, match="revoked"):
            anyone.get_shared_thread(link.url)
        assert [x.state for x in owner.list_share_links(thread_id)] == ["revoked"]


def test_the_sdk_lists_every_page(live_server: LiveServer, account: str) -> None:
    thread_id = _stored(live_server.url, account)
    with make_client(live_server.url, account) as owner:
        made = [owner.create_share_link(thread_id).id for _ in range(5)]
        assert [x.id for x in owner.list_share_links(thread_id, page_size=2)] == made[::-1]


def test_the_sdk_surfaces_refusals_as_its_errors(
    live_server: LiveServer, account: str, settings: Settings
) -> None:
    thread_id = _stored(live_server.url, account)
    other = create_token(settings, f"other-{uuid.uuid4().hex[:8]}")
    with make_client(live_server.url, account) as owner, make_client(live_server.url, other) as c:
        with pytest.raises(RefusedError, match="422"):
            owner.create_share_link(thread_id, expires_in=0)
        with pytest.raises(RemoteNotFoundError):
            c.create_share_link(thread_id)  # not theirs to see
        with pytest.raises(RemoteNotFoundError):
            owner.revoke_share_link(thread_id, str(uuid.uuid4()))
        with pytest.raises(RemoteNotFoundError):
            c.get_shared_thread("A" * 43)
        with pytest.raises(AuthError):
            make_client(live_server.url, None).list_share_links(thread_id)


def test_the_sdk_refuses_what_is_not_a_link_before_sending(
    own_server: LiveServer, account: str
) -> None:
    thread_id = _stored(own_server.url, account)
    before = len(own_server.requests())
    with make_client(own_server.url, account) as owner:
        for bad in ("", "not a link", "https://x.example/t/abc", "A" * 10):
            with pytest.raises(InvalidInputError):
                owner.get_shared_thread(bad)
        with pytest.raises(InvalidInputError):
            owner.revoke_share_link(thread_id, "../../api/threads")
    assert own_server.requests()[before:] == []


def test_a_create_whose_answer_is_lost_is_not_retried_into_a_second_link(
    own_server: LiveServer, account: str
) -> None:
    thread_id = _stored(own_server.url, account)
    own_server.drop_next_write_response()
    patient = make_client(own_server.url, account)
    patient.retries = 3  # retried elsewhere; a create is sent once
    with patient, make_client(own_server.url, account) as owner:
        patient._http.timeout = httpx.Timeout(1.0)
        with pytest.raises(NetworkError):
            patient.create_share_link(thread_id)
        posts = [r for r in own_server.requests() if r.startswith("POST") and "share-links" in r]
        assert len(posts) == 1
        [made] = owner.list_share_links(thread_id)  # made once; its URL reached nobody
        assert made.state == "live"


def test_cli_link_prints_the_url_lists_it_and_revokes_it(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    thread_id = str(person.agent().save(new_thread(1, metadata={"title": "Fix login"})).id)
    made = person("share", thread_id, "--link", "--expires", "7d")
    assert made.code == 0, made.err
    url = made.out.strip()
    assert made.out == url + "\n"  # stdout is the URL alone: URL=$(loomsync share ID --link)
    assert url.startswith(f"{live_server.url}/s/")
    secret = url.rsplit("/", 1)[1]
    assert f"Anyone with this link reads {thread_id}, whatever its visibility, until " in made.err
    link_id = made.err.split("--revoke ")[1].strip()
    opened = httpx.get(f"{live_server.url}/api/shared/{secret}")  # anyone, no token
    assert opened.status_code == 200
    assert opened.json()["metadata"]["title"] == "Fix login"

    listed = person("share", thread_id, "--links")  # piped: tab-separated, as tables are
    assert listed.code == 0, listed.err
    assert listed.err == f"1 share link(s) of {thread_id}, 1 live:\n"
    header, row = listed.out.splitlines()
    assert header.split("\t") == [
        "ID", "STATE", "UNTIL", "USES", "LAST USED", "CREATED", "BY"
    ]  # fmt: skip
    cells = row.split("\t")
    assert (cells[0], cells[1], cells[3]) == (link_id, "live", "1")
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", c) for c in cells[2:3] + cells[4:6])
    assert secret not in listed.out
    screen_ = screen(on_a_terminal(person, "share", thread_id, "--links"))  # 80 columns
    assert all(cell_len(line) <= 80 for line in screen_), screen_
    assert screen_[0] == f"1 share link(s) of {thread_id}, 1 live:"
    assert screen_[1].split() == ["ID", "STATE", "UNTIL", "USES", "BY"]  # CREATED, LAST USED out
    assert screen_[2].startswith(f"{link_id}  live   "), screen_
    as_json = json.loads(person("share", thread_id, "--links", "--json").out)
    assert as_json["thread_id"] == thread_id
    assert [(x["id"], x["state"], x["use_count"]) for x in as_json["links"]] == [
        (link_id, "live", 1)
    ]

    revoked = person("share", thread_id, "--revoke", link_id)
    assert revoked.code == 0, revoked.err
    assert revoked.out == (
        f"Revoked share link {link_id} of {thread_id}; it answers 410 from now on.\n"
    )
    assert httpx.get(f"{live_server.url}/api/shared/{secret}").status_code == 410
    after = person("share", thread_id, "--links")
    assert after.err == f"1 share link(s) of {thread_id}, 0 live:\n"
    assert after.out.splitlines()[1].startswith(f"{link_id}\trevoked\t")


def test_cli_link_json_and_a_link_without_expiry(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    thread_id = str(person.agent().save(new_thread(1)).id)  # saved offline: pushed first
    made = person("share", thread_id, "--link", "--json")
    assert made.code == 0, made.err
    link = json.loads(made.out)
    assert set(link) == {"id", "thread_id", "url", "created_at", "expires_at"}  # what was sent
    assert link["expires_at"] is None
    assert httpx.get(link["url"].replace("/s/", "/api/shared/")).status_code == 200
    listed = person("share", thread_id, "--links").out.splitlines()
    assert listed[1].split("\t")[:4] == [link["id"], "live", "never", "1"]
    assert person("share", thread_id, "--revoke", link["id"]).code == 0
    again = person("share", thread_id, "--revoke", link["id"])
    assert again.code == 0  # revoking a revoked link is fine


def test_cli_refuses_a_link_while_a_credential_remains(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    thread_id = write_raw(person, f"T-{uuid.uuid4()}")
    refused = person("share", thread_id, "--link")
    assert refused.code == 1
    assert refused.out == ""
    assert holds_no_secret(refused.out + refused.err)
    assert f"not shared. Run `loomsync redact {thread_id}` first." in refused.err
    assert person("redact", thread_id).code == 0
    made = person("share", thread_id, "--link")
    assert made.code == 0, made.err
    opened = httpx.get(made.out.strip().replace("/s/", "/api/shared/"))
    assert opened.status_code == 200
    assert holds_no_secret(opened.text)


def test_cli_never_names_a_private_session_to_the_server(
    person: Person, own_server: LiveServer, account: str
) -> None:
    assert login(person, own_server, account).code == 0
    private = person.agent().save(Thread.model_validate({"is_private": True}))
    before = len(own_server.requests())
    for args in (["--link"], ["--links"], ["--revoke", str(uuid.uuid4())]):
        refused = person("share", str(private.id), *args)
        assert refused.code == 2, refused.err
        assert "private session" in refused.err
    assert own_server.requests_about(str(private.id), before) == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--expires", "7d"], "--expires goes with --link"),
        (
            ["--link", "--links"],
            "--link and --links do not go together: give only one of --link, --links, --revoke",
        ),
        (["--link", "--expires", "0d"], "a link lives from 1 second to 10 years"),
        (["--link", "--expires", "0"], "a link lives from 1 second to 10 years"),
        (["--link", "--expires", "3651d"], "the maximum: 3650d, 521w or 315360000 seconds"),
        (["--link", "--expires", "1000000d"], "the maximum: 3650d, 521w or 315360000 seconds"),
        (["--link", "--expires", "9" * 40 + "d"], "the maximum: 3650d"),
        (["--link", "--expires", "1y"], "there is no year unit (y): give days (1y is 365d)"),
        (["--link", "--expires", "1y"], "the maximum: 3650d"),
        (["--link", "--expires", "7x"], "unknown unit 'x': use s, m, h, d or w"),
        (["--link", "--expires", "soon"], "a whole number of seconds, or one with a unit"),
        (["--revoke", "notauuid"], "not a link id (a UUID, as --links shows): 'notauuid'"),
        (["--link", "--visibility", "public"], "are separate commands"),
        (["--revoke", "x", "--json"], "--json goes with --link or --links"),
    ],
)
def test_cli_usage_errors_say_what_to_give(person: Person, args: list[str], says: str) -> None:
    result = person("share", "T-019c8a59-e9dd-71f0-9ae3-4079fe9726a9", *args)
    assert result.code == 2
    assert says in " ".join(result.err.replace("│", " ").split())


def test_cli_expires_without_a_unit_is_seconds(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    thread_id = str(person.agent().save(new_thread(1)).id)
    made = person("share", thread_id, "--link", "--expires", "600", "--json")
    assert made.code == 0, made.err
    link = json.loads(made.out)
    lives = datetime.fromisoformat(link["expires_at"]) - datetime.fromisoformat(link["created_at"])
    assert abs(lives.total_seconds() - 600) < 5


def test_the_sdk_sends_no_secret_to_another_server(
    own_server: LiveServer, live_server: LiveServer, account: str
) -> None:
    thread_id = _stored(live_server.url, account)
    with make_client(live_server.url, account) as owner:
        url = owner.create_share_link(thread_id).url
    assert url is not None
    secret = url.rsplit("/", 1)[1]
    before = len(own_server.requests())
    with make_client(own_server.url, None) as elsewhere:
        with pytest.raises(InvalidInputError, match="not of this client's server"):
            elsewhere.get_shared_thread(url)
    assert own_server.requests()[before:] == []  # the other server's secret never left
    assert not any(secret in r for r in own_server.requests())
    with make_client(live_server.url + "/", None) as same:  # one origin, however spelled
        assert same.get_shared_thread(url.replace("http://", "HTTP://")).id == thread_id


def test_cli_link_needs_a_login(person: Person) -> None:
    thread_id = str(person.agent().save(new_thread(1)).id)
    result = person("share", thread_id, "--link")
    assert result.code == 3  # not logged in (loomsync/cli/exits.py)
    assert "not logged in" in result.err


def test_cli_link_of_a_teammates_thread_says_the_servers_reason_once(
    person: Person, live_server: LiveServer, settings: Settings
) -> None:
    """A 403 whose detail ends in a full stop is said with one (issue 16 review item 5): the
    server's sentence sits in parentheses, ``(…links.).`` never shows."""
    org = f"acme-{uuid.uuid4().hex[:8]}"
    owner = create_token(settings, f"owner-{uuid.uuid4().hex[:8]}", org=org)
    teammate = create_token(settings, f"mate-{uuid.uuid4().hex[:8]}", org=org)
    thread_id = _stored(live_server.url, owner, visibility="organization")
    assert login(person, live_server, teammate).code == 0
    made = person("share", thread_id, "--link")
    assert (made.code, made.out) == (1, "")
    assert made.err == (
        "error: the server does not let you do that (Only the thread's owner or an admin "
        "manages its share links).\n"
    )
