"""``loomsync-server``: serve | migrate | rescan | reindex | token create | token login (ARCHITECTURE.md
"Running"; ``token login`` is in app/web/logincli.py, ``reindex`` in app/threads/reindexcli.py)."""

from __future__ import annotations

import asyncio
import errno
import getpass
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Annotated, Any

import typer
from pydantic import SecretStr, ValidationError
from rich.console import Console
from rich.markup import escape

from app.auth import KNOWN_ROLES, claims_problem, create_token, unscoped_key_warning
from app.config import Settings
from app.database import (
    embedded_secret,
    embedded_url,
    head_revision,
    make_engine,
    make_sessionmaker,
    migrate,
    schema_revision,
    start_embedded,
)
from app.dbwait import DatabaseNotReady, wait_for_database
from app.logs import configure_logging
from app.threads import reindex
from app.threads.rescan import Outcome, rescan
from loomsync.core.document.ids import InvalidThreadId, ThreadId
from loomsync.core.secrets import default_redactor

cli = typer.Typer(no_args_is_help=True, help="The loomsync thread sync server.")
token_cli = typer.Typer(no_args_is_help=True, help="Mint bearer tokens.")
cli.add_typer(token_cli, name="token")
console = Console(stderr=True)
log = logging.getLogger(__name__)

_TTL = re.compile(r"^(\d+)([smhdw]?)$", re.ASCII)
_TTL_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
#: The longest lifetime ``token create`` mints: 10 years (3650 days). A longer one is a token
#: that never expires in practice (``99999999999d`` put ``exp`` past year 9999).
MAX_TTL_DAYS = 3650
MAX_TTL_SECONDS = MAX_TTL_DAYS * 86400


def parse_ttl(value: str) -> int:
    """``30d``, ``12h``, ``90m``, ``45s``, ``2w`` or plain seconds → seconds, at most
    :data:`MAX_TTL_SECONDS`.

    Raises:
        typer.BadParameter: any other form, zero, or over 10 years (exit status 2).
    """
    match = _TTL.match(value.strip())
    if not match or not match.group(1).strip("0"):
        raise typer.BadParameter(
            "use a positive number with s, m, h, d or w (e.g. 30d)", param_hint="'--ttl'"
        )
    digits, unit = match.group(1).lstrip("0"), match.group(2)
    # the digit count first: int() of thousands of digits is slow, or refused outright
    if len(digits) > len(str(MAX_TTL_SECONDS)) or int(digits) * _TTL_UNITS[unit] > MAX_TTL_SECONDS:
        raise typer.BadParameter(
            f"a token lives at most 10 years ({MAX_TTL_DAYS}d); mint a new one when it expires",
            param_hint="'--ttl'",
        )
    return int(digits) * _TTL_UNITS[unit]


def _settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        console.print(f"[red]Configuration error:[/red] {exc}")
        raise typer.Exit(2) from None


def embedded_defaults(settings: Settings) -> Settings:
    """Settings for the embedded server: one person's server, so no rate limit unless
    ``LOOMSYNC_RATE_LIMIT`` is set explicitly."""
    if "rate_limit" in settings.model_fields_set:
        return settings
    return settings.model_copy(update={"rate_limit": "off"})


def _exit_on_sigterm(signum: int, _frame: FrameType | None) -> None:
    """SIGTERM handler: leave through Python (``SystemExit``, status 128 + 15), so that ``finally``
    blocks and atexit hooks run and stop the embedded PostgreSQL. Without it a service manager's
    SIGTERM left that server running: uvicorn shuts down gracefully, then re-raises the signal
    it caught, which by default ends the process on the spot."""
    raise SystemExit(128 + signum)


def _with_embedded(settings: Settings) -> tuple[Settings, str, Any]:
    """Settings and database URL, starting the embedded PostgreSQL when no URL is configured.

    With the embedded server, SIGTERM from now on exits through Python (:func:`_exit_on_sigterm`)
    so that the caller's ``server.cleanup()`` runs."""
    if settings.async_database_url:
        return settings, settings.async_database_url, None
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    console.print(f"Starting the embedded PostgreSQL under {settings.data_dir} …")
    server = start_embedded(settings.data_dir)
    url = embedded_url(server)
    settings = embedded_defaults(settings)
    if settings.jwt_secret is None:
        settings = settings.model_copy(
            update={"jwt_secret": SecretStr(embedded_secret(settings.data_dir))}
        )
    return settings, url, server


def _schema_is_current(url: str, settings: Settings) -> tuple[bool, str | None]:
    async def check() -> str | None:
        engine = make_engine(url, settings)
        try:
            return await schema_revision(engine)
        finally:
            await engine.dispose()

    current = asyncio.run(check())
    return current == head_revision(), current


@contextmanager
def current_database(settings: Settings) -> Iterator[tuple[Settings, str]]:
    """(settings, database URL) of a database at the latest revision, for a command's
    lifetime: the embedded PostgreSQL started when no URL is configured (and cleaned up after),
    exit 1 when the schema is not current (:func:`_require_current_schema`)."""
    settings, url, server = _with_embedded(settings)
    try:
        _require_current_schema(url, settings)
        yield settings, url
    finally:
        if server is not None:
            server.cleanup()


def _require_current_schema(
    url: str, settings: Settings, advice: str = "run `loomsync-server migrate` first"
) -> None:
    """Exit 1, saying ``advice``, unless the schema of ``url`` is at the latest revision."""
    current, revision = _schema_is_current(url, settings)
    if not current:
        console.print(f"[red]The schema is at {revision}, not {head_revision()}: {advice}.[/red]")
        raise typer.Exit(1)


def _require_free_port(host: str, port: int) -> None:
    """Exit 1 saying how to choose another port when ``host:port`` cannot be listened on
    (issue 16, item 10): before, ``make run`` started the database and printed a token, then
    uvicorn failed with ``[Errno 98] address already in use``."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
            probe.bind(address)
    except OSError as exc:
        why = "is already in use" if exc.errno == errno.EADDRINUSE else f"cannot be used ({exc})"
        other = 8081 if port != 8081 else 8082
        console.print(
            escape(f"Port {port} on {host} {why} (another server is listening there?). ")
            + escape(
                f"Choose another: LOOMSYNC_PORT={other} make run, or "
                f"loomsync-server serve --port {other}."
            ),
            style="red",
        )
        raise typer.Exit(1) from None


@cli.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address [LOOMSYNC_HOST].")] = None,
    port: Annotated[int | None, typer.Option(help="Port [LOOMSYNC_PORT].")] = None,
    migrate_first: Annotated[
        bool | None,
        typer.Option(
            "--migrate/--no-migrate",
            help="Migrate before serving (default: only for the embedded server).",
        ),
    ] = None,
    workers: Annotated[int, typer.Option(min=1, help="uvicorn worker processes.")] = 1,
    reindex_stale: Annotated[
        bool,
        typer.Option(
            "--reindex/--no-reindex",
            envvar="LOOMSYNC_REINDEX",
            help="Rebuild search vectors made by an older analyzer in a background process"
            " [LOOMSYNC_REINDEX].",
        ),
    ] = True,
) -> None:
    """Serve the API. Without LOOMSYNC_DATABASE_URL, start the embedded PostgreSQL, migrate it,
    and print a token that works. Warns when a public key or JWKS verifies tokens with no
    LOOMSYNC_JWT_AUDIENCE or LOOMSYNC_JWT_ISSUER set. When search vectors are stale (an
    upgrade changed the analyzer, migration 0007), rebuilds them in a background process
    (:func:`start_reindex`) unless ``--no-reindex``."""
    settings = _settings()
    configure_logging(settings)
    warning = unscoped_key_warning(settings)
    if warning is not None:
        log.warning(warning)
    host = host or settings.host
    port = port or settings.port
    _require_free_port(host, port)  # before the embedded database starts or a token is made
    embedded = not settings.async_database_url
    settings, url, server = _with_embedded(settings)
    if settings.jwt_secret is None and not settings.jwt_public_key and not settings.jwt_jwks:
        console.print(
            "[red]Set LOOMSYNC_JWT_SECRET or LOOMSYNC_JWT_SECRET_FILE (or a public key /"
            " JWKS) to verify tokens.[/red]"
        )
        raise typer.Exit(2)
    if migrate_first if migrate_first is not None else embedded:
        migrate(url, settings.db_pooler)
    else:
        _require_current_schema(url, settings, "run `loomsync-server migrate` or pass --migrate")
    if embedded:
        token = create_token(settings, getpass.getuser(), org="local", ttl_seconds=30 * 86400)
        console.print(f"Embedded database: {settings.data_dir / 'pgdata'}")
        console.print("A token for you (30 days):")
        typer.echo(token)
        console.print(
            f"Try: curl -H 'Authorization: Bearer <token>' http://{host}:{port}/api/threads"
        )
    os.environ["LOOMSYNC_DATABASE_URL"] = url
    os.environ["LOOMSYNC_RATE_LIMIT"] = settings.rate_limit
    if settings.jwt_secret is not None:
        os.environ["LOOMSYNC_JWT_SECRET"] = settings.jwt_secret.get_secret_value()
    import uvicorn

    from app.protocol import HTTP_PROTOCOL

    child = start_reindex(url, settings) if reindex_stale else None
    try:
        uvicorn.run(
            "app.asgi:create",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level=settings.log_level.lower(),
            access_log=False,  # app.access writes one line per request, with its request id
            proxy_headers=True,
            http=HTTP_PROTOCOL,  # httptools with a bounded request head and a head timeout
        )
    finally:
        if child is not None and child.poll() is None:
            child.terminate()  # a batch not committed is simply done again next time
            child.wait(10)
        if server is not None:
            server.cleanup()


def start_reindex(url: str, settings: Settings) -> subprocess.Popen[bytes] | None:
    """Start ``loomsync-server reindex --nice --quiet`` in a child process when a rebuild of the search
    vectors is due (:func:`app.threads.reindex.due`); None when none is.

    A process of its own, not a task of the app: the analysis is CPU-bound Python, which in a
    serving process would hold the GIL between requests; a child at a lower priority leaves the
    server's processes the CPU, starts once however many uvicorn workers run, and never starts
    for an app built in tests or benches. Its log lines go to the same stderr. A daemon
    thread waits for it, so it is reaped when it ends (its ``returncode`` is set then).
    """

    async def check() -> bool:
        engine = make_engine(url, settings)
        try:
            return await reindex.due(engine)
        finally:
            await engine.dispose()

    if not asyncio.run(check()):
        return None
    log.info("a rebuild of the search vectors is due: running it in the background")
    env = {**os.environ, "LOOMSYNC_DATABASE_URL": url}
    command = [sys.executable, "-m", "app.cli", "reindex", "--nice", "--quiet"]  # logs say it
    child = subprocess.Popen(command, env=env)
    # reaped as soon as it ends, not at shutdown: a finished rebuild is no <defunct> process
    threading.Thread(target=child.wait, name="reindex-reaper", daemon=True).start()
    return child


@cli.command("migrate")
def migrate_command(
    wait: Annotated[
        float | None,
        typer.Option(
            min=0,
            help="Seconds to wait for a database that is still starting (refused, not"
            " resolvable, 'starting up'), retrying; 0: try once [default: LOOMSYNC_MIGRATE_WAIT,"
            " 60].",
        ),
    ] = None,
) -> None:
    """Bring the schema to the latest revision (alembic upgrade head). Waits up to ``--wait``
    seconds for the database to accept connections (:mod:`app.dbwait`); exit 1 when it still
    does not, or at once on an error waiting cannot fix (a wrong password)."""
    settings = _settings()
    configure_logging(settings)
    _, url, server = _with_embedded(settings)
    try:
        if server is None:
            try:
                seconds = settings.migrate_wait if wait is None else wait
                asyncio.run(wait_for_database(url, settings, seconds, log.warning))
            except DatabaseNotReady as exc:
                console.print(f"[red]Cannot migrate:[/red] {escape(str(exc))}")
                raise typer.Exit(1) from None
        migrate(url, settings.db_pooler)
    finally:
        if server is not None:
            server.cleanup()
    console.print(f"Schema at revision {head_revision()}.")


def _describe(outcome: Outcome) -> str:
    """One line of ``rescan`` output: the thread, its version, kinds and counts; never a value."""
    kinds = ", ".join(f"{kind} x{count}" for kind, count in outcome.kinds.items())
    done = {
        "found": "found (dry run: not written)",
        "redacted": f"redacted, now version {outcome.new_version}",
        "changed": "written or deleted meanwhile: left alone, run rescan again",
        "invalid": f"left alone: the redacted copy is not a valid thread ({outcome.reason})",
    }[outcome.status]
    return f"{outcome.thread_id} version {outcome.version}: {kinds}: {done}"


async def _rescan(url: str, settings: Settings, dry_run: bool, only: list[ThreadId] | None) -> int:
    """Run :func:`app.threads.rescan.rescan`, print a line per thread with findings and a
    summary; the number of threads left alone (changed or invalid)."""
    engine = make_engine(url, settings)
    tally = dict.fromkeys(("clean", "found", "redacted", "changed", "invalid"), 0)
    try:
        maker = make_sessionmaker(engine)
        async for outcome in rescan(maker, default_redactor(), dry_run=dry_run, only=only):
            tally[outcome.status] += 1
            if outcome.status != "clean":
                typer.echo(_describe(outcome))
    finally:
        await engine.dispose()
    typer.echo(
        f"{sum(tally.values())} threads scanned: {tally['clean']} clean, "
        + (
            f"{tally['found']} with credentials (dry run: nothing written)"
            if dry_run
            else f"{tally['redacted']} redacted, {tally['changed'] + tally['invalid']} left alone"
        )
    )
    return tally["changed"] + tally["invalid"]


@cli.command("rescan")
def rescan_command(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only report what would be redacted.")
    ] = False,
    thread: Annotated[
        list[str] | None, typer.Option(help="Only this thread id; repeatable.")
    ] = None,
) -> None:
    """Scan the stored threads with the server's detector and store each one that holds
    credentials redacted, as a replace (version + 1, an audit event per thread, stored
    idempotent answers refreshed): for threads stored before the scan, under
    LOOMSYNC_SECRET_SCAN=off, or before the detector learned a rule (docs/operations.md). Prints
    one line per thread with findings (kinds and counts, never a value). Exit status 1 when a
    thread was left alone (written meanwhile, or its redacted copy invalid): run it again."""
    settings = _settings()
    configure_logging(settings)
    try:
        only = None if thread is None else [ThreadId.parse(value) for value in thread]
    except InvalidThreadId as exc:
        raise typer.BadParameter(str(exc), param_hint="'--thread'") from None
    with current_database(settings) as (settings, url):
        left_alone = asyncio.run(_rescan(url, settings, dry_run, only))
    if left_alone:
        raise typer.Exit(1)


@token_cli.command("create")
def token_create(
    sub: Annotated[str, typer.Option(help="User id (the token's sub claim).")],
    org: Annotated[str | None, typer.Option(help="Organization id (org claim).")] = None,
    role: Annotated[
        list[str] | None, typer.Option(help="Role, e.g. admin or support; repeatable.")
    ] = None,
    ttl: Annotated[str, typer.Option(help="Lifetime: 30d, 12h, 90m, 45s, 2w.")] = "30d",
) -> None:
    """Print a signed bearer token (HS256 with LOOMSYNC_JWT_SECRET, or the embedded server's)."""
    settings = _settings()
    seconds = parse_ttl(ttl)
    problem = claims_problem(sub, org, role or [])
    if problem is not None:  # the server would refuse the token (API.md section 3)
        console.print(f"[red]{problem}: the server refuses such a token.[/red]")
        raise typer.Exit(2)
    for unknown in sorted(set(role or []) - KNOWN_ROLES):
        console.print(
            f"[yellow]Warning: role {escape(repr(unknown))} means nothing to the server; only"
            f" {' and '.join(sorted(KNOWN_ROLES))} do. The token carries it all the same.[/yellow]"
        )
    if settings.jwt_secret is None and not settings.async_database_url:
        secret_file = settings.data_dir / "jwt_secret"
        if not secret_file.exists():
            console.print(
                f"[red]No signing secret at {secret_file}: start the embedded server once"
                " (`loomsync-server serve`) with the same XDG_DATA_HOME / LOOMSYNC_DATA_DIR,"
                " or set LOOMSYNC_JWT_SECRET.[/red]"
            )
            raise typer.Exit(2)
        settings = settings.model_copy(
            update={"jwt_secret": SecretStr(embedded_secret(settings.data_dir))}
        )
    try:
        token = create_token(settings, sub, org=org, roles=role or [], ttl_seconds=seconds)
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    typer.echo(token)


from app.provenance import backfillcli  # noqa: E402  (registers `provenance-backfill` on cli)
from app.threads import reindexcli  # noqa: E402  (registers `reindex` on cli)
from app.usage import backfillcli as usage_backfillcli  # noqa: E402  (registers `usage-backfill` on cli)
from app.web import logincli  # noqa: E402  (registers `token login` on token_cli)

__all__ = [
    "backfillcli",
    "cli",
    "logincli",
    "main",
    "parse_ttl",
    "reindexcli",
    "token_cli",
    "usage_backfillcli",
]


def main() -> None:
    """Console-script entry point."""
    cli()


if __name__ == "__main__":  # python -m app.cli … (serve starts `reindex` this way)
    # Run the commands of the module as imported (app.cli), not of this __main__ copy: the
    # command modules (app/threads/reindexcli.py, app/web/logincli.py) register on app.cli's.
    from app.cli import main as imported_main

    imported_main()
