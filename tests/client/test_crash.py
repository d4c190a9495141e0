"""kill -9 in the middle of saves, and two processes saving one thread: files stay whole.

Real processes: a zygote (tests/client/crash_worker.py) imports loomsync once and forks the
savers, so twenty kills cost milliseconds each instead of an interpreter start each.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from loomsync import LocalThreadStore, SyncingThreadStore
from loomsync.store import threadlog
from loomsync.store.api import read_thread_file
from tests.client.crash_worker import LOOP_ID, RACE_ID
from tests.client.queuefile import queue_rows

MAIN = Path(__file__).resolve().parents[2]
KILLS = 20
LINE_TIMEOUT = 30.0  # seconds to wait for one line from the zygote


class Zygote:
    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.client.crash_worker", str(root)],
            cwd=MAIN,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.stdin: IO[str] = self.process.stdin
        self.stdout: IO[str] = self.process.stdout

    def send(self, command: str) -> None:
        self.stdin.write(command + "\n")
        self.stdin.flush()

    def line(self) -> str:
        result: list[str] = []
        reader = threading.Thread(target=lambda: result.append(self.stdout.readline()))
        reader.start()
        reader.join(LINE_TIMEOUT)
        if not result or not result[0]:
            pytest.fail("the crash worker stopped answering")
        return result[0].strip()

    def close(self) -> None:
        self.send("quit")
        self.process.wait(timeout=10)


@pytest.fixture
def zygote(tmp_path: Path) -> Iterator[Zygote]:
    worker = Zygote(tmp_path)
    yield worker
    worker.close()


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".tmp")]


def test_kill_9_in_the_middle_of_saves_never_loses_more_than_the_save_in_flight(
    zygote: Zygote, tmp_path: Path
) -> None:
    rng = random.Random(7)
    thread_file = tmp_path / "threads" / f"{LOOP_ID}.jsonl"
    saved = 0
    for _ in range(KILLS):
        zygote.send("loop")
        pid = int(zygote.line().split()[1])
        target = saved + rng.randint(1, 6)
        while True:
            line = zygote.line()
            saved = int(line.split()[1])
            if saved >= target:
                break
        os.kill(pid, signal.SIGKILL)
        while (line := zygote.line()) != f"exit {pid}":
            saved = int(line.split()[1])  # saves reported after we decided to kill

        thread = read_thread_file(thread_file)  # every commit readable, a torn save never served
        on_disk = len(thread.messages)
        assert threadlog.read_head(thread_file).count == on_disk
        assert saved <= on_disk <= saved + 1
        assert [m.content.split()[1] for m in thread.messages] == [str(i) for i in range(on_disk)]
        saved = on_disk
        assert queue_rows(tmp_path / "sync")[0]["thread_id"] == LOOP_ID

    (tmp_path / "threads" / f".{LOOP_ID}.jsonl.99999.0badf00d.tmp").write_text(
        '{"torn'
    )  # one for sure
    assert temp_files(tmp_path)
    store = SyncingThreadStore(
        LocalThreadStore(tmp_path / "threads"), None, sync_dir=tmp_path / "sync", background=False
    )
    assert temp_files(tmp_path) == []
    assert len(store.load(str(LOOP_ID)).messages) == saved


def test_two_processes_saving_one_thread_500_times_each_always_leave_it_parseable(
    zygote: Zygote, tmp_path: Path
) -> None:
    path = tmp_path / "race" / f"{RACE_ID}.jsonl"
    zygote.send("race 500")
    reads = 0
    finished: list[str] = []
    reader = threading.Thread(target=lambda: finished.append(zygote.line()))
    reader.start()
    while reader.is_alive():
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        content = threadlog.parse(data)[1][0]["content"]  # always a whole commit
        assert content.split()[0] in ("a", "b")
        reads += 1
    assert finished == ["done 0 0"]
    assert reads > 50
    assert temp_files(tmp_path) == []
    assert read_thread_file(path).messages[0].content.split()[1] == "499"
