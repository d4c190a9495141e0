"""The README's self-hosting path run for real (issue 34): the published docker-compose.yml and
Dockerfile, unchanged, on a Docker engine, with the test's overrides (override.yml: the server's
port on 127.0.0.1 only; gate.yml: the database's first initialisation held open;
secret-file.yml: the signing secret as a Docker secret) and a project name of its own.

The containers are reached only through ports published on 127.0.0.1 and ``docker compose
exec``; never through the bridge's addresses. Every project is taken down with its volumes at
the end, pass or fail.

The two tests run in order: the second restores the first one's backup.
"""

from __future__ import annotations

import json
import re
import secrets
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.compose.engine import docker
from tests.compose.stack import REPO, Stack, wait_for

pytestmark = [pytest.mark.compose, pytest.mark.usefixtures("docker_engine")]

THREAD_ID = "T-019b7f94-51b4-7593-922e-ba12b5b73b52"
THREAD_FILE = REPO.parent / "shared" / "data" / "threads" / f"{THREAD_ID}.json"
IMAGE = "loomsync-server:local"
UPGRADE = re.compile(r"Running upgrade (\S+) -> (\S+)")
#: the healthcheck the published file had before issue 34: over the Unix socket
SOCKET_CHECK = ("pg_isready", "-U", "loomsync", "-d", "loomsync")


@pytest.fixture(scope="module")
def shared() -> dict[str, Any]:
    """What the first test hands the second: the secret, a token, the thread, the backup."""
    return {}


@pytest.fixture(scope="module")
def stacks() -> Iterator[list[Stack]]:
    """The projects the tests start, each taken down with its volumes at the end."""
    started: list[Stack] = []
    yield started
    for stack in started:
        stack.down("--volumes", "--timeout", "5")


def new_stack(stacks: list[Stack], tmp: Path, overrides: list[str], env: dict[str, str]) -> Stack:
    """A Stack with a project name no other run uses, registered for the final ``down -v``."""
    stack = Stack(f"loomsync-test-{uuid.uuid4().hex[:10]}", overrides, env, tmp / "empty.env")
    stacks.append(stack)
    return stack


def mint(stack: Stack, sub: str) -> str:
    """A token from ``loomsync-server token create`` run inside the server container, as the
    README does it: ``TOKEN=$(docker compose exec -T server …)``, so stdout is the token alone."""
    out = stack.exec("server", "loomsync-server", "token", "create", "--sub", sub, "--org", "acme")
    lines = out.decode().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def get_thread(base: str, token: str) -> httpx.Response:
    """GET /api/threads/THREAD_ID as ``token``."""
    return httpx.get(
        f"{base}/api/threads/{THREAD_ID}",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


def ready(base: str) -> bool:
    """True when GET /health/ready answers 200."""
    try:
        return httpx.get(f"{base}/health/ready", timeout=10).status_code == 200
    except httpx.TransportError:
        return False


def upgrades(stack: Stack) -> list[tuple[str, str]]:
    """The ``Running upgrade A -> B`` steps the migrate container logged."""
    return UPGRADE.findall(stack.logs("migrate"))


def up_and_ready(stack: Stack) -> str:
    """``docker compose up -d``, then wait for migrate to finish with 0 and the server to be
    healthy in ``docker compose ps`` and answer /health/ready on 127.0.0.1; the base URL."""
    stack.run("up", "-d")
    entry = stack.wait_healthy("server")
    migrate = stack.container("migrate")
    assert migrate is not None
    assert (migrate["State"], migrate["ExitCode"]) == ("exited", 0)
    published = {p["URL"] for p in entry["Publishers"] if p.get("PublishedPort")}
    assert published == {"127.0.0.1"}, entry["Publishers"]
    base = stack.base_url()
    assert ready(base)
    return base


def test_compose_first_start_tour_restarts_and_down_v(
    tmp_path: Path, stacks: list[Stack], shared: dict[str, Any]
) -> None:
    """First start with a slow initialisation; migrate started before the database is up; the
    README tour; down/up keeps the thread and migrates nothing twice; a backup; down -v."""
    secret = secrets.token_urlsafe(48)
    stack = new_stack(
        stacks, tmp_path, ["override.yml", "gate.yml"], {"LOOMSYNC_JWT_SECRET": secret}
    )

    # the image of this checkout (cached layers when nothing changed)
    stack.run("build")

    # the database's first start, held in its socket-only initialisation phase
    stack.run("up", "-d", "--no-deps", "db")
    wait_for(
        "the db's first initialisation",
        lambda: stack.succeeds("db", "test", "-e", "/tmp/loomsync-gate-waiting"),
    )
    assert stack.succeeds("db", *SOCKET_CHECK), "the stand-in lacks the socket-only phase"
    config = json.loads(stack.run("config", "--format", "json").stdout)
    check = config["services"]["db"]["healthcheck"]["test"]
    assert check[0] == "CMD-SHELL"
    assert not stack.succeeds("db", "sh", "-c", check[1]), "healthy while TCP is refused"

    # migrate, started now, waits for the database instead of failing
    migrate_id = stack.run("run", "-d", "--no-deps", "migrate").stdout.decode().strip()
    stack.one_offs.append(migrate_id)
    wait_for(
        "migrate to report that it waits",
        lambda: b"the database is not ready" in docker("logs", migrate_id).stderr,
    )
    stack.exec("db", "touch", "/tmp/loomsync-gate-open")
    assert docker("wait", migrate_id).stdout.decode().strip() == "0"
    first_run = docker("logs", migrate_id)
    applied = UPGRADE.findall((first_run.stdout + first_run.stderr).decode())
    assert applied, "the first migrate applied nothing"

    # the whole stack; its own migrate finds the schema current
    base = up_and_ready(stack)
    assert upgrades(stack) == []
    assert "Schema at revision" in stack.logs("migrate")

    # the image: not root, no build tools, the healthcheck from the Dockerfile
    image = json.loads(docker("image", "inspect", IMAGE).stdout)[0]["Config"]
    assert image["User"] == "10001:10001"
    assert "/health/ready" in " ".join(image["Healthcheck"]["Test"])
    assert stack.exec("server", "id", "-u").decode().strip() == "10001"
    tools = "for t in gcc cc c++ make ld as; do command -v $t || true; done"
    assert stack.exec("server", "sh", "-c", tools).decode().split() == []

    # the README tour: a token from `docker compose exec`, PUT, GET, append, search
    token = mint(stack, "alice")
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    put = httpx.put(
        f"{base}/api/threads/{THREAD_ID}",
        content=THREAD_FILE.read_bytes(),
        headers=headers,
        timeout=60,
    )
    assert put.status_code == 201, put.text
    append = httpx.post(
        f"{base}/api/threads/{THREAD_ID}/messages",
        json={"messages": [{"role": "user", "content": "thanks!"}]},
        headers={**headers, "If-Match": put.headers["ETag"]},
        timeout=30,
    )
    assert append.status_code in (200, 201), append.text
    stored = get_thread(base, token)
    assert stored.status_code == 200
    assert stored.json()["conversation"]["messages"][-1]["content"] == "thanks!"

    # down, then up: every thread kept, no migration applied again
    stack.down()
    base = up_and_ready(stack)
    assert get_thread(base, token).json() == stored.json()
    assert upgrades(stack) == []
    # a second `up` on the running stack runs migrate again, and again it applies nothing
    stack.run("up", "-d")
    stack.wait_healthy("server")
    assert upgrades(stack) == []
    assert stack.logs("migrate").count("Schema at revision") >= 1

    # a backup as docs/operations.md takes it
    dump = stack.exec("db", "pg_dump", "-U", "loomsync", "--format=custom", "loomsync")
    assert dump.startswith(b"PGDMP")

    # down -v removes the data
    assert stack.volumes() == [f"{stack.project}_pgdata"]
    stack.down("--volumes")
    assert stack.volumes() == []

    shared.update(secret=secret, token=token, thread=stored.json(), dump=dump)


def test_compose_restore_into_fresh_stack_with_secret_from_file(
    tmp_path: Path, stacks: list[Stack], shared: dict[str, Any]
) -> None:
    """The first test's backup restored into a fresh stack whose signing secret is a Docker
    secret file (LOOMSYNC_JWT_SECRET_FILE, no LOOMSYNC_JWT_SECRET): the thread is back and the
    first stack's token still works."""
    assert "dump" in shared, "the first compose test did not get as far as its backup"
    secret_file = tmp_path / "jwt_secret"
    secret_file.write_text(shared["secret"] + "\n")
    secret_file.chmod(0o444)  # the server runs as uid 10001
    env = {
        "LOOMSYNC_JWT_SECRET_FILE": "/run/secrets/loomsync_jwt_secret",
        "LOOMSYNC_TEST_SECRET_PATH": str(secret_file),
    }
    stack = new_stack(stacks, tmp_path, ["override.yml", "secret-file.yml"], env)

    stack.run("up", "-d", "--no-deps", "db")
    stack.wait_healthy("db")
    stack.exec(
        "db",
        *("pg_restore", "-U", "loomsync", "-d", "loomsync", "--no-owner", "--exit-on-error"),
        input=shared["dump"],
    )
    base = up_and_ready(stack)
    assert upgrades(stack) == []  # the dump is at the current revision

    assert stack.exec("server", "sh", "-c", 'printf %s "$LOOMSYNC_JWT_SECRET"') == b""
    restored = get_thread(base, shared["token"])
    assert restored.status_code == 200, restored.text
    assert restored.json() == shared["thread"]
    assert get_thread(base, mint(stack, "alice")).json() == shared["thread"]
    assert get_thread(base, "not-a-token").status_code == 401
