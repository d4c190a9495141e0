"""``loomsync open [ID]`` and ``loomsync-server token login`` against a real server: each
prints a one-time link that the server's /login page accepts (issue 13, item 3)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx

from app.auth import create_token
from app.config import Settings
from tests.homes import home_env
from tests.servers import Server
from tests.web.clients import LOOMSYNC, loomsync, put_thread

Names = Callable[[str], str]
SERVER_CLI = Path(sys.executable).parent / "loomsync-server"


def login_page(url: str) -> httpx.Response:
    """GET a printed sign-in link (a prefetch, as an unfurler would: it spends nothing)."""
    return httpx.get(url, timeout=30)


def test_open_without_a_login_says_how_to_log_in(tmp_path: Path) -> None:
    done = loomsync(tmp_path, "open", "--print")
    assert done.returncode == 3  # not logged in (loomsync/cli/exits.py)
    assert "loomsync login" in done.stderr


def test_open_with_a_malformed_id_is_a_usage_error(
    web_server: Server, settings: Settings, tmp_path: Path, new_user: Names
) -> None:
    token = create_token(settings, new_user("alice"))
    assert (
        loomsync(tmp_path, "login", "--server", web_server.base_url, "--token", token).returncode
        == 0
    )
    done = loomsync(tmp_path, "open", "not-a-thread", "--print")
    assert done.returncode == 2  # a bad argument value: a usage mistake (exits.py), one line
    assert done.stderr.startswith("error: 'not-a-thread' is not a thread id: "), done.stderr
    assert "login?code=" not in done.stdout


def test_open_of_a_thread_not_on_the_server_makes_no_link(
    web_server: Server, settings: Settings, tmp_path: Path, new_user: Names
) -> None:
    token = create_token(settings, new_user("alice"))
    other = create_token(settings, new_user("bob"))
    assert (
        loomsync(tmp_path, "login", "--server", web_server.base_url, "--token", token).returncode
        == 0
    )
    missing = f"T-{uuid.uuid4()}"
    theirs = put_thread(web_server, other, "bob's", ["private"])
    deleted = put_thread(web_server, token, "gone soon", ["bye"])
    auth = {"Authorization": f"Bearer {token}"}
    gone = httpx.delete(f"{web_server.base_url}/api/threads/{deleted}", headers=auth, timeout=30)
    assert gone.status_code == 204, gone.text
    for thread_id, says in (
        (missing, "is not on the server"),
        (theirs, "is not on the server"),
        (deleted, "was deleted on the server"),
    ):
        done = loomsync(tmp_path, "open", thread_id, "--print")
        assert done.returncode == 1, (thread_id, done.stdout, done.stderr)
        assert "login?code=" not in done.stdout
        assert says in " ".join(done.stderr.split()), done.stderr


def test_open_with_a_token_the_server_refuses_is_an_error(
    web_server: Server, tmp_path: Path
) -> None:
    other = Settings(jwt_secret="x" * 48, _env_file=None)  # type: ignore[call-arg]
    forged = create_token(other, "alice")
    login = loomsync(
        tmp_path, "login", "--server", web_server.base_url, "--token", forged, "--no-verify"
    )
    assert login.returncode == 0
    done = loomsync(tmp_path, "open", "--print")
    assert done.returncode == 3  # the server refused the token (exits.py)
    assert "login?code=" not in done.stdout
    assert "refused the token" in done.stderr, done.stderr


def test_open_starts_the_browser_on_the_link(
    web_server: Server, settings: Settings, tmp_path: Path, new_user: Names
) -> None:
    user = new_user("alice")
    token = create_token(settings, user)
    thread_id = put_thread(web_server, token, "open me", ["hi"])
    assert (
        loomsync(tmp_path, "login", "--server", web_server.base_url, "--token", token).returncode
        == 0
    )
    opened = tmp_path / "opened.txt"
    fake_browser = tmp_path / "browser.sh"
    fake_browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {opened}\n')
    fake_browser.chmod(0o755)
    done = subprocess.run(
        [str(LOOMSYNC), "open", thread_id],
        env=home_env(tmp_path, BROWSER=f"{fake_browser} %s"),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    url = opened.read_text()
    assert url == done.stdout.strip()
    assert f"next=%2Ft%2F{thread_id}" in url
    page = login_page(url)
    assert page.status_code == 200
    assert f"Continue as {user}" in page.text


def server_cli(
    settings: Settings, database_url: str, *args: str
) -> subprocess.CompletedProcess[str]:
    assert settings.jwt_secret is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOMSYNC_")}
    env.update(
        LOOMSYNC_DATABASE_URL=database_url,
        LOOMSYNC_JWT_SECRET=settings.jwt_secret.get_secret_value(),
        LOOMSYNC_LOG_LEVEL="warning",
    )
    return subprocess.run(
        [str(SERVER_CLI), *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_token_login_prints_a_link_that_signs_in_as_that_identity(
    web_server: Server, settings: Settings, database_url: str, new_user: Names, new_org: Names
) -> None:
    user, org = new_user("alice"), new_org("acme")
    thread_id = f"T-{uuid.uuid4()}"
    done = server_cli(
        settings,
        database_url,
        "token",
        "login",
        "--sub",
        user,
        "--org",
        org,
        "--role",
        "support",
        "--thread",
        thread_id,
        "--url",
        web_server.base_url,
    )
    assert done.returncode == 0, done.stderr
    url = done.stdout.strip()
    assert url.startswith(f"{web_server.base_url}/login?code=")
    assert f"next=%2Ft%2F{thread_id}" in url
    page = login_page(url)
    assert page.status_code == 200
    assert f"Continue as {user}" in page.text
    assert org in page.text
    assert "support" in page.text


def test_token_login_refuses_what_the_server_would(settings: Settings, database_url: str) -> None:
    for args in (
        ["--sub", " "],
        ["--sub", "a", "--thread", "T-nope"],
        ["--sub", "a", "--url", "ftp://x"],
        ["--sub", "a", "--ttl", "0"],
    ):
        done = server_cli(settings, database_url, "token", "login", *args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert "login?code=" not in done.stdout
