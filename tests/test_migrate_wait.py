"""``loomsync-server migrate --wait`` (issue 34, app/dbwait.py): a database that is not up yet is
retried until a deadline, then exit 1 naming the wait; an error waiting cannot fix fails at once.
(tests/compose/test_compose.py starts migrate before a real database is up and sees it succeed.)
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from typer.testing import CliRunner

from app.cli import cli
from app.config import Settings
from app.dbwait import DatabaseNotReady, is_transient, wait_for_database


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A local TCP port nothing listens on (bound without listen, so it stays ours)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def quiet_settings() -> Settings:
    """Settings with a 2 s connect timeout and nothing from the environment's .env."""
    return Settings(_env_file=None, db_connect_timeout=2)  # type: ignore[call-arg]


async def test_refused_is_retried_until_the_deadline(closed_port: int) -> None:
    reports: list[str] = []
    url = f"postgresql://x:y@127.0.0.1:{closed_port}/db"
    with pytest.raises(DatabaseNotReady, match=r"within 1.5 s \(last error: ConnectionRefused"):
        await wait_for_database(url, quiet_settings(), 1.5, reports.append)
    assert len(reports) >= 2  # pauses of 0.5 s, then 1.0 s cut to what is left
    assert all("retrying in" in line for line in reports)


async def test_zero_wait_tries_once(closed_port: int) -> None:
    reports: list[str] = []
    url = f"postgresql://x:y@127.0.0.1:{closed_port}/db"
    with pytest.raises(DatabaseNotReady, match="within 0 s"):
        await wait_for_database(url, quiet_settings(), 0, reports.append)
    assert reports == []


async def test_a_wrong_password_fails_at_once(pg_server: str) -> None:
    """Waiting does not fix a refused login: no retry, the driver's error as it is."""
    url = make_url(pg_server).set(username="no_such_role_34", password="wrong")
    reports: list[str] = []
    with pytest.raises(DBAPIError) as raised:
        await wait_for_database(
            url.render_as_string(hide_password=False), quiet_settings(), 60, reports.append
        )
    assert not is_transient(raised.value)
    assert reports == []


async def test_an_answering_database_costs_no_wait(database_url: str) -> None:
    reports: list[str] = []
    await wait_for_database(database_url, quiet_settings(), 60, reports.append)
    assert reports == []


def test_migrate_command_gives_up_with_exit_1(closed_port: int) -> None:
    env = {"LOOMSYNC_DATABASE_URL": f"postgresql://x:y@127.0.0.1:{closed_port}/db"}
    result = CliRunner().invoke(cli, ["migrate", "--wait", "1"], env=env)
    assert result.exit_code == 1, result.output
    assert "Cannot migrate: the database did not accept a connection within 1 s" in result.output


def test_migrate_wait_must_not_be_negative() -> None:
    result = CliRunner().invoke(cli, ["migrate", "--wait", "-1"])
    assert result.exit_code == 2


def test_migrate_wait_comes_from_the_environment_too(closed_port: int) -> None:
    env = {
        "LOOMSYNC_DATABASE_URL": f"postgresql://x:y@127.0.0.1:{closed_port}/db",
        "LOOMSYNC_MIGRATE_WAIT": "0",
    }
    result = CliRunner().invoke(cli, ["migrate"], env=env)
    assert result.exit_code == 1, result.output
    assert "within 0 s" in result.output
