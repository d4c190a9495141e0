"""Usage mistakes exit 2 with typer's usage error in the user's words, and ``show FILE`` of an
agent's session file says to import it (newcomer findings 12 and 13; the table in
loomsync/cli/exits.py). Run as ``loomsync`` subprocesses with a fresh HOME at 80 columns."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.client.conftest import Person, make_person, new_thread

GEMINI = Path(__file__).resolve().parents[3] / "shared" / "data" / "transcripts" / "gemini-cli"


@pytest.fixture
def narrow(tmp_path: Path) -> Person:
    return make_person(tmp_path / "home", columns=80)


def one_line(text: str) -> str:
    """typer's box drawn around a usage error, as one line of its words."""
    return " ".join(part.strip(" │╭╮╰╯─") for part in text.splitlines()).replace("  ", " ")


def test_show_of_a_session_file_says_to_import_it(narrow: Person) -> None:
    session = sorted(GEMINI.glob("*.json"))[0]
    shown = narrow("show", str(session))
    assert shown.code == 1
    assert shown.out == ""
    assert (
        f"error: {session}: not a loomsync thread file; to bring an agent session in, run "
        f"`loomsync import auto {session}`" in " ".join(shown.err.split())
    )
    assert "Thread: None" not in shown.err


def test_usage_mistakes_exit_2(narrow: Person) -> None:
    with narrow.agent() as agent:
        thread = agent.save(new_thread(7))
    cases = {
        ("import", "bogus", "x"): "unknown format 'bogus'; formats: auto, codex",
        ("fork", str(thread.id), "--up-to", "999"): "--up-to must be between 0 and 7",
        ("show", "e47"): "'e47' is not a thread id",
        ("list", "--archived", "--all"): "--archived and --all do not go together",
        ("sync", "--drop", "abcd", "--discard-failed"): (
            "--drop and --discard-failed do not go together: give only one of --status,"
            " --retry-failed, --drop, --discard-failed"
        ),
    }
    for args, words in cases.items():
        result = narrow(*args)
        assert result.code == 2, (args, result.err)
        assert words in one_line(result.err), (args, result.err)
    assert "up_to" not in narrow("fork", str(thread.id), "--up-to", "999").err
    assert narrow("fork", str(thread.id), "--up-to", "7").code == 0
