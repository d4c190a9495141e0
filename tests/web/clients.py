"""The client and the live server, as the browser-side tests use them: store a thread over
HTTP, run the ``loomsync`` CLI with a HOME of its own."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx

from tests.homes import home_env
from tests.servers import Server

LOOMSYNC = Path(sys.executable).parent / "loomsync"  # the console script beside this Python


def put_thread(server: Server, token: str, title: str, contents: list[str]) -> str:
    """Store a thread on the live server; its id."""
    thread_id = f"T-{uuid.uuid4()}"
    doc: dict[str, Any] = {
        "id": thread_id,
        "metadata": {"title": title},
        "conversation": {
            "messages": [
                {"role": "user" if i % 2 == 0 else "assistant", "content": c}
                for i, c in enumerate(contents)
            ]
        },
    }
    response = httpx.put(
        f"{server.base_url}/api/threads/{thread_id}",
        json=doc,
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert response.status_code == 201, response.text
    return thread_id


def loomsync(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the ``loomsync`` CLI with its own HOME and XDG folders."""
    env = home_env(home, BROWSER="false")  # webbrowser must never start a real browser here
    done = subprocess.run(
        [str(LOOMSYNC), *args], env=env, capture_output=True, text=True, timeout=60, cwd=home
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done
