"""PostgreSQL client programs (``pg_dump``…) that match the server a test talks to (issue 30
item 6): ``pg_dump`` refuses a server of a newer major version than its own, and the suite's
server may be the embedded one (pgserver, which ships its own programs), a container, or this
machine's (tests/database.py chooses)::

    pg_dump = matching_program("pg_dump", database_url)  # a path, its major = the server's

Where it looks, first match wins: the embedded server's own folder (``pgserver.pg_config
--bindir``, pgserver's public command), ``LOOMSYNC_PG_BIN``, Debian's
``/usr/lib/postgresql/<major>/bin``, then PATH. When none has the server's major version the
calling test fails naming the package to install: never a skip, which would prove nothing.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.engine import make_url

#: Debian's folder of each major version's programs (``postgresql-client-<major>``).
DEBIAN_PG = Path("/usr/lib/postgresql")
_VERSION = re.compile(r"\(PostgreSQL\) (\d+)")


async def _server_major(database_url: str) -> int:
    dsn = make_url(database_url).set(drivername="postgresql")
    conn = await asyncpg.connect(dsn.render_as_string(hide_password=False))
    try:
        return conn.get_server_version().major
    finally:
        await conn.close()


def server_major(database_url: str) -> int:
    """The major version of the server at ``database_url`` (``server_version_num`` // 10000)."""
    return asyncio.run(_server_major(database_url))


def program_major(path: str) -> int | None:
    """The major version ``path --version`` reports (``pg_dump (PostgreSQL) 16.2`` gives 16), or
    None when it does not run or says no version."""
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    found = _VERSION.search(done.stdout)
    return int(found.group(1)) if found else None


def _embedded_folder() -> Path | None:
    """The folder of the embedded server's programs (pgserver's ``pg_config --bindir``)."""
    try:
        import pgserver

        return Path(pgserver.pg_config(["--bindir"]).strip())
    except (ImportError, OSError, subprocess.CalledProcessError):
        return None


def candidates(name: str, major: int) -> list[str]:
    """Every path of program ``name`` looked at, in order (they may not exist)."""
    folders = [_embedded_folder()]
    if os.environ.get("LOOMSYNC_PG_BIN"):
        folders.append(Path(os.environ["LOOMSYNC_PG_BIN"]))
    folders.append(DEBIAN_PG / str(major) / "bin")
    paths = [str(folder / name) for folder in folders if folder is not None]
    on_path = shutil.which(name)
    return [*paths, *([on_path] if on_path else [])]


def matching_program(name: str, database_url: str) -> str:
    """The path of PostgreSQL program ``name`` whose major version is the server's at
    ``database_url``; without one the calling test fails, naming Debian's
    ``postgresql-client-<major>``."""
    major = server_major(database_url)
    looked = candidates(name, major)
    for path in looked:
        if os.access(path, os.X_OK) and program_major(path) == major:
            return path
    pytest.fail(
        f"the test database runs PostgreSQL {major} and no {name} {major} was found"
        f" (looked at {', '.join(looked)}): apt-get install postgresql-client-{major}",
        pytrace=False,
    )
