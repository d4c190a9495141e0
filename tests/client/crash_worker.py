"""Crash-test helper: a zygote that imports loomsync once, then forks real processes that save
in a loop, for test_crash.py to kill with SIGKILL.

Run ``python -m tests.client.crash_worker ROOT`` and write commands on stdin, one a line:

``loop``
    Fork a child that loads thread LOOP_ID (or starts it), then forever appends ``turn N`` and
    saves through a SyncingThreadStore (no server), writing ``saved N`` (messages on disk) after
    each save. The zygote writes ``child PID`` first and ``exit PID`` once the child is dead.
``race N``
    Fork two children that each save their own copy of thread RACE_ID N times through a
    LocalThreadStore; ``done`` when both have finished.

Everything is written with one ``os.write`` per line, so lines never interleave.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

from loomsync import LocalThreadStore, SyncingThreadStore, ThreadId, ThreadNotFoundError
from loomsync.core.document.model import Message, Thread

LOOP_ID = ThreadId("T-019b0000-0000-7000-8000-000000000001")
RACE_ID = ThreadId("T-019b0000-0000-7000-8000-000000000002")


def emit(line: str) -> None:
    os.write(1, (line + "\n").encode())


def save_forever(root: Path) -> None:
    store = SyncingThreadStore(
        LocalThreadStore(root / "threads"), None, sync_dir=root / "sync", background=False
    )
    try:
        thread = store.load(LOOP_ID)
    except ThreadNotFoundError:
        thread = Thread(id=LOOP_ID)
    messages = list(thread.messages)
    while True:
        messages.append(Message(role="user", content=f"turn {len(messages)} " + "x" * 2000))
        thread = thread.model_copy(
            update={
                "conversation": thread.conversation.model_copy(update={"messages": list(messages)})
            }
        )
        store.save(thread)
        emit(f"saved {len(messages)}")


def save_many(root: Path, who: str, count: int) -> None:
    store = LocalThreadStore(root / "race")
    for index in range(count):
        content = f"{who} {index} " + who * 4000
        store.save(
            Thread(id=RACE_ID, conversation={"messages": [{"role": "user", "content": content}]})
        )


def fork(run: object, *args: object) -> int:
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            run(*args)  # type: ignore[operator]
        except BaseException:
            traceback.print_exc()  # on the test's stderr: why a child failed, not just that it did
            code = 1
        finally:
            os._exit(code)
    return pid


def main() -> None:
    root = Path(sys.argv[1])
    for line in sys.stdin:
        command = line.split()
        if command == ["loop"]:
            pid = fork(save_forever, root)
            emit(f"child {pid}")
            os.waitpid(pid, 0)
            emit(f"exit {pid}")
        elif command[:1] == ["race"]:
            count = int(command[1])
            pids = [fork(save_many, root, who, count) for who in ("a", "b")]
            codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
            emit(f"done {codes[0]} {codes[1]}")
        elif command == ["quit"]:
            return


if __name__ == "__main__":
    main()
