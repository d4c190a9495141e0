"""Issue 16, items 1 and 7: tables that read at any width, and long output (paging ``list``, a
pager and a range for ``show``). ``loomsync`` runs as a subprocess with a fresh HOME at 80
columns, piped and under a pseudo terminal; docs/client.md shows the same output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

from loomsync.cli.render import queue_columns, thread_columns
from loomsync.cli.tables import cut, fitted
from loomsync.core.document.model import Thread
from loomsync.store.summary import ThreadSummary
from tests.client.conftest import BODY_LIMIT, LiveServer, Person, login, on_a_terminal

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
LONG = "Fix the login redirect loop that sends users back to the sign-in page after SSO\tfor good"
BRANCH = "feature/sso-redirect-loop-after-the-identity-provider-migration"


def threads(person: Person, count: int, *, messages: int = 3, title: str = LONG) -> list[str]:
    """``count`` saved threads (the last saved is the newest); their ids, newest first."""
    agent = person.agent()
    saved = [
        agent.save(
            Thread.model_validate(
                {
                    "metadata": {"title": f"{title} {i}"},
                    "git_branch": BRANCH,
                    "conversation": {
                        "messages": [
                            {"role": "user", "content": f"message body {j}"}
                            for j in range(messages)
                        ]
                    },
                }
            )
        )
        for i in range(count)
    ]
    agent.close()
    return [str(t.id) for t in reversed(saved)]


def screen(raw: bytes) -> list[str]:
    """What a terminal shows: the lines, styles removed."""
    text = ANSI.sub("", raw.decode("utf-8"))
    return [line for line in text.replace("\r\n", "\n").split("\n") if line]


def said(text: str) -> str:
    """A usage error's words, the box typer draws around them removed."""
    return " ".join(text.replace("│", " ").replace("╭", " ").replace("╰", " ").split())


# -- item 1: tables at any width ----------------------------------------------------------------


def test_list_piped_is_one_tab_separated_line_per_thread(person: Person) -> None:
    made = threads(person, 2, title=LONG + "\nsecond line")
    listed = person("list", env={"COLUMNS": "80"})
    assert listed.code == 0, listed.err
    lines = listed.out.splitlines()
    assert lines[0] == "ID\tTITLE\tMSGS\tLAST ACTIVITY\tBRANCH\tSYNC"
    assert len(lines) == 3  # a header and one line per thread, whatever the title holds
    rows = [line.split("\t") for line in lines[1:]]
    assert [row[0] for row in rows] == made  # whole ids, newest first
    for number, row in zip((1, 0), rows, strict=True):
        assert len(row) == 6
        assert row[1] == f"{LONG}\nsecond line {number}".replace("\t", "\\t").replace("\n", "\\n")
        assert row[2:] == ["3", row[3], BRANCH, "local"]
    assert "\x1b" not in listed.out  # no colour
    assert "…" not in listed.out  # nothing cut


def test_list_on_an_80_column_terminal_never_wraps_and_keeps_the_id(person: Person) -> None:
    made = threads(person, 3)
    shown = screen(on_a_terminal(person, "list", env={"TERM": "xterm-256color"}))
    assert shown[0].split() == ["ID", "TITLE", "MSGS", "LAST", "ACTIVITY", "BRANCH", "SYNC"]
    rows = shown[1:]
    assert len(rows) == 3
    assert all(cell_len(line) <= 80 for line in shown), shown
    for line, whole in zip(rows, made, strict=True):
        short = line.split()[0]
        assert whole.startswith(short)
        assert len(short) >= len("T-") + 8
        assert "…" in line  # the title and the branch are cut, not wrapped
        assert line.split()[-1] == "local"  # the state, whole
        assert person("show", short, "--json").code == 0  # and it names the thread
    assert len({line.split()[0] for line in rows}) == 3


def test_sync_status_on_an_80_column_terminal_keeps_the_last_error(
    person: Person, live_server: LiveServer, account: str
) -> None:
    person.env.update(LOOMSYNC_SERVER_URL=live_server.url, LOOMSYNC_TOKEN=account)
    agent = person.agent()
    big = agent.save(Thread.model_validate({"metadata": {"title": "Huge"}, "conversation": {
        "messages": [{"role": "tool", "content": "x" * BODY_LIMIT}]}}))  # fmt: skip
    agent.close()
    assert person("sync").code == 1  # refused (413): the entry fails and says why
    piped = person("sync", "--status", env={"COLUMNS": "80"})
    entries = [line.split("\t") for line in piped.out.splitlines()[2:]]
    assert [entry[:3] for entry in entries] == [[str(big.id), "save", "failed"]]
    error = entries[0][5]
    assert error.startswith("refused by the server (413)")
    assert len(error) > 30  # longer than what is left of 80 columns
    assert "…" not in error  # piped: whole
    shown = screen(on_a_terminal(person, "sync", "--status"))
    assert shown[0] == "0 pending, 1 failed."
    assert shown[1].split() == ["THREAD", "OP", "STATE", "RETRIES", "SINCE", "LAST", "ERROR"]
    assert all(cell_len(line) <= 80 for line in shown), shown
    row = shown[2].rstrip()
    assert str(big.id).startswith(row.split()[0])
    assert row.split()[1:3] == ["save", "failed"]
    assert "refused by the" in row  # the error, cut, still there
    assert row.endswith("…")


def _summary(title: str, branch: str, thread_id: str) -> ThreadSummary:
    return ThreadSummary.model_validate(
        {"id": thread_id, "title": title, "git_branch": branch, "message_count": 12345}
    )


@pytest.mark.parametrize("width", [80, 100, 132, 200])
def test_every_table_line_fits_its_terminal(width: int) -> None:
    rows = [
        _summary("界" * 90, BRANCH, "T-01a23437-1a0b-707c-80ef-3e7b9898c20c"),
        _summary("short", "main", "T-01a23437-1a0c-707c-80ef-3e7b9898c20c"),
    ]
    console = Console(width=width, force_terminal=True, color_system=None, soft_wrap=True)
    for columns in (thread_columns({r.id: "pending" for r in rows}), thread_columns(None)):
        with console.capture() as captured:
            console.print(fitted(columns, rows, width))
        lines = captured.get().splitlines()
        assert len(lines) == 3, lines  # a header, one line per row
        assert all(cell_len(line) <= width for line in lines), (width, lines)
        assert all(line.startswith(r.id) for line, r in zip(lines[1:], rows, strict=True))
        assert "short" in lines[2]
    assert [c.header for c in queue_columns()][-1] == "LAST ERROR"


def test_a_cut_never_halves_a_visible_escape() -> None:
    for width in range(2, 16):
        for at in range(12):
            shown = cut("a" * at + "\x1b[31mred\u202eend", width)
            assert cell_len(shown) <= width
            assert shown.endswith("…")
            body = shown[:-1]
            assert "\\x1b[31mred\\u202eend".startswith(body[at:]) or body == "a" * len(body)
            for whole in ("\\x1b", "\\u202e"):  # present whole or not at all
                for n in range(2, len(whole)):
                    assert not body.endswith(whole[:n])
    assert cut("界" * 10, 7) == "界界界…"


# -- item 7: long output -------------------------------------------------------------------------


def test_list_says_how_many_more_and_pages_with_a_cursor(person: Person) -> None:
    made = threads(person, 7, title="Thread")
    first = person("list", "-n", "3")
    assert first.code == 0, first.err
    assert [line.split("\t")[0] for line in first.out.splitlines()[1:]] == made[:3]
    match = re.fullmatch(
        r"4 more: --limit 0 lists every one, --cursor (\S+) the next 3\.\n", first.err
    )
    assert match, first.err  # on stderr: the pipe holds only rows
    second = person("list", "-n", "3", "--cursor", match.group(1))
    assert [line.split("\t")[0] for line in second.out.splitlines()[1:]] == made[3:6]
    cursor = re.search(r"--cursor (\S+)", second.err)
    assert cursor
    assert second.err.startswith("1 more:")
    last = person("list", "-n", "3", "--cursor", cursor.group(1))
    assert [line.split("\t")[0] for line in last.out.splitlines()[1:]] == made[6:]
    assert last.err == ""
    every = person("list", "--limit", "0")
    assert [line.split("\t")[0] for line in every.out.splitlines()[1:]] == made
    assert every.err == ""
    wrong = person("list", "--cursor", "not-a-cursor")
    assert (wrong.code, wrong.out) == (2, "")  # a bad value, as `show 5` (exits.py table)
    assert "'not-a-cursor' is not a cursor of this machine's list" in said(wrong.err)


def test_all_still_means_archived_too(person: Person) -> None:
    made = threads(person, 2, title="Kept")
    assert person("archive", made[0]).code == 0
    assert [r["id"] for r in json.loads(person("list", "--json").out)] == made[1:]
    assert [r["id"] for r in json.loads(person("list", "--all", "--json").out)] == made


def test_list_server_pages_with_the_servers_cursor(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    made = threads(person, 3, title="Remote")
    assert person("sync").code == 0
    first = person("list", "--server", "-n", "2")
    assert first.code == 0, first.err
    assert [line.split("\t")[0] for line in first.out.splitlines()[1:]] == made[:2]
    match = re.fullmatch(
        r"More on the server: --limit 0 lists every one, --cursor (\S+) the next 2\.\n", first.err
    )
    assert match, first.err
    rest = person("list", "--server", "-n", "2", "--cursor", match.group(1))
    assert [line.split("\t")[0] for line in rest.out.splitlines()[1:]] == made[2:]
    every = person("list", "--server", "--limit", "0")
    assert [line.split("\t")[0] for line in every.out.splitlines()[1:]] == made
    local = person("list", "-n", "2").err.split("--cursor ")[1].split()[0]
    wrong = person("list", "--server", "--cursor", local)
    assert (wrong.code, wrong.out) == (2, "")  # a bad value (exits.py table)
    assert f"the server did not take '{local}' as a cursor" in said(wrong.err)
    assert person("list", "--cursor", match.group(1)).code == 2  # the server's, here


def _pager(tmp_path: Path, name: str = "pager") -> tuple[Path, Path]:
    """A pager script that records its call and what it was given; (script, record)."""
    record = tmp_path / f"{name}.out"
    script = tmp_path / name
    script.write_text(f"#!/bin/sh\necho \"invoked LESS=$LESS\" > '{record}'\ncat >> '{record}'\n")
    script.chmod(0o755)
    return script, record


def test_show_pages_a_tall_transcript_on_a_terminal(person: Person, tmp_path: Path) -> None:
    tall = threads(person, 1, messages=40, title="Tall")[0]
    short = threads(person, 1, messages=2, title="Short")[0]
    script, record = _pager(tmp_path)
    out = on_a_terminal(person, "show", tall, env={"PAGER": str(script)})
    paged = record.read_text()
    assert paged.startswith("invoked LESS=FRX\n")
    assert "#39 user" in paged
    assert "message body 39" in paged
    assert b"message body 39" not in out  # the pager had it all
    record.unlink()

    for args, env in (
        (["show", tall, "--no-pager"], {"PAGER": str(script)}),  # --no-pager
        (["show", short], {"PAGER": str(script)}),  # fits the screen
        (["show", tall], {"PAGER": "cat"}),  # cat: no pager
        (["show", tall], {"PAGER": str(script), "LOOMSYNC_PAGER": "cat"}),  # ours first
    ):
        shown = on_a_terminal(person, *args, env=env)
        assert not record.exists(), (args, env)
        assert b"message body" in shown
    piped = person("show", tall, env={"PAGER": str(script)})
    assert piped.code == 0
    assert "#39 user" in piped.out
    assert not record.exists()  # piped: never a pager

    ours, ours_record = _pager(tmp_path, "ours")
    on_a_terminal(person, "show", tall, env={"PAGER": str(script), "LOOMSYNC_PAGER": str(ours)})
    assert "message body 39" in ours_record.read_text()
    assert not record.exists()


def test_show_from_to_prints_a_range_of_messages(person: Person) -> None:
    made = threads(person, 1, messages=6, title="Ranged")[0]
    part = person("show", made, "--from", "2", "--to", "3")
    assert part.code == 0, part.err
    assert "Messages: 2-3 of 6" in part.out.splitlines()
    assert [line for line in part.out.splitlines() if line.startswith("Messages:")] == [
        "Messages: 2-3 of 6"
    ]  # the range in place of the count, one line (newcomer finding 12)
    whole = person("show", made)
    assert [line for line in whole.out.splitlines() if line.startswith("Messages:")] == [
        "Messages: 6"
    ]
    labels = [line.split(" ─")[0] for line in part.out.splitlines() if line.startswith("#")]
    assert labels == ["#2 user", "#3 user"]
    assert "message body 1" not in part.out
    assert "message body 4" not in part.out
    tail = person("show", made, "--from", "4")
    assert [line.split(" ─")[0] for line in tail.out.splitlines() if line.startswith("#")] == [
        "#4 user",
        "#5 user",
    ]
    one = json.loads(person("show", made, "--from", "1", "--to", "1", "--json").out)
    assert [m["content"] for m in one["conversation"]["messages"]] == ["message body 1"]
    for args, words in (
        (["--from", "6"], "--from 6: the thread has 6 messages, numbered 0 to 5"),
        (["--from", "0", "--to", "9"], "--from 0 --to 9: the thread has 6 messages"),
        (["--from", "3", "--to", "1"], "--to is before --from"),
    ):
        refused = person("show", made, *args)
        assert (refused.code, refused.out) == (2, ""), args  # a bad value (exits.py table)
        assert refused.err.startswith("error: "), refused.err
        assert words in said(refused.err), refused.err
