"""Share links over real HTTP (a uvicorn process, STYLE.md "Tests"): the absolute URL a create
answers is built on LOOMSYNC_PUBLIC_URL, else on the address the request came to (its
``Host``, and the scheme a trusted proxy forwards); the link opens, then answers 410.

Isolation: each test makes its own users; the servers share the test database.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import httpx
import pytest

from app.auth import create_token
from app.config import Settings
from tests.servers import Server, app_env, poll, uvicorn_server
from tests.sharing.conftest import secret_of


@pytest.fixture(scope="module")
def server(database_url: str, settings: Settings) -> Iterator[Server]:
    with uvicorn_server(app_env(database_url, settings)) as running:
        yield running


@pytest.fixture(scope="module")
def public_server(database_url: str, settings: Settings) -> Iterator[Server]:
    env = app_env(database_url, settings, LOOMSYNC_PUBLIC_URL="https://loom.example.com/")
    with uvicorn_server(env) as running:
        yield running


def _owner(settings: Settings) -> dict[str, str]:
    token = create_token(settings, f"owner-{uuid.uuid4().hex[:10]}")
    return {"Authorization": f"Bearer {token}"}


def _thread(client: httpx.Client, headers: dict[str, str]) -> str:
    created = client.post(
        "/api/threads", json={"metadata": {"title": "over HTTP"}}, headers=headers
    )
    assert created.status_code == 201, created.text
    thread_id: str = created.json()["id"]
    return thread_id


def test_the_url_is_the_address_the_request_came_to(server: Server, settings: Settings) -> None:
    owner = _owner(settings)
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        thread_id = _thread(client, owner)
        links = f"/api/threads/{thread_id}/share-links"
        direct = client.post(links, headers=owner)
        renamed = client.post(links, headers={**owner, "Host": "loom.internal:8080"})
        proxied = client.post(  # from 127.0.0.1, a proxy uvicorn trusts by default
            links, headers={**owner, "Host": "loom.example.org", "X-Forwarded-Proto": "https"}
        )
        assert direct.status_code == renamed.status_code == proxied.status_code == 201
        assert direct.json()["url"].startswith(f"{server.base_url}/s/")
        assert renamed.json()["url"].startswith("http://loom.internal:8080/s/")
        assert proxied.json()["url"].startswith("https://loom.example.org/s/")
        opened = client.get(f"/api/shared/{secret_of(direct.json()['url'])}")
        assert opened.status_code == 200
        assert opened.json()["metadata"]["title"] == "over HTTP"
        assert opened.headers["cache-control"] == "no-store"
        revoked = client.delete(f"{links}/{direct.json()['id']}", headers=owner)
        assert revoked.status_code == 204
        gone = client.get(f"/api/shared/{secret_of(direct.json()['url'])}")
        assert gone.status_code == 410
        assert gone.headers["content-type"] == "application/problem+json"


def test_the_public_url_setting_wins_over_any_host(
    public_server: Server, settings: Settings
) -> None:
    owner = _owner(settings)
    with httpx.Client(base_url=public_server.base_url, timeout=30) as client:
        thread_id = _thread(client, owner)
        made = client.post(
            f"/api/threads/{thread_id}/share-links",
            headers={**owner, "Host": "attacker.example"},
        )
        assert made.status_code == 201, made.text
        url = made.json()["url"]
        assert url == f"https://loom.example.com/s/{secret_of(url)}"
        assert client.get(f"/api/shared/{secret_of(url)}").status_code == 200


@pytest.fixture(scope="module")
def logging_server(database_url: str, settings: Settings) -> Iterator[Server]:
    env = app_env(database_url, settings, LOOMSYNC_LOG_LEVEL="info", LOOMSYNC_LOG_FORMAT="json")
    with uvicorn_server(env) as running:
        yield running


def _new_secret(client: httpx.Client, settings: Settings) -> str:
    """A new share link's secret, of a new thread of a new owner."""
    owner = _owner(settings)
    thread_id = _thread(client, owner)
    made = client.post(f"/api/threads/{thread_id}/share-links", headers=owner)
    return secret_of(made.json()["url"])


def _logged(server: Server, marker: str, count: int) -> list[dict[str, object]]:
    """The ``count`` JSON access-log records of the requests sent with ``marker`` as their
    request id, once they are all written."""

    def logged() -> list[dict[str, object]] | None:
        lines = [json.loads(x) for x in server.output().splitlines() if marker in x]
        return lines if len(lines) == count else None

    records = poll(server.process, logged, 10)
    assert records is not None, server.output()[-3000:]
    return records


def test_the_access_log_never_holds_a_secret(logging_server: Server, settings: Settings) -> None:
    marker = f"log-{uuid.uuid4().hex}"
    with httpx.Client(base_url=logging_server.base_url, timeout=30) as client:
        secret = _new_secret(client, settings)
        for path in (f"/api/shared/{secret}", f"/s/{secret}", f"/s/{secret}/messages"):
            client.get(path, headers={"X-Request-ID": marker})

    records = _logged(logging_server, marker, 3)
    assert secret not in logging_server.output()
    assert sorted(str(r.get("path")) for r in records) == [  # written as each one finished
        "/api/shared/{secret}",
        "/s/{secret}",
        "/s/{secret}/messages",
    ]


def _encoded(text: str) -> str:
    """Every character of ``text`` percent-encoded (``abc`` → ``%61%62%63``)."""
    return "".join(f"%{byte:02X}" for byte in text.encode())


def test_a_secret_is_masked_in_the_log_however_the_path_is_encoded(
    logging_server: Server, settings: Settings
) -> None:
    """Issue 27 item 8: the router matches the decoded path, so each of these opens the link;
    the log masks the secret from the decoded route, not from the raw path's spelling."""
    marker = f"log-{uuid.uuid4().hex}"
    with httpx.Client(base_url=logging_server.base_url, timeout=30) as client:
        secret = _new_secret(client, settings)
        paths = {
            f"/%73/{secret}": "/s/{secret}",
            f"/api/%73hared/{secret}": "/api/shared/{secret}",
            f"/%61pi%2Fshared/{secret}": "/api/shared/{secret}",
            f"/s/{_encoded(secret[:1])}{secret[1:]}": "/s/{secret}",
            f"/s/{_encoded(secret)}": "/s/{secret}",
            f"/%73/{secret}/%6Dessages": "/s/{secret}/%6Dessages",
        }
        for path in paths:
            served = client.get(path, headers={"X-Request-ID": marker})
            assert served.status_code == 200, (path, served.status_code)
            assert served.request.url.raw_path.decode() == path  # sent as written

    records = _logged(logging_server, marker, len(paths))
    output = logging_server.output()
    assert secret not in output
    assert _encoded(secret) not in output
    assert secret[1:] not in output
    assert [r.get("path") for r in records] == list(paths.values())
