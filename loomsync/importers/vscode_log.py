"""VS Code's append-only object mutation log: the ``chatSessions/<id>.jsonl`` newer VS Code
builds write instead of rewriting ``<id>.json``.

The rule is VS Code's own ``ObjectMutationLog`` (microsoft/vscode,
``src/vs/workbench/contrib/chat/common/model/objectMutationLog.ts``, MIT; read, not copied):
one JSON object per line,

- ``{"kind": 0, "v": state}``: the whole object (the first line; VS Code starts the file
  again with one after 512 entries);
- ``{"kind": 1, "k": path, "v": value}``: set the member at ``path`` (keys and indexes);
- ``{"kind": 2, "k": path, "v"?: [items], "i"?: n}``: cut the array at ``path`` to ``n``
  items when ``i`` is given, then append ``v``;
- ``{"kind": 3, "k": path}``: delete the member at ``path``.

Replaying the lines gives the same ``ISerializableChatData`` object the ``.json`` holds.
"""

from __future__ import annotations

from typing import Any

from loomsync.importers.common import ImportResult

INITIAL, SET, PUSH, DELETE = 0, 1, 2, 3


def _parent(state: Any, path: list[Any]) -> tuple[Any, Any] | None:
    """The container holding the last step of ``path`` and that step, or None when the path
    does not lead anywhere in ``state``."""
    current = state
    for step in path[:-1]:
        if isinstance(current, dict) and isinstance(step, str) and step in current:
            current = current[step]
        elif isinstance(current, list) and isinstance(step, int) and 0 <= step < len(current):
            current = current[step]
        else:
            return None
    last = path[-1]
    if isinstance(current, dict) and isinstance(last, str):
        return current, last
    if isinstance(current, list) and isinstance(last, int) and 0 <= last < len(current):
        return current, last
    return None


def _apply(state: Any, entry: dict[str, Any]) -> Any:
    """``state`` after ``entry``; raises ValueError for an entry that does not apply."""
    kind, path = entry.get("kind"), entry.get("k")
    if kind == INITIAL:
        return entry.get("v")
    if not isinstance(path, list) or not path:
        raise ValueError("no path")
    found = _parent(state, path)
    if found is None:
        raise ValueError("path not in the object")
    container, last = found
    if kind == SET:
        container[last] = entry.get("v")
    elif kind == DELETE:
        if isinstance(container, dict):
            container.pop(last, None)
        else:
            container[last] = None
    elif kind == PUSH:
        items = container.get(last) if isinstance(container, dict) else container[last]
        items = list(items) if isinstance(items, list) else []
        cut, added = entry.get("i"), entry.get("v")
        if isinstance(cut, int) and cut >= 0:
            del items[cut:]
        if isinstance(added, list):
            items.extend(added)
        container[last] = items
    else:
        raise ValueError("unknown kind")
    return state


def replay(entries: list[dict[str, Any]], result: ImportResult) -> Any:
    """The object the log's ``entries`` describe (None when it has no initial entry). An
    entry that does not apply (unknown kind, a path the object does not have) is skipped and
    counted as ``bad_record``; the ones after it still apply."""
    state: Any = None
    for entry in entries:
        if state is None and entry.get("kind") != INITIAL:
            result.skipped["bad_record"] += 1
            continue
        try:
            state = _apply(state, entry)
        except ValueError:
            result.skipped["bad_record"] += 1
    return state


def looks_like_a_log(head: bytes) -> bool:
    """True for the first bytes of a mutation log whose initial object is a chat session."""
    first = head.lstrip()
    return (
        first.startswith((b'{"kind":0,', b'{"kind": 0,'))
        and b'"requests"' in head
        and b'"sessionId"' in head
    )


__all__ = ["looks_like_a_log", "replay"]
