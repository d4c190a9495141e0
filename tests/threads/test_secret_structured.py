"""Issue 27 items 1, 2 and 5 on a real server over HTTP (``LOOMSYNC_SECRET_SCAN``, one uvicorn
process per mode: tests/threads/scan_support.py).

1. A credential held as structure in a tool call (a header object, a HAR/Postman name/value
   pair, argv words, a URL with JSON-escaped slashes) is redacted on PUT, append and PATCH like
   the same credential on a command line.
2. High-entropy values that are not credentials (CSRF tokens, SHA-512 digests, SRI hashes) are
   stored as sent.
5. A search snippet of a thread stored unredacted (``off``) never shows a value whose name
   lies outside the snippet.

Every value is invented here from a fresh seed (tests/secrets/samples.py's alphabets).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from loomsync.core.document.ids import ThreadId
from tests.secrets.samples import ALNUM, B64, drawer
from tests.threads.scan_support import assert_absent, existing_thread, seed


def _values() -> dict[str, str]:
    draw = drawer(seed())
    return {
        "bearer": draw(ALNUM, 24),
        "basic": base64.b64encode(f"deploy:{draw(ALNUM, 12)}".encode()).decode(),
        "cookie": draw(ALNUM, 28),
        "api_key": draw(ALNUM, 32),
        "har": draw(ALNUM, 26),
        "curl_pw": draw(ALNUM, 6) + "!" + draw(ALNUM, 6),
        "sshpass": draw(ALNUM, 7) + "#" + draw(ALNUM, 5),
        "docker": draw(ALNUM, 14),
        "mysql": draw(ALNUM, 12),
        "url_pw": draw(ALNUM, 9) + "%" + draw(ALNUM, 4),
        "csrf": draw(B64, 86) + "==",
        "digest": draw(B64, 86) + "==",
        "sri": draw(B64, 86) + "==",
    }


def _tool_call(v: dict[str, str]) -> dict[str, Any]:
    """An assistant message whose tool calls hold every credential as structure."""
    calls = [
        {"url": "https://api.acme.dev/v1", "headers": {"Authorization": f"Bearer {v['bearer']}",
         "Proxy-Authorization": f"Basic {v['basic']}", "Cookie": f"sid={v['cookie']}",
         "X-Api-Key": v["api_key"], "X-CSRF-Token": v["csrf"],
         "Content-Digest": f"sha-512=:{v['digest']}:"}},
        {"request": {"headers": [{"name": "authorization", "value": f"Bearer {v['har']}"}]}},
        {"command": ["curl", "-u", f"admin:{v['curl_pw']}", "https://ci.acme.dev"]},
        {"command": ["sshpass", "-p", v["sshpass"], "ssh", "root@10.0.0.5"]},
        {"command": ["docker", "login", "registry.acme.dev", "-u", "bot", "-p", v["docker"]]},
        {"command": ["mysql", "-u", "root", f"-p{v['mysql']}", "shop"]},
        {"content": '{"dsn":"postgres:\\/\\/app:' + v["url_pw"] + '@db:5432\\/app"}',
         "html": f'<script integrity="sha512-{v["sri"]}"></script>'},
    ]  # fmt: skip
    return {
        "role": "assistant",
        "content": "calling the API",
        "tool_calls": [
            {"id": f"c{n}", "tool_name": "http", "arguments_json": args}
            for n, args in enumerate(calls)
        ],
    }


SECRET_KEYS = ("bearer", "basic", "cookie", "api_key", "har", "curl_pw", "sshpass", "docker",
               "mysql", "url_pw")  # fmt: skip
KEPT_KEYS = ("csrf", "digest", "sri")


def _check(text: str, v: dict[str, str]) -> None:
    assert_absent(text, *(v[k] for k in SECRET_KEYS))
    for key in KEPT_KEYS:
        assert v[key] in text, key
    assert "[REDACTED:" in text


def test_put_redacts_credentials_held_as_structure_and_keeps_digests(
    scan_http: Callable[[str], httpx.Client], alice: dict[str, str]
) -> None:
    v = _values()
    client = scan_http("redact")
    tid = ThreadId.new()
    doc = {"conversation": {"messages": [{"role": "user", "content": "go"}, _tool_call(v)]}}
    answer = client.put(f"/api/threads/{tid}", json=doc, headers=alice)
    assert answer.status_code == 201, answer.text
    _check(answer.text, v)
    stored = client.get(f"/api/threads/{tid}", headers=alice).text
    _check(stored, v)
    calls = json.loads(stored)["conversation"]["messages"][1]["tool_calls"]
    assert calls[3]["arguments_json"]["command"] == [
        "sshpass", "-p", "[REDACTED:password]", "ssh", "root@10.0.0.5"
    ]  # fmt: skip
    headers = calls[0]["arguments_json"]["headers"]
    assert headers["Authorization"] == "Bearer [REDACTED:authorization-header]"
    assert headers["X-CSRF-Token"] == v["csrf"]


@pytest.mark.parametrize("endpoint", ["append", "patch"])
def test_append_and_patch_redact_credentials_held_as_structure(
    scan_http: Callable[[str], httpx.Client], alice: dict[str, str], endpoint: str
) -> None:
    v = _values()
    client = scan_http("redact")
    tid = existing_thread(client, alice)
    if endpoint == "append":
        answer = client.post(
            f"/api/threads/{tid}/messages",
            json={"messages": [_tool_call(v)]},
            headers={**alice, "If-Match": '"1"'},
        )
    else:  # the calls kept in metadata.extra
        extra = {"last_call": _tool_call(v)["tool_calls"]}
        answer = client.patch(
            f"/api/threads/{tid}", json={"metadata": {"extra": extra}}, headers=alice
        )
    assert answer.status_code in (200, 201), answer.text
    _check(client.get(f"/api/threads/{tid}", headers=alice).text, v)


def test_reject_mode_refuses_a_header_object_and_names_where(
    scan_http: Callable[[str], httpx.Client], alice: dict[str, str]
) -> None:
    v = _values()
    client = scan_http("reject")
    message = {"role": "assistant", "content": "x", "tool_calls": [{"id": "c", "tool_name": "h",
               "arguments_json": {"headers": {"Cookie": f"sid={v['cookie']}"}}}]}  # fmt: skip
    doc = {"conversation": {"messages": [message]}}
    answer = client.put(f"/api/threads/{ThreadId.new()}", json=doc, headers=alice)
    assert answer.status_code == 422, answer.text
    assert_absent(answer.text, v["cookie"])
    locations = [e["loc"] for e in answer.json()["errors"]]
    assert ["body", "conversation", "messages", 0, "tool_calls", 0, "arguments_json",
            "headers", "Cookie"] in locations  # fmt: skip


def test_a_search_snippet_cut_after_the_name_shows_no_value(
    scan_http: Callable[[str], httpx.Client], alice: dict[str, str]
) -> None:
    secret = drawer(seed())(B64, 40)
    word = "zq" + seed()[:10].translate(str.maketrans("0123456789", "bcdfghjklm"))
    client = scan_http("off")  # stored as sent: only the snippet can hide it
    filler = "ordinary build output line\n" * 60
    leaked = []
    for gap in (0, 20, 60, 100, 140):
        content = f"{filler}$ export AWS_SECRET_ACCESS_KEY={secret}\n{'y' * gap} {word} ran\n"
        tid = ThreadId.new()
        doc = {"conversation": {"messages": [{"role": "tool", "content": content + filler}]}}
        assert client.put(f"/api/threads/{tid}", json=doc, headers=alice).status_code == 201
        answer = client.get("/api/threads/search", params={"q": word}, headers=alice)
        assert answer.status_code == 200, answer.text
        [hit] = [h for h in answer.json()["hits"] if h["thread"]["id"] == tid]
        shown = re.sub(r"</?b>", "", hit["snippet"])
        assert word in shown
        if any(secret[i : i + 8] in shown for i in range(len(secret) - 7)):
            leaked.append((gap, shown))
        client.delete(f"/api/threads/{tid}", headers={**alice, "If-Match": '"1"'})
    assert leaked == []
