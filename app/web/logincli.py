"""``loomsync-server token login``: print a one-time browser sign-in link for a user, minted
by the operator straight into the database (issue 13, item 3). Registered on the ``token``
command group of :mod:`app.cli`.

The link opens a session with the identity given (``--sub``, ``--org``, ``--role``, checked
as ``token create`` checks them) for ``--ttl`` (default one day), as if a token of that
lifetime had asked ``POST /api/login-codes``. The code works once, for
``LOOMSYNC_LOGIN_CODE_TTL`` seconds.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Annotated

import typer
from sqlalchemy.exc import DBAPIError

from app.auth import Principal, claims_problem
from app.cli import (
    _settings,
    console,
    current_database,
    parse_ttl,
    token_cli,
)
from app.config import Settings
from app.database import make_engine, make_sessionmaker
from app.web import logins
from app.web.api import login_url
from loomsync.core.document.ids import InvalidThreadId, ThreadId


async def _mint(url: str, settings: Settings, principal: Principal, seconds: int) -> str:
    engine = make_engine(url, settings)
    try:
        async with make_sessionmaker(engine)() as session:
            until = datetime.now(UTC) + timedelta(seconds=seconds)
            made = await logins.create_code(session, principal, until, settings.login_code_ttl)
    finally:
        await engine.dispose()
    return made.code


def public_base(settings: Settings, url: str | None) -> str:
    """Where browsers reach the server: ``--url``, else ``LOOMSYNC_PUBLIC_URL``, else
    ``http://LOOMSYNC_HOST:LOOMSYNC_PORT``."""
    if url:
        return url.rstrip("/")
    if settings.public_url:
        return settings.public_url.rstrip("/")
    return f"http://{settings.host}:{settings.port}"


@token_cli.command("login")
def token_login(
    sub: Annotated[str, typer.Option(help="User id the browser signs in as.")],
    org: Annotated[str | None, typer.Option(help="Organization id.")] = None,
    role: Annotated[
        list[str] | None, typer.Option(help="Role, e.g. admin or support; repeatable.")
    ] = None,
    ttl: Annotated[str, typer.Option(help="How long the session lasts: 1d, 12h, 2w.")] = "1d",
    thread: Annotated[
        str | None, typer.Option(help="Land on this thread (T-…) instead of the lists.")
    ] = None,
    url: Annotated[
        str | None, typer.Option(help="The server's URL as browsers see it [LOOMSYNC_PUBLIC_URL].")
    ] = None,
) -> None:
    """Print a one-time sign-in link (open it in a browser; it works once, for minutes)."""
    settings = _settings()
    seconds = parse_ttl(ttl)
    problem = claims_problem(sub, org, role or [])
    if problem is not None:
        console.print(f"[red]{problem}: the server refuses such an identity.[/red]")
        raise typer.Exit(2)
    if url is not None and not url.startswith(("http://", "https://")):
        raise typer.BadParameter("use http://host:port or https://host", param_hint="'--url'")
    try:
        next_path = f"/t/{ThreadId.parse(thread)}" if thread is not None else None
    except InvalidThreadId as exc:
        raise typer.BadParameter(str(exc), param_hint="'--thread'") from None
    principal = Principal(user_id=sub, org_id=org, roles=frozenset(role or []))
    with current_database(settings) as (settings, database_url):
        try:
            code = asyncio.run(_mint(database_url, settings, principal, seconds))
        except (DBAPIError, OSError) as exc:
            console.print(f"[red]Cannot reach the database: {exc}[/red]")
            raise typer.Exit(1) from None
    typer.echo(login_url(public_base(settings, url), code, next_path))
    minutes = max(1, round(settings.login_code_ttl / 60))
    console.print(f"The link works once, for about {minutes} minute(s).")
