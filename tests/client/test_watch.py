"""``loomsync watch`` (issue 17 item 1) run as a subprocess with a fresh HOME, against a real
server: real Codex rollouts and Claude Code transcripts from ../shared/data/transcripts copied in
line by line (small sleeps, a line split across two writes) appear in the local store and on the
server with the right message counts; a kill -9 mid-file and a restart lose and duplicate
nothing; a file that is not a session is said once; the polling fallback imports too.

Also the importer fix behind it: importing a prefix of a growing Claude Code transcript, then
the whole file, updates one thread in place instead of forking it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from loomsync.importers import FORMATS, parse_file
from loomsync.importers.run import token_subject
from loomsync.store.local import LocalThreadStore
from tests.client import planted
from tests.client.conftest import LOOMSYNC, LiveServer, Person, login, wait_for

TRANSCRIPTS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "transcripts"
ROLLOUT = (
    TRANSCRIPTS
    / "codex-rollout"
    / ("rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl")
)
SHORT = TRANSCRIPTS / "claude-code" / "short.jsonl"
LONGER = TRANSCRIPTS / "claude-code" / "5c187f31.jsonl"
TOOL_HEAVY = TRANSCRIPTS / "claude-code" / "tool_heavy.jsonl"
GEMINI = TRANSCRIPTS / "gemini-cli" / "session-2025-12-01T21-45-5b959dae.json"
CLAUDE_DIR = Path(".claude") / "projects" / "-home-alice-shop"
CODEX_DIR = Path(".codex") / "sessions" / "2026" / "01" / "02"


class Watch:
    """One ``loomsync watch`` subprocess of ``person``, its stderr in a file."""

    def __init__(self, person: Person, *args: str) -> None:
        self.person = person
        self.log = person.home / f"watch-{time.monotonic_ns()}.log"
        with open(self.log, "wb") as err:
            self.process = subprocess.Popen(
                [str(LOOMSYNC), "watch", *args],
                env={**person.env, "COLUMNS": "80"},
                cwd=person.home,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        try:
            wait_for(lambda: "started: " in self.text(), what="the watch to start")
        except BaseException:
            self.kill()  # a watch that did not start is not left running
            raise

    def text(self) -> str:
        return self.log.read_text()

    def lines(self, needle: str) -> list[str]:
        return [line for line in self.text().splitlines() if needle in line]

    def stop(self) -> int:
        """SIGTERM, as systemd stops it: exit code 0."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=20)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=20)


@pytest.fixture
def watches() -> Iterator[list[Watch]]:
    started: list[Watch] = []
    yield started
    for watch in started:
        if watch.process.poll() is None:
            watch.kill()
        assert "Traceback" not in watch.text(), watch.text()


def copy_lines(
    source: Path, target: Path, *, pause: float = 0.01, lines: slice | None = None
) -> None:
    """Append ``source``'s lines (those of ``lines``) to ``target`` as an agent writes them:
    one write per line with a pause between, and each fourth line split across two writes."""
    target.parent.mkdir(parents=True, exist_ok=True)
    chosen = source.read_bytes().splitlines(keepends=True)[lines or slice(None)]
    with open(target, "ab") as handle:
        for number, line in enumerate(chosen):
            if number % 4 == 1 and len(line) > 40:
                handle.write(line[:30])
                handle.flush()
                time.sleep(pause * 3)  # the watch sees a half-written line here
                line = line[30:]
            handle.write(line)
            handle.flush()
            time.sleep(pause)


def expected(format_name: str, path: Path, token: str | None) -> dict[str, int]:
    """Thread id → message count of ``path`` imported under ``token``'s owner."""
    owner = token_subject(token) if token else None
    result = parse_file(FORMATS[format_name], path, owner=owner)
    return {str(thread.id): len(thread.messages) for thread in result.threads}


def local_counts(person: Person) -> dict[str, int]:
    store = LocalThreadStore(person.paths.threads_dir)
    try:
        return {summary.id: summary.message_count or 0 for summary in store.list(archived="all")}
    finally:
        store.close()


def server_counts(server: LiveServer, token: str, ids: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}) as http:
        for thread_id in ids:
            response = http.get(f"/api/threads/{thread_id}")
            if response.status_code == 200:
                found[thread_id] = len(response.json()["conversation"]["messages"])
    return found


def test_sessions_written_line_by_line_reach_the_store_and_the_server(
    person: Person, live_server: LiveServer, account: str, watches: list[Watch]
) -> None:
    assert login(person, live_server, account).code == 0
    watches.append(watch := Watch(person))
    rollout = person.home / CODEX_DIR / ROLLOUT.name
    transcript = person.home / CLAUDE_DIR / "0b7c1d2e-5f60-4a7b-8c9d-0e1f2a3b4c5d.jsonl"
    copy_lines(ROLLOUT, rollout)
    copy_lines(SHORT, transcript)
    want = {**expected("codex", rollout, account), **expected("claude-code", transcript, account)}
    assert len(want) == 2
    assert all(want.values())
    wait_for(lambda: local_counts(person) == want, timeout=10, what="the local store")
    ids = list(want)
    wait_for(lambda: server_counts(live_server, account, ids) == want, timeout=15,
             what="the server")  # fmt: skip
    assert watch.lines("imported")
    assert not watch.lines("ignored "), watch.text()
    assert watch.lines(" synced")
    assert watch.stop() == 0


def test_a_turn_written_reaches_the_store_within_2_s_and_the_server_within_5_s(
    person: Person, live_server: LiveServer, account: str, watches: list[Watch]
) -> None:
    assert login(person, live_server, account).code == 0
    transcript = person.home / CLAUDE_DIR / "short.jsonl"
    copy_lines(SHORT, transcript, lines=slice(0, 6))
    watches.append(Watch(person))
    [(thread_id, _)] = expected("claude-code", transcript, account).items()
    wait_for(lambda: thread_id in local_counts(person), what="the first turns")
    copy_lines(SHORT, transcript, lines=slice(6, None), pause=0)
    written = time.monotonic()
    [(_, count)] = expected("claude-code", transcript, account).items()
    wait_for(lambda: local_counts(person).get(thread_id) == count, timeout=10, what="the store")
    stored = time.monotonic() - written
    wait_for(lambda: server_counts(live_server, account, [thread_id]) == {thread_id: count},
             timeout=15, what="the server")  # fmt: skip
    sent = time.monotonic() - written
    assert stored < 2.0, stored
    assert sent < 5.0, sent


def test_kill_9_mid_file_and_restart_loses_and_duplicates_nothing(
    person: Person, live_server: LiveServer, account: str, watches: list[Watch]
) -> None:
    assert login(person, live_server, account).code == 0
    transcript = person.home / CLAUDE_DIR / "5c187f31.jsonl"
    rollout = person.home / CODEX_DIR / ROLLOUT.name
    total = len(LONGER.read_bytes().splitlines())
    watches.append(first := Watch(person))
    copy_lines(LONGER, transcript, lines=slice(0, total // 2))
    copy_lines(ROLLOUT, rollout, lines=slice(0, 12))
    wait_for(lambda: len(first.lines("imported")) >= 2, what="some imports")
    with open(transcript, "ab") as handle:  # killed while a line is half written
        handle.write(LONGER.read_bytes().splitlines(keepends=True)[total // 2][:50])
    first.kill()
    with open(transcript, "ab") as handle:
        handle.write(LONGER.read_bytes().splitlines(keepends=True)[total // 2][50:])
    copy_lines(LONGER, transcript, lines=slice(total // 2 + 1, total * 3 // 4), pause=0)
    watches.append(second := Watch(person))
    copy_lines(LONGER, transcript, lines=slice(total * 3 // 4, None))
    copy_lines(ROLLOUT, rollout, lines=slice(12, None))
    assert transcript.read_bytes() == LONGER.read_bytes()
    want = {**expected("claude-code", transcript, account), **expected("codex", rollout, account)}
    wait_for(lambda: local_counts(person) == want, timeout=15, what="exact local counts")
    wait_for(lambda: server_counts(live_server, account, list(want)) == want, timeout=15,
             what="exact server counts")  # fmt: skip
    assert not second.lines("forked"), second.text()
    assert second.stop() == 0
    store = LocalThreadStore(person.paths.threads_dir)
    try:
        for thread_id in want:  # no message twice: the stored thread is the file's, exactly
            stored = store.load(thread_id)
            assert len({m.model_dump_json() for m in stored.messages}) <= len(stored.messages)
            assert "forked_from" not in (stored.metadata.extra or {})
    finally:
        store.close()


def test_a_file_that_is_not_a_session_is_ignored_with_one_log_line(
    person: Person, watches: list[Watch]
) -> None:
    watches.append(watch := Watch(person))
    notes = person.home / CLAUDE_DIR / "notes.jsonl"
    notes.parent.mkdir(parents=True)
    for number in range(5):
        with open(notes, "a") as handle:
            handle.write(f'{{"note": {number}}}\n')
        time.sleep(0.15)
    transcript = person.home / CLAUDE_DIR / "short.jsonl"
    copy_lines(SHORT, transcript, pause=0)  # written after the notes: seen after them
    [count] = expected("claude-code", transcript, None).values()  # ids: the machine's key
    wait_for(lambda: list(local_counts(person).values()) == [count], what="the real session")
    assert len(watch.lines("notes.jsonl")) == 1, watch.text()
    assert not watch.lines("ignored ")[1:], watch.text()  # the session's first lines were not
    assert watch.lines("ignored")[0].startswith("ignored ")
    assert watch.lines("not logged in")


def test_short_junk_is_ignored_at_once_and_links_are_not_followed(
    person: Person, watches: list[Watch]
) -> None:
    """Newcomer findings 7 and 8: a one-line .jsonl that is not JSON and a binary file are
    each reported once without waiting for three lines; a link out of the folder is not read."""
    watches.append(watch := Watch(person, "--verbose"))
    folder = person.home / CLAUDE_DIR
    folder.mkdir(parents=True)
    (folder / "x.jsonl").write_text("hello there\n")
    (folder / "junk.jsonl").write_bytes(b"\x00\x01\x02binary")
    (folder / "link.jsonl").symlink_to(SHORT.resolve())  # a real session, but elsewhere
    wait_for(lambda: watch.lines("x.jsonl") and watch.lines("junk.jsonl"), what="both said")
    transcript = folder / "short.jsonl"
    copy_lines(SHORT, transcript, pause=0)
    [count] = expected("claude-code", transcript, None).values()
    wait_for(lambda: list(local_counts(person).values()) == [count], what="the real session")
    assert len(watch.lines("ignored ")) == 2, watch.text()
    assert not watch.lines("link.jsonl"), watch.text()


def test_polling_fallback_and_configured_folders(
    person: Person, live_server: LiveServer, account: str, watches: list[Watch]
) -> None:
    assert login(person, live_server, account).code == 0
    config = person.paths.config_file
    config.write_text(
        config.read_text()
        + '\n[watch]\npolling = "always"\npoll_interval = 0.2\n'
        + 'claude_code = ["agents/claude"]\nfolders = ["more"]\n'
    )
    watches.append(watch := Watch(person))
    transcript = person.home / "agents" / "claude" / "p" / "short.jsonl"
    copy_lines(SHORT, transcript)
    gemini = person.home / "more" / "chats" / GEMINI.name  # any format, recognised
    gemini.parent.mkdir(parents=True)
    shutil.copy(GEMINI, gemini)
    ignored = person.home / CLAUDE_DIR / "short.jsonl"  # the default folder is replaced
    copy_lines(SHORT, ignored, pause=0)
    want = {
        **expected("claude-code", transcript, account),
        **expected("gemini-cli", gemini, account),
    }
    wait_for(lambda: local_counts(person) == want, timeout=10, what="the polled imports")
    # said after the first scan of the folders, which may still be logging its last one
    wait_for(lambda: watch.lines("polling every 0.2 s"), what="the polling line")
    assert len(watch.lines("polling every 0.2 s")) == 1, watch.text()  # once (finding 8)
    wait_for(lambda: server_counts(live_server, account, list(want)) == want, timeout=15,
             what="the server")  # fmt: skip


def test_a_replaced_file_is_read_again_from_its_start(person: Person, watches: list[Watch]) -> None:
    transcript = person.home / CLAUDE_DIR / "short.jsonl"
    copy_lines(SHORT, transcript, pause=0, lines=slice(0, 8))
    watches.append(watch := Watch(person))
    [first] = expected("claude-code", transcript, None).values()  # ids: the machine's key
    wait_for(lambda: list(local_counts(person).values()) == [first], what="the first capture")
    watch.stop()
    replacement = transcript.with_suffix(".tmp")
    shutil.copy(SHORT, replacement)
    os.replace(replacement, transcript)  # another inode, more lines: read from byte 0
    watches.append(Watch(person))
    [count] = expected("claude-code", transcript, None).values()
    assert count > first
    wait_for(lambda: list(local_counts(person).values()) == [count], what="the whole file")


def test_importing_a_growing_claude_code_transcript_twice_updates_it_in_place(
    person: Person, live_server: LiveServer, account: str
) -> None:
    """The cut falls between two lines of one assistant message (Claude Code writes a line
    per content block): the second import grows that message instead of forking the thread."""
    assert login(person, live_server, account).code == 0
    transcript = person.home / "session" / "short.jsonl"
    copy_lines(SHORT, transcript, pause=0, lines=slice(0, 6))
    first = expected("claude-code", transcript, account)
    assert person("import", "claude-code", str(transcript)).code == 0
    copy_lines(SHORT, transcript, pause=0, lines=slice(6, None))
    whole = expected("claude-code", transcript, account)
    assert first.keys() == whole.keys()
    assert first != whole
    done = person("import", "claude-code", str(transcript))
    assert done.code == 0, done.err
    assert "1 updated" in done.out, done.out
    assert "forked 0;" in done.out, done.out
    assert local_counts(person) == whole
    assert server_counts(live_server, account, list(whole)) == whole


def test_credentials_in_a_watched_session_never_reach_the_files_or_the_server(
    person: Person, live_server: LiveServer, account: str, watches: list[Watch]
) -> None:
    """The planted transcript (tests/client/planted.py) written line by line: what the watch
    stores and sends is redacted, every appended turn included (the store's save redacts the
    new messages, issue 12)."""
    assert login(person, live_server, account).code == 0
    source, _ = planted.session_copy(person.home / "elsewhere", "nobody")
    watches.append(Watch(person))
    transcript = person.home / CLAUDE_DIR / source.name
    copy_lines(source, transcript, pause=0.005)
    want = expected("claude-code", transcript, account)
    wait_for(lambda: server_counts(live_server, account, list(want)) == want, timeout=15,
             what="the server")  # fmt: skip
    with httpx.Client(
        base_url=live_server.url, headers={"Authorization": f"Bearer {account}"}
    ) as http:
        bodies = "".join(http.get(f"/api/threads/{thread_id}").text for thread_id in want)
    files = "".join(p.read_text() for p in person.paths.threads_dir.glob("T-*.jsonl"))
    assert "[REDACTED:" in bodies
    assert "[REDACTED:" in files
    leaked = [kind for kind, value in planted.every_value() if value in bodies or value in files]
    assert leaked == []


def test_an_invalid_watch_configuration_is_refused_in_words(person: Person) -> None:
    person.paths.config_file.parent.mkdir(parents=True)
    person.paths.config_file.write_text('[watch]\npolling = "sometimes"\n')
    done = person("watch")
    assert done.code == 1
    assert done.err.startswith("error: invalid client configuration: watch.polling"), done.err


def test_a_thread_deleted_here_is_not_made_again_by_the_watch(
    person: Person, watches: list[Watch]
) -> None:
    """Newcomer finding 2: a session the person deleted stays deleted as the agent writes on."""
    transcript = person.home / CLAUDE_DIR / "short.jsonl"
    copy_lines(SHORT, transcript, pause=0, lines=slice(0, 8))
    watches.append(watch := Watch(person))
    [first] = expected("claude-code", transcript, None).values()
    wait_for(lambda: list(local_counts(person).values()) == [first], what="the first capture")
    watch.stop()
    [thread_id] = local_counts(person)
    assert person("delete", thread_id, "--yes").code == 0
    copy_lines(SHORT, transcript, pause=0, lines=slice(8, None))
    watches.append(again := Watch(person))
    wait_for(lambda: again.lines("skipped "), what="the skip to be said")
    assert local_counts(person) == {}
    assert again.lines("skipped ")[0].startswith(f"skipped {thread_id}: you deleted it")


def test_a_second_watch_on_the_same_store_refuses_and_a_killed_one_does_not_block(
    person: Person, watches: list[Watch]
) -> None:
    """Newcomer finding 2: two watches on one store saved copies of one session; the second
    now exits 1 naming the first's PID, and a lock left by kill -9 blocks nothing."""
    watches.append(first := Watch(person))
    second = person("watch")
    assert second.code == 1, second.err
    assert second.err.startswith(
        f"error: loomsync watch is already running (PID {first.process.pid}) on this store"
    ), second.err
    assert "Traceback" not in second.err
    first.kill()
    watches.append(third := Watch(person))  # the kernel dropped the killed one's lock
    transcript = person.home / CLAUDE_DIR / "short.jsonl"
    copy_lines(SHORT, transcript, pause=0)
    [count] = expected("claude-code", transcript, None).values()
    wait_for(lambda: list(local_counts(person).values()) == [count], what="the capture")
    assert third.stop() == 0


def test_a_truncated_transcript_written_again_updates_the_same_thread(
    person: Person, live_server: LiveServer, account: str, watches: list[Watch]
) -> None:
    """Newcomer finding 1: a Claude Code file cut to its first 15 lines and written again line
    by line is read again from its start and updates its one thread (locally and on the
    server), never saved as copies."""
    assert login(person, live_server, account).code == 0
    transcript = person.home / CLAUDE_DIR / TOOL_HEAVY.name
    watches.append(watch := Watch(person))
    copy_lines(TOOL_HEAVY, transcript, pause=0)
    want = expected("claude-code", transcript, account)
    [(thread_id, count)] = want.items()
    wait_for(lambda: server_counts(live_server, account, [thread_id]) == want, timeout=15,
             what="the whole file on the server")  # fmt: skip
    lines = TOOL_HEAVY.read_bytes().splitlines(keepends=True)
    transcript.write_bytes(b"".join(lines[:15]))
    wait_for(lambda: watch.lines("was truncated or replaced"), what="the truncation seen")
    time.sleep(2)  # a shorter capture would be saved and synced meanwhile
    copy_lines(TOOL_HEAVY, transcript, pause=0.3, lines=slice(15, None))
    assert transcript.read_bytes() == TOOL_HEAVY.read_bytes()
    wait_for(lambda: local_counts(person) == want, timeout=10, what="one thread, whole")
    time.sleep(1.5)  # a copy would be saved and queued by now
    assert local_counts(person) == want
    assert not watch.lines("copy was saved"), watch.text()
    after = watch.text().split("was truncated or replaced", 1)[1].splitlines()
    shorter = [line for line in after if "imported " in line and f" {count} messages" not in line]
    assert shorter == [], watch.text()  # never shortened here (nor sent shortened) meanwhile
    with httpx.Client(
        base_url=live_server.url, headers={"Authorization": f"Bearer {account}"}
    ) as http:
        listed = http.get("/api/threads", params={"limit": 100}).json()
    ids = [item["id"] for item in listed["threads"]]
    assert ids == [thread_id], listed
    assert server_counts(live_server, account, [thread_id]) == {thread_id: count}


def test_a_logout_stops_sending_and_a_login_starts_again(
    person: Person, live_server: LiveServer, account: str, watches: list[Watch]
) -> None:
    """Newcomer finding 3: a running watch reads the login again (LOGIN_CHECK_SECONDS), so
    after ``loomsync logout`` a new session stays here, and ``loomsync login`` sends it."""
    assert login(person, live_server, account).code == 0
    watches.append(watch := Watch(person))
    first = person.home / CLAUDE_DIR / "short.jsonl"
    copy_lines(SHORT, first)
    [(first_id, first_count)] = expected("claude-code", first, account).items()
    wait_for(lambda: server_counts(live_server, account, [first_id]) == {first_id: first_count},
             timeout=15, what="the first session on the server")  # fmt: skip
    assert person("logout").code == 0
    wait_for(lambda: watch.lines("the login changed: logged out"), what="the watch to notice")
    later = person.home / CLAUDE_DIR / "5c187f31.jsonl"
    copy_lines(LONGER, later, pause=0)
    [later_count] = expected("claude-code", later, account).values()
    wait_for(lambda: later_count in local_counts(person).values(), what="the store")
    [later_id] = set(local_counts(person)) - {first_id}  # its id: the owner the import keeps
    time.sleep(2.0)  # what a logged-in watch takes well under (test above: < 5 s)
    assert server_counts(live_server, account, [later_id]) == {}
    assert watch.lines("not logged in: sessions are kept here")
    assert login(person, live_server, account).code == 0
    wait_for(lambda: server_counts(live_server, account, [later_id]) == {later_id: later_count},
             timeout=15, what="the later session on the server after the login")  # fmt: skip
    assert watch.lines("the login changed: sending again")
    assert watch.stop() == 0
