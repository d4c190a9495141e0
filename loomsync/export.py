"""Export a thread: the exact JSON document, or Markdown for people to read.

JSON export is the thread document as stored (pretty, lone surrogates escaped), so it reads back
with ``load_file`` unchanged. Markdown is a transcript: a header of facts, then one section per
message; tool calls and tool output go in fenced blocks long enough to hold any backticks.
"""

from __future__ import annotations

import re
from typing import Literal

from loomsync import codec, jsontext
from loomsync.model import Message, Thread

ExportFormat = Literal["json", "markdown"]
_UNPRINTABLE = re.compile("[\x00\ud800-\udfff]")
_ROLE_TITLES = {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool result"}


def printable(text: str) -> str:
    """Text safe to print as UTF-8: NUL becomes ␀, a lone surrogate becomes U+FFFD."""
    return _UNPRINTABLE.sub(lambda m: "\u2400" if m.group() == "\x00" else "\ufffd", text)


def fence(text: str, info: str = "") -> str:
    """A fenced code block that the text cannot close (longer fence than any backtick run)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def to_json(thread: Thread) -> str:
    """The thread document as pretty JSON text (ends with a newline)."""
    return codec.encode_thread(thread, pretty=True).decode()


def header_facts(thread: Thread) -> list[tuple[str, str]]:
    """(label, value) pairs describing a thread, in display order; absent facts left out."""
    facts = [("Thread", str(thread.id))]
    if thread.workspace_root:
        facts.append(("Workspace", thread.workspace_root))
    if thread.git_branch or thread.git_remote_url:
        where = (thread.git_remote_url, thread.git_branch)
        facts.append(("Git", " @ ".join(part for part in where if part)))
    if thread.git_current_commit_sha:
        facts.append(("Commit", thread.git_current_commit_sha[:12]))
    if thread.provider or thread.model:
        facts.append(("Model", " / ".join(p for p in (thread.provider, thread.model) if p)))
    if thread.created_at:
        facts.append(("Created", f"{thread.created_at:%Y-%m-%d %H:%M} UTC"))
    if thread.metadata.tags:
        facts.append(("Tags", ", ".join(thread.metadata.tags)))
    facts.append(("Messages", str(len(thread.messages))))
    return facts


def _tool_arguments(arguments: object) -> str:
    if isinstance(arguments, str):
        return arguments
    return jsontext.dumps(arguments, indent=2, separators=(",", ": "))


def message_markdown(message: Message) -> str:
    """One message as a Markdown section."""
    title = _ROLE_TITLES.get(message.role, message.role.title())
    if message.role == "tool" and message.tool_name:
        title += f" (`{message.tool_name}`)"
    parts = [f"## {title}"]
    if message.content:
        content = printable(message.content)
        parts.append(fence(content) if message.role == "tool" else content)
    for call in message.tool_calls or []:
        parts.append(f"**Tool call** `{call.tool_name or '?'}`:")
        parts.append(fence(printable(_tool_arguments(call.arguments_json)), "json"))
    return "\n\n".join(parts)


def to_markdown(thread: Thread) -> str:
    """The thread as a Markdown transcript (ends with a newline)."""
    title = printable(thread.metadata.title or f"Thread {thread.id}")
    lines = [f"# {title}", ""]
    lines += [f"- **{label}:** {printable(value)}" for label, value in header_facts(thread)]
    sections = [message_markdown(m) for m in thread.messages]
    return "\n".join(lines) + "\n\n---\n\n" + "\n\n".join(sections) + "\n"


def export(thread: Thread, fmt: ExportFormat) -> str:
    """Export as ``"json"`` or ``"markdown"``.

    Raises:
        ValueError: an unknown format.
    """
    if fmt == "json":
        return to_json(thread)
    if fmt == "markdown":
        return to_markdown(thread)
    raise ValueError(f"unknown export format {fmt!r} (json or markdown)")


__all__ = ["ExportFormat", "export", "fence", "header_facts", "printable", "to_json", "to_markdown"]
