"""SWE-agent trajectories: ``trajectories/<user>/<run>/<instance>.traj`` (one JSON object).

The conversation is ``history`` (``{role, content, thought?, action?, tool_calls?,
tool_call_ids?, is_demo?}``): system and user messages as they are, assistant messages with
their ``tool_calls``, ``tool`` messages linked by ``tool_call_ids``. Older trajectories have
no tool calls: the assistant's ``action`` (a command) becomes a tool call with id
``action-<n>`` and the ``user`` observation after it becomes that call's tool message. The
demonstration copied into the prompt (``is_demo``) is not part of the session and is left
out. Without ``history``, the ``trajectory`` steps (thought, action, observation) are used.

Trajectories carry no times and no session id: the thread id is a UUIDv5 over the file's
identity (run folder and file name); the instance id (file stem), exit status and model go
to ``metadata.extra.source``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from loomsync.core.document import jsontext
from loomsync.core.document.model import Message, ToolCall
from loomsync.importers.common import (
    Importer,
    ImportResult,
    as_dict,
    as_list,
    as_str,
    blocks_text,
    build_thread,
    clip_title,
    file_identity,
    find_files,
    head,
    name_thread_id,
    read_json,
    tool_arguments,
)

NAME = "swe-agent"

_QUOTED = re.compile(r"""['"]([^'"]+)['"]""")
_ISSUE = "ISSUE:\n"
_ROLES = ("system", "user", "assistant", "tool")


def _call_id(value: Any) -> str | None:
    """The first id of ``tool_call_ids``: a list, or a string holding one (JSON or repr)."""
    if isinstance(value, list):
        return next((v for v in value if isinstance(v, str)), None)
    if isinstance(value, str):
        match = _QUOTED.search(value)
        return match.group(1) if match else value or None
    return None


def _tool_calls(item: dict[str, Any]) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for call in as_list(item.get("tool_calls")):
        function = as_dict(as_dict(call).get("function"))
        calls.append(
            ToolCall(
                id=as_str(as_dict(call).get("id")),
                tool_name=as_str(function.get("name")),
                arguments_json=tool_arguments(function.get("arguments")),
            )
        )
    return calls


def _from_history(history: list[Any], result: ImportResult) -> list[Message]:
    messages: list[Message] = []
    names: dict[str, str] = {}
    pending: str | None = None  # id of the action an old-style observation answers
    for index, item in enumerate(history):
        if not isinstance(item, dict) or item.get("role") not in _ROLES:
            result.skipped["bad_record"] += 1
            continue
        if item.get("is_demo") in (True, "True", "true"):
            continue
        role, content = item["role"], blocks_text(item.get("content"))
        if role == "assistant":
            calls = _tool_calls(item)
            action = as_str(item.get("action"))
            pending = None
            if not calls and action and action.strip():
                pending = f"action-{index}"
                calls = [
                    ToolCall(
                        id=pending, tool_name=action.split()[0], arguments_json={"action": action}
                    )
                ]
            names.update({c.id: c.tool_name for c in calls if c.id and c.tool_name})
            messages.append(Message(role="assistant", content=content, tool_calls=calls or None))
        elif role == "tool" or (role == "user" and pending):
            call_id = _call_id(item.get("tool_call_ids")) if role == "tool" else pending
            name = names.get(call_id) if call_id else None
            messages.append(
                Message(role="tool", content=content, tool_call_id=call_id, tool_name=name)
            )
            pending = None
        else:
            messages.append(Message(role=role, content=content))
            pending = None
    return messages


def _from_trajectory(steps: list[Any]) -> list[Message]:
    messages: list[Message] = []
    for index, step in enumerate(steps):
        step = as_dict(step)
        action, call_id = as_str(step.get("action")), f"action-{index}"
        text = as_str(step.get("response")) or as_str(step.get("thought")) or ""
        calls = (
            [ToolCall(id=call_id, tool_name=action.split()[0], arguments_json={"action": action})]
            if action and action.strip()
            else None
        )
        messages.append(Message(role="assistant", content=text, tool_calls=calls))
        if calls:
            observation = blocks_text(step.get("observation"))
            messages.append(
                Message(
                    role="tool",
                    content=observation,
                    tool_call_id=call_id,
                    tool_name=calls[0].tool_name,
                )
            )
    return messages


def _model(document: dict[str, Any]) -> str | None:
    config = document.get("replay_config")
    if isinstance(config, str):
        try:
            config = jsontext.loads(config)
        except ValueError:
            config = None
    return as_str(as_dict(as_dict(as_dict(config).get("agent")).get("model")).get("name"))


def parse(path: Path) -> ImportResult:
    """Read one trajectory into one thread. A damaged file gives a warning and a skipped
    count; a damaged history entry is skipped and counted."""
    result = ImportResult()
    document = read_json(path, result)
    if document is None:
        return result
    history, steps = as_dict(document).get("history"), as_dict(document).get("trajectory")
    if not isinstance(document, dict) or not (isinstance(history, list) or isinstance(steps, list)):
        result.skipped["bad_record"] += 1
        result.warnings.append(f"{path}: not a SWE-agent trajectory (no history)")
        return result
    messages = (
        _from_history(history, result)
        if isinstance(history, list)
        else _from_trajectory(as_list(steps))
    )
    if not messages:
        result.warnings.append(f"{path}: no messages in this trajectory")
        return result
    info = as_dict(document.get("info"))
    first_user = next((m.content for m in messages if m.role == "user"), "")
    issue = first_user.split(_ISSUE, 1)[1] if _ISSUE in first_user else first_user
    issue_line = next((line for line in issue.splitlines() if line.strip()), "")
    result.threads.append(
        build_thread(
            name_thread_id(NAME, file_identity(path)),
            messages,
            source={
                "agent": "swe-agent",
                "version": as_str(info.get("swe_agent_version")),
                "file": path.name,
                "instance_id": path.stem,
                "exit_status": as_str(info.get("exit_status")),
            },
            title=clip_title(f"{path.stem}: {issue_line}" if issue_line else path.stem),
            model=_model(document),
        )
    )
    return result


def detect(path: Path) -> bool:
    """A ``.traj`` file that starts like a JSON object (a damaged one is still read, and its
    damage reported; ``/etc/hostname`` renamed is not)."""
    return path.suffix == ".traj" and head(path, 4096).lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{"


def discover(path: Path) -> list[Path]:
    """``*.traj`` files under ``path``, or the file itself."""
    return find_files(path, ["*.traj"], detect)


def default_paths() -> list[Path]:
    """None: SWE-agent writes trajectories under the folder it runs in; name it to import."""
    return []


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="SWE-agent",
    what="trajectory",
    expects="expected a JSON object with trajectory or history, in a .traj file",
    order=50,
    suffixes=(".traj", ".json"),
    live="rewrite",
    watch_by_default=False,
    records=("messages", "tool calls"),
)
