"""Browser sign-in pages (issue 13, item 3): ``GET /login``, ``POST /login``, ``POST /logout``.

- ``GET /login?code=…[&next=/t/…]`` only *shows* whom the code signs in as, with a "Continue"
  button: it spends nothing, so a link prefetcher, an unfurler or a virus scanner that fetches
  the URL leaves the code usable, and a person is never signed in to an account they did not
  see named (login CSRF). It sets the double-submit cookie the form repeats (app/web/csrf.py):
  one per code (:func:`login_cookie`), so links opened in several tabs each stay usable.
- ``POST /login`` (the form) checks origin and token, spends the code, and answers 303 to
  ``next`` with the session cookie: HttpOnly, SameSite=Strict, ``Secure`` when served over
  HTTPS, ``Path=/``, expiring with the token the code was minted from (and the secret-less
  Lax hint of app/web/bounce.py). A session the browser already had is ended first.
- ``POST /logout`` (the form in ``_nav.html``) checks origin and the session's synchronizer
  token, ends the session in the database (the cookie stops working even if a copy of it was
  kept) and clears the cookie.

Every refusal is a 4xx page (``notice.html``) that says what to do next.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Literal

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.database import SessionDep
from app.routes import ApiRouter
from app.secrettokens import secret_hash
from app.web import logins
from app.web.bounce import HINT_COOKIE
from app.web.csrf import is_https, origin_problem, token_matches
from app.web.pages import notice, render
from app.web.redirects import safe_next
from app.web.session import COOKIE, WebSessionDep

router = ApiRouter(include_in_schema=False)

#: The double-submit cookies of the sign-in forms, scoped to /login: one per code, named
#: ``loomsync_login_`` + the first 16 hex digits of the code's SHA-256 (:func:`login_cookie`).
LOGIN_COOKIE = "loomsync_login"
#: Hex digits of the code's hash in its cookie's name (64 bits: two codes never share one).
COOKIE_HASH_DIGITS = 16
#: The longest form token accepted back from a cookie (``token_urlsafe(32)`` is 43).
MAX_FORM_TOKEN = 64
MAX_FORM_FIELDS = 8
AGAIN = "Run `loomsync open` again (or ask for a new link) to get a fresh one."


def login_cookie(code: str) -> str:
    """The name of ``code``'s double-submit cookie. One cookie per code, so two sign-in links
    opened in two tabs each keep their form valid (one shared cookie was replaced by the second
    GET, and the first tab's Continue refused); the name holds a prefix of the code's hash,
    never the code, and a form is still only good with the cookie its own GET set (login
    CSRF: a page of another site cannot set it)."""
    return f"{LOGIN_COOKIE}_{secret_hash(code).hex()[:COOKIE_HASH_DIGITS]}"


def _form_token(request: Request, cookie: str) -> str:
    """The form token of this code in this browser: the one its cookie already holds (the same
    link opened twice keeps both tabs valid), else a new 256-bit one."""
    known = request.cookies.get(cookie, "")
    if 43 <= len(known) <= MAX_FORM_TOKEN and known.isascii():
        return known
    return secrets.token_urlsafe(32)


async def _form(request: Request) -> dict[str, str]:
    """The text fields of a form POST (a file part, or a repeated field, is ignored)."""
    form = await request.form(max_files=0, max_fields=MAX_FORM_FIELDS)
    return {key: value for key, value in form.items() if isinstance(value, str)}


@router.get("/login", response_class=HTMLResponse)
async def login_page(
    request: Request, session: SessionDep, web: WebSessionDep, code: str = "", next: str = "/"
) -> Response:
    """Show whom ``code`` signs in as, and a Continue button (the code is not spent); 400 page
    without a code, 410 page for a used, expired or unknown one."""
    if not code:
        return notice(request, 400, "No sign-in code", f"This link carries no code. {AGAIN}")
    pending = await logins.peek_code(session, code)
    if pending is None:
        return notice(
            request, 410, "This sign-in link no longer works", f"It was used or expired. {AGAIN}"
        )
    cookie = login_cookie(code)
    form_token = _form_token(request, cookie)
    context = {
        "who": pending.principal,
        "until": pending.session_expires_at,
        "code": code,
        "next": safe_next(next),
        "form_token": form_token,
        "current": web.principal if web is not None else None,
    }
    response = render(request, "login.html", context)
    lifetime = max(1, int(request.app.state.settings.login_code_ttl))
    response.set_cookie(
        cookie,
        form_token,
        max_age=lifetime,
        path="/login",
        secure=is_https(request),
        httponly=True,
        samesite="strict",
    )
    return response


@router.post("/login", response_class=HTMLResponse)
async def login_submit(request: Request, session: SessionDep, web: WebSessionDep) -> Response:
    """Exchange the form's code for a session: 303 to ``next`` with the cookie; 403 page for a
    cross-site or stale form, 410 page for a code already used or expired."""
    refused = origin_problem(request)
    if refused is not None:
        return notice(request, 403, "Sign-in refused", refused)
    form = await _form(request)
    cookie = login_cookie(form.get("code", ""))
    if not token_matches(request.cookies.get(cookie), form.get("form_token")):
        return notice(
            request,
            403,
            "Sign-in refused",
            "This form was not the one this browser was shown; open the sign-in link again.",
        )
    pending = await logins.redeem_code(session, form.get("code", ""))
    if pending is None:
        return notice(
            request, 410, "This sign-in link no longer works", f"It was used or expired. {AGAIN}"
        )
    old = request.cookies.get(COOKIE)
    if web is not None and old:
        await logins.end_session(session, old)
    opened = await logins.open_session(session, pending)
    response = RedirectResponse(safe_next(form.get("next")), status_code=303)
    seconds = int((opened.expires_at - datetime.now(UTC)).total_seconds())
    cookies: tuple[tuple[str, str, Literal["strict", "lax"]], ...] = (
        (COOKIE, opened.cookie, "strict"),
        (HINT_COOKIE, "1", "lax"),  # no secret: lets a link from another site arrive signed in
    )
    for name, value, samesite in cookies:
        response.set_cookie(
            name,
            value,
            max_age=max(1, seconds),
            expires=opened.expires_at,
            path="/",
            secure=is_https(request),
            httponly=True,
            samesite=samesite,
        )
    response.delete_cookie(
        cookie, path="/login", secure=is_https(request), httponly=True, samesite="strict"
    )
    response.headers["Cache-Control"] = "no-store"
    return response


@router.post("/logout", response_class=HTMLResponse)
async def logout(request: Request, session: SessionDep, web: WebSessionDep) -> Response:
    """End the session (server-side) and clear its cookie: 303 to ``/``; 403 page for a
    cross-site form or one without this session's CSRF token."""
    refused = origin_problem(request)
    if refused is not None:
        return notice(request, 403, "Sign-out refused", refused)
    form = await _form(request)
    cookie = request.cookies.get(COOKIE)
    if web is not None and cookie:
        if not token_matches(web.csrf_token, form.get("csrf_token")):
            return notice(
                request,
                403,
                "Sign-out refused",
                "The form did not carry this session's token; reload the page and try again.",
            )
        await logins.end_session(session, cookie)
        request.state.web_session = None
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(
        COOKIE, path="/", secure=is_https(request), httponly=True, samesite="strict"
    )
    response.delete_cookie(
        HINT_COOKIE, path="/", secure=is_https(request), httponly=True, samesite="lax"
    )
    response.headers["Cache-Control"] = "no-store"
    return response
