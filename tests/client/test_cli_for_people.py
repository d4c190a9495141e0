"""Issue 16, items 4, 8, 9 and 10: the ``loomsync`` command as a new user meets it, run as a
subprocess with a fresh HOME (tests/homes.py), against the real server where one is needed.
Each check matches what docs/client.md shows."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Thread
from tests.client.conftest import LOOMSYNC, LiveServer, Person, login, make_client, on_a_terminal
from tests.homes import home_env
from tests.importers.corpus import TRANSCRIPTS as DATA

TUI_LOG = DATA / "codex-tui-session-log" / "binary-size-log.jsonl"
TUI_SESSIONS = ("T-d126e3d0-80ed-480a-be8c-09d97ff602cf", "T-c7df96da-daec-4fe9-aed9-3cd19b7a6192")


def titled(title: str, thread_id: str | None = None, **fields: object) -> Thread:
    data: dict[str, object] = {
        "metadata": {"title": title},
        "conversation": {"messages": [{"role": "user", "content": f"about {title}"}]},
        **fields,
    }
    if thread_id is not None:
        data["id"] = thread_id
    return Thread.model_validate(data)


# -- item 4: short ids ------------------------------------------------------------------------


def test_a_unique_prefix_names_a_thread_with_or_without_t(person: Person) -> None:
    agent = person.agent()
    one = agent.save(titled("Fix the login", "T-5c187f31-0000-7000-8000-000000000001"))
    agent.save(titled("Speed up the build", "T-5c187f32-0000-7000-8000-000000000002"))
    for ref in ("5c187f31", "T-5c187f31", "t-5C187F31-0000"):
        shown = person("show", ref)
        assert shown.code == 0, (ref, shown.err)
        assert shown.out.splitlines()[:2] == ["Fix the login", f"Thread: {one.id}"]
    archived = person("archive", "5c187f31")
    assert (archived.code, archived.out) == (
        0,
        f"Archived {one.id}; saved locally (not logged in).\n",
    )
    exported = person("export", "5c187f31", "--format", "json")
    assert json.loads(exported.out)["id"] == str(one.id)


def test_an_ambiguous_prefix_lists_the_candidates_and_exits_1(person: Person) -> None:
    agent = person.agent()
    agent.save(titled("Fix the login", "T-5c187f31-0000-7000-8000-000000000001"))
    agent.save(titled("Speed up the build", "T-5c187f32-0000-7000-8000-000000000002"))
    result = person("show", "5c18")
    assert (result.code, result.out) == (1, "")
    assert result.err.splitlines() == [
        "error: 5c18 is the start of 2 threads' ids: give more of the id",
        "  T-5c187f32-0000-7000-8000-000000000002  Speed up the build",
        "  T-5c187f31-0000-7000-8000-000000000001  Fix the login",
    ] or sorted(result.err.splitlines()[1:]) == [
        "  T-5c187f31-0000-7000-8000-000000000001  Fix the login",
        "  T-5c187f32-0000-7000-8000-000000000002  Speed up the build",
    ]
    assert person("delete", "5c18", "--yes").code == 1  # nothing deleted on a guess
    assert len(list(person.paths.threads_dir.glob("T-*"))) == 2


def test_a_short_id_needs_4_hex_digits_and_a_match_here(person: Person) -> None:
    person.agent().save(titled("Fix the login", "T-5c187f31-0000-7000-8000-000000000001"))
    short = person("show", "5c1")
    assert short.code == 2  # a usage mistake (newcomer finding 13); no match is 1
    assert short.err == (
        "error: '5c1' is not a thread id: give the id (T-…) or at least 4 of its first hex "
        "digits, as `loomsync list` shows\n"
    )
    none = person("show", "beef")
    assert none.code == 1
    assert none.err.startswith("error: no thread on this machine has an id starting with beef;")
    assert "needs its whole id" in none.err


# -- item 8: importers that know their formats -------------------------------------------------


def test_a_file_of_another_format_is_refused_and_nothing_is_created(person: Person) -> None:
    result = person("import", "aider", "/etc/hostname")
    assert (result.code, result.out) == (1, "")
    assert result.err == (
        'error: /etc/hostname: not an Aider chat history (expected "# aider chat started at" '
        "lines, in .aider.chat.history.md or another .md file); nothing imported\n"
    )
    empty = person.home / "run.traj"
    empty.write_text("")
    refused = person("import", "swe-agent", str(empty))
    assert refused.code == 1
    assert (
        refused.err
        == f"error: {empty}: not a SWE-agent trajectory (it is empty); nothing imported\n"
    )
    mixed = person("import", "codex-tui", str(TUI_LOG), "/etc/hostname")
    assert mixed.code == 1
    assert "not a Codex TUI session log" in mixed.err
    assert person("list").out == "No threads yet.\n"


def test_import_auto_says_the_format_it_chose_per_file(person: Person) -> None:
    refused = person("import", "auto", str(TUI_LOG), "/etc/hostname")
    assert refused.code == 1
    assert refused.err.startswith(
        "error: /etc/hostname: not a session file of a known format (none of codex, "
    )
    assert person("list").out == "No threads yet.\n"
    gemini = next((DATA / "gemini-cli").glob("*.json"))
    done = person("import", "auto", str(TUI_LOG), str(gemini))
    assert done.code == 0, done.err
    assert [line for line in done.err.splitlines() if line] == [
        f"{TUI_LOG}: Codex TUI session log (codex-tui)",
        f"{gemini}: Gemini CLI chat (gemini-cli)",
    ]
    assert done.out.splitlines()[0].startswith("Imported 2 file(s), 3 thread(s): 3 created")
    as_json = json.loads(person("import", "auto", str(TUI_LOG), "--json").out)
    assert as_json["formats"] == {str(TUI_LOG): "codex-tui"}
    assert len(as_json["unchanged"]) == 2


def test_the_codex_tui_log_imports_its_two_sessions_under_the_owner(person: Person) -> None:
    done = person("import", "codex-tui", str(TUI_LOG), "--json")
    assert done.code == 0, done.err
    created = json.loads(done.out)["created"]
    assert len(created) == 2
    assert not set(created) & set(TUI_SESSIONS)
    shown = {
        json.loads(person("show", tid, "--json").out)["metadata"]["title"]: tid for tid in created
    }
    assert set(shown) == {
        "complete the merge",
        "Why are the binaries produced by this project so large?",
    }
    document = json.loads(person("show", shown["complete the merge"], "--json").out)
    assert document["metadata"]["extra"]["source"]["session_thread_id"] == TUI_SESSIONS[0]
    assert document["model"] == "gpt-5-codex"
    again = json.loads(person("import", "codex-tui", str(TUI_LOG), "--json").out)
    assert (again["created"], sorted(again["unchanged"])) == ([], sorted(created))


# -- item 9: messages that say what to do -------------------------------------------------------


def test_a_thread_missing_or_deleted_on_the_server_is_said_in_words(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    missing = "T-00000000-0000-0000-0000-000000000000"
    result = person("show", missing)
    assert (result.code, result.out) == (1, "")
    assert (
        result.err == f"error: no thread {missing} on the server (or it is not shared with you).\n"
    )
    client = make_client(live_server.url, account)
    doomed = titled("Soon gone", str(ThreadId.new()))
    client.put_thread(doomed, base_version=0)
    client.delete_thread(str(doomed.id))
    gone = person("show", str(doomed.id))
    assert gone.code == 1
    assert gone.err == (
        f"error: thread {doomed.id} was deleted on the server (its id cannot be used again).\n"
    )


def test_errors_name_no_http_internals(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    for args in (["show", "T-00000000-0000-0000-0000-000000000000"], ["show", "beef"]):
        err = person(*args).err
        assert not [word for word in ("GET", "/api/", "404") if word in err], err


def test_export_to_a_missing_folder_says_cannot_write(person: Person) -> None:
    saved = person.agent().save(titled("Notes"))
    result = person("export", str(saved.id), "-o", "/nonexistent/x.md")
    assert (result.code, result.out) == (1, "")
    assert result.err == (
        "error: cannot write /nonexistent/x.md: no such folder (/nonexistent): create it first, "
        "or choose another path\n"
    )


def test_login_cuts_an_api_url_back_to_the_server(
    person: Person, live_server: LiveServer, account: str
) -> None:
    pasted = f"{live_server.url}/api/threads"
    result = person("login", "--server", pasted, "--token", account)
    assert result.code == 0, result.err
    assert result.err == f"Using {live_server.url}: the server's address, without /api/threads.\n"
    assert result.out.startswith(f"Logged in to {live_server.url} as ")
    assert (
        f'server_url = "{live_server.url}"' in (person.paths.config_dir / "config.toml").read_text()
    )
    assert person("list", "--server").code == 0  # no doubled path
    bare = person("login", "--server", "127.0.0.1:8080", "--token", account)
    assert bare.code == 2  # a usage mistake (issue 30 item 8), as a missing --token is
    assert bare.err == (
        "error: '127.0.0.1:8080' is not a server URL: give it with http:// or https://, e.g. "
        "`loomsync login --server http://127.0.0.1:8080 --token TOKEN`\n"
    )


def test_resume_never_prints_none(person: Person, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "first"], check=True)
    saved = person.agent().save(titled("No commit saved", workspace_root=str(repo)))
    result = person("resume", str(saved.id)[:12], "--workspace", str(repo))
    assert result.code == 0, result.err
    assert "None" not in result.out
    assert "(the thread was saved without a commit)" in result.out


def test_threads_saved_while_logged_out_show_local(person: Person) -> None:
    person.agent().save(titled("Offline work"))
    row = next(line for line in person("list").out.splitlines() if line.startswith("T-"))
    assert row.split()[-1] == "local"
    assert json.loads(person("list", "--json").out)[0]["sync"] == "local"


# -- item 10: conveniences ---------------------------------------------------------------------


def test_shell_completion_is_offered(person: Person) -> None:
    helped = person("--help")
    assert "--install-completion" in helped.out
    assert "--show-completion" in helped.out
    # Typer finds the shell among the process's ancestors (shellingham), as it is in a
    # terminal: run from a bash that stays the parent (``&& :`` keeps bash from exec-ing it),
    # not from whatever started pytest (a detached runner has no shell above it at all).
    shown = subprocess.run(
        ["bash", "-c", '"$0" --show-completion && :', str(LOOMSYNC)],
        env={**person.env, "SHELL": "/bin/bash"},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=person.home,
    )
    assert shown.returncode == 0, shown.stderr
    assert "_loomsync_completion" in shown.stdout


def _on_a_terminal(person: Person, *args: str, env: dict[str, str]) -> bytes:
    """``loomsync ARGS`` on a pseudo terminal (80 columns): what it wrote."""
    return on_a_terminal(person, *args, env=env)


def test_no_color_turns_colour_off_on_a_terminal(person: Person) -> None:
    saved = person.agent().save(titled("Colours"))
    coloured = _on_a_terminal(person, "show", str(saved.id), env={"TERM": "xterm-256color"})
    assert b"\x1b[3" in coloured  # a foreground colour
    plain = _on_a_terminal(
        person, "show", str(saved.id), env={"TERM": "xterm-256color", "NO_COLOR": "1"}
    )
    assert b"Colours" in plain
    assert b"\x1b[3" not in plain
    assert b"\x1b[9" not in plain


def test_serve_on_a_taken_port_says_so_before_a_token(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = home_env(tmp_path, LOOMSYNC_HOST="127.0.0.1", LOOMSYNC_PORT=str(port))
        done = subprocess.run(
            [str(Path(sys.executable).parent / "loomsync-server"), "serve"],
            env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path,
        )  # fmt: skip
    said = " ".join(done.stderr.split())
    assert done.returncode == 1, done.stderr
    assert f"Port {port} on 127.0.0.1 is already in use" in said
    assert "LOOMSYNC_PORT=" in said
    assert "--port" in said
    assert "token" not in (done.stdout + done.stderr).lower()
