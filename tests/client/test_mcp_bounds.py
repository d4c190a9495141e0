"""``loomsync mcp`` answers that cannot be turned against their client (issue 27 items 3 and 4),
driven by the MCP SDK's own stdio client (:func:`tests.client.test_mcp.drive`).

Every string field of ``list_threads`` and ``search_threads`` (thread id, title, workspace,
branch, repository, snippet, note) arrives printable: no ESC, CSI, OSC 8 link, C0 or C1
control, bidi override or isolate, raw. Every answer stays within its budget whatever a thread
holds (a 300,000-character title, hundreds of threads of long fields) and says what it cut;
``read_thread`` too. A thread holding a lone surrogate (half an emoji) is listed and found with
a warning naming it, and the other threads still answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcp import ClientSession

from loomsync.mcp.bounds import ANSWER_BUDGET, FIELD_CHARS
from tests.client.conftest import Person
from tests.client.test_mcp import ROLLOUT, call, drive, note, text_of

#: What a terminal or a model's context must never receive raw: C0 controls but newline and
#: tab (the JSON text is indented), DEL, C1 controls, line/paragraph separators, bidi
#: embeddings/overrides/isolates, lone surrogates.
ACTIVE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)

#: Hostile pieces of text: a CSI colour and clear-screen, an OSC 8 hyperlink, an OSC 52
#: clipboard write, the 8-bit CSI, a right-to-left override and isolate, a newline that would
#: forge a field, BEL and backspace.
HOSTILE = (
    "\x1b[31mred\x1b[2J"
    "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
    "\x1b]52;c;ZXZpbA==\x07"
    "\x9b6n"
    "\u202egnp.exe\u202c\u2066iso\u2069"
    "\nforged: yes\x07\x08"
)


def strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value (the structured content, as the client decoded it)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def hostile_thread(person: Person, title: str, word: str) -> str:
    """A saved thread whose every string field is hostile; its id."""
    saved = person.agent().save(
        note(
            title,
            f"the {word} crossed the road {HOSTILE}",
            workspace_root=f"/w/{HOSTILE}",
            git_branch=f"feature/{HOSTILE}",
            git_remote_url=f"https://example.com/{HOSTILE}.git",
        )
    )
    return str(saved.id)


def test_every_field_is_printable_and_a_huge_title_is_cut_and_said(person: Person) -> None:
    huge = hostile_thread(person, "giant " + "A" * 300_000, "capybara")
    small = hostile_thread(person, f"small {HOSTILE}", "capybara")

    async def scenario(session: ClientSession) -> None:
        listed = await call(session, "list_threads")
        found = await call(session, "search_threads", query="capybara")
        for result in (listed, found):
            text = text_of(result)
            assert len(text) <= ANSWER_BUDGET
            assert not ACTIVE.search(text), ACTIVE.findall(text)
            answer = result.structured_content
            assert answer is not None
            for value in strings(answer):
                assert not ACTIVE.search(value), value
            assert "\\x1b]8;;https://evil.example/" in text  # shown, escaped, not acted on
            truncated = answer["truncated"]
            assert truncated is not None
            assert f"title cut to {FIELD_CHARS['title']} characters of {huge}" in truncated
            assert small not in truncated  # its title fitted
            assert answer["warnings"] == []
        rows = listed.structured_content["threads"]  # type: ignore[index]
        assert {r["thread_id"] for r in rows} == {huge, small}
        for row in rows:
            for field in ("title", "workspace", "branch", "repo"):
                assert "\x1b" not in row[field]
                assert "\n" not in row[field]
                assert len(row[field]) <= FIELD_CHARS[field] + 1
        [giant] = [r for r in rows if r["thread_id"] == huge]
        assert giant["title"].startswith("giant AAAA")
        assert giant["title"].endswith("…")
        hits = found.structured_content["hits"]  # type: ignore[index]
        assert {h["thread_id"] for h in hits} == {huge, small}
        for hit in hits:
            assert "\x1b" not in hit["snippet"]
            assert "«capybara»" in hit["snippet"]
            assert len(hit["snippet"]) <= FIELD_CHARS["snippet"] + 1

        read = text_of(await call(session, "read_thread", id=huge))
        assert len(read) <= 20_000
        assert not ACTIVE.search(read)

    drive(person, scenario)


def test_rows_past_the_budget_are_left_out_and_the_answer_says_so(person: Person) -> None:
    long = "x" * 2_000
    agent = person.agent()
    for index in range(60):
        agent.save(
            note(
                f"wombat {index} {long}",
                f"the wombat number {index} dug",
                workspace_root=f"/w/{index}/{long}",
                git_branch=f"b{index}-{long}",
                git_remote_url=f"https://example.com/{index}/{long}.git",
            )
        )

    async def scenario(session: ClientSession) -> None:
        listed = await call(session, "list_threads", limit=60)
        answer = listed.structured_content
        assert answer is not None
        assert len(text_of(listed)) <= ANSWER_BUDGET
        kept = len(answer["threads"])
        assert 1 <= kept < 60
        assert answer["more"] is True
        assert (
            f"{60 - kept} more left out to keep the answer within 40,000 characters"
            in (answer["truncated"])
        )
        assert "and " in answer["truncated"]  # more cut titles than are named
        found = await call(session, "search_threads", query="wombat dug", limit=60)
        hits = found.structured_content
        assert hits is not None
        assert len(text_of(found)) <= ANSWER_BUDGET
        assert 1 <= len(hits["hits"]) < 60
        assert "more left out to keep the answer within" in hits["truncated"]
        fits = await call(session, "list_threads", limit=5)
        assert fits.structured_content is not None
        assert len(fits.structured_content["threads"]) == 5
        assert "left out" not in fits.structured_content["truncated"]

    drive(person, scenario)


def half_an_emoji(person: Person) -> Path:
    """A copy of the real Codex rollout whose first question holds a lone surrogate (the JSON
    escape ``\\ud83d`` with no low half), under another session id; its folder."""
    folder = person.home / "broken"
    folder.mkdir()
    text = ROLLOUT.read_text().replace(
        "what is current repository about?", "what is current \\ud83d repository about?"
    )
    assert "\\ud83d" in text
    name = ROLLOUT.name.replace("ba12b5b73b52", "ba12b5b73b53")
    (folder / name).write_text(text.replace("ba12b5b73b52", "ba12b5b73b53"))
    return folder


def test_a_lone_surrogate_in_one_thread_takes_no_listing_down(person: Person) -> None:
    good = person.agent().save(note("Good one", "the repository of the ocelot")).id
    imported = person("import", "codex", str(half_an_emoji(person)))
    assert imported.code == 0, imported.err  # saved, and said so
    assert "1 created" in imported.out

    listed = person("list")
    assert listed.code == 0, listed.err
    assert str(good) in listed.out
    [broken] = [line.split()[0] for line in listed.out.splitlines() if "what is current" in line]
    assert "what is current \ufffd repository about?" in listed.out
    assert f"warning: thread {broken}: its title held half of a character" in listed.err
    assert "U+FFFD" in listed.err

    as_json = person("list", "--json")
    assert as_json.code == 0, as_json.err
    assert '"unencodable": [\n      "title"\n    ]' in as_json.out

    found = person("search", "--local", "repository")
    assert found.code == 0, found.err
    assert str(good) in found.out
    assert broken in found.out
    assert f"warning: thread {broken}" in found.err
    shown = person("show", broken)
    assert shown.code == 0, shown.err
    assert "what is current \\ud83d repository" in shown.out

    async def scenario(session: ClientSession) -> None:
        rows = (await call(session, "list_threads")).structured_content
        assert rows is not None
        assert {r["thread_id"] for r in rows["threads"]} == {str(good), broken}
        [warning] = rows["warnings"]
        assert warning.startswith(f"thread {broken}: its title held half of a character")
        hits = (await call(session, "search_threads", query="repository")).structured_content
        assert hits is not None
        assert {h["thread_id"] for h in hits["hits"]} == {str(good), broken}
        assert len(hits["warnings"]) == 1
        read = text_of(await call(session, "read_thread", id=broken))
        assert "what is current \\ud83d repository" in read

    drive(person, scenario)
    again = person("import", "codex", str(person.home / "broken"))
    assert again.code == 0, again.err
    assert "1 unchanged" in again.out
