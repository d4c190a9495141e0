"""A PostgreSQL primary and streaming replicas of a test's or benchmark's own, from this
machine's server binaries (Debian's ``postgresql-15``: ``initdb``, ``pg_ctl``,
``pg_basebackup -R``), each on a 127.0.0.1 port of the caller's, in a folder of the caller's::

    with start_cluster(tmp, 18201, [18202]) as cluster:
        cluster.primary.url("loomsync")   # postgresql://postgres@127.0.0.1:18201/loomsync
        cluster.replicas[0].stop("immediate"); cluster.replicas[0].start()
        cluster.wait_replayed()           # every replica has replayed the primary's WAL

Authentication is ``trust`` on 127.0.0.1 (replication too). Each replica is a
``pg_basebackup -R -C`` copy with its own replication slot, so a stopped replica catches up when
it starts again. PostgreSQL refuses to run as root: as root the folder is given to the
``postgres`` user and every command runs as that user (``runuser``).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.infra.process import MissingBinary

#: Where the server binaries are looked for: ``LOOMSYNC_PG_BIN``, then Debian's folders, newest
#: major version first, then ``pg_config --bindir``.
PG_BIN_ENV = "LOOMSYNC_PG_BIN"
DEBIAN_PG = Path("/usr/lib/postgresql")
RUN_AS = "postgres"
STARTUP_SECONDS = 60.0
#: ``postgresql.conf`` lines of every node (a small, fast test server; hot standby reads with
#: feedback, so the primary's vacuum does not cancel a replica's read).
BASE_CONFIG = {
    "listen_addresses": "'127.0.0.1'",
    "wal_level": "replica",
    "max_wal_senders": "8",
    "max_replication_slots": "8",
    "hot_standby": "on",
    "hot_standby_feedback": "on",
    "max_connections": "200",
    "shared_buffers": "64MB",
    "wal_receiver_status_interval": "1s",
    "log_line_prefix": "'%m [%p] %a '",
}


class MissingServer(MissingBinary):
    """The PostgreSQL server binaries are not installed (``apt-get install postgresql-15``)."""


def pg_bin() -> Path:
    """The folder holding ``initdb``, ``pg_ctl``, ``pg_basebackup`` and ``postgres``.

    Raises:
        MissingServer: none found.
    """
    candidates: list[Path] = []
    if os.environ.get(PG_BIN_ENV):
        candidates.append(Path(os.environ[PG_BIN_ENV]))
    if DEBIAN_PG.is_dir():
        versions = [p for p in DEBIAN_PG.iterdir() if p.name.isdigit()]
        candidates += [p / "bin" for p in sorted(versions, key=lambda p: -int(p.name))]
    pg_config = shutil.which("pg_config")
    if pg_config:
        found = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        candidates.append(Path(found.stdout.strip()))
    for folder in candidates:
        if all((folder / name).is_file() for name in ("initdb", "pg_ctl", "pg_basebackup")):
            return folder
    raise MissingServer("no PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) found")


def _as_postgres(command: list[str]) -> list[str]:
    """``command`` run as :data:`RUN_AS` when this process is root."""
    return ["runuser", "-u", RUN_AS, "--", *command] if os.geteuid() == 0 else command


def _run(command: list[str]) -> str:
    done = subprocess.run(_as_postgres(command), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed ({done.returncode}):\n{done.stderr}{done.stdout}")
    return done.stdout


def _give_away(path: Path) -> None:
    """As root: ``path`` belongs to :data:`RUN_AS` (PostgreSQL's data folders must be its)."""
    if os.geteuid() == 0:
        user = pwd.getpwnam(RUN_AS)
        os.chown(path, user.pw_uid, user.pw_gid)


@dataclass
class Node:
    """One server of the cluster: its data folder, port, log file and binaries."""

    name: str
    data: Path
    port: int
    bin: Path

    @property
    def log(self) -> Path:
        """The server's log file (``log_statement`` lines too, when turned on)."""
        return self.data.parent / f"{self.name}.log"

    def url(self, database: str = "postgres") -> str:
        """``postgresql://postgres@127.0.0.1:<port>/<database>``."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        _run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w",
              "-t", str(int(STARTUP_SECONDS)), "start"])  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        """``pg_ctl stop -m <mode>``: ``fast`` disconnects sessions and shuts down cleanly,
        ``immediate`` kills every process at once (a crash: sockets close, no checkpoint)."""
        _run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"])

    def running(self) -> bool:
        """True while the postmaster runs (``pg_ctl status``)."""
        command = _as_postgres([str(self.bin / "pg_ctl"), "-D", str(self.data), "status"])
        return subprocess.run(command, capture_output=True).returncode == 0

    def sql(self, query: str, database: str = "postgres") -> str:
        """``query``'s rows as ``psql -At`` prints them (fields ``|``-separated), stripped."""
        psql = str(self.bin / "psql") if (self.bin / "psql").is_file() else "psql"
        command = [psql, "-X", "-At", "-v", "ON_ERROR_STOP=1", "-d", self.url(database),
                   "-c", query]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"psql on {self.name} failed: {done.stderr}")
        return done.stdout.strip()

    def log_size(self) -> int:
        """Bytes in the log now: pass to :meth:`log_since` to read what comes after."""
        return self.log.stat().st_size if self.log.exists() else 0

    def log_since(self, offset: int) -> str:
        """The log's text after ``offset`` (from :meth:`log_size`)."""
        with open(self.log, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")


@dataclass
class Cluster:
    """A primary and its streaming replicas."""

    primary: Node
    replicas: list[Node]

    def nodes(self) -> list[Node]:
        """The primary, then the replicas."""
        return [self.primary, *self.replicas]

    def wait_replayed(self, seconds: float = 30.0) -> None:
        """Wait until every running replica has replayed the primary's current WAL position.

        Raises:
            TimeoutError: one had not after ``seconds``.
        """
        target = self.primary.sql("SELECT pg_current_wal_lsn()")
        deadline = time.monotonic() + seconds
        for replica in self.replicas:
            if not replica.running():
                continue
            query = f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn"
            while replica.sql(query) != "t":
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{replica.name} did not replay {target} in time")
                time.sleep(0.02)

    def stop(self) -> None:
        """Stop every node that runs (replicas first)."""
        for node in reversed(self.nodes()):
            if node.running():
                with contextlib.suppress(RuntimeError):
                    node.stop("fast")


def _configure(data: Path, port: int, settings: dict[str, str]) -> None:
    lines = [f"{key} = {value}" for key, value in {**settings, "port": str(port)}.items()]
    with open(data / "postgresql.auto.conf", "a") as f:
        f.write("\n".join(lines) + "\n")


@contextlib.contextmanager
def start_cluster(
    folder: Path,
    primary_port: int,
    replica_ports: Sequence[int],
    *,
    settings: dict[str, str] | None = None,
) -> Iterator[Cluster]:
    """Create and start a primary on ``primary_port`` and one streaming replica per port of
    ``replica_ports`` under ``folder`` (created when missing; empty; as root, the folders above
    it must be searchable by the ``postgres`` user), stopped when the block
    ends. ``settings`` are more ``postgresql.conf`` lines of every node (e.g.
    ``{"log_statement": "all", "fsync": "off"}``).

    Raises:
        MissingServer: no server binaries on this machine.
        RuntimeError: a command failed (its output is in the message), e.g. a port in use.
    """
    binaries = pg_bin()
    folder.mkdir(parents=True, exist_ok=True)
    _give_away(folder)
    node_settings = {**BASE_CONFIG, "unix_socket_directories": f"'{folder}'", **(settings or {})}
    primary = Node("primary", folder / "primary", primary_port, binaries)
    _run([str(binaries / "initdb"), "-D", str(primary.data), "-U", "postgres", "--auth=trust",
          "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"])  # fmt: skip
    _configure(primary.data, primary_port, node_settings)
    cluster = Cluster(primary, [])
    try:
        primary.start()
        for index, port in enumerate(replica_ports, start=1):
            replica = Node(f"replica{index}", folder / f"replica{index}", port, binaries)
            _run([str(binaries / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(primary_port),
                  "-U", "postgres", "-D", str(replica.data), "-R", "-X", "stream",
                  "-C", "-S", replica.name, "--no-sync"])  # fmt: skip
            _configure(replica.data, port, {"port": str(port)})
            replica.start()
            cluster.replicas.append(replica)
        yield cluster
    finally:
        cluster.stop()
