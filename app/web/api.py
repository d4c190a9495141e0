"""``POST /api/login-codes``: a one-time code that signs a browser in as the token's holder
(issue 13, item 3). A bearer-token route like the rest of /api: the session cookie is never
read here, so a page cannot mint codes."""

from __future__ import annotations

from datetime import datetime
from urllib.parse import urlencode

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field

from app.auth import TokenHolder
from app.database import SessionDep, SettingsDep
from app.problems import problem_responses
from app.routes import ApiRouter
from app.threads.responses import json_response
from app.times import rfc3339
from app.web import logins
from app.web.csrf import base_url
from app.web.redirects import MAX_NEXT_CHARS, NEXT_PATTERN, safe_next

router = ApiRouter(prefix="/api", tags=["sign-in"])


class LoginCodeRequest(BaseModel):
    """Where the browser goes once signed in (a path of this server; default ``/``)."""

    model_config = ConfigDict(extra="forbid")

    next: str | None = Field(
        default=None,
        max_length=MAX_NEXT_CHARS,
        pattern=NEXT_PATTERN,
        description="A path of this server, e.g. /t/T-…; not //host or a full URL",
        examples=["/t/T-019b7f94-51b4-7593-922e-ba12b5b73b52"],
    )


class LoginCode(BaseModel):
    """A one-time sign-in code and the page that exchanges it."""

    code: str = Field(description="256 random bits, URL-safe; works once")
    url: str = Field(description="Absolute URL of /login?code=… (open it in a browser)")
    expires_at: datetime = Field(description="The code stops working then (RFC 3339 UTC)")
    session_expires_at: datetime = Field(
        description="A session opened with the code ends then: the token's own expiry"
    )


def login_url(base: str, code: str, next_path: str | None) -> str:
    """``{base}/login?code=…[&next=…]`` (``next`` omitted when it is ``/``)."""
    query = {"code": code}
    target = safe_next(next_path)
    if target != "/":
        query["next"] = target
    return f"{base.rstrip('/')}/login?{urlencode(query)}"


@router.post(
    "/login-codes",
    status_code=201,
    response_model=LoginCode,
    responses=problem_responses(400, 401, 422, 429, 503),
    openapi_extra={"security": [{"bearer": []}]},
)
async def create_login_code(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    holder: TokenHolder,
    body: LoginCodeRequest | None = None,
) -> object:
    """A one-time code (valid LOOMSYNC_LOGIN_CODE_TTL seconds, 120 by default) that signs a
    browser in at /login as the token's holder, until the token expires; needs a bearer
    token (401 without one)."""
    principal, exp = holder
    made = await logins.create_code(
        session, principal, logins.token_expiry(exp), settings.login_code_ttl
    )
    target = body.next if body is not None else None
    return json_response(
        {
            "code": made.code,
            "url": login_url(base_url(request), made.code, target),
            "expires_at": rfc3339(made.expires_at),
            "session_expires_at": rfc3339(logins.token_expiry(exp)),
        },
        status_code=201,
    )
