"""``loomsync watch`` reports junk instead of ignoring it silently (issue 27 item 7), with the
real CLI: a file named like a Codex session (``rollout-…<uuid>.jsonl``) that holds no
conversation is logged once, naming it, however it grows and across a restart; a short junk
file (fewer than JUDGED_AFTER lines: one line, or none) is judged once it goes quiet, not only
when a third line arrives. A real session beside them is imported as always.
"""

from __future__ import annotations

from pathlib import Path

from loomsync.watch.junk import JUDGED_AFTER, QUIET_SECONDS, Junk
from loomsync.watch.sources import Source
from tests.client.conftest import Person, wait_for
from tests.client.test_watch import (
    CLAUDE_DIR,
    CODEX_DIR,
    LONGER,
    ROLLOUT,
    SHORT,
    TOOL_HEAVY,
    Watch,
    copy_lines,
    expected,
    local_counts,
    watches,  # noqa: F401 (the fixture)
)

#: Long enough for a file to go quiet and the next second's check to judge it.
QUIET_WAIT = QUIET_SECONDS * 3


def rollout_name(number: int) -> str:
    """A Codex rollout's file name, with a session id of its own."""
    return ROLLOUT.name.replace("ba12b5b73b52", f"ba12b5b7{number:04d}")


def test_junk_named_like_a_session_and_short_junk_are_each_said_once(
    person: Person,
    watches: list[Watch],  # noqa: F811
) -> None:
    codex = person.home / CODEX_DIR
    claude = person.home / CLAUDE_DIR
    codex.mkdir(parents=True)
    claude.mkdir(parents=True)
    named = codex / rollout_name(1)  # more than JUDGED_AFTER lines, no turn: judged when quiet
    named.write_text("".join(f'{{"type": "note", "n": {n}}}\n' for n in range(JUDGED_AFTER + 2)))
    watches.append(watch := Watch(person))
    short_named = codex / rollout_name(2)  # one line, then quiet
    short_named.write_text('{"type": "note"}\n')
    empty_named = codex / rollout_name(3)  # nothing at all, then quiet
    empty_named.touch()
    short_json = claude / "notes.jsonl"  # a JSON object on its one line: not plainly junk
    short_json.write_text('{"note": "remember the milk"}\n')
    transcript = claude / "short.jsonl"
    copy_lines(SHORT, transcript, pause=0)
    [count] = expected("claude-code", transcript, None).values()
    wait_for(lambda: list(local_counts(person).values()) == [count], what="the real session")

    junk = (named, short_named, empty_named, short_json)
    wait_for(
        lambda: all(watch.lines(f"ignored {path}") for path in junk),
        timeout=QUIET_WAIT,
        what="every junk file said",
    )
    for path in (named, short_named, empty_named):
        [line] = watch.lines(str(path))
        assert line == (
            f"ignored {path}: a codex session file that holds no conversation "
            "(read again as it grows)"
        ), watch.text()
    [line] = watch.lines(str(short_json))
    assert line == f"ignored {short_json}: not a session file of a watched format"

    with open(named, "a") as handle:  # it grows, still junk: not said again
        handle.write('{"type": "note", "n": 99}\n')
    with open(short_json, "a") as handle:
        handle.write('{"note": "and bread"}\n')
    later = claude / "later.jsonl"  # a later session: once it is in, both changes were seen
    copy_lines(LONGER, later, pause=0)
    wait_for(lambda: watch.lines(f"imported {later}"), what="the later session")
    assert len(watch.lines("ignored ")) == len(junk), watch.text()  # nothing said twice
    assert watch.stop() == 0

    watches.append(again := Watch(person))  # a restart reads every file again: says nothing
    wait_for(lambda: again.lines("watching"), what="the start-up scan")
    another = claude / "another.jsonl"
    copy_lines(TOOL_HEAVY, another, pause=0)
    wait_for(lambda: again.lines(f"imported {another}"), what="a session after the restart")
    assert not again.lines("ignored "), again.text()


def test_a_file_named_like_a_session_that_becomes_one_is_imported(
    person: Person,
    watches: list[Watch],  # noqa: F811
) -> None:
    """A rollout still empty when it is judged (its agent waited) is said once, then imported
    as any session once its turns arrive."""
    codex = person.home / CODEX_DIR
    codex.mkdir(parents=True)
    watches.append(watch := Watch(person))
    path = codex / ROLLOUT.name
    path.touch()
    wait_for(lambda: watch.lines(f"ignored {path}"), timeout=QUIET_WAIT, what="the empty file")
    copy_lines(ROLLOUT, path, pause=0)
    [count] = expected("codex", path, None).values()
    wait_for(lambda: list(local_counts(person).values()) == [count], what="the session")
    assert len(watch.lines("ignored ")) == 1, watch.text()


def test_quiet_judgement_waits_for_a_file_to_stop_changing(tmp_path: Path) -> None:
    """The rule itself (loomsync/watch/junk.py) on a clock of our own: a file waits
    QUIET_SECONDS from its last change, and is handed over once."""
    now = [100.0]
    junk = Junk(said=["/old"], clock=lambda: now[0])
    source = Source(tmp_path, "codex")
    junk.wait("/a", source, None)
    now[0] += QUIET_SECONDS - 1
    junk.wait("/b", source, "codex")
    assert junk.quiet() == []
    now[0] += 1
    [due] = junk.quiet()
    assert (due.path, due.format) == ("/a", None)
    assert junk.quiet() == []  # handed over once
    junk.wait("/b", source, "codex")  # changed again: the wait starts again
    now[0] += QUIET_SECONDS - 0.5
    assert junk.quiet() == []
    junk.settled("/b")
    now[0] += QUIET_SECONDS
    assert junk.quiet() == []
    assert junk.say("/a")
    assert not junk.say("/a")
    assert not junk.say("/old")  # said before a restart
