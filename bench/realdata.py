"""The real messages of ``../shared/data/threads/``, grouped by kind, for benchmarks to sample."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from bench.corpus import REAL_THREADS


def kind_of(message: dict[str, Any]) -> str:
    """``user``, ``assistant``, ``assistant_calls`` (an assistant message with tool calls),
    ``tool`` or another role as written."""
    role = str(message.get("role"))
    return "assistant_calls" if role == "assistant" and message.get("tool_calls") else role


@cache
def real_messages() -> dict[str, list[dict[str, Any]]]:
    """Every real message, by :func:`kind_of` (about 2,100 messages from 21 threads)."""
    pool: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(REAL_THREADS.glob("T-*.json")):
        for message in json.loads(path.read_text())["conversation"]["messages"]:
            pool.setdefault(kind_of(message), []).append(message)
    return pool


@cache
def real_templates() -> list[dict[str, Any]]:
    """Each real thread's document without its messages, id, version and timestamps: the
    metadata of a new thread."""
    templates = []
    for path in sorted(REAL_THREADS.glob("T-*.json")):
        doc = json.loads(path.read_text())
        for key in ("id", "version", "created_at", "updated_at"):
            doc.pop(key, None)
        doc["conversation"] = {}
        templates.append(doc)
    return templates
