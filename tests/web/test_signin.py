"""Browser sign-in over HTTP (issue 13, item 3): login codes, /login, the session cookie,
/logout, CSRF, and the cookie never opening /api. In-process (httpx ASGITransport); the real
browser runs the same flow in test_signin_browser.py."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from http.cookies import SimpleCookie

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import update

from app.secrettokens import secret_hash
from app.web.logins import LATEST, token_expiry
from app.web.redirects import safe_next
from app.web.session import COOKIE
from app.web.signin import login_cookie
from app.web.tables import login_codes
from tests.conftest import TokenFactory
from tests.web.signing import code_of, csrf_of, login_code, login_form, page_origin, sign_in

Names = Callable[[str], str]


def set_cookie(response: httpx.Response, name: str) -> SimpleCookie:
    """The ``Set-Cookie`` header of ``response`` that sets ``name``."""
    for header in response.headers.get_list("set-cookie"):
        cookie: SimpleCookie = SimpleCookie()
        cookie.load(header)
        if name in cookie:
            return cookie
    raise AssertionError(f"no Set-Cookie for {name}")


async def test_login_code_needs_a_bearer_token(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/login-codes")
    assert response.status_code == 401
    assert response.headers["content-type"].startswith("application/problem+json")


async def test_login_code_is_refused_to_a_session_cookie(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    await sign_in(client, auth(new_user("alice")))
    assert client.cookies.get(COOKIE)
    assert (await client.post("/api/login-codes")).status_code == 401


async def test_session_cookie_is_never_accepted_by_the_api(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    await sign_in(client, auth(new_user("alice")))
    assert (await client.get("/api/threads")).status_code == 401
    assert (await client.get("/api/threads/search", params={"q": "x"})).status_code == 401


async def test_login_code_gives_an_absolute_url_and_expiries(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    before = datetime.now(UTC)
    made = await login_code(
        client, auth(new_user("alice")), next="/t/T-019b7f94-51b4-7593-922e-ba12b5b73b52"
    )
    assert made["url"].startswith("http://testserver/login?code=")
    assert "next=%2Ft%2FT-019b7f94" in made["url"]
    assert len(code_of(made["url"])) >= 43  # 256 bits, base64url
    expires = datetime.fromisoformat(made["expires_at"])
    assert before + timedelta(seconds=119) < expires <= before + timedelta(seconds=121)
    session_end = datetime.fromisoformat(made["session_expires_at"])
    assert abs(session_end.timestamp() - (time.time() + 30 * 86400)) < 60  # the token's exp


@pytest.mark.parametrize("target", ["//evil.example/x", "https://evil.example/", "/\\evil", "t/x"])
async def test_login_code_refuses_a_next_that_leaves_the_site(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names, target: str
) -> None:
    response = await client.post(
        "/api/login-codes", headers=auth(new_user("alice")), json={"next": target}
    )
    assert response.status_code == 422


def test_safe_next_keeps_only_local_paths() -> None:
    assert safe_next("/t/T-1#m-3") == "/t/T-1#m-3"
    for bad in ("//evil", "/\\evil", "https://evil", "/a b", "/\x00", "", None, "/" + "a" * 3000):
        assert safe_next(bad) == "/"


def test_token_expiry_past_year_9999_is_clamped() -> None:
    assert token_expiry(10**15) == LATEST
    assert token_expiry(0) == datetime(1970, 1, 1, tzinfo=UTC)


async def test_login_page_names_the_user_and_does_not_spend_the_code(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names, new_org: Names
) -> None:
    user, org = new_user("alice"), new_org("acme")
    made = await login_code(client, auth(user, org=org))
    for _ in range(3):  # a prefetcher, an unfurler, then the person
        page = await client.get("/login", params={"code": made["code"]})
        assert page.status_code == 200
        assert f"Continue as {user}" in page.text
        assert org in page.text
        assert page.headers["cache-control"] == "no-store"
        assert "nonce-" in page.headers["content-security-policy"]
    assert not client.cookies.get(COOKIE)
    name = login_cookie(made["code"])
    assert name.startswith("loomsync_login_")
    assert made["code"] not in name  # a prefix of its hash names it, never the code
    form_cookie = set_cookie(page, name)[name]
    assert form_cookie["httponly"]
    assert form_cookie["samesite"].lower() == "strict"
    assert form_cookie["path"] == "/login"


async def test_two_codes_shown_in_one_browser_each_keep_their_form(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    first = await login_code(client, auth(new_user("alice")))
    second = await login_code(client, auth(new_user("alice")))
    first_form = await login_form(client, first["code"])
    again = await login_form(client, first["code"])  # the same link in a second tab
    assert again == first_form
    await login_form(client, second["code"])  # a second link, opened after the first
    done = await client.post("/login", data=first_form, headers=page_origin(client))
    assert done.status_code == 303, done.text  # was 403: "not the one this browser was shown"
    assert not client.cookies.get(login_cookie(first["code"]), path="/login")
    assert client.cookies.get(login_cookie(second["code"]), path="/login")


async def test_a_form_is_good_only_with_the_cookie_of_its_own_code(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    mine = await login_code(client, auth(new_user("alice")))
    theirs = await login_code(client, auth(new_user("mallory")))
    my_form = await login_form(client, mine["code"])
    # login CSRF: another's code posted with the token this browser holds for its own code
    forged = {"code": theirs["code"], "form_token": my_form["form_token"]}
    refused = await client.post("/login", data=forged, headers=page_origin(client))
    assert refused.status_code == 403
    assert not client.cookies.get(COOKIE)
    assert (await client.get("/login", params={"code": theirs["code"]})).status_code == 200


async def test_login_exchanges_the_code_for_a_strict_httponly_cookie_ending_with_the_token(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    made = await login_code(client, auth(new_user("alice")))
    token = (await login_form(client, made["code"]))["form_token"]
    done = await client.post(
        "/login",
        data={"code": made["code"], "form_token": token, "next": "/search?q=x"},
        headers=page_origin(client),
    )
    assert done.status_code == 303
    assert done.headers["location"] == "/search?q=x"
    cookie = set_cookie(done, COOKIE)[COOKIE]
    assert cookie["httponly"]
    assert cookie["samesite"].lower() == "strict"
    assert cookie["path"] == "/"
    assert not cookie["secure"]
    assert abs(int(cookie["max-age"]) - 30 * 86400) < 60
    assert len(cookie.value) >= 43


async def test_cookie_is_secure_when_served_over_https(
    app: FastAPI, auth: TokenFactory, new_user: Names
) -> None:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://testserver") as client:
        await sign_in(client, auth(new_user("alice")))
        assert client.cookies.get(COOKIE)
        made = await login_code(client, auth(new_user("bob")))
        page = await client.get("/login", params={"code": made["code"]})
        name = login_cookie(made["code"])
        assert set_cookie(page, name)[name]["secure"]


async def test_a_code_works_once(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    made = await login_code(client, auth(new_user("alice")))
    form = await login_form(client, made["code"])
    first = await client.post("/login", data=form, headers=page_origin(client))
    assert first.status_code == 303
    client.cookies.set(login_cookie(made["code"]), form["form_token"], path="/login")  # replayed
    again = await client.post("/login", data=form, headers=page_origin(client))
    assert again.status_code == 410
    assert "no longer works" in again.text
    assert (await client.get("/login", params={"code": made["code"]})).status_code == 410


async def test_an_expired_code_is_refused(
    app: FastAPI, client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    made = await login_code(client, auth(new_user("alice")))
    async with app.state.sessionmaker() as session:
        await session.execute(
            update(login_codes)
            .where(login_codes.c.code_hash == secret_hash(made["code"]))
            .values(expires_at=datetime(2000, 1, 1, tzinfo=UTC))
        )
        await session.commit()
    assert (await client.get("/login", params={"code": made["code"]})).status_code == 410


@pytest.mark.parametrize("code", ["", "nope", "x" * 5000, "\x00"])
async def test_login_page_without_a_live_code_is_a_4xx_page(
    client: httpx.AsyncClient, code: str
) -> None:
    response = await client.get("/login", params={"code": code} if code else None)
    assert response.status_code in (400, 410)
    assert response.headers["content-type"].startswith("text/html")


async def test_login_post_without_the_pages_form_token_is_refused(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    """Login CSRF: a form posted from elsewhere lacks the cookie GET /login set here."""
    made = await login_code(client, auth(new_user("mallory")))
    response = await client.post(
        "/login", data={"code": made["code"], "form_token": "guess"}, headers=page_origin(client)
    )
    assert response.status_code == 403
    assert not client.cookies.get(COOKIE)
    assert (await client.get("/login", params={"code": made["code"]})).status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Origin": "https://evil.example"},
        {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
async def test_login_post_from_another_site_is_refused(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names, headers: dict[str, str]
) -> None:
    made = await login_code(client, auth(new_user("mallory")))
    form = await login_form(client, made["code"])
    response = await client.post("/login", data=form, headers=headers)
    assert response.status_code == 403
    assert not client.cookies.get(COOKIE)


async def test_origin_null_with_same_origin_fetch_metadata_is_accepted(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    """Under Referrer-Policy: no-referrer a browser sends Origin: null even to its own site."""
    made = await login_code(client, auth(new_user("alice")))
    form = await login_form(client, made["code"])
    headers = {"Origin": "null", "Sec-Fetch-Site": "same-origin"}
    assert (await client.post("/login", data=form, headers=headers)).status_code == 303


async def test_nav_names_the_user_escaped(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    user = new_user("<script>alert(1)</script>")
    await sign_in(client, auth(user))
    home = await client.get("/")
    assert "<script>alert(1)</script>" not in home.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in home.text
    assert "Sign out" in home.text


async def test_logout_ends_the_session_on_the_server(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    user = new_user("alice")
    await sign_in(client, auth(user))
    cookie = client.cookies[COOKIE]
    home = await client.get("/")
    assert user in home.text
    done = await client.post(
        "/logout", data={"csrf_token": csrf_of(home.text)}, headers=page_origin(client)
    )
    assert done.status_code == 303
    assert done.headers["location"] == "/"
    assert not client.cookies.get(COOKIE)
    client.cookies.set(COOKIE, cookie)  # a copy of the cookie kept somewhere
    again = await client.get("/")
    assert user not in again.text
    assert "Not signed in" in again.text


async def test_logout_without_the_sessions_token_is_refused(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    user = new_user("alice")
    await sign_in(client, auth(user))
    refused = await client.post("/logout", data={"csrf_token": "x"}, headers=page_origin(client))
    assert refused.status_code == 403
    cross = await client.post(
        "/logout",
        data={"csrf_token": csrf_of((await client.get("/")).text)},
        headers={"Origin": "https://evil.example"},
    )
    assert cross.status_code == 403
    assert user in (await client.get("/")).text  # still signed in


async def test_signing_in_again_ends_the_previous_session(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    await sign_in(client, auth(new_user("alice")))
    first = client.cookies[COOKIE]
    bob = new_user("bob")
    await sign_in(client, auth(bob))
    assert bob in (await client.get("/")).text
    client.cookies.set(COOKIE, first)
    assert "Not signed in" in (await client.get("/")).text


@pytest.mark.parametrize("path", ["/login", "/logout"])
async def test_hostile_form_bodies_get_4xx(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names, path: str
) -> None:
    user = new_user("alice")
    await sign_in(client, auth(user))
    same = page_origin(client)
    attempts = [
        {"files": {"code": ("c.txt", b"x" * 1000)}},
        {"json": {"code": "x"}},
        {
            "content": "&".join(f"f{i}=v" for i in range(1000)).encode(),
            "headers": {"Content-Type": "application/x-www-form-urlencoded"},
        },
        {
            "content": b"\xff\xfe\x00=\x00",
            "headers": {"Content-Type": "application/x-www-form-urlencoded"},
        },
        {
            "content": b"--b\r\nbroken",
            "headers": {"Content-Type": "multipart/form-data; boundary=b"},
        },
    ]
    for attempt in attempts:
        headers = {**same, **attempt.pop("headers", {})}  # type: ignore[dict-item]
        response = await client.post(path, headers=headers, **attempt)  # type: ignore[arg-type]
        assert 400 <= response.status_code < 500, (attempt, response.status_code)
    assert user in (await client.get("/")).text  # still signed in


async def test_a_cross_site_navigation_with_the_hint_is_reloaded_from_this_site(
    client: httpx.AsyncClient,
) -> None:
    navigate = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Site": "cross-site"}
    client.cookies.set("loomsync_signed_in", "1")
    bounced = await client.get("/t/T-019b7f94-51b4-7593-922e-ba12b5b73b52", headers=navigate)
    assert bounced.status_code == 200
    assert '<meta http-equiv="refresh" content="0">' in bounced.text
    assert bounced.headers["cache-control"] == "no-store"
    same = {**navigate, "Sec-Fetch-Site": "same-origin"}
    for path, headers in (("/", same), ("/api/threads", navigate), ("/static/app.css", navigate)):
        response = await client.get(path, headers=headers)
        assert 'http-equiv="refresh"' not in response.text, path
    client.cookies.delete("loomsync_signed_in")
    assert 'http-equiv="refresh"' not in (await client.get("/", headers=navigate)).text


async def test_sign_in_sets_the_lax_hint_and_logout_clears_it(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    await sign_in(client, auth(new_user("alice")))
    assert client.cookies.get("loomsync_signed_in") == "1"
    home = await client.get("/")
    await client.post(
        "/logout", data={"csrf_token": csrf_of(home.text)}, headers=page_origin(client)
    )
    assert not client.cookies.get("loomsync_signed_in")


async def test_login_code_body_is_checked(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    headers = {**auth(new_user("alice")), "Content-Type": "application/json"}
    bad_json = await client.post("/api/login-codes", headers=headers, content=b"{nope")
    assert bad_json.status_code == 400
    extra = await client.post("/api/login-codes", headers=headers, json={"then": "/"})
    assert extra.status_code == 422
    assert (
        await client.post("/api/login-codes", headers=headers, json={"next": None})
    ).status_code == 201
    assert (await client.post("/api/login-codes", headers=headers)).status_code == 201
