"""The client's import redacts credentials held as structure in tool calls (issue 27 item 1)
and keeps high-entropy values that are not credentials (item 2), through the real ``loomsync
import`` of a Claude Code session written here (every value invented from a fresh seed), and
``loomsync search --local`` never shows them in a snippet (item 5)."""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path
from typing import Any

from tests.client.conftest import Person
from tests.secrets.samples import ALNUM, B64, drawer


def _values() -> dict[str, str]:
    draw = drawer(uuid.uuid4().hex)
    return {
        "bearer": draw(ALNUM, 24),
        "basic": base64.b64encode(f"ops:{draw(ALNUM, 12)}".encode()).decode(),
        "set_cookie": draw(ALNUM, 30),
        "har": draw(ALNUM, 26),
        "sshpass": draw(ALNUM, 7) + "#" + draw(ALNUM, 5),
        "docker": draw(ALNUM, 14),
        "url_pw": draw(ALNUM, 11),
        "csrf": draw(B64, 86) + "==",
        "authenticity": draw(B64, 86) + "==",
        "digest": draw(B64, 86) + "==",
    }


SECRETS = ("bearer", "basic", "set_cookie", "har", "sshpass", "docker", "url_pw")
KEPT = ("csrf", "authenticity", "digest")


def _session(v: dict[str, str], session: str) -> str:
    """A Claude Code transcript: tool calls whose input holds headers and argv, tool results
    holding a HAR entry, a JSON-escaped URL and a page's CSRF token."""
    turns: list[tuple[str, Any]] = [
        ("user", "check the deploy API"),
        ("tool_use", {"url": "https://api.acme.dev/v1/deploys", "method": "GET", "headers": {
            "Authorization": f"Bearer {v['bearer']}",
            "Proxy-Authorization": f"Basic {v['basic']}",
            "X-CSRF-Token": v["csrf"]}}),
        ("tool_result", json.dumps({"status": 200, "headers": {
            "set-cookie": f"_app_session={v['set_cookie']}; Path=/; HttpOnly",
            "content-digest": f"sha-512=:{v['digest']}:"}})),
        ("tool_use", {"command": ["sshpass", "-p", v["sshpass"], "ssh", "deploy@10.0.0.7"]}),
        ("tool_result", "up 3 days"),
        ("tool_use", {"argv": ["docker", "login", "ghcr.io", "-u", "bot", "-p", v["docker"]]}),
        ("tool_result", json.dumps({"log": {"entries": [{"request": {"headers": [
            {"name": "Authorization", "value": f"Bearer {v['har']}"}]}}]}})),
        ("tool_use", {"command": "cat config.json"}),
        ("tool_result", '{"db":"postgres:\\/\\/app:' + v["url_pw"] + '@db:5432\\/app"}\n'
         f'<meta name="csrf-token" content="{v["authenticity"]}" />'),
        ("assistant", "The deploy API answers; the ocelot service is fine."),
    ]  # fmt: skip
    lines: list[dict[str, Any]] = []
    parent = None
    tool = None
    for n, (kind, value) in enumerate(turns):
        record: dict[str, Any] = {
            "type": "assistant" if kind in ("assistant", "tool_use") else "user",
            "sessionId": session, "cwd": "/home/dev/app", "version": "2.1.38",
            "uuid": f"00000000-0000-4000-8000-{n:012d}", "parentUuid": parent,
            "timestamp": f"2026-12-07T10:{n:02d}:00.000Z", "isSidechain": False,
        }  # fmt: skip
        if kind == "user":
            record["message"] = {"role": "user", "content": value}
        elif kind == "assistant":
            record["message"] = {"role": "assistant", "content": [{"type": "text", "text": value}]}
        elif kind == "tool_use":
            tool = f"toolu_{n:04d}"
            block = {"type": "tool_use", "id": tool, "name": "http_request", "input": value}
            record["message"] = {"role": "assistant", "content": [block]}
        else:
            block = {"type": "tool_result", "tool_use_id": tool, "content": value}
            record["message"] = {"role": "user", "content": [block]}
        lines.append(record)
        parent = record["uuid"]
    return "".join(json.dumps(line) + "\n" for line in lines)


def _stored(person: Person) -> str:
    return "\n".join(p.read_text() for p in sorted(person.paths.threads_dir.glob("T-*")))


def _leaks(text: str, v: dict[str, str]) -> list[str]:
    found = []
    for key in SECRETS:
        for variant in (v[key], json.dumps(v[key])[1:-1]):
            if any(variant[i : i + 8] in text for i in range(len(variant) - 7)):
                found.append(key)
    return found


def test_import_redacts_structured_credentials_and_keeps_digests_and_csrf_tokens(
    person: Person, tmp_path: Path
) -> None:
    v = _values()
    session = str(uuid.uuid4())
    transcript = tmp_path / "sessions" / f"{session}.jsonl"
    transcript.parent.mkdir()
    transcript.write_text(_session(v, session))
    imported = person("import", "claude-code", str(transcript))
    assert imported.code == 0, imported.err
    stored = _stored(person)
    assert "ocelot" in stored
    assert _leaks(stored, v) == []
    for key in KEPT:
        assert v[key] in stored, key
    for kind in ("authorization-header", "cookie", "password", "url-password"):
        assert f"[REDACTED:{kind}]" in stored, kind
    scanned = person("scan")
    assert scanned.code == 0, scanned.out + scanned.err  # nothing left to find
    found = person("search", "--local", "ocelot", "--json")
    assert found.code == 0, found.err
    assert _leaks(found.out, v) == []
