"""Issue 11 item 13: no terminal injection from thread text, file names or server messages.

A thread full of terminal controls (ESC sequences, C1 controls, BEL/BS/CR, bidi overrides, line
separators) and rich markup is stored on the real server, then pulled, shown, listed, searched
and exported by the ``loomsync`` command. The raw bytes of every human-readable output must hold
none of those characters, only their visible escapes; ``--json`` output must still hold the
exact text. Output is a pipe here, so rich writes no escape codes of its own: any ESC in it is
injected. (:func:`test_a_real_terminal_gets_rich_styles_but_no_injected_sequence` covers a tty.)
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from rich.text import Text

from app.auth import create_token
from app.config import Settings
from loomsync import Thread
from loomsync.core.document import codec
from loomsync.core.document.ids import ThreadId
from loomsync.export import to_markdown
from loomsync.terminal import TerminalConsole, json_text, printable
from tests.client.conftest import LOOMSYNC, LiveServer, Person, login, make_client

#: Each hostile piece and the visible escape it must show as.
PIECES = {
    "\x1b[2J": "\\x1b[2J",  # clear the screen
    "\x1b[1;1H": "\\x1b[1;1H",  # cursor home
    "\x1b]52;c;cm0gLXJmIH4K\x07": "\\x1b]52;c;cm0gLXJmIH4K\\x07",  # OSC 52: write the clipboard
    "\x1b]8;;https://evil.example/\x1b\\": "\\x1b]8;;https://evil.example/\\x1b\\",  # OSC 8 link
    "\x9b31m": "\\x9b31m",  # 8-bit CSI (C1)
    "\x85": "\\x85",  # NEL (C1)
    "\x08\x08": "\\x08\\x08",  # backspaces
    "\rOVERWRITE": "\\rOVERWRITE",  # carriage return over the line
    "\u202eevil\u202c": "\\u202eevil\\u202c",  # right-to-left override
    "\u2066iso\u2069": "\\u2066iso\\u2069",  # isolate
    "\u2028": "\\u2028",  # line separator
}
HOSTILE = "".join(PIECES)
MARKUP = "[red]Plan[/red] [link=https://evil.example]click[/link] :warning:"
TITLE = f"{MARKUP} {HOSTILE}"
#: What no human-readable output may hold; a tab only where message bodies keep their layout.
ACTIVE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


@dataclass
class Raw:
    code: int
    out: str
    err: str


def run(person: Person, *args: str, env: dict[str, str] | None = None) -> Raw:
    """``loomsync`` with raw bytes kept (no newline translation, which would hide a CR); wide,
    so that no table cell folds."""
    done = subprocess.run(
        [str(LOOMSYNC), *args],
        env={**person.env, "COLUMNS": "400", **(env or {})},
        capture_output=True,
        timeout=60,
        cwd=person.home,
    )
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")  # strict: valid UTF-8
    assert "Traceback" not in err, err
    return Raw(done.returncode, out, err)


def assert_inert(text: str, *, tabs: bool = False) -> None:
    """No character of ``text`` acts on a terminal (a tab only if ``tabs``)."""
    found = {char for char in ACTIVE.findall(text) if not (tabs and char == "\t")}
    assert not found, f"reached the terminal: {sorted(found)!r}"


def assert_fields(text: str, count: int) -> None:
    """Every line of piped table output ``text`` has ``count`` tab-separated fields (a tab or
    newline inside a field never makes another)."""
    assert text.endswith("\n")
    assert {len(line.split("\t")) for line in text[:-1].split("\n")} == {count}


def assert_escaped(text: str) -> None:
    """Every hostile piece shows as its visible escape."""
    missing = [shown for shown in PIECES.values() if shown not in text]
    assert not missing, f"escapes missing: {missing!r}"


def hostile_thread(**fields: object) -> Thread:
    return Thread.model_validate(
        {
            "id": str(ThreadId.new()),
            "metadata": {"title": TITLE, "tags": [f"tag{HOSTILE}", "[bold]tag[/bold]"]},
            "workspace_root": f"/home/me/webapp{HOSTILE}",
            "git_branch": f"feature/{HOSTILE}",
            "conversation": {
                "messages": [
                    {"role": "user", "content": f"quokka {HOSTILE}\nsecond line\tafter a tab"},
                    {
                        "role": "assistant",
                        "content": f"Let me look {MARKUP}.",
                        "tool_calls": [
                            {
                                "id": "c1",
                                "tool_name": f"shell{HOSTILE}",
                                "arguments_json": {"command": [f"ls{HOSTILE}"]},
                            }
                        ],
                    },
                    {
                        "role": "tool",
                        "tool_call_id": "c1",
                        "tool_name": f"shell{HOSTILE}",
                        "content": f"login.py\n{HOSTILE}\nREADME.md",
                    },
                ]
            },
            **fields,
        }
    )


@pytest.fixture
def pulled(person: Person, live_server: LiveServer, account: str) -> str:
    """The hostile thread, stored on the server from another machine, pulled by ``sync``."""
    stored = make_client(live_server.url, account).put_thread(hostile_thread(), base_version=0)
    assert login(person, live_server, account).code == 0
    synced = run(person, "sync")
    assert synced.code == 0, synced.err
    assert synced.out.startswith("Sent 0, pulled 1"), synced.out
    return str(stored.id)


def test_show_prints_hostile_text_as_visible_escapes(person: Person, pulled: str) -> None:
    for args in (["show", pulled], ["show", pulled, "--full"]):
        shown = run(person, *args)
        assert shown.code == 0, shown.err
        assert_inert(shown.out, tabs=True)
        assert_inert(shown.err)
        assert_escaped(shown.out)
        lines = shown.out.split("\n")
        assert lines[0] == printable(TITLE)  # the title is one line, markup and all
        assert "Tags: " + printable(f"tag{HOSTILE}, [bold]tag[/bold]") in lines
        assert f"Git: {printable('feature/' + HOSTILE)}" in lines
        assert any(re.fullmatch(r"second line +after a tab", x) for x in lines)  # layout kept
        assert f"Let me look {MARKUP}." in lines
        assert f"→ shell{printable(HOSTILE)} " in shown.out


def test_list_prints_one_line_per_thread_with_markup_literal(person: Person, pulled: str) -> None:
    listing = run(person, "list")
    assert listing.code == 0, listing.err
    assert_inert(listing.out, tabs=True)  # piped: tabs separate the fields, and only they
    assert_inert(listing.err)
    assert_fields(listing.out, 6)
    row = next(line for line in listing.out.split("\n") if line.startswith(pulled))
    assert row.split("\t")[1] == printable(TITLE)
    assert row.split("\t")[-1] == "synced"
    assert sum(line.startswith("T-") for line in listing.out.split("\n")) == 1
    remote = run(person, "list", "--server")
    assert remote.code == 0, remote.err
    assert_inert(remote.out, tabs=True)
    assert_fields(remote.out, 6)
    remote_row = next(x for x in remote.out.split("\n") if x.startswith(pulled))
    assert remote_row.split("\t")[1] == printable(TITLE)


def test_resume_summary_is_inert(person: Person, pulled: str) -> None:
    resumed = run(person, "resume", pulled, "--workspace", str(person.home))
    assert resumed.code == 0, resumed.err
    assert_inert(resumed.out)
    assert resumed.out.startswith(f'Resuming thread {pulled} "{printable(TITLE)}" (3 messages')
    summary = json.loads(run(person, "resume", pulled, "--json").out)["summary"]
    assert f'"{TITLE}"' in summary[0]  # --json keeps the exact text


def test_search_prints_title_and_snippet_as_visible_escapes(person: Person, pulled: str) -> None:
    found = run(person, "search", "quokka")
    assert found.code == 0, found.err
    assert_inert(found.out)
    assert_inert(found.err)
    lines = found.out.rstrip("\n").split("\n")
    assert lines[0] == "1 thread found on the server for 'quokka'"
    assert lines[1].startswith(f"{pulled}  {printable(TITLE)}  score ")
    assert lines[2].startswith("    message 0: ")
    assert "quokka" in lines[2]
    assert len(lines) == 3
    local = run(person, "search", "quokka", "--local")
    assert_inert(local.out)
    assert "\\x1b[2J" in local.out.split("\n")[2]  # the local snippet holds the escapes too


def test_markdown_export_is_inert_on_stdout_and_in_a_file(
    person: Person, pulled: str, tmp_path: Path
) -> None:
    exported = run(person, "export", pulled, "--format", "markdown")
    assert exported.code == 0, exported.err
    assert_inert(exported.out, tabs=True)
    assert_escaped(exported.out)
    target = tmp_path / "out.md"
    written = run(person, "export", pulled, "--format", "markdown", "--output", str(target))
    assert written.code == 0, written.err
    assert_inert(written.err)
    text = target.read_bytes().decode("utf-8")
    assert text == exported.out
    assert text.startswith(f"# `{printable(TITLE)}`\n")  # markup shown as code, literally
    assert f"- **Git:** `{printable('feature/' + HOSTILE)}`\n" in text


def test_json_output_keeps_the_exact_text(person: Person, pulled: str) -> None:
    document = run(person, "show", pulled, "--json")
    assert not re.search(f"[\x1b\x7f-\x9f{BIDI}\u2028\u2029]", document.out)  # escaped as \\u
    thread = codec.decode_thread(document.out)
    assert thread.metadata.title == TITLE
    assert thread.git_branch == f"feature/{HOSTILE}"
    assert thread.messages[0].content == f"quokka {HOSTILE}\nsecond line\tafter a tab"
    assert thread.messages[1].tool_calls[0].arguments_json == {"command": [f"ls{HOSTILE}"]}
    assert json.loads(run(person, "list", "--json").out)[0]["title"] == TITLE
    hits = json.loads(run(person, "search", "quokka", "--json").out)["hits"]
    assert [hit["thread"]["title"] for hit in hits] == [TITLE]
    exported = run(person, "export", pulled, "--format", "json").out
    assert codec.decode_thread(exported).messages[2].content == f"login.py\n{HOSTILE}\nREADME.md"


def test_another_users_public_thread_shown_by_id_is_inert(
    person: Person, live_server: LiveServer, account: str, settings: Settings
) -> None:
    mallory = create_token(settings, f"mallory-{account[-8:]}", org="evil")
    public = make_client(live_server.url, mallory).put_thread(
        hostile_thread(visibility="public"), base_version=0
    )
    assert login(person, live_server, account).code == 0
    shown = run(person, "show", str(public.id))
    assert shown.code == 0, shown.err
    assert_inert(shown.out, tabs=True)
    assert_escaped(shown.out)
    assert shown.out.split("\n")[0] == printable(TITLE)


class _HostileHandler(BaseHTTPRequestHandler):
    """A server that refuses everything with a problem whose title and detail are hostile."""

    def _refuse(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        status = 422
        body = json.dumps(
            {"type": "about:blank", "title": f"No{HOSTILE}", "status": status,
             "detail": f"{MARKUP} refused{HOSTILE}", "code": "invalid_request"}
        ).encode()  # fmt: skip
        self.send_response(status)
        self.send_header("Content-Type", "application/problem+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_PUT = do_POST = do_PATCH = do_DELETE = _refuse

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


@pytest.fixture
def hostile_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HostileHandler)
    worker = threading.Thread(target=server.serve_forever, daemon=True)
    worker.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_server_problem_details_print_as_visible_escapes(
    person: Person, hostile_server: str
) -> None:
    refused = run(person, "login", "--server", hostile_server, "--token", "t")
    assert refused.code == 1
    assert_inert(refused.err)
    assert refused.err.startswith("error: ")
    assert refused.err.count("\n") == 1  # one line
    assert f"{MARKUP} refused{printable(HOSTILE)}" in refused.err

    person.agent().save(Thread(metadata={"title": "fine"}))
    env = {"LOOMSYNC_SERVER_URL": hostile_server, "LOOMSYNC_TOKEN": "t"}
    synced = run(person, "sync", "--no-pull", env=env)
    assert synced.code == 1
    assert_inert(synced.out)
    assert_inert(synced.err)
    assert f"{MARKUP} refused{printable(HOSTILE)}" in synced.out
    status = run(person, "sync", "--status", env=env)
    assert_inert(status.out, tabs=True)
    assert f"{MARKUP} refused{printable(HOSTILE)}" in status.out
    assert len(status.out.rstrip("\n").split("\n")) == 3  # summary, header, one row
    assert_fields(status.out.split("\n", 1)[1], 6)


def test_file_names_in_errors_and_import_warnings_are_inert(person: Person) -> None:
    name = f"evil{HOSTILE.replace('/', '')}.json"
    (person.home / name).write_text("{not json")
    shown = run(person, "show", name)
    assert shown.code == 1
    assert_inert(shown.err)
    assert printable(name) in shown.err
    imported = run(person, "import", "codex", name, "--dry-run")  # not a rollout: refused
    assert imported.code == 1, imported.err
    assert_inert(imported.out)
    assert_inert(imported.err)
    assert printable(name) in imported.err


def test_a_real_terminal_gets_rich_styles_but_no_injected_sequence() -> None:
    screen = io.StringIO()
    console = TerminalConsole(file=screen, force_terminal=True, color_system="truecolor")
    console.print(Text(TITLE, style="bold"), MARKUP, f"[red]{HOSTILE}[/red]")
    written = screen.getvalue()
    assert "\x1b[1m" in written  # rich's own style codes are kept
    for sequence in ("\x1b[2J", "\x1b]", "\x07", "\x9b", "\u202e", "\u2028"):
        assert sequence not in written
    assert MARKUP in written
    assert "[red]" in written
    assert "\\x1b[2J" in written


def markdown_headings(document: str) -> list[str]:
    """Top-level h1/h2 headings of a Markdown document, as a CommonMark viewer shows them."""
    tokens = MarkdownIt("commonmark").parse(document)
    return [
        f"{'#' * int(tokens[i].tag[1])} {tokens[i + 1].content}"
        for i in range(len(tokens))
        if tokens[i].type == "heading_open"
        and tokens[i].level == 0
        and tokens[i].tag in ("h1", "h2")
    ]


def test_markdown_bodies_cannot_forge_or_swallow_the_transcript_structure() -> None:
    forgeries = [
        "## Assistant\n\nI ran `rm -rf ~` for you.",  # a forged turn
        "Fine.\n\nAssistant\n---------\nforged setext heading",
        "```\nan unclosed fence swallows every message after it",
        "<!-- an unclosed comment hides the rest",
        '<img src="https://evil.example/pixel.png"> a tracking pixel',
        "# Fake title\n\nText under it.",
        "[docs]: https://evil.example/\n\nA reference that would retarget [docs] elsewhere.",
    ]
    messages = [{"role": "user", "content": text} for text in forgeries]
    messages.append({"role": "assistant", "content": "The real answer, see [docs]."})
    thread = Thread.model_validate(
        {
            "metadata": {"title": "Real title\n## Assistant"},
            "conversation": {"messages": messages},
        }
    )
    document = to_markdown(thread)
    assert markdown_headings(document) == [
        "# `Real title\\n## Assistant`",
        *["## User"] * len(forgeries),
        "## Assistant",
    ]
    assert "#### Assistant\n\nI ran `rm -rf ~` for you." in document  # headings nest lower
    assert "### Fake title" in document
    html = MarkdownIt("commonmark").render(document)
    assert "<img" not in html  # raw HTML is shown as code, never run
    assert "<!--" not in html
    assert "<p>The real answer, see [docs].</p>" in html  # no link to evil.example


ACTIVE_CHARS = st.one_of(
    st.characters(min_codepoint=0, max_codepoint=0x1F),
    st.characters(min_codepoint=0x7F, max_codepoint=0x9F),
    st.sampled_from([*BIDI, "\u2028", "\u2029"]),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
)
ANY_TEXT = st.text(st.one_of(st.characters(), ACTIVE_CHARS))


@given(ANY_TEXT)
def test_printable_never_lets_a_control_character_through(text: str) -> None:
    body = printable(text, multiline=True)
    assert not ACTIVE.search(body.replace("\t", " ")), repr(body)
    assert not re.search("[\ud800-\udfff]", body)
    one_line = printable(text)
    assert not ACTIVE.search(one_line)  # no tab either
    assert "\n" not in one_line
    body.encode("utf-8")  # always writable


#: Ordinary text: every printable character of every script, spaces, emoji sequences (ZWJ,
#: variation selectors, tag characters), private-use glyphs, unassigned code points.
ORDINARY = st.text(
    st.characters(
        exclude_categories=("Cc", "Cs", "Zl", "Zp"),
        exclude_characters=BIDI,
    )
)


@given(ORDINARY)
def test_printable_is_the_identity_on_ordinary_text(text: str) -> None:
    assert printable(text) == text
    assert printable(text, multiline=True) == text


@pytest.mark.parametrize(
    "text",
    [
        "修复登录重定向 ログイン 로그인",
        "👩‍👩‍👧‍👦 🏴󠁧󠁢󠁳󠁣󠁴󠁿 ❤️ 🇯🇵",
        "C:\\Users\\me\\x1b is literal text",
        "مرحبا بالعالم עברית",
        "\ue0b0 nerd-font glyph, non\u00a0breaking, soft\u00adhyphen",
    ],
)
def test_printable_keeps_real_text_as_written(text: str) -> None:
    assert printable(text) == text
    assert printable(text + "\nline two\tcol", multiline=True) == text + "\nline two\tcol"


@given(ANY_TEXT)
def test_json_text_is_the_same_data_and_inert(text: str) -> None:
    written = json_text(codec.dumps({"t": text}, pretty=True))
    assert not ACTIVE.search(written.replace("\n", " "))
    assert codec.loads(written) == {"t": text}
