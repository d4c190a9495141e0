"""Issue 16, item 5: ``loomsync status``, run as a subprocess with a fresh HOME at 80 columns,
piped, against a real server: logged out, logged in and online, the server down, an expired
token and a token the server refuses; the text docs/client.md shows and the ``--json`` shape.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from pydantic import SecretStr

from app.auth import create_token
from app.config import Settings
from loomsync.core.document.model import Thread
from loomsync.core.version import __version__
from tests.client.conftest import LiveServer, Person, make_person
from tests.client.test_cli_for_people import titled

STORE = "/.local/share/loomsync/threads"
JSON_KEYS = {"state", "exit_code", "server", "token", "queue", "store", "requeue"}


@pytest.fixture
def someone(tmp_path: Path) -> Person:
    """A new user's HOME, at 80 columns."""
    return make_person(tmp_path / "someone", columns=80)


def _user(settings: Settings, **kwargs: int) -> tuple[str, str, str]:
    suffix = uuid.uuid4().hex[:8]
    sub, org = f"sam-{suffix}", f"acme-{suffix}"
    return sub, org, create_token(settings, sub, org=org, **kwargs)


def _lines(out: str) -> dict[str, str]:
    """``Label: value`` lines by label; the verdict (no label) under ``""``."""
    found: dict[str, str] = {}
    for line in out.splitlines():
        label, sep, value = line.partition(":")
        if sep and label in ("Server", "User", "Token", "Queue", "Store"):
            found[label] = value.strip()
        else:
            found[""] = line
    return found


def _store_bytes(person: Person) -> int:
    root = person.paths.threads_dir
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def test_logged_out_says_so_and_exits_3(someone: Person) -> None:
    someone.agent().save(titled("Offline notes"))
    shown = someone("status")
    assert (shown.code, shown.err) == (3, "")
    lines = _lines(shown.out)
    assert lines["Server"] == "none configured"
    assert lines["User"] == "not logged in"
    assert lines["Queue"] == "1 pending, 0 failed (`loomsync sync --status` lists them)"
    size = _store_bytes(someone)
    assert lines["Store"] == f"{someone.home}{STORE}: 1 thread, " + (
        f"{size / 1000:.1f} kB on disk"
    )  # the exact bytes: --json
    assert lines[""] == (
        "Not logged in: threads are kept on this machine only; run "
        "`loomsync login --server URL --token TOKEN`."
    )
    assert "\x1b" not in shown.out  # piped: no colour
    data = json.loads(someone("status", "--json").out)
    assert set(data) == JSON_KEYS
    assert (data["state"], data["exit_code"], data["token"]) == ("not_logged_in", 3, None)
    assert data["server"] == {"url": None, "reachable": None, "version": None, "detail": None}
    assert data["queue"] == {"pending": 1, "failed": 0, "waiting_for_login": 0}
    assert data["store"] == {
        "path": f"{someone.home}{STORE}",
        "bytes": _store_bytes(someone),
        "threads": 1,
    }


def test_logged_in_and_online_reports_who_and_what_waits(
    someone: Person, live_server: LiveServer, settings: Settings
) -> None:
    sub, org, token = _user(settings)
    agent = someone.agent()
    agent.save(titled("Small enough"))
    huge = {"role": "tool", "content": "z" * 2_100_000}  # over the server's body limit: 413
    agent.save(Thread.model_validate({"conversation": {"messages": [huge]}}))
    assert someone("login", "--server", live_server.url, "--token", token).code == 0
    synced = someone("sync")  # the small one is sent; the huge one is refused (413): failed
    assert synced.code == 1, synced.out + synced.err
    agent.save(titled("Written after the sync"))  # an agent with no client: queued, pending
    shown = someone("status")
    assert (shown.code, shown.err) == (0, "")
    lines = _lines(shown.out)
    assert lines["Server"] == f"{live_server.url}: reachable, version {__version__}"
    assert lines["User"] == f"{sub}, organization {org} (from the token)"
    assert lines["Token"].startswith("expires 20")
    assert lines["Token"].endswith(" UTC (in 29 days); the server accepts it")
    assert lines["Queue"] == "1 pending, 1 failed (`loomsync sync --status` lists them)"
    assert "1 pending, 1 failed." in someone("sync", "--status").out  # the same count
    assert lines["Store"].startswith(f"{someone.home}{STORE}: 3 threads, ")
    assert lines[""] == (
        "Ready: changes sync to the server (1 failed: `loomsync sync --status` says why)."
    )
    data = json.loads(someone("status", "--json").out)
    assert set(data) == JSON_KEYS
    assert (data["state"], data["exit_code"]) == ("ready", 0)
    assert data["server"] == {
        "url": live_server.url,
        "reachable": True,
        "version": __version__,
        "detail": None,
    }
    assert set(data["token"]) == {
        "user",
        "org",
        "expires_at",
        "issued_at",
        "expired",
        "verified",
        "accepted",
    }
    assert (data["token"]["user"], data["token"]["org"]) == (sub, org)
    assert (data["token"]["expired"], data["token"]["verified"]) == (False, False)
    assert data["token"]["accepted"] is True
    assert data["token"]["expires_at"].endswith("Z")
    assert data["queue"] == {"pending": 1, "failed": 1, "waiting_for_login": 0}
    assert data["store"]["threads"] == 3
    assert data["store"]["bytes"] == _store_bytes(someone)
    assert someone("logout").code == 0  # the URL is kept, the token is gone
    after = someone("status")
    assert after.code == 3
    assert _lines(after.out)["Server"] == f"{live_server.url}: reachable, version {__version__}"
    assert _lines(after.out)["User"] == "not logged in"
    assert _lines(after.out)[""].startswith("Not logged in: ")


def test_server_down_exits_4_and_keeps_reporting(
    someone: Person, own_server: LiveServer, settings: Settings
) -> None:
    sub, _, token = _user(settings)
    assert someone("login", "--server", own_server.url, "--token", token).code == 0
    own_server.stop()
    shown = someone("status")
    assert (shown.code, shown.err) == (4, "")
    lines = _lines(shown.out)
    assert lines["Server"].startswith(f"{own_server.url}: not reachable (")
    assert lines["User"].startswith(f"{sub}, organization ")
    assert lines["Token"].endswith("(in 29 days)")  # not asked: the server did not answer
    assert lines["Server"] == f"{own_server.url}: not reachable (connection refused)"
    assert lines[""] == f"Cannot reach {own_server.url}: is it running?"  # nothing queued
    data = json.loads(someone("status", "--json").out)
    assert (data["state"], data["exit_code"]) == ("unreachable", 4)
    assert (data["server"]["reachable"], data["server"]["version"]) == (False, None)
    assert data["server"]["detail"]
    assert data["token"]["accepted"] is None


def test_an_expired_token_says_when_and_exits_3(
    someone: Person, live_server: LiveServer, settings: Settings
) -> None:
    _, _, token = _user(settings, ttl_seconds=-(3 * 86400 + 60))
    login = someone("login", "--server", live_server.url, "--token", token, "--no-verify")
    assert login.code == 0
    someone.agent().save(titled("Written while the token was stale"))
    assert someone("sync").code == 3  # the server refused the token: the entry waits for a login
    shown = someone("status")
    assert (shown.code, shown.err) == (3, "")
    lines = _lines(shown.out)
    assert lines["Queue"] == (
        "1 pending (1 waiting for a new login), 0 failed (`loomsync sync --status` lists them)"
    )
    assert lines["Server"] == f"{live_server.url}: reachable, version {__version__}"
    assert lines["Token"].startswith("expired 20")
    assert " UTC (3 days ago); the server refused it (" in lines["Token"]
    assert lines[""] == (
        f"The token expired: run `loomsync login --server {live_server.url} --token TOKEN` "
        "with a new token (changes are kept here until then)."
    )
    data = json.loads(someone("status", "--json").out)
    assert (data["state"], data["exit_code"]) == ("token_expired", 3)
    assert (data["token"]["expired"], data["token"]["accepted"]) == (True, False)
    assert data["queue"] == {"pending": 1, "failed": 0, "waiting_for_login": 1}

    _, _, fresh = _user(settings)  # a new login: the entry no longer waits for one
    again = someone("login", "--server", live_server.url, "--token", fresh, "--no-verify")
    assert again.code == 0, again.err
    after = json.loads(someone("status", "--json").out)
    assert after["queue"] == {"pending": 1, "failed": 0, "waiting_for_login": 0}
    assert "waiting for a new login" not in someone("status").out


def test_a_token_the_server_refuses_exits_3(
    someone: Person, live_server: LiveServer, settings: Settings
) -> None:
    stranger = settings.model_copy(update={"jwt_secret": SecretStr("s" * 48)})
    _, _, token = _user(stranger)  # unexpired, signed with another secret
    assert someone("login", "--server", live_server.url, "--token", token, "--no-verify").code == 0
    shown = someone("status")
    assert shown.code == 3
    lines = _lines(shown.out)
    assert "(in 29 days); the server refused it (" in lines["Token"]
    assert lines[""].startswith("The server refused the token (")
    assert lines[""].endswith(
        f"): run `loomsync login --server {live_server.url} --token TOKEN` with a new token "
        "(changes are kept here until then)."
    )
    data = json.loads(someone("status", "--json").out)
    assert (data["state"], data["token"]["expired"], data["token"]["accepted"]) == (
        "token_refused",
        False,
        False,
    )
