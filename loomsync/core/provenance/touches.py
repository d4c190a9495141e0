"""The files a thread's tool calls touched, message by message (the one extraction both the
server's index and the client's offline ``blame`` use)."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from loomsync.core.provenance import shapes
from loomsync.core.provenance.patches import is_patch, patched_files, replacement_text
from loomsync.core.provenance.paths import relative_path
from loomsync.core.provenance.shell import shell_writes

#: Actions of a touch, weakest first.
ACTIONS = ("read", "edit", "write", "delete")
#: Shortest line text matched against an edit (shorter lines, ``}`` or ``)``, match anything).
MIN_LINE_CHARS = 4
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Touch:
    """One file touched by one message's tool call.

    ``path``: relative to the repository root, POSIX separators (absolute only when the
    thread has no root); ``action``: ``read``, ``edit``, ``write`` or ``delete``;
    ``message_index``: index of the assistant message holding the call in
    ``conversation.messages``; ``via``: ``tool`` (a file tool) or ``shell`` (a command
    line, shell.py); ``text``: the new text the call puts in the file when it shows it
    (``""`` otherwise), what a line is matched against.
    """

    path: str
    action: str
    message_index: int
    via: str
    text: str = ""


def _field(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _arguments(raw: Any) -> Any:
    """A call's arguments: a JSON object (given as one or as its text) or raw text."""
    if isinstance(raw, str):
        text = raw.strip()
        if text.startswith(("{", "[")):
            try:
                return json.loads(text)
            except ValueError:
                return raw
        return raw
    return raw


def _first_text(args: Mapping[str, Any], keys: Iterable[str]) -> str:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _paths(args: Mapping[str, Any]) -> list[str]:
    for key in shapes.PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return [value]
    for key in shapes.PATHS_KEYS:
        value = args.get(key)
        if isinstance(value, list):
            found: list[str] = []
            for item in value:
                if isinstance(item, str):
                    found.append(item)
                elif isinstance(item, Mapping):
                    found.extend(_paths(item)[:1])
            return found
    return []


def _new_text(args: Mapping[str, Any]) -> str:
    for key in shapes.EDITS_KEYS:
        edits = args.get(key)
        if isinstance(edits, list):
            parts = [_first_text(e, shapes.TEXT_KEYS) for e in edits if isinstance(e, Mapping)]
            return "\n".join(p for p in parts if p)
    text = _first_text(args, shapes.TEXT_KEYS)
    return replacement_text(text) if "REPLACE" in text or is_patch(text) else text


def _command(args: Any) -> str:
    if isinstance(args, str):
        return args
    if not isinstance(args, Mapping):
        return ""
    for key in shapes.COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            if key == "commands":
                return "\n".join(value)
            return _argv(value)
        if isinstance(value, list):  # [{command: …}, …]
            return "\n".join(_command(v) for v in value)
    return ""


def _argv(argv: list[str]) -> str:
    """An argv list as one shell line; ``bash -lc SCRIPT`` and ``apply_patch PATCH`` keep
    their script or patch text unquoted so the shell reader sees it whole."""
    if len(argv) >= 3 and argv[1] in ("-c", "-lc", "-ic", "-cl"):
        return argv[2]
    if len(argv) == 2 and argv[0] in ("apply_patch", "applypatch"):
        return argv[1]
    return shlex.join(argv)


def _calls(args: Any, name: str) -> Iterator[tuple[str, str, str, str | None]]:
    """``(path, action, text, folder)`` for one call (``folder``: the shell's, else None)."""
    kind = shapes.kind_of(name, set(args) if isinstance(args, Mapping) else set())
    if kind is None:
        return
    if kind == "shell":
        folder = _first_text(args, shapes.WORKDIR_KEYS) if isinstance(args, Mapping) else ""
        for write in shell_writes(_command(args), folder or None):
            yield write.path, write.action, write.text, "shell"
        return
    if kind == "patch" and isinstance(args, Mapping) and isinstance(args.get("changes"), Mapping):
        yield from _changes(args["changes"])
        return
    if kind == "patch":
        text = args if isinstance(args, str) else _first_text(args, shapes.PATCH_KEYS)
        if isinstance(args, Mapping) and not is_patch(text):
            text = _command(args)  # Droid/opencode may wrap it as a command
        for patched in patched_files(text):
            yield patched.path, patched.action, patched.added, None
        return
    if not isinstance(args, Mapping):
        return
    if isinstance(args.get("action"), str) and not _paths(args):
        yield from _action(args["action"], kind)  # SWE-agent's {"action": "open F 293"}
        return
    if kind == "editor":
        command = args.get("command")
        if isinstance(command, str):
            kind_or_none = shapes.EDITOR_COMMANDS.get(command)
        else:  # Cline SDK's editor: {path, old_text, new_text}
            kind_or_none = "edit" if _new_text(args) else None
        if kind_or_none is None:
            return
        kind = kind_or_none
    text = _new_text(args) if kind in ("edit", "write") else ""
    for path in _paths(args) or _tagged_paths(args):
        yield path, kind, text, None


def _changes(changes: Mapping[str, Any]) -> Iterator[tuple[str, str, str, str | None]]:
    """Codex TUI's ``apply_patch`` event: ``{path: {"add": {content}} | {"update":
    {unified_diff, move_path?}} | {"delete": …}}``."""
    for path, change in changes.items():
        if not isinstance(path, str) or not isinstance(change, Mapping):
            continue
        if isinstance(change.get("add"), Mapping):
            content = change["add"].get("content")
            yield path, "write", content if isinstance(content, str) else "", None
        elif isinstance(change.get("update"), Mapping):
            diff = change["update"].get("unified_diff")
            added = (
                [line[1:] for line in diff.splitlines() if line.startswith("+")]
                if isinstance(diff, str)
                else []
            )
            yield path, "edit", "\n".join(added), None
        elif "delete" in change:
            yield path, "delete", "", None


_TAGGED_PATH = re.compile(r"<path>([^<>\n]+)</path>")


def _tagged_paths(args: Mapping[str, Any]) -> list[str]:
    """Roo Code's ``{"args": "<file><path>P</path></file>…"}``."""
    value = args.get("args")
    return _TAGGED_PATH.findall(value) if isinstance(value, str) else []


def _action(action: str, kind: str) -> Iterator[tuple[str, str, str, str | None]]:
    """SWE-agent's command text: ``open F [LINE]``, ``create F``, ``rm F``; an ``edit N:M``
    names no file (the open one: :func:`touches_of_message`'s ``last_path``)."""
    words = action.partition("\n")[0].split()
    if len(words) >= 2 and kind in ("read", "write", "delete"):
        yield words[1].strip("\"'"), kind, "", None


def touches_of_message(
    message: Any, index: int, root: str | None, *, last_path: list[str] | None = None
) -> list[Touch]:
    """The touches of one message (a :class:`~loomsync.core.document.model.Message` or its
    JSON dict) at ``index``; ``root`` is the thread's ``workspace_root``. ``last_path``, a
    one-item list kept across a thread's messages, is the file an edit without a path
    edits (SWE-agent's ``edit`` acts on the file ``open`` opened). Never raises."""
    found: list[Touch] = []
    for call in _field(message, "tool_calls") or []:
        name = _field(call, "tool_name")
        if not isinstance(name, str):
            continue
        args = _arguments(_field(call, "arguments_json"))
        produced = list(_calls(args, name))
        if not produced and last_path and isinstance(args, Mapping):
            kind = shapes.kind_of(name, set(args) | {"path"})
            if kind in ("edit", "write") and not _paths(args):
                produced = [(last_path[0], "edit", _edit_text(args), None)]
        for path, action, text, via in produced:
            folder = None if via is None else _first_text(args, shapes.WORKDIR_KEYS) or None
            relative = relative_path(path, root, folder)
            if relative is None:
                continue
            found.append(Touch(relative, action, index, "shell" if via else "tool", text))
            if last_path is not None and action != "delete":
                last_path[:] = [path]
    return found


def _edit_text(args: Mapping[str, Any]) -> str:
    """The new text of an edit of the open file: its text argument, or an ``edit N:M``
    action's lines after the first."""
    action = args.get("action")
    if isinstance(action, str):
        return action.partition("\n")[2]
    return _new_text(args)


def touches(messages: Iterable[Any], root: str | None, start: int = 0) -> list[Touch]:
    """Every touch of ``messages`` (numbered from ``start``), in order, one per
    (path, action, message) (a message editing a file twice: one touch, texts joined)."""
    return touches_indexed(enumerate(messages, start), root)


def touches_indexed(messages: Iterable[tuple[int, Any]], root: str | None) -> list[Touch]:
    """:func:`touches` of ``(index, message)`` pairs (a sparse selection of a thread)."""
    merged: dict[tuple[str, str, int], Touch] = {}
    last_path: list[str] = []
    for index, message in messages:
        for touch in touches_of_message(message, index, root, last_path=last_path):
            key = (touch.path, touch.action, touch.message_index)
            before = merged.get(key)
            if before is not None:
                text = "\n".join(t for t in (before.text, touch.text) if t)
                touch = Touch(touch.path, touch.action, index, before.via, text)
            merged[key] = touch
    return list(merged.values())


def _squeezed(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def contains_line(text: str, line: str) -> bool:
    """True when ``line`` (of a blamed file) appears in ``text`` (what an edit wrote), spaces
    squeezed on both sides; lines under :data:`MIN_LINE_CHARS` characters never match."""
    wanted = _squeezed(line)
    return len(wanted) >= MIN_LINE_CHARS and wanted in _squeezed(text)
