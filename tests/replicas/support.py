"""What the replica tests share: the cluster and two server instances reading from it, tokens,
and the routing counters read from ``/metrics``."""

from __future__ import annotations

import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.auth import create_token
from app.config import Settings
from app.database import migrate
from tests.infra.cluster import Cluster, MissingServer, pg_bin, start_cluster
from tests.infra.process import missing
from tests.replicas.load import Pair
from tests.servers import Server, app_env, uvicorn_server

PRIMARY_PORT = 18201
REPLICA_PORT = 18202
DATABASE = "loomsync"
#: What the two instances are given: lag and probe times short enough for a test to watch a
#: replica leave and rejoin within seconds, and a wait for the replica (0.5 s) well above its
#: apply delay (:data:`CLUSTER_SETTINGS`).
REPLICA_ENV = {
    "LOOMSYNC_REPLICA_MAX_LAG": "1.5",
    "LOOMSYNC_REPLICA_CHECK_INTERVAL": "0.1",
    "LOOMSYNC_REPLICA_WAIT": "0.5",
    "LOOMSYNC_DB_POOL_SIZE": "10",
}

#: The cluster's settings: each server logs every statement (the routing tests read that), and
#: the replica applies each commit 150 ms after the primary made it, so that a read right after
#: a write finds the replica behind and must wait for it (within the instances'
#: LOOMSYNC_REPLICA_WAIT): a router that did not wait would read stale rows (checked: with the
#: wait removed, tests/replicas/test_consistency.py fails).
CLUSTER_SETTINGS = {
    "fsync": "off",
    "log_statement": "'all'",
    "recovery_min_apply_delay": "'150ms'",
}


@dataclass
class Setup:
    """The cluster, the settings that sign tokens, and instances ``a`` and ``b``."""

    cluster: Cluster
    settings: Settings
    a: Server
    b: Server

    def headers(self, user: str) -> dict[str, str]:
        """Authorization headers of a fresh token of ``user``."""
        return {"Authorization": f"Bearer {create_token(self.settings, user)}"}

    def pair(self) -> Pair:
        """Instances ``a`` and ``b`` for tests/replicas/load.py's clients."""
        return Pair((self.a.base_url, self.b.base_url), self.headers)


@contextmanager
def replica_setup() -> Iterator[Setup]:
    """Start the cluster (``log_statement = all``, so each server's log says what it ran),
    migrate its ``loomsync`` database, and start instances ``a`` and ``b`` on the primary with
    the replica. Fails (never skips) when this machine has no PostgreSQL server binaries."""
    try:
        pg_bin()
    except MissingServer as exc:
        missing(str(exc), "postgresql-15")
    folder = Path(tempfile.mkdtemp(prefix="loomsync-replicas-"))  # not under pytest's 0700 dirs
    settings = Settings(jwt_secret=secrets.token_urlsafe(48), _env_file=None)  # type: ignore[call-arg]
    try:
        with ExitStack() as stack:
            cluster = stack.enter_context(
                start_cluster(
                    folder,
                    PRIMARY_PORT,
                    [REPLICA_PORT],
                    settings=CLUSTER_SETTINGS,
                )
            )
            cluster.primary.sql(f"CREATE DATABASE {DATABASE}")
            migrate(cluster.primary.url(DATABASE))
            cluster.wait_replayed()
            env = app_env(
                cluster.primary.url(DATABASE),
                settings,
                LOOMSYNC_DATABASE_REPLICA_URLS=cluster.replicas[0].url(DATABASE),
                **REPLICA_ENV,
            )
            a = stack.enter_context(uvicorn_server(env))
            b = stack.enter_context(uvicorn_server(env))
            yield Setup(cluster, settings, a, b)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def samples(base_url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``base_url``'s ``/metrics``: (name, sorted labels) → value."""
    text = httpx.get(f"{base_url}/metrics", timeout=10).text
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def reads(base_url: str) -> dict[tuple[str, str], float]:
    """``loomsync_db_reads_total`` of an instance: (target, reason) → count."""
    return {
        (dict(labels)["target"], dict(labels)["reason"]): value
        for (name, labels), value in samples(base_url).items()
        if name == "loomsync_db_reads_total"
    }


def gauge(base_url: str, name: str) -> float:
    """The (one replica's) value of gauge ``name`` on an instance."""
    values = [v for (n, _), v in samples(base_url).items() if n == name]
    assert len(values) == 1, (name, values)
    return values[0]


def eventually(check: Callable[[], bool], seconds: float = 20.0, what: str = "") -> None:
    """Wait until ``check()`` is true (every 50 ms); fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {seconds} s: {what}")
        time.sleep(0.05)
