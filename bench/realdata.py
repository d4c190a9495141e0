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
def _real_threads() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(path.read_text()) for path in sorted(REAL_THREADS.glob("T-*.json")))


@cache
def all_real_messages() -> list[dict[str, Any]]:
    """Every real message (about 2,100 from 21 threads), thread after thread, in order.
    Shared: copy a message before changing it."""
    return [m for doc in _real_threads() for m in doc["conversation"]["messages"]]


@cache
def real_messages() -> dict[str, list[dict[str, Any]]]:
    """Every real message, by :func:`kind_of`."""
    pool: dict[str, list[dict[str, Any]]] = {}
    for message in all_real_messages():
        pool.setdefault(kind_of(message), []).append(message)
    return pool


@cache
def real_templates() -> list[dict[str, Any]]:
    """Each real thread's document without its messages, id, version and timestamps: the
    metadata of a new thread. Shared: copy a template before changing it."""
    templates = []
    for thread in _real_threads():
        doc = {
            k: v
            for k, v in thread.items()
            if k not in ("id", "version", "created_at", "updated_at")
        }
        doc["conversation"] = {k: v for k, v in thread["conversation"].items() if k != "messages"}
        templates.append(doc)
    return templates
