"""``loomsync usage`` run as a person runs it (issue 33 item 4): offline from this machine's
threads (the real transcripts of three agents, the hand-counted sums), a table that fits 80
columns, tab-separated when piped, ``--json``; ``--online`` the server's figures and the
organization's only for an admin."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
from rich.cells import cell_len

from app.auth import create_token
from app.config import Settings
from loomsync.core.document.ids import ThreadId
from loomsync.importers import FORMATS
from tests.client.conftest import LiveServer, make_person, on_a_terminal
from tests.importers.corpus import TRANSCRIPTS
from tests.usage.corpus import EXPECTED
from tests.usage.test_api import thread, turn

WIDE = ["--since", "2000-01-01", "--until", "2100-12-31"]
FILES = [
    ("pi", TRANSCRIPTS / "pi" / "session.jsonl"),
    ("pi", TRANSCRIPTS / "pi" / "large-session.jsonl"),
    ("aider", next((TRANSCRIPTS / "aider-chat-history").rglob("*.md"))),
    *(("codex", p) for p in sorted((TRANSCRIPTS / "codex-rollout").glob("*.jsonl"))),
]


def test_offline_table_tsv_and_json(tmp_path: Path) -> None:
    person = make_person(tmp_path / "me")
    store = person.agent()
    for fmt, path in FILES:
        for found in FORMATS[fmt].parse(path).threads:
            store.save(found)
    body = json.loads(person("usage", "--by", "agent", *WIDE, "--json").out)
    assert body["source"] == "this machine"
    assert body["prices"]["label"].startswith("estimate at genai-prices")
    groups = {g["key"]: g for g in body["groups"]}
    for agent in ("pi", "codex"):
        g = groups[agent]
        got = (
            g["input_tokens"],
            g["output_tokens"],
            g["cache_read_tokens"],
            g["cache_write_tokens"],
        )
        assert got == EXPECTED[agent]
    assert groups["aider"]["sessions"] > 0
    assert groups["aider"]["sessions_without_usage"] == groups["aider"]["sessions"]
    assert groups["aider"]["cost_usd"] is None
    # piped: a header, then tab-separated full numbers
    piped = person("usage", "--by", "agent", *WIDE).out.splitlines()
    assert piped[0].split("\t")[:4] == ["KEY", "SESSIONS", "NO USAGE", "TURNS"]
    pi_row = next(line.split("\t") for line in piped if line.startswith("pi\t"))
    assert pi_row[5] == str(EXPECTED["pi"][1])
    # at an 80-column terminal: every line fits
    shown = on_a_terminal(person, "usage", "--by", "model", *WIDE, columns=80).decode()
    lines = [line for line in shown.splitlines() if line.strip()]
    assert any("claude-opus-4-5" in line for line in lines)
    assert all(cell_len(line) <= 80 for line in lines if "\x1b" not in line)
    assert piped[0].split("\t")[-1] == "COMPLETE"  # piped: whether the cost is whole
    assert pi_row[-1] == "yes"
    aider_row = next(line.split("\t") for line in piped if line.startswith("aider\t"))
    assert aider_row[-1] == "no"
    for day in ("yesterday", "20260105"):  # the server's form only (YYYY-MM-DD)
        bad = person("usage", "--since", day)
        assert bad.code == 2
        assert "YYYY-MM-DD" in bad.err
    # a prices file holding Infinity (JSON's) or a price past any model's: said in words
    for price in ("Infinity", "1e308"):
        prices = tmp_path / f"prices-{price}.json"
        prices.write_text(f'{{"date": "2026-12-01", "models": {{"m": {{"input": {price}}}}}}}')
        refused = person("usage", *WIDE, env={"LOOMSYNC_PRICES_FILE": str(prices)})
        assert refused.code == 1, refused.err
        assert "LOOMSYNC_PRICES_FILE" in refused.err
        assert str(prices) in refused.err
        assert "unexpected" not in refused.err


async def test_online_and_the_organization(
    tmp_path: Path, live_server: LiveServer, settings: Settings
) -> None:
    org = f"org-{uuid.uuid4().hex[:8]}"
    admin = create_token(settings, f"ann-{uuid.uuid4().hex[:6]}", org=org, roles=["admin"])
    member = create_token(settings, f"ben-{uuid.uuid4().hex[:6]}", org=org)
    async with httpx.AsyncClient(base_url=live_server.url) as http:
        for token, visibility, turns in ((admin, "private", 1), (member, "organization", 2)):
            tid = str(ThreadId.new())
            doc: dict[str, Any] = thread([turn() for _ in range(turns)], visibility=visibility)
            answer = await http.put(
                f"/api/threads/{tid}",
                json={**doc, "id": tid, "created_at": "2026-11-03T09:00:00Z"},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert answer.status_code == 201, answer.text
    ann = make_person(tmp_path / "ann")
    assert ann("login", "--server", live_server.url, "--token", admin).code == 0
    mine = json.loads(ann("usage", "--online", *WIDE, "--json").out)
    assert mine["source"] == "server"
    assert mine["total"]["turns"] == 1
    team = json.loads(ann("usage", "--scope", "organization", "--by", "repo", *WIDE, "--json").out)
    assert team["groups"][0]["key"] == "github.com/team/project"
    assert team["total"]["turns"] == 3
    ben = make_person(tmp_path / "ben")
    assert ben("login", "--server", live_server.url, "--token", member).code == 0
    refused = ben("usage", "--scope", "organization", *WIDE)
    assert refused.code != 0
    assert "admin" in refused.err
    # a thread of ben's that ann read here (`show`) is ben's: not in ann's offline figures
    assert ann("sync").code == 0
    offline_before = json.loads(ann("usage", *WIDE, "--json").out)["total"]["turns"]
    shown = ann("show", team_thread_id(live_server, member))
    assert shown.code == 0, shown.err
    offline_after = json.loads(ann("usage", *WIDE, "--json").out)["total"]["turns"]
    assert offline_after == offline_before


def team_thread_id(server: LiveServer, token: str) -> str:
    """The id of the one thread ``token``'s owner put on ``server``."""
    answer = httpx.get(
        f"{server.url}/api/threads", headers={"Authorization": f"Bearer {token}"}, timeout=30
    )
    assert answer.status_code == 200, answer.text
    [first] = answer.json()["threads"]
    return str(first["id"])
