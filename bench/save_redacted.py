"""What the client's redaction step costs a save (issue 12, item 1): no targets, printed only.

A synthetic thread of 10,000 messages (about 10 MB of text, no credential) is redacted once
whole (``Redaction.thread``), then saved through ``SyncingThreadStore`` (not logged in: local
file and queue only) and grown by one turn at a time. A fresh :class:`Redaction` scans every
message; after the first save it remembers clean messages by digest, so a one-turn save scans
that turn only. Run: ``.venv/bin/python -m bench.save_redacted``.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from loomsync import LocalThreadStore, SyncingThreadStore
from loomsync.core.document.model import Message, Thread
from loomsync.store.redaction import Redaction

MESSAGES = 10_000
TURNS = 5


def main() -> None:
    """Print the whole-thread redaction time and the one-turn save times, in seconds."""
    messages = [
        {"role": "tool" if i % 2 else "user", "content": f"line of tool output {i} " * 40}
        for i in range(MESSAGES)
    ]
    thread = Thread.model_validate({"conversation": {"messages": messages}})
    megabytes = sum(len(m["content"]) for m in messages) / 1e6
    started = time.perf_counter()
    Redaction().thread(thread)
    print(
        f"Redaction.thread, {MESSAGES} messages, {megabytes:.1f} MB: {time.perf_counter() - started:.3f} s"
    )
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        store = SyncingThreadStore(
            LocalThreadStore(root / "threads"), None, sync_dir=root / "sync", background=False
        )
        started = time.perf_counter()
        saved = store.save(thread)
        print(f"first save: {time.perf_counter() - started:.3f} s")
        for turn in range(TURNS):
            saved.conversation.messages.append(Message(role="user", content=f"turn {turn}"))
            started = time.perf_counter()
            saved = store.save(saved)
            print(f"save of one more turn: {time.perf_counter() - started:.3f} s")
        store.close()


if __name__ == "__main__":
    main()
