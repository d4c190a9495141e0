"""Issue 16 item 1 below 80 columns (leftover a) and ``loomsync scan`` on the table path
(leftover b): at 40, 60 and 80 columns on a pseudo terminal every table keeps its ids and
states whole and prints one line per row (cut with ``…``, columns left out, never a wrapped
or squeezed row); piped, one tab-separated line per row, nothing cut. ``loomsync`` runs as a
subprocess with a fresh HOME; docs/client.md ("Tables") shows the same output."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from loomsync.core.document.model import Thread
from tests.client.conftest import BODY_LIMIT, LiveServer, Person, login, on_a_terminal
from tests.client.test_cli_for_people import DATA, TUI_LOG
from tests.client.test_cli_view import screen, threads
from tests.client.test_redaction import holds_no_secret
from tests.client.test_secrets_cli import THREAD, write_raw

WIDTHS = [40, 60, 80]


def rows_of(shown: list[str], header: str) -> list[str]:
    """The table's lines after its header line (the one starting with ``header``)."""
    at = next(n for n, line in enumerate(shown) if line.startswith(header))
    return shown[at + 1 :]


def assert_whole(line: str, whole_id: str, state: str, width: int) -> None:
    """``line`` starts with ``whole_id`` or an uncut prefix of it, ends with ``state`` whole,
    and fits ``width``."""
    first = line.split()[0]
    assert "…" not in first, line
    assert whole_id.startswith(first), line
    assert len(first) >= len("T-") + 8, line
    assert line.split()[-1] == state, line
    assert cell_len(line) <= width, (width, line)


@pytest.mark.parametrize("width", WIDTHS)
def test_list_keeps_ids_and_states_whole_at_any_width(person: Person, width: int) -> None:
    made = threads(person, 3)
    shown = screen(on_a_terminal(person, "list", columns=width))
    assert shown[0].startswith("ID")
    assert shown[0].split()[-1] == "SYNC"
    rows = shown[1:]
    assert len(rows) == 3  # one line per thread: nothing wrapped
    for line, whole in zip(rows, made, strict=True):
        assert_whole(line, whole, "local", width)
        assert "…" in line  # the long title is cut instead
    piped = person("list", env={"COLUMNS": str(width)}).out.splitlines()
    assert [line.split("\t")[0] for line in piped[1:]] == made
    assert all(line.split("\t")[-1] == "local" and "…" not in line for line in piped[1:])


@pytest.mark.parametrize("width", WIDTHS)
def test_sync_status_keeps_thread_op_state_and_the_error_at_any_width(
    person: Person, live_server: LiveServer, account: str, width: int
) -> None:
    person.env.update(LOOMSYNC_SERVER_URL=live_server.url, LOOMSYNC_TOKEN=account)
    agent = person.agent()
    big = agent.save(Thread.model_validate({"metadata": {"title": "Huge"}, "conversation": {
        "messages": [{"role": "tool", "content": "x" * BODY_LIMIT}]}}))  # fmt: skip
    agent.close()
    assert person("sync").code == 1
    shown = screen(on_a_terminal(person, "sync", "--status", columns=width))
    head = next(line for line in shown if line.startswith("THREAD"))
    assert head.split()[:3] == ["THREAD", "OP", "STATE"]
    assert head.endswith("LAST ERROR")
    [row] = rows_of(shown, "THREAD")
    first, op, state = row.split()[:3]
    assert "…" not in first
    assert str(big.id).startswith(first)
    assert len(first) >= 10
    assert (op, state) == ("save", "failed")
    assert "refused" in row
    assert row.endswith("…")
    assert cell_len(row) <= width
    piped = person("sync", "--status", env={"COLUMNS": str(width)}).out.splitlines()
    cells = piped[2].split("\t")
    assert cells[:3] == [str(big.id), "save", "failed"]
    assert "…" not in cells[5]


@pytest.mark.parametrize("width", WIDTHS)
def test_share_links_keep_the_link_id_and_state_whole_at_any_width(
    person: Person, live_server: LiveServer, account: str, width: int
) -> None:
    assert login(person, live_server, account).code == 0
    thread_id = str(person.agent().save(Thread.model_validate({"metadata": {"title": "x"}})).id)
    made = person("share", thread_id, "--link")
    assert made.code == 0, made.err
    link_id = made.err.split("--revoke ")[1].strip()
    shown = screen(on_a_terminal(person, "share", thread_id, "--links", columns=width))
    [row] = rows_of(shown, "ID")
    assert row.split()[:2] == [link_id, "live"], shown  # whole: ``--revoke`` takes the id
    # at 40 columns the whole id and the state alone are 42 cells: one line, longer
    assert cell_len(row) <= max(width, len(link_id) + 2 + len("STATE")), (width, row)


@pytest.mark.parametrize("width", WIDTHS)
def test_list_server_keeps_whole_ids_and_visibility_on_one_line(
    person: Person, live_server: LiveServer, account: str, width: int
) -> None:
    """A server listing's ids are whole (``show`` takes them without this machine holding
    the thread): with the visibility they need 52 cells, so at 40 columns the line is longer
    than the terminal, still one line per thread, nothing of the id or the state cut."""
    assert login(person, live_server, account).code == 0
    made = threads(person, 2)
    assert person("sync").code == 0
    shown = screen(on_a_terminal(person, "list", "--server", columns=width))
    rows = [line for line in rows_of(shown, "ID") if line.startswith("T-")]
    assert len(rows) == 2, shown  # one line per thread
    for line, whole in zip(rows, made, strict=True):
        assert line.split()[0] == whole
        assert line.split()[-1] == "private", line
        assert cell_len(line) <= max(width, len(whole) + 2 + len("VISIBILITY") + 4)


@pytest.mark.parametrize("width", WIDTHS)
def test_scan_findings_are_a_table_that_never_wraps(person: Person, width: int) -> None:
    write_raw(person)
    raw = on_a_terminal(person, "scan", columns=width)
    shown = screen(raw)
    assert holds_no_secret(raw.decode())
    assert shown[0].split()[0] == "THREAD"
    assert shown[0].split()[-1] == "PREVIEW"
    rows = [line for line in shown[1:] if line.startswith("T-")]
    assert len(rows) == 4  # one line per finding
    kinds = {"aws-access-key", "github-token"}
    for line in rows:
        first = line.split()[0]
        assert THREAD.startswith(first), line
        assert "…" not in first, line
        assert len(first) >= 10, line
        assert kinds & set(line.split()), line  # the kind, whole
        assert line.split()[-2].startswith(("AKIA…(", "ghp_…(")), line  # the masked preview
        assert cell_len(line) <= width, (width, line)
    assert " ".join(
        " ".join(shown[5:]).split()
    ) == (  # the summary, a sentence: word-wrapped when narrow
        "4 credential(s) in 1 of 1 thread(s); `loomsync redact` replaces them."
    )
    piped = person("scan", env={"COLUMNS": str(width)})
    assert piped.code == 1
    lines = piped.out.splitlines()
    assert lines[0] == "THREAD\tWHERE\tPATH\tKIND\tPREVIEW"
    assert len(lines) == 5
    assert all(line.startswith(THREAD + "\t") for line in lines[1:])
    assert "…" not in piped.out.replace("…(", "")  # nothing cut (a preview holds "…(")


def test_the_import_summary_fits_80_columns(person: Person) -> None:
    """The summary says ``older than --since`` only when some are, so its line is not folded
    by an 80-column terminal (it was 90 cells with every count)."""
    gemini = next((DATA / "gemini-cli").glob("*.json"))
    for _ in range(2):  # created, then unchanged
        shown = screen(on_a_terminal(person, "import", "auto", str(TUI_LOG), str(gemini)))
        parts = [part for line in shown for part in line.split("\r")]  # after the progress bar
        summary = next(part for part in parts if part.startswith("Imported "))
        assert cell_len(summary) <= 80, summary
        assert "--since" not in summary
    older = person("import", "gemini-cli", str(gemini), "--since", "2999-01-01")
    assert older.out.splitlines()[0].endswith(" 1 older than --since."), older.out
