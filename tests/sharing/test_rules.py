"""Share links: who may manage them (API.md section 4: owner or admin), what a create accepts,
the settings that shape them (LOOMSYNC_PUBLIC_URL, LOOMSYNC_SHARE_LINK_MAX_AGE), and the audit
events of create, revoke and every use.

Isolation: see tests/sharing/conftest.py; the settings tests build an app of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import httpx
import pytest

from app.config import Settings
from tests.apps import serving
from tests.conftest import TokenFactory
from tests.sharing.conftest import Shared, secret_of


async def _share(shared: Shared, headers: dict[str, str] | None) -> dict[str, int]:
    """Status of create, list and revoke of the thread's links by ``headers`` (None: no
    token)."""
    link = await shared.make_link()
    sent = headers or {}
    return {
        "create": (await shared.client.post(shared.links, headers=sent)).status_code,
        "list": (await shared.client.get(shared.links, headers=sent)).status_code,
        "revoke": (
            await shared.client.delete(f"{shared.links}/{link['id']}", headers=sent)
        ).status_code,
    }


async def test_without_a_token_managing_links_is_401(shared: Shared) -> None:
    assert await _share(shared, None) == {"create": 401, "list": 401, "revoke": 401}
    response = await shared.client.post(shared.links)
    assert response.headers["www-authenticate"] == 'Bearer realm="loomsync"'


async def test_a_stranger_gets_404_as_for_a_missing_thread(
    shared: Shared, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    stranger = auth(new_user("mallory"))
    assert await _share(shared, stranger) == {"create": 404, "list": 404, "revoke": 404}


async def test_a_reader_who_may_not_write_gets_403(
    shared: Shared, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    made_public = await shared.client.patch(
        f"/api/threads/{shared.thread_id}",
        json={"visibility": "public", "is_shared_with_support": True},
        headers=shared.headers,
    )
    assert made_public.status_code == 200
    for reader in (auth(new_user("bob")), auth(new_user("helpdesk"), roles=("support",))):
        assert await _share(shared, reader) == {"create": 403, "list": 403, "revoke": 403}


async def test_an_organization_member_reads_but_does_not_share_by_link(
    client: httpx.AsyncClient,
    auth: TokenFactory,
    new_user: Callable[[str], str],
    new_org: Callable[[str], str],
) -> None:
    acme = new_org("acme")
    owner = auth(new_user("owner"), org=acme)
    created = await client.post("/api/threads", json={"visibility": "organization"}, headers=owner)
    tid = created.json()["id"]
    colleague = auth(new_user("colleague"), org=acme)
    assert (await client.get(f"/api/threads/{tid}", headers=colleague)).status_code == 200
    refused = await client.post(f"/api/threads/{tid}/share-links", headers=colleague)
    assert refused.status_code == 403
    assert refused.json()["code"] == "forbidden"


async def test_an_admin_manages_anyones_links(
    shared: Shared, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    admin = auth(new_user("root"), roles=("admin",))
    assert await _share(shared, admin) == {"create": 201, "list": 200, "revoke": 204}
    listed = (await shared.client.get(shared.links, headers=shared.headers)).json()["links"]
    assert {link["created_by"] for link in listed} >= {shared.owner}


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b'{"expires_in": 0}', 422),
        (b'{"expires_in": -5}', 422),
        (b'{"expires_in": "3600"}', 422),
        (b'{"expires_in": true}', 422),
        (b'{"expires_in": 1.5}', 422),
        (b'{"expires_in": 1e400}', 422),
        (b'{"expires_in": 99999999999999999999999999}', 422),
        (b'{"expires_in": 315360001}', 422),  # over ten years
        (b'{"expires": 3600}', 422),  # a typo must not make a link that never expires
        (b"[]", 422),
        (b'"x"', 422),
        (b"{", 400),
        (b'{"expires_in": NaN}', 400),
        (b"\xff\xfe", 400),
    ],
)
async def test_a_bad_body_is_refused_and_makes_no_link(
    shared: Shared, body: bytes, status: int
) -> None:
    response = await shared.client.post(
        shared.links,
        content=body,
        headers={**shared.headers, "Content-Type": "application/json"},
    )
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert body.decode(errors="replace") not in response.text or status == 400
    listed = (await shared.client.get(shared.links, headers=shared.headers)).json()["links"]
    assert listed == []


@pytest.mark.parametrize(
    ("body", "lifetime"),
    [
        (b"", None),
        (b"{}", None),
        (b'{"expires_in": null}', None),
        (b'{"expires_in": 3600.0}', 3600),
        (b'{"expires_in": 36E2}', 3600),
        (b'{"expires_in": 315360000}', 315360000),
    ],
)
async def test_a_good_body_sets_the_lifetime(
    shared: Shared, body: bytes, lifetime: int | None
) -> None:
    response = await shared.client.post(
        shared.links, content=body, headers={**shared.headers, "Content-Type": "application/json"}
    )
    assert response.status_code == 201, response.text
    made = response.json()
    if lifetime is None:
        assert made["expires_at"] is None
    else:
        life = datetime.fromisoformat(made["expires_at"]) - datetime.fromisoformat(
            made["created_at"]
        )
        assert life == timedelta(seconds=lifetime)


#: The base URL the request comes to when no public URL is set (the link is built on it).
INTERNAL = "http://internal:8080"


async def test_the_url_is_built_on_the_public_url_when_set_else_the_request_base(
    settings: Settings, shared: Shared
) -> None:
    async with serving(
        settings.model_copy(update={"public_url": "https://loom.example.com/team"}), INTERNAL
    ) as c:
        behind_proxy = await c.post(shared.links, headers=shared.headers)
    async with serving(settings, INTERNAL) as c:
        direct = await c.post(shared.links, headers=shared.headers)
    assert behind_proxy.status_code == direct.status_code == 201
    url = behind_proxy.json()["url"]
    assert url == f"https://loom.example.com/team/s/{secret_of(url)}"
    assert direct.json()["url"].startswith("http://internal:8080/s/")


async def test_the_max_age_setting_caps_a_links_life(settings: Settings, shared: Shared) -> None:
    async with serving(settings.model_copy(update={"share_link_max_age": 86400}), INTERNAL) as c:
        default = await c.post(shared.links, headers=shared.headers)
        shorter = await c.post(shared.links, json={"expires_in": 60}, headers=shared.headers)
        longer = await c.post(shared.links, json={"expires_in": 86401}, headers=shared.headers)
    assert default.status_code == shorter.status_code == 201
    for made, seconds in ((default.json(), 86400), (shorter.json(), 60)):
        life = datetime.fromisoformat(made["expires_at"]) - datetime.fromisoformat(
            made["created_at"]
        )
        assert life == timedelta(seconds=seconds)
    assert longer.status_code == 422
    assert longer.json()["errors"] == [
        {"loc": ["body", "expires_in"], "msg": "must be at most 86400"}
    ]


@pytest.mark.parametrize(
    "url", ["ftp://x.example", "loom.example.com", "https://u:p@x.example", "https://x.example?a"]
)
def test_a_public_url_that_is_not_an_absolute_http_url_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="LOOMSYNC_PUBLIC_URL"):
        Settings(public_url=url, _env_file=None)  # type: ignore[call-arg]


async def test_create_revoke_and_every_use_are_audited(
    shared: Shared, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    reader = new_user("reader")
    made = await shared.make_link({"expires_in": 600})
    secret = secret_of(made["url"])
    anonymous = await shared.client.get(
        f"/api/shared/{secret}", headers={"User-Agent": "curl/8.5", "X-Request-ID": "use-1"}
    )
    signed_in = await shared.client.get(f"/api/shared/{secret}", headers=auth(reader))
    assert anonymous.status_code == signed_in.status_code == 200
    await shared.client.delete(f"{shared.links}/{made['id']}", headers=shared.headers)
    assert (await shared.client.get(f"/api/shared/{secret}")).status_code == 410  # not a use
    admin = auth(new_user("auditor"), roles=("admin",))
    trail = await shared.client.get(
        "/api/audit", params={"thread": shared.thread_id}, headers=admin
    )
    assert trail.status_code == 200, trail.text
    events = list(reversed(trail.json()["events"]))  # oldest first
    assert [e["action"] for e in events] == [
        "thread.create",
        "share_link.create",
        "share_link.use",
        "share_link.use",
        "share_link.revoke",
    ]
    create, first_use, second_use, revoke = events[1:]
    assert create["actor_id"] == revoke["actor_id"] == shared.owner
    assert create["details"] == {"link": made["id"], "expires_at": create["details"]["expires_at"]}
    assert datetime.fromisoformat(create["details"]["expires_at"]) == datetime.fromisoformat(
        made["expires_at"]
    )
    assert revoke["details"] == {"link": made["id"], "reason": "revoked"}
    assert first_use["actor_id"] is None  # anonymous
    assert first_use["request_id"] == "use-1"
    assert first_use["client_ip"] == "127.0.0.1"
    assert first_use["details"] == {
        "link": made["id"],
        "via": "api",
        "use_count": 1,
        "user_agent": "curl/8.5",
    }
    assert second_use["actor_id"] == reader
    assert second_use["details"]["use_count"] == 2
    assert secret not in trail.text
    only_uses = await shared.client.get(
        "/api/audit",
        params={"thread": shared.thread_id, "action": "share_link.use"},
        headers=admin,
    )
    assert len(only_uses.json()["events"]) == 2


async def test_a_threads_deletion_audits_the_revocation_of_each_live_link(
    shared: Shared, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    first, second = await shared.make_link(), await shared.make_link()
    await shared.client.delete(f"/api/threads/{shared.thread_id}", headers=shared.headers)
    admin = auth(new_user("auditor"), roles=("admin",))
    trail = await shared.client.get(
        "/api/audit",
        params={"thread": shared.thread_id, "action": "share_link.revoke"},
        headers=admin,
    )
    revoked = {e["details"]["link"]: e["details"]["reason"] for e in trail.json()["events"]}
    assert revoked == {first["id"]: "thread_deleted", second["id"]: "thread_deleted"}
