"""``loomsync watch`` (issue 17 item 1): idle cost over many session files, and latency.

    .venv/bin/python -m bench.watch [--quick] [--record]

1. **Corpus**: 10,000 Claude Code session files (1,000 with ``--quick``) in a fresh HOME, in
   100 project folders, each file the first lines of the real transcript
   ``../shared/data/transcripts/claude-code/short.jsonl`` under its folder's session id (so
   100 threads: each file is read, parsed and compared at start-up, but the store and the
   sync queue hold 100 threads, not 10,000; a save's cost grows with the queue, which
   would measure the queue, not the watch).
2. **Idle**: ``loomsync watch`` (a subprocess, not logged in) imports them all (the start-up
   figure), then sits idle; its CPU (``/proc/<pid>/stat`` utime + stime) over a 30 s window
   (10 s quick) and its RSS. Floor, same run, same tree: a bare ``watchfiles.watch`` process
   (the library alone, no loomsync). Both with inotify and with the polling fallback.
   Target: under 1% of a core with inotify.
3. **Latency**: logged in to a real server (a uvicorn process on a fresh database), one new
   user line appended to a watched transcript at a time; the time until the thread file's last
   commit counts it (the local store) and until ``GET /api/threads/<id>`` does (the server).
   Floor: the time a bare ``watchfiles`` watcher takes to report the write. Targets: p95 under
   2 s to the store and 5 s to the server.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from bench.harness import Section, fresh_database, machine, percentiles, record, server_dsn
from bench.harness import uvicorn_server as _server

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / ".." / "shared" / "data" / "transcripts" / "claude-code" / "short.jsonl"
LOOMSYNC = Path(sys.executable).parent / "loomsync"
TICKS = os.sysconf("SC_CLK_TCK")
PROJECTS = 100  # folders, one session each (its files are copies of it)
LINES = 6  # of the source transcript in each file: a user turn and the start of an answer


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOOMSYNC_", "XDG_"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local/share"), XDG_STATE_HOME=str(home / ".local/state"))  # fmt: skip
    return env


def _session_of(lines: list[str]) -> str:
    return str(next(r["sessionId"] for r in map(json.loads, lines) if "sessionId" in r))


def make_corpus(home: Path, files: int) -> Path:
    """``files`` small real transcripts under ``home/.claude/projects``; returns that folder."""
    lines = SOURCE.read_text().splitlines(keepends=True)[:LINES]
    session = _session_of(lines)
    text = "".join(lines)
    root = home / ".claude" / "projects"
    sessions = [str(uuid.uuid4()) for _ in range(PROJECTS)]
    for index in range(files):
        folder = root / f"-home-bench-project{index % PROJECTS:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        new = sessions[index % PROJECTS]  # a copy of its folder's session: one thread each
        (folder / f"{uuid.uuid4()}.jsonl").write_text(text.replace(session, new))
    return root


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mib(pid: int) -> float:
    """Resident memory of a process, MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def idle_share(pid: int, seconds: float) -> float:
    """Share of one core the process used over ``seconds`` (0.01 = 1%)."""
    before = cpu_seconds(pid)
    time.sleep(seconds)
    return (cpu_seconds(pid) - before) / seconds


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> float:
    """Seconds until ``predicate`` held (polled every 5 ms); raises after ``timeout``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.005)
    raise RuntimeError(f"timed out waiting for {what}")


BARE = textwrap.dedent(
    """
    import sys, watchfiles
    for changes in watchfiles.watch(sys.argv[1], force_polling=sys.argv[2] == "poll",
                                    poll_delay_ms=1000, debounce=100, rust_timeout=1000,
                                    yield_on_timeout=True, watch_filter=None):
        for change in changes:
            print(change[1], flush=True)
    """
)


@contextmanager
def bare_watcher(root: Path, mode: str, out: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The floor: ``watchfiles.watch`` alone over ``root``, printing each changed path."""
    with open(out, "wb") as handle:
        process = subprocess.Popen([sys.executable, "-c", BARE, str(root), mode], stdout=handle)
    try:
        time.sleep(3)  # its watches are set up
        yield process
    finally:
        process.kill()
        process.wait()


@contextmanager
def watch_process(home: Path, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``loomsync watch`` with ``home``'s configuration, its stderr in ``log``."""
    with open(log, "wb") as handle:
        process = subprocess.Popen([str(LOOMSYNC), "watch"], env=_env(home), cwd=home,
                                   stdout=subprocess.DEVNULL, stderr=handle)  # fmt: skip
    try:
        yield process
    finally:
        process.terminate()
        process.wait(timeout=30)


def set_polling(home: Path, polling: str) -> None:
    config = home / ".config" / "loomsync" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    kept = [line for line in (config.read_text().splitlines() if config.exists() else [])
            if not line.startswith(("[watch]", "polling"))]  # fmt: skip
    config.write_text("\n".join([*kept, "[watch]", f'polling = "{polling}"', ""]))


def idle(section: Section, home: Path, files: int, window: float) -> None:
    root = make_corpus(home, files)
    log = home / "watch.log"
    for polling in ("never", "always"):
        set_polling(home, polling)
        log.write_text("")
        with watch_process(home, log) as process:
            began = time.monotonic()
            wait_until(lambda: "watching " in log.read_text(), 3600, "the first scan")
            ready = time.monotonic() - began
            time.sleep(2)
            share = idle_share(process.pid, window)
            rss = rss_mib(process.pid)
        mode = "inotify" if polling == "never" else "polling 1 s"
        with bare_watcher(
            root, "poll" if polling == "always" else "events", home / "bare.out"
        ) as bare:
            floor = idle_share(bare.pid, window)
            floor_rss = rss_mib(bare.pid)
        imported = log.read_text().count("imported ")
        what = f"{imported:,} imported" if imported else "a restart: offsets kept, 0 read"
        section.lines.append(
            f"  {mode:<12} start {ready:7.1f} s ({what})   idle CPU {share * 100:5.2f}% "
            f"of a core (floor watchfiles alone {floor * 100:5.2f}%)   RSS {rss:6.1f} MiB "
            f"(floor {floor_rss:5.1f} MiB, {rss / max(floor_rss, 0.1):.1f}x)"
        )
        if polling == "never":
            section.target(
                f"idle CPU with inotify over {files:,} files {share * 100:.2f}% < 1%", share < 0.01
            )


def _append_turn(path: Path, parent: str, session: str, number: int) -> str:
    line_id = str(uuid.uuid4())
    record = {"parentUuid": parent, "isSidechain": False, "userType": "external",
              "cwd": "/home/bench", "sessionId": session, "version": "2.0.0", "type": "user",
              "message": {"role": "user", "content": f"bench turn {number}"},
              "uuid": line_id, "timestamp": "2026-12-02T00:00:00.000Z"}  # fmt: skip
    with open(path, "a") as handle:
        handle.write(json.dumps(record) + "\n")
    return line_id


def latency(section: Section, home: Path, samples: int) -> None:
    from app.auth import create_token
    from app.config import Settings
    from loomsync.store import threadlog

    dsn = fresh_database(server_dsn(), "loomsync_bench_watch")
    with _server(dsn) as (base, secret):
        token = create_token(Settings(jwt_secret=secret, _env_file=None), "bench-watch")  # type: ignore[call-arg]
        done = subprocess.run([str(LOOMSYNC), "login", "--server", base, "--token", token],
                              env=_env(home), capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, done.stderr
        set_polling(home, "auto")
        folder = home / ".claude" / "projects" / "-home-bench-latency"
        folder.mkdir(parents=True)
        lines = SOURCE.read_text().splitlines(keepends=True)[:LINES]
        session = str(uuid.uuid4())
        path = folder / f"{session}.jsonl"
        path.write_text("".join(lines).replace(_session_of(lines), session))
        parent = json.loads(lines[-1])["uuid"]
        log = home / "latency.log"
        store_s: list[float] = []
        server_s: list[float] = []
        floor_s: list[float] = []
        threads = home / ".local" / "share" / "loomsync" / "threads"
        with (
            watch_process(home, log),
            httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as http,
        ):
            wait_until(
                lambda: "imported " in log.read_text() and "synced" in log.read_text(),
                120,
                "the first import",
            )
            [thread_file] = list(threads.glob("T-*.jsonl"))  # the one session of this HOME
            thread_id = thread_file.name.removesuffix(".jsonl")
            count = threadlog.read_head(thread_file).count
            url = f"/api/threads/{thread_id}"
            for number in range(samples):
                parent = _append_turn(path, parent, session, number)
                written = time.monotonic()
                count += 1
                wait_until(
                    lambda n=count: threadlog.read_head(thread_file).count >= n, 30, "the store"
                )
                store_s.append(time.monotonic() - written)
                wait_until(
                    lambda n=count: len(http.get(url).json()["conversation"]["messages"]) >= n,
                    60,
                    "the server",
                )
                server_s.append(time.monotonic() - written)
                time.sleep(0.5)
        out = home / "bare-latency.out"
        with bare_watcher(folder, "events", out):
            for number in range(samples):
                seen = out.read_text().count("\n")
                parent = _append_turn(path, parent, session, 1000 + number)
                written = time.monotonic()
                wait_until(lambda n=seen: out.read_text().count("\n") > n, 30, "the bare watcher")
                floor_s.append(time.monotonic() - written)
                time.sleep(0.3)
    for name, values in (("floor: watchfiles reports it", floor_s), ("in the local store", store_s),
                         ("on the server", server_s)):  # fmt: skip
        p50, p95 = percentiles(values)
        section.lines.append(
            f"  line written → {name:<28} p50 {p50 * 1000:7.0f} ms   p95 {p95 * 1000:7.0f} ms"
        )
    floor50 = percentiles(floor_s)[0]
    store50, store95 = percentiles(store_s)
    server95 = percentiles(server_s)[1]
    section.lines.append(
        f"  store p50 / floor p50: {store50 / max(floor50, 1e-3):.1f}x ({samples} samples)"
    )
    section.target(f"line → local store p95 {store95:.2f} s < 2 s", store95 < 2)
    section.target(f"line → server p95 {server95:.2f} s < 5 s", server95 < 5)


def run(*, quick: bool) -> Section:
    """Both measurements on fresh HOMEs; the section to print."""
    files = 1_000 if quick else 10_000
    section = Section(f"loomsync watch (issue 17 item 1): idle over {files:,} files, latency")
    section.lines.append(f"  machine: {machine()}")
    for name, job in (("idle", lambda h: idle(section, h, files, 10 if quick else 30)),
                      ("latency", lambda h: latency(section, h, 5 if quick else 20))):  # fmt: skip
        home = Path(tempfile.mkdtemp(prefix=f"bench-watch-{name}-"))
        try:
            job(home)
        finally:
            shutil.rmtree(home, ignore_errors=True)
    return section


def main() -> None:
    """``python -m bench.watch [--quick] [--record]``: print the section (append it to
    bench/RESULTS.md with ``--record``); exit 1 when a target was missed."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="1,000 files, fewer samples")
    parser.add_argument("--record", action="store_true", help="append to bench/RESULTS.md")
    args = parser.parse_args()
    section = run(quick=args.quick)
    lines = section.render()
    print("\n".join(lines))
    if args.record:
        command = ".venv/bin/python -m bench.watch" + (" --quick" if args.quick else "")
        record(section.title, command, lines[1:])
    sys.exit(1 if any(not met for _, met in section.targets) else 0)


if __name__ == "__main__":
    main()
