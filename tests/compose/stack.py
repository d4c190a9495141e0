"""One Docker Compose project of the published docker-compose.yml plus the test's overrides,
driven through the real ``docker compose`` CLI, reached only through ports published on
127.0.0.1."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from tests.compose.engine import compose_command, docker

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PUBLISHED = REPO / "docker-compose.yml"
#: how long a wait for a container's state may take before the test fails, in seconds
WAIT_SECONDS = 300

T = TypeVar("T")


def wait_for(what: str, probe: Callable[[], T | None], seconds: float = WAIT_SECONDS) -> T:
    """Call ``probe`` every half second until it returns something other than None or False.

    Raises:
        AssertionError: still nothing after ``seconds``, naming ``what``.
    """
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {seconds:g} s waiting for {what}")
        time.sleep(0.5)


class Stack:
    """``docker compose -p PROJECT -f docker-compose.yml -f OVERRIDE…`` with an environment of
    its own: the caller's minus every ``LOOMSYNC_*`` and ``COMPOSE_*`` variable, plus ``env``;
    an empty ``--env-file``, so a developer's ``.env`` beside the published file is not read."""

    def __init__(
        self, project: str, overrides: Sequence[str], env: Mapping[str, str], env_file: Path
    ) -> None:
        self.project = project
        self.files = [PUBLISHED, *(HERE / name for name in overrides)]
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("LOOMSYNC_", "COMPOSE_"))
        }
        self.env.update(env, LOOMSYNC_TEST_COMPOSE_DIR=str(HERE))
        env_file.write_text("")
        self.env_file = env_file
        #: ids of containers started with ``docker compose run``: removed by :meth:`down`
        self.one_offs: list[str] = []

    def run(self, *args: str, input: bytes | None = None, check: bool = True) -> Any:
        """``docker compose … ARGS``; the CompletedProcess (stdout and stderr as bytes).

        Raises:
            tests.compose.engine.DockerError: ``check`` and a non-zero exit status.
        """
        command = compose_command(self.project, self.files, "--env-file", str(self.env_file))
        return docker(*command, *args, input=input, check=check, env=self.env)

    def exec(self, service: str, *command: str, input: bytes | None = None) -> bytes:
        """``docker compose exec -T SERVICE COMMAND``'s stdout.

        Raises:
            tests.compose.engine.DockerError: the command failed.
        """
        return bytes(self.run("exec", "-T", service, *command, input=input).stdout)

    def succeeds(self, service: str, *command: str) -> bool:
        """True when ``docker compose exec -T SERVICE COMMAND`` exits 0."""
        return bool(self.run("exec", "-T", service, *command, check=False).returncode == 0)

    def containers(self) -> list[dict[str, Any]]:
        """``docker compose ps --all --format json``: one dict per container (Service, State,
        Health, ExitCode, Publishers …)."""
        out = self.run("ps", "--all", "--format", "json").stdout.decode().strip()
        if not out:
            return []
        if out.startswith("["):
            return list(json.loads(out))
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def container(self, service: str) -> dict[str, Any] | None:
        """The ``ps`` entry of ``service``'s container, None when it has none."""
        return next((c for c in self.containers() if c["Service"] == service), None)

    def wait_healthy(self, service: str) -> dict[str, Any]:
        """Wait until ``docker compose ps`` shows ``service`` healthy; its entry."""

        def healthy() -> dict[str, Any] | None:
            entry = self.container(service)
            return entry if entry is not None and entry.get("Health") == "healthy" else None

        return wait_for(f"{self.project} {service} healthy in `docker compose ps`", healthy)

    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` of the server, from ``docker compose port``.

        Raises:
            AssertionError: the port is published on another address than 127.0.0.1.
        """
        published = self.run("port", "server", "8080").stdout.decode().strip()
        assert published.startswith("127.0.0.1:"), published
        return f"http://{published}"

    def logs(self, service: str) -> str:
        """Everything ``service``'s container wrote (stdout and stderr), without prefixes."""
        done = self.run("logs", "--no-log-prefix", "--no-color", service)
        return str(done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace"))

    def volumes(self) -> list[str]:
        """The names of the Docker volumes of this project."""
        out = docker(
            "volume", "ls", "-q", "--filter", f"label=com.docker.compose.project={self.project}"
        ).stdout.decode()
        return out.split()

    def down(self, *args: str) -> None:
        """``docker compose down --remove-orphans ARGS``, after removing the containers that
        ``docker compose run`` started."""
        for container in self.one_offs:
            docker("rm", "--force", "--volumes", container, check=False)
        self.one_offs.clear()
        self.run("down", "--remove-orphans", *args)
