"""GitHub Copilot CLI sessions: ``~/.copilot/session-state/`` (``$COPILOT_HOME``).

Two layouts, one line format. Copilot CLI ≤ 0.0.3xx writes a flat
``session-state/<session id>.jsonl``; 1.x writes a folder ``session-state/<session id>/`` with
``events.jsonl`` beside ``workspace.yaml`` (``id, cwd, summary, created_at, updated_at``),
``checkpoints/`` (``index.md`` and ``NNN-<slug>.md`` summaries) and
``rewind-snapshots/index.json`` (per user message: ``eventId, gitCommit, gitBranch,
fileCount``). Every line is ``{type, data, id, timestamp, parentId}``; what comes out, in file
order:

- ``user.message`` → a user message (``content``; ``transformedContent``, ``attachments``,
  ``agentMode`` kept under the message's ``extra``), with ``extra.git`` = the commit and
  branch of its rewind snapshot;
- ``assistant.message`` → an assistant message whose ``toolRequests`` are its tool calls;
  ``outputTokens`` is its usage (the only count 1.0.10 records), with the model of the last
  ``session.model_change``; an ``assistant.usage`` event (``inputTokens``, ``outputTokens``,
  ``cacheReadTokens``, ``cacheWriteTokens``, ``model``: the Copilot SDK's event, not in the
  sample files, so tested on lines built from the SDK's documented shape) completes the
  usage of the turn's last assistant message that has no input count;
- ``tool.execution_complete`` → a tool message (``result.content``, or the error), paired by
  ``toolCallId``;
- ``session.error`` / ``session.warning`` → system messages;
- every other event (``session.start`` with its git context, ``session.info``,
  ``session.model_change``, ``session.mode_changed``, ``session.task_complete``, ``hook.*``,
  ``assistant.turn_*``, ``tool.execution_start``, and types added by later versions) is kept in
  ``metadata.extra.events``.

Thread id ``T-<session id>``. Git: ``session.start.context`` (branch, head commit, repository)
and the rewind snapshots (commit and branch at each user message). The format was learned
from the real files in ``../shared/data/transcripts/copilot-cli`` (0.0.354 and 1.0.10).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import yaml

from loomsync.core.document.model import Message, ToolCall
from loomsync.importers.common import (
    Importer,
    ImportResult,
    as_dict,
    as_list,
    as_str,
    build_thread,
    clip_title,
    find_files,
    first_objects,
    head,
    home,
    json_text,
    name_thread_id,
    parse_time,
    session_thread_id,
)
from loomsync.importers.parts import message, parse_jsonl, read_sidecar, without
from loomsync.importers.usage import usage

NAME = "copilot-cli"
EVENTS = "events.jsonl"
_PREFIXES = ("session.", "user.", "assistant.", "tool.", "hook.", "subagent.", "skill.")
_SIDE_FOLDERS = ("checkpoints", "rewind-snapshots")


def _workspace(folder: Path) -> dict[str, Any]:
    """``workspace.yaml`` of a session folder, every scalar as text (YAML's type guessing
    would turn the timestamps into datetimes and ids into numbers); {} when absent or bad."""
    try:
        value = yaml.load((folder / "workspace.yaml").read_text("utf-8"), Loader=yaml.BaseLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return value if isinstance(value, dict) else {}


def _snapshots(folder: Path) -> dict[str, dict[str, Any]]:
    """Rewind snapshots by the id of the user-message event they were taken for."""
    index = as_dict(read_sidecar(folder / "rewind-snapshots" / "index.json"))
    found: dict[str, dict[str, Any]] = {}
    for snapshot in as_list(index.get("snapshots")):
        snapshot = as_dict(snapshot)
        if event := as_str(snapshot.get("eventId")):
            found[event] = snapshot
    return found


def _checkpoints(folder: Path) -> dict[str, str]:
    """The checkpoint summaries (``checkpoints/*.md``) by file name."""
    texts: dict[str, str] = {}
    try:
        files = sorted((folder / "checkpoints").glob("*.md"))
        for file in files:
            texts[file.name] = file.read_text("utf-8", errors="replace")
    except OSError:
        pass
    return texts


def _tool_result(data: dict[str, Any]) -> str:
    result = data.get("result")
    if isinstance(result, dict) and isinstance(result.get("content"), str):
        return str(result["content"])
    error = data.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return json_text(result if result is not None else error) if (result or error) else ""


class _Reader:
    """Turns events into messages; keeps what is not a message for ``metadata.extra``."""

    def __init__(self, snapshots: dict[str, dict[str, Any]]) -> None:
        self.snapshots = snapshots
        self.messages: list[Message] = []
        self.events: list[dict[str, Any]] = []
        self.model: str | None = None
        self.tools: dict[str, str] = {}
        self.start: dict[str, Any] = {}

    def add(self, record: dict[str, Any], result: ImportResult) -> None:
        kind, data = record.get("type"), record.get("data")
        if not isinstance(kind, str) or not isinstance(data, dict):
            result.skipped["bad_record"] += 1
            return
        time, event_id = parse_time(record.get("timestamp")), as_str(record.get("id"))
        if kind == "user.message":
            extra = without(data, "content")
            if snap := self.snapshots.get(event_id or ""):
                extra["git"] = {
                    "commit": snap.get("gitCommit"),
                    "branch": snap.get("gitBranch"),
                    "file_count": snap.get("fileCount"),
                    "snapshot_id": snap.get("snapshotId"),
                }
            text = as_str(data.get("content")) or ""
            self.messages.append(message("user", text, created_at=time, id=event_id, extra=extra))
        elif kind == "assistant.message":
            calls = []
            for request in as_list(data.get("toolRequests")):
                request = as_dict(request)
                call_id, name = as_str(request.get("toolCallId")), as_str(request.get("name"))
                if call_id and name:
                    self.tools[call_id] = name
                calls.append(
                    ToolCall(id=call_id, tool_name=name, arguments_json=request.get("arguments"))
                )
            self.messages.append(
                message(
                    "assistant",
                    (as_str(data.get("content")) or "").strip(),
                    created_at=time,
                    id=event_id,
                    tool_calls=calls,
                    usage=usage(
                        output_tokens=data.get("outputTokens"),
                        model=self.model,
                        provider="github-copilot",
                    ),
                    extra=without(data, "content", "toolRequests", "outputTokens"),
                )
            )
        elif kind == "tool.execution_complete":
            call_id = as_str(data.get("toolCallId"))
            self.model = self.model or as_str(data.get("model"))
            self.messages.append(
                message(
                    "tool",
                    _tool_result(data),
                    created_at=time,
                    id=event_id,
                    tool_call_id=call_id,
                    tool_name=self.tools.get(call_id or ""),
                    extra=without(data, "toolCallId"),
                )
            )
        elif kind in ("session.error", "session.warning"):
            text = as_str(data.get("message")) or json_text(data)
            self.messages.append(
                message("system", text, created_at=time, id=event_id, extra={"event": kind, **data})
            )
        else:
            if kind == "session.model_change":
                self.model = as_str(data.get("newModel")) or self.model
            elif kind == "session.start":
                self.start = data
            elif kind == "tool.execution_start" and (call := as_str(data.get("toolCallId"))):
                self.tools.setdefault(call, as_str(data.get("toolName")) or "")
            elif kind == "assistant.usage":
                self._usage(data)
            self.events.append(record)

    def _usage(self, data: dict[str, Any]) -> None:
        """An ``assistant.usage`` event (one model call: ``inputTokens`` without the cache,
        ``outputTokens``, ``cacheReadTokens``, ``cacheWriteTokens``, ``model``) completes the
        usage of the last assistant message of the turn that has no input count yet."""
        model = as_str(data.get("model")) or self.model
        self.model = model
        for index in range(len(self.messages) - 1, -1, -1):
            earlier = self.messages[index]
            if earlier.role == "user":
                return
            own = getattr(earlier, "usage", None) or {}
            if earlier.role == "assistant" and "input_tokens" not in own:
                merged = usage(
                    input_tokens=data.get("inputTokens"),
                    output_tokens=data.get("outputTokens", own.get("output_tokens")),
                    cache_read_tokens=data.get("cacheReadTokens"),
                    cache_write_tokens=data.get("cacheWriteTokens"),
                    model=model,
                    provider="github-copilot",
                )
                if merged:
                    self.messages[index] = earlier.model_copy(update={"usage": merged})
                return


def session_folder(path: Path) -> Path | None:
    """The session folder of a 1.x ``events.jsonl``, or None for a flat 0.0.x file."""
    return path.parent if path.name == EVENTS else None


def parse(path: Path) -> ImportResult:
    """Read one session (a flat ``<id>.jsonl``, or a folder's ``events.jsonl`` with its
    sidecars; a sidecar given directly reads its session). Damaged lines are skipped and
    counted; an unreadable file gives a warning and no thread."""
    return parse_jsonl(path, from_records, unit_of)


def from_records(path: Path, records: list[dict[str, Any]], result: ImportResult) -> None:
    """:func:`parse` of the records of ``path`` already read (``loomsync watch`` reads a
    growing ``events.jsonl`` from an offset); the sidecars are read again each time."""
    if unit_of(path) not in (None, path):
        return  # a sidecar: it is read with its session file, never as lines of its own
    folder = session_folder(path)
    workspace = _workspace(folder) if folder else {}
    reader = _Reader(_snapshots(folder) if folder else {})
    for record in records:
        reader.add(record, result)
    if not reader.messages:
        result.warnings.append(f"{path}: no Copilot CLI conversation in this file")
        return
    start = reader.start
    context = as_dict(start.get("context"))
    session_id = (
        as_str(start.get("sessionId"))
        or as_str(workspace.get("id"))
        or (folder.name if folder else path.stem)
    )
    try:
        thread_id = session_thread_id(NAME, str(uuid.UUID(session_id)))
    except ValueError:
        thread_id = name_thread_id(NAME, session_id)
    snaps = [s for s in reader.snapshots.values() if as_str(s.get("gitCommit"))]
    snaps.sort(key=lambda s: str(s.get("timestamp", "")))
    commits = [str(s["gitCommit"]) for s in snaps]
    head_commit = as_str(context.get("headCommit"))
    all_commits = list(dict.fromkeys([c for c in [head_commit, *commits] if c]))
    branches = [b for s in snaps if (b := as_str(s.get("gitBranch")))]
    first_branch = as_str(context.get("branch")) or (branches[0] if branches else None)
    repository = as_str(context.get("repository"))
    remote = (
        f"https://github.com/{repository}"
        if repository and context.get("hostType") == "github"
        else repository
    )
    first_user = next((m.content for m in reader.messages if m.role == "user"), None)
    extra: dict[str, Any] = {"events": reader.events}
    if workspace:
        extra["workspace"] = workspace
    if folder and (checkpoints := _checkpoints(folder)):
        extra["checkpoints"] = checkpoints
    result.threads.append(
        build_thread(
            thread_id,
            reader.messages,
            source={
                "agent": NAME,
                "file": path.name,
                "session_id": session_id,
                "version": as_str(start.get("copilotVersion")),
                "producer": as_str(start.get("producer")),
                "layout": "folder" if folder else "flat",
            },
            title=clip_title(as_str(workspace.get("summary")) or first_user),
            created_at=parse_time(start.get("startTime"))
            or parse_time(workspace.get("created_at")),
            extra=extra,
            workspace_root=as_str(context.get("gitRoot")),
            cwd=as_str(context.get("cwd")) or as_str(workspace.get("cwd")),
            git_branch=branches[-1] if branches else first_branch,
            git_initial_branch=first_branch,
            git_remote_url=remote,
            git_initial_commit_sha=all_commits[0] if all_commits else None,
            git_current_commit_sha=all_commits[-1] if all_commits else None,
            git_commits=all_commits,
            provider="github-copilot",
            model=reader.model,
        )
    )


def unit_of(path: Path) -> Path | None:
    """The file :func:`parse` reads for ``path``: the ``events.jsonl`` of its session folder
    for ``workspace.yaml`` and the files of ``checkpoints/`` and ``rewind-snapshots/``;
    ``path`` itself for a ``.jsonl`` (``events.jsonl`` or a flat ``<id>.jsonl``); None for a
    file that is none of these."""
    if path.suffix == ".jsonl":
        return path
    folder = path.parent.parent if path.parent.name in _SIDE_FOLDERS else path.parent
    if path.name != "workspace.yaml" and folder == path.parent:
        return None
    return folder / EVENTS if (folder / EVENTS).is_file() else None


def _looks_like_an_event(record: dict[str, Any]) -> bool:
    kind = record.get("type")
    return (
        isinstance(kind, str)
        and kind.startswith(_PREFIXES)
        and isinstance(record.get("data"), dict)
        and "parentId" in record
        and "id" in record
    )


def detect(path: Path) -> bool:
    """A Copilot CLI event log (``.jsonl`` whose first lines are ``{type: "session.…", data,
    id, parentId}`` events), or a sidecar file of a session folder holding one."""
    unit = unit_of(path)
    if unit is None or unit.suffix != ".jsonl":
        return False
    records = first_objects(unit)
    if records:
        return any(_looks_like_an_event(r) for r in records)
    first = head(unit).split(b"\n", 1)[0]
    return first.startswith(b'{"type":"session.start"') and b'"copilot-agent"' in first


def discover(path: Path) -> list[Path]:
    """Session files under ``path`` (flat ``*.jsonl`` and folders' ``events.jsonl``), or
    the file's session file itself (a sidecar named directly gives its ``events.jsonl``)."""
    if path.is_file():
        return [unit_of(path) or path]
    return find_files(path, ["*.jsonl"], lambda p: p == unit_of(p) and detect(p))


def default_paths() -> list[Path]:
    """``$COPILOT_HOME/session-state`` (default ``~/.copilot``, on every OS), the legacy
    ``history-session-state``, and ``$XDG_CONFIG_HOME/.copilot/session-state`` that Copilot
    CLI ≤ 0.0.421 used when ``XDG_CONFIG_HOME`` was set."""
    root = Path(os.environ["COPILOT_HOME"]).expanduser() if os.environ.get("COPILOT_HOME") else None
    root = root or home() / ".copilot"
    paths = [root / "session-state", root / "history-session-state"]
    if xdg := os.environ.get("XDG_CONFIG_HOME"):
        paths.append(Path(xdg).expanduser() / ".copilot" / "session-state")
    return paths


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    from_records=from_records,
    agent="GitHub Copilot CLI",
    what="session",
    expects="expected JSON Lines of {type: 'session.…', data, id, parentId} events",
    order=40,
    suffixes=(".jsonl", "workspace.yaml", ".md", "index.json"),
    unit_of=unit_of,
    live="append",
    watch_by_default=False,
    records=("messages", "tool calls", "usage", "git"),
)
