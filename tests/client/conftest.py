"""Client test fixtures: a real uvicorn server (counting the requests it receives), accounts,
and "devices" (a SyncingThreadStore over its own folders).

Isolation: every test works as its own fresh user (``account``), so it never sees another
test's threads on the shared server; tests that stop the server, or count every request it
receives, get a server of their own (``own_server``).
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from app.auth import create_token
from app.config import Settings
from app.database import migrate_async
from loomsync import ClientPaths, LocalThreadStore, SyncingThreadStore, ThreadSyncClient
from loomsync.core.document.model import Message, Thread
from tests.database import create_database, drop_database
from tests.homes import home_env
from tests.servers import STARTUP_SECONDS, free_port, poll

MAIN = Path(__file__).resolve().parents[2]
BODY_LIMIT = 2_000_000  # bytes: small, so a 413 is cheap to provoke


def wait_for(
    predicate: Callable[[], bool], *, timeout: float = 10.0, what: str = "condition"
) -> None:
    """Poll ``predicate`` until true; fail after ``timeout`` seconds (no fixed sleeps)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    pytest.fail(f"timed out after {timeout} s waiting for {what}")


class LiveServer:
    """A uvicorn subprocess serving ``tests.client.counting_app`` on a fixed port.

    ``stop()`` then ``start()`` gives a real outage on the same URL. ``requests()`` lists
    ``METHOD PATH`` of every request the server received.
    """

    def __init__(self, database_url: str, secret: str, folder: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.request_log = folder / f"requests-{self.port}.log"
        self.request_log.touch()
        self._server_log = folder / f"server-{self.port}.log"
        self.env = {
            **os.environ,
            "LOOMSYNC_DATABASE_URL": database_url,
            "LOOMSYNC_JWT_SECRET": secret,
            "LOOMSYNC_MAX_BODY_BYTES": str(BODY_LIMIT),
            "LOOMSYNC_LOG_LEVEL": "warning",
            "LOOMSYNC_TEST_REQUEST_LOG": str(self.request_log),
        }
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.stop()  # reap a process killed from outside (SIGKILL) before reusing the port
        command = [sys.executable, "-m", "uvicorn", "tests.client.counting_app:create", "--factory"]
        command += ["--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning"]
        with open(self._server_log, "ab") as log:
            self.process = subprocess.Popen(command, cwd=MAIN, env=self.env, stdout=log, stderr=log)
        with httpx.Client(base_url=self.url, timeout=2) as client:

            def ready() -> bool | None:
                try:
                    return client.get("/health/ready").status_code == 200 or None
                except httpx.TransportError:
                    return None

            if poll(self.process, ready, STARTUP_SECONDS):
                return
        pytest.fail(f"uvicorn did not become ready:\n{self._server_log.read_text()}")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def hold_write_responses(self, hold: bool = True) -> None:
        """While held, the server commits writes but never sends their responses."""
        flag = Path(f"{self.request_log}.hold")
        if hold:
            flag.touch()
        else:
            flag.unlink(missing_ok=True)

    def drop_next_write_response(self) -> None:
        """The next write is done but its response never sent (the client times out)."""
        Path(f"{self.request_log}.drop-once").touch()

    def held(self) -> list[str]:
        """``METHOD PATH\tSTATUS`` of each write whose response was held."""
        held = Path(f"{self.request_log}.held")
        return held.read_text().splitlines() if held.exists() else []

    def requests(self) -> list[str]:
        """Every request received so far: ``METHOD PATH`` lines, in order."""
        return [line.split("\t")[0] for line in self.request_log.read_text().splitlines()]

    def headers(self) -> list[list[str]]:
        """Per request: ``[METHOD PATH, User-Agent, X-Loomsync-Version, X-Loomsync-Platform]``."""
        return [line.split("\t") for line in self.request_log.read_text().splitlines()]

    def requests_about(self, thread_id: str, since: int = 0) -> list[str]:
        """Requests whose path names ``thread_id``, after the first ``since`` requests."""
        return [line for line in self.requests()[since:] if thread_id in line]


@pytest.fixture(scope="session")
def live_server(
    database_url: str, settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """One server for the client tests that do not stop it or count all its requests."""
    assert settings.jwt_secret is not None
    server = LiveServer(
        database_url, settings.jwt_secret.get_secret_value(), tmp_path_factory.mktemp("server")
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture
def own_server(database_url: str, settings: Settings, tmp_path: Path) -> Iterator[LiveServer]:
    """A server for this test alone (it may stop and start it; every request counted is its)."""
    assert settings.jwt_secret is not None
    server = LiveServer(database_url, settings.jwt_secret.get_secret_value(), tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def account(settings: Settings) -> str:
    """A bearer token for a user (and organization) unique to this test."""
    suffix = uuid.uuid4().hex[:10]
    return create_token(settings, f"alice-{suffix}", org=f"acme-{suffix}")


def make_client(url: str, token: str | None) -> ThreadSyncClient:
    """A client with fast retries, so a stopped server fails in milliseconds."""
    return ThreadSyncClient(url, token, timeout=10, retries=1, backoff=0.01, backoff_max=0.05)


@dataclass
class Devices:
    """Makes devices: each a SyncingThreadStore with its own folders, one account."""

    root: Path
    url: str
    token: str
    stores: list[SyncingThreadStore]

    def __call__(
        self, name: str, *, background: bool = False, url: str | None = None
    ) -> SyncingThreadStore:
        folder = self.root / name
        store = SyncingThreadStore(
            LocalThreadStore(folder / "threads"),
            make_client(url or self.url, self.token),
            sync_dir=folder / "sync",
            background=background,
            retry_base=0.01,
            retry_cap=0.2,
        )
        self.stores.append(store)
        return store


@pytest.fixture
def devices(tmp_path: Path, live_server: LiveServer, account: str) -> Iterator[Devices]:
    """``devices("a")``: a device on the shared server, closed after the test."""
    made = Devices(tmp_path, live_server.url, account, [])
    yield made
    for store in made.stores:
        store.close()


def turn(index: int, role: str = "user") -> Message:
    """A message whose content names its index."""
    return Message(role=role, content=f"turn {index}")


def new_thread(messages: int = 0, **fields: object) -> Thread:
    """A fresh thread with ``messages`` numbered turns."""
    data: dict[str, object] = {
        "conversation": {
            "messages": [{"role": "user", "content": f"turn {i}"} for i in range(messages)]
        },
        **fields,
    }
    return Thread.model_validate(data)


def with_turns(thread: Thread, *contents: str) -> Thread:
    """The thread with messages appended (a copy)."""
    messages = [*thread.messages, *(Message(role="user", content=c) for c in contents)]
    return thread.model_copy(
        update={"conversation": thread.conversation.model_copy(update={"messages": messages})}
    )


LOOMSYNC = Path(sys.executable).parent / "loomsync"  # the console script beside this Python


@dataclass
class Result:
    code: int
    out: str
    err: str


@dataclass
class Person:
    """Runs ``loomsync`` with its own HOME and XDG folders."""

    home: Path
    env: dict[str, str]

    def __call__(
        self, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> Result:
        done = subprocess.run(
            [str(LOOMSYNC), *args],
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=60,
            cwd=cwd or self.home,
        )
        assert "Traceback" not in done.stderr, done.stderr
        return Result(done.returncode, done.stdout, done.stderr)

    @property
    def paths(self) -> ClientPaths:
        return ClientPaths(
            self.home / ".config" / "loomsync",
            self.home / ".local" / "share" / "loomsync",
            self.home / ".local" / "state" / "loomsync",
        )

    def agent(self) -> SyncingThreadStore:
        """What a coding agent on this machine would use (same folders, no network)."""
        return SyncingThreadStore(
            LocalThreadStore(self.paths.threads_dir),
            None,
            sync_dir=self.paths.sync_dir,
            background=False,
        )


def make_person(home: Path, *, columns: int = 120) -> Person:
    """A person whose HOME (and XDG folders) is the new folder ``home``, at ``columns``."""
    home.mkdir(parents=True)
    env = home_env(
        home, XDG_CACHE_HOME=str(home / ".cache"), COLUMNS=str(columns), LOOMSYNC_RETRIES="1"
    )
    return Person(home, env)


def on_a_terminal(
    person: Person,
    *args: str,
    env: dict[str, str] | None = None,
    rows: int = 24,
    columns: int = 80,
) -> bytes:
    """``loomsync ARGS`` on a pseudo terminal of ``rows`` x ``columns`` (its window size and
    ``LINES``/``COLUMNS`` say so): every byte it wrote, stdout and stderr together."""
    return on_a_terminal_answering(person, *args, env=env, rows=rows, columns=columns)[1]


def on_a_terminal_answering(
    person: Person,
    *args: str,
    env: dict[str, str] | None = None,
    rows: int = 24,
    columns: int = 80,
    answer: str | None = None,
) -> tuple[int, bytes]:
    """As :func:`on_a_terminal`, typing ``answer`` (a line) once the command asks something
    (what it wrote ends in ``:``); its exit code and every byte it wrote."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    size = {"LINES": str(rows), "COLUMNS": str(columns)}
    process = subprocess.Popen(
        [str(LOOMSYNC), *args],
        stdin=side,
        stdout=side,
        stderr=side,
        env={**person.env, **size, **(env or {})},
        cwd=person.home,
    )
    os.close(side)
    out = b""
    while True:
        ready, _, _ = select.select([main], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        out += chunk
        if answer is not None and out.rstrip(b" ").endswith(b":"):
            os.write(main, answer.encode() + b"\n")
            answer = None
    code = process.wait(30)
    os.close(main)
    assert b"Traceback" not in out, out.decode("utf-8", "replace")
    return code, out


@pytest.fixture
def person(tmp_path: Path) -> Person:
    return make_person(tmp_path / "home")


def login(person: Person, server: LiveServer, token: str) -> Result:
    return person("login", "--server", server.url, "--token", token)


@pytest.fixture
async def import_database(pg_server: str) -> AsyncIterator[str]:
    """A database per test (tests/client/test_import*.py): imported sessions keep their ids,
    which are global, and would meet other tests'."""
    url = await create_database(pg_server)
    await migrate_async(url)
    yield url
    await drop_database(pg_server, url)


@pytest.fixture
def server(import_database: str, settings: Settings, tmp_path: Path) -> Iterator[LiveServer]:
    """A real server on :func:`import_database` that takes bodies of up to 64 MB (imports)."""
    assert settings.jwt_secret is not None
    live = LiveServer(import_database, settings.jwt_secret.get_secret_value(), tmp_path)
    live.env["LOOMSYNC_MAX_BODY_BYTES"] = str(64 * 1024 * 1024)
    live.start()
    yield live
    live.stop()
