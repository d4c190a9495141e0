"""Shortened text never cuts an escape in half (after issue 11, item 13).

Titles made at import, tool-call arguments, local search snippets and server details are cut by
:func:`loomsync.terminal.clip` or :func:`loomsync.terminal.whole_units`: on the raw text, at the
length shown, keeping each escape sequence (``ESC [ 31 m``, OSC 52 …) whole or leaving it out.
Before, an 80-character title cut ``ESC [ 3`` and showed ``… body line \\x1b[3…``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from loomsync.terminal import clip, printable
from tests.client.conftest import Person
from tests.client.test_terminal import Raw, assert_inert, run

SESSION = "0b9e0c4e-34a3-4c53-9d51-1f1d1b9f3f0a"
RED = "\x1b[31m"
#: A title cut at 80 raw characters lands inside RED (76 + 4 < 76 + 5).
PREFIX = "body line " + "a" * 66
#: The local snippet window (textsearch.highlight: 160 characters from the match) ends inside RED.
BODY = f"wombat {'q' * 150}{RED}tail"
#: A visible escape cut short, or an escape sequence cut short (CSI without its final byte).
HALF = re.compile(r"\\x?[0-9a-f]?…|\\x1b\[[0-9;]*…")


def claude_session(folder: Path, first: str) -> Path:
    line = {
        "type": "user",
        "uuid": "11111111-1111-4111-8111-111111111111",
        "parentUuid": None,
        "sessionId": SESSION,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": first},
    }
    reply = {**line, "type": "assistant", "uuid": "22222222-2222-4222-8222-222222222222"}
    reply["parentUuid"] = line["uuid"]
    reply["message"] = {"role": "assistant", "id": "m1", "model": "x", "content": BODY}
    folder.mkdir(parents=True)
    path = folder / f"{SESSION}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in (line, reply)), encoding="utf-8")
    return path


def no_half_escape(result: Raw) -> None:
    assert result.code == 0, result.err
    assert_inert(result.out, tabs=True)
    assert not HALF.search(result.out), result.out


def test_titles_and_snippets_shown_by_show_search_and_export_keep_escapes_whole(
    person: Person,
) -> None:
    claude_session(person.home / "projects" / "-home-me-app", f"{PREFIX}{RED}red text after")
    imported = run(person, "import", "claude-code", str(person.home / "projects"), "--json")
    assert imported.code == 0, imported.err
    [thread_id] = json.loads(imported.out)["created"]

    shown = run(person, "show", thread_id)
    no_half_escape(shown)
    assert shown.out.split("\n")[0] == f"{PREFIX}…"

    found = run(person, "search", "--local", "wombat")
    assert f"{PREFIX}…" in found.out

    exported = run(person, "export", thread_id, "--format", "markdown")
    no_half_escape(exported)
    assert exported.out.startswith(f"# {PREFIX}…\n")


def test_local_search_snippets_keep_escapes_whole(person: Person) -> None:
    claude_session(person.home / "projects" / "-home-me-app", f"{PREFIX}{RED}red text after")
    assert run(person, "import", "claude-code", str(person.home / "projects")).code == 0
    found = run(person, "search", "--local", "wombat")
    no_half_escape(found)
    # the window stops before RED, which would not fit whole (textsearch.highlight's " …")
    assert found.out.rstrip("\n").endswith("q …")


TEXT = st.text(
    st.sampled_from(["a", " ", "\x1b", "[", "3", "1", "m", "]", "\x07", "\x9b", "\n", "\u202e"]),
    max_size=40,
)


@given(TEXT, st.integers(min_value=0, max_value=40))
def test_clip_is_a_prefix_that_shows_at_most_limit_and_never_half_an_escape(
    text: str, limit: int
) -> None:
    clipped = clip(text, limit)
    if clipped == text:
        assert len(printable(text)) <= limit
        return
    kept = clipped.removesuffix("…")
    assert text.startswith(kept)
    assert len(printable(kept)) <= limit
    # what was kept shows exactly as that part of the whole text shows: no escape was split
    assert printable(text).startswith(printable(kept))
    # a whole CSI sequence that starts in the kept part is kept whole
    for match in re.finditer(r"\x1b\[[0-?]*[ -/]*[@-~]", text):
        if match.start() < len(kept):
            assert match.end() <= len(kept)
