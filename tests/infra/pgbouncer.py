"""Debian's PgBouncer (``apt-get install pgbouncer``, 1.18 on bookworm) in front of a PostgreSQL
server, on a 127.0.0.1 port of the caller's, with its config, log and pid file in a folder of the
caller's::

    with start_pgbouncer(*upstream_of(database_url), 18301, tmp_path) as bouncer:
        url = bouncer.route(database_url)  # the same database, through PgBouncer
        bouncer.show("SERVERS")            # the admin console's rows, as dicts

Every database name is forwarded to the upstream server (a ``*`` entry), as the same user, with
no password on either side (``auth_type = trust``: the upstream must trust 127.0.0.1, as this
machine's PostgreSQL and tests/throwaway_pg.py clusters do). By default the pool is in
transaction mode with 2 server connections per database and user, so clients really share
server connections. When started as root, PgBouncer runs as the ``postgres`` user (it refuses to
run as root): the folder is given to that user, and the folders above it inside the temporary
directory are made searchable (o+x) for it.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy.engine import make_url

from tests.infra.process import (
    MissingBinary,
    ServerProcess,
    find_binary,
    port_open,
    wait_until,
)

BINARY = "pgbouncer"
PACKAGE = "pgbouncer"
#: Who PgBouncer runs as when this process is root.
RUN_AS = "postgres"


@dataclass
class PgBouncer(ServerProcess):
    """A running PgBouncer: ``port`` on 127.0.0.1, forwarding to ``upstream_host:upstream_port``.

    ``url`` is a ``postgresql://`` URL of ``database`` through it; :meth:`route` turns any URL
    of the upstream into the same one through PgBouncer.
    """

    port: int
    upstream_host: str
    upstream_port: int
    folder: Path
    process: subprocess.Popen[bytes]
    user: str = "postgres"
    database: str = "postgres"
    host: str = field(default="127.0.0.1")

    @property
    def url(self) -> str:
        """``postgresql://user@127.0.0.1:port/database`` (no password: trust)."""
        return self.url_for(self.database)

    @property
    def log(self) -> Path:
        """PgBouncer's log file."""
        return self.folder / "pgbouncer.log"

    def url_for(self, database: str) -> str:
        """``postgresql://user@127.0.0.1:port/<database>`` through PgBouncer."""
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database}"

    def route(self, url: str) -> str:
        """``url`` (any ``postgresql[+driver]://`` URL, its query kept) with host and port
        replaced by PgBouncer's; the user and database stay, a password is dropped (trust)."""
        parts = urlsplit(url)
        user = parts.username or self.user
        return urlunsplit(parts._replace(netloc=f"{user}@{self.host}:{self.port}"))

    def show(self, what: str) -> list[dict[str, str]]:
        """Run ``SHOW <what>`` (``POOLS``, ``SERVERS``, ``CLIENTS``, ``STATS``…) on the admin
        console and return its rows as dicts of text (psql's CSV output: the console speaks only
        the simple query protocol).

        Raises:
            subprocess.CalledProcessError: psql failed (its stderr is in the exception).
        """
        psql = find_binary("psql") or "psql"
        command = [psql, "-X", "-q", "--csv", "-h", self.host, "-p", str(self.port)]
        command += ["-U", self.user, "-d", "pgbouncer", "-c", f"SHOW {what}"]
        out = subprocess.run(command, check=True, capture_output=True, text=True, timeout=30)
        return list(csv.DictReader(io.StringIO(out.stdout)))


def upstream_of(url: str) -> tuple[str, int]:
    """``(host, port)`` of a ``postgresql[+driver]://`` URL, for :func:`start_pgbouncer`: a
    Unix-socket URL (``?host=/run/dir``, as pgserver's) gives the socket folder, which PgBouncer
    takes as a host too; no host is 127.0.0.1, no port 5432."""
    parts = make_url(url)
    query_host = parts.query.get("host")
    host = parts.host or (query_host if isinstance(query_host, str) else None) or "127.0.0.1"
    return host, parts.port or 5432


def config_text(
    folder: Path,
    upstream_host: str,
    upstream_port: int,
    port: int,
    *,
    pool_mode: str,
    pool_size: int,
    connect_query: str | None,
    ignore_startup_parameters: str,
    aliases: Mapping[str, str] | None = None,
) -> str:
    """The ``pgbouncer.ini`` :func:`start_pgbouncer` writes (see there for the arguments)."""
    target = f"host={upstream_host} port={upstream_port}"
    if connect_query:
        target += " connect_query='" + connect_query.replace("'", "''") + "'"
    return "\n".join(
        [
            "[databases]",
            *(f"{alias} = {target} dbname={real}" for alias, real in (aliases or {}).items()),
            f"* = {target}",
            "[pgbouncer]",
            "listen_addr = 127.0.0.1",
            f"listen_port = {port}",
            "unix_socket_dir =",
            "auth_type = trust",
            f"auth_file = {folder / 'userlist.txt'}",
            "admin_users = postgres",
            "stats_users = postgres",
            f"pool_mode = {pool_mode}",
            f"default_pool_size = {pool_size}",
            "min_pool_size = 0",
            "reserve_pool_size = 0",
            "max_client_conn = 1000",
            f"ignore_startup_parameters = {ignore_startup_parameters}",
            f"logfile = {folder / 'pgbouncer.log'}",
            f"pidfile = {folder / 'pgbouncer.pid'}",
            "",
        ]
    )


def start_pgbouncer(
    upstream_host: str,
    upstream_port: int,
    port: int,
    folder: Path,
    *,
    pool_mode: str = "transaction",
    pool_size: int = 2,
    connect_query: str | None = None,
    ignore_startup_parameters: str = "extra_float_digits",
    user: str = "postgres",
    database: str = "postgres",
    aliases: Mapping[str, str] | None = None,
) -> PgBouncer:
    """Start PgBouncer on ``127.0.0.1:port`` forwarding every database to
    ``upstream_host:upstream_port``, and wait until it accepts connections.

    Args:
        folder: where ``pgbouncer.ini``, ``userlist.txt``, the log and the pid file go (created;
            use a fresh temporary folder per instance).
        pool_mode: ``transaction`` (default), ``session`` or ``statement``.
        pool_size: server connections per (database, user) pair (``default_pool_size``).
        connect_query: SQL run once on every new server connection (e.g. ``SET jit = off``).
        ignore_startup_parameters: comma list of startup parameters PgBouncer accepts and drops
            (anything else beyond the few it tracks is refused: "unsupported startup parameter").
        user: the user named in the auth file and in :attr:`PgBouncer.url` (must exist upstream).
        database: the database of :attr:`PgBouncer.url`.
        aliases: ``{name clients ask for: upstream database}`` (every other name is passed on
            as it is).

    Raises:
        MissingBinary: pgbouncer is not installed.
        StartFailed: it exited or did not listen within 15 s (the message has its log).
    """
    binary = find_binary(BINARY)
    if binary is None:
        raise MissingBinary(f"{BINARY} is not installed (apt-get install {PACKAGE})")
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "pgbouncer.ini"
    config.write_text(
        config_text(
            folder,
            upstream_host,
            upstream_port,
            port,
            pool_mode=pool_mode,
            pool_size=pool_size,
            connect_query=connect_query,
            ignore_startup_parameters=ignore_startup_parameters,
            aliases=aliases,
        )
    )
    users = {user, "postgres"}
    (folder / "userlist.txt").write_text("".join(f'"{name}" ""\n' for name in sorted(users)))
    run_as = _hand_over(folder) if os.geteuid() == 0 else None
    output = folder / "pgbouncer.out"
    with output.open("ab") as sink:
        process = subprocess.Popen(
            [binary, str(config)],
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            user=run_as,
            group=run_as,  # its own group, not root's: a 0701 folder's group bits are ---
            extra_groups=[] if run_as else None,
            start_new_session=True,
        )
    bouncer = PgBouncer(port, upstream_host, upstream_port, folder, process, user, database)
    wait_until(process, lambda: port_open(port), output, f"pgbouncer on port {port}")
    return bouncer


def _hand_over(folder: Path) -> str:
    """Give ``folder`` and its files to :data:`RUN_AS` (PgBouncer will not run as root)."""
    account = pwd.getpwnam(RUN_AS)
    for path in (folder, *folder.iterdir()):
        shutil.chown(path, account.pw_uid, account.pw_gid)
    # its parents must be searchable by that user: pytest's tmp_path folders are 0700; only
    # folders inside the temporary directory are opened up (never e.g. /root)
    temp = Path(tempfile.gettempdir()).resolve()
    for parent in folder.resolve().parents:
        if temp not in parent.parents:
            continue
        with contextlib.suppress(OSError):
            mode = parent.stat().st_mode
            if not mode & 0o001:
                parent.chmod(mode | 0o001)
    return RUN_AS
