"""Export a thread: the exact JSON document, or Markdown for people to read.

JSON export is the thread document as stored (pretty, lone surrogates escaped, and the
characters a terminal acts on written as ``\\uXXXX``: :func:`loomsync.terminal.json_text`), so
it reads back with ``load_file`` unchanged. Markdown is a transcript: a header of facts, then
one section per message; tool calls and tool output go in fenced blocks long enough to hold any
backticks.

The Markdown is made for a terminal (``cat``) as much as for a viewer, and its text comes from
other people, so no text can act on the terminal or forge the transcript's structure:

- every character that acts on a terminal is a visible escape (:func:`printable`);
- one-line fields (title, facts, tags, tool names) stay one line, and a value holding Markdown
  syntax (``[link](…)``, ``<img>``, ``*``, backticks) is shown as a code span, literally;
- a message body stays Markdown when it is contained: no raw HTML, no link reference
  definitions (``[x]: url`` would retarget links in other messages), and nothing left open (an
  unclosed code fence or HTML comment would swallow the messages after it). Its top-level
  headings are moved two levels down when it has a level 1 or 2 heading, so only the
  transcript's own ``#`` title and ``## Role`` sections sit at those levels. Anything else
  (raw HTML, or text that looks like it even inside a code span; an open block; a setext
  heading of level 1 or 2) is shown verbatim in a fence. The check is a block-level parse,
  linear in the text.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token

from loomsync.core.document import codec, jsontext
from loomsync.core.document.model import Message, Thread, format_utc_minute
from loomsync.store.redaction import Redaction, default_redaction
from loomsync.terminal import json_text, printable

ExportFormat = Literal["json", "markdown"]
_ROLE_TITLES = {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool result"}
#: Characters that mean something inline in CommonMark/GFM (emphasis, code, links, images, raw
#: HTML, entities, escapes, strikethrough).
_INLINE_SYNTAX = re.compile(r"[\\`*_\[\]<>!&~]")
_ATX = re.compile(r"( {0,3})(#{1,6})")
_PROBE = "\n\n## loomsync-end-of-message"
#: Raw HTML as CommonMark starts it (open or closing tag, comment, processing instruction,
#: declaration, CDATA), a little looser than the spec so that nothing it counts slips by.
_RAW_HTML = re.compile(
    r"<(?:[A-Za-z][A-Za-z0-9-]*(?:[\s/>]|$)|/[A-Za-z]|!--|\?|![A-Za-z]|!\[CDATA\[)"
)
#: Block structure only: inline parsing is not needed (raw HTML is found by ``_RAW_HTML``) and
#: it is quadratic on some inputs (``[`` repeated), while the block parser stays linear.
_MARKDOWN = MarkdownIt("commonmark").disable("inline")


def fence(text: str, info: str = "") -> str:
    """A fenced code block that the text cannot close (longer fence than any backtick run)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def code_span(text: str) -> str:
    """An inline code span that holds ``text`` (one line) literally, whatever its backticks."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def inline(text: str) -> str:
    """A one-line field as Markdown inline text: printable, one line, and a code span when it
    holds Markdown syntax (so it shows literally)."""
    text = printable(text)
    return code_span(text) if text and _INLINE_SYNTAX.search(text) else text


def _contained(tokens: list[Token], env: dict[str, Any]) -> bool:
    """True when a body parsed with the probe heading after it is self-contained: the probe is
    still a top-level heading (nothing left open), no raw HTML, no link reference definitions
    (they would change links in other messages), no level 1 or 2 setext heading."""
    probe = [t.type for t in tokens[-3:]] == ["heading_open", "inline", "heading_close"]
    if not (probe and tokens[-3].level == 0 and tokens[-2].content == _PROBE.strip("\n# ")):
        return False
    if env.get("references"):
        return False
    for token in tokens[:-3]:
        if token.type == "html_block" or (
            token.type == "inline" and _RAW_HTML.search(token.content)
        ):
            return False
        if token.type == "heading_open" and token.tag in ("h1", "h2") and token.markup[:1] != "#":
            return False
    return True


def body(text: str) -> str:
    """A message body (printable, multi-line) as a Markdown block that cannot forge or swallow
    the transcript's structure (see the module docstring); verbatim in a fence otherwise."""
    text = printable(text, multiline=True)
    env: dict[str, Any] = {}
    tokens = _MARKDOWN.parse(text + _PROBE, env)
    if not _contained(tokens, env):
        return fence(text)
    headings = [t for t in tokens[:-3] if t.type == "heading_open" and t.level == 0]
    if not any(t.tag in ("h1", "h2") for t in headings):
        return text
    lines = text.split("\n")
    for heading in headings:  # ATX only (setext h1/h2 were fenced; h3+ setext stay as they are)
        if heading.map is None or heading.markup[:1] != "#":
            continue
        number = heading.map[0]
        match = _ATX.match(lines[number])
        if match:
            deeper = "#" * min(6, len(match[2]) + 2)
            lines[number] = match[1] + deeper + lines[number][match.end() :]
    return "\n".join(lines)


def to_json(thread: Thread) -> str:
    """The thread document as pretty JSON text (ends with a newline)."""
    return json_text(codec.encode_thread(thread, pretty=True))


def header_facts(thread: Thread) -> list[tuple[str, str]]:
    """(label, value) pairs describing a thread, in display order; absent facts left out.

    Values are raw thread text: the renderers make them printable."""
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
        facts.append(("Created", f"{format_utc_minute(thread.created_at)} UTC"))
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
    title = inline(_ROLE_TITLES.get(message.role, message.role.title()))
    if message.role == "tool" and message.tool_name:
        title += f" ({code_span(printable(message.tool_name))})"
    parts = [f"## {title}"]
    if message.content:
        tool = message.role == "tool"
        parts.append(
            fence(printable(message.content, multiline=True)) if tool else body(message.content)
        )
    for call in message.tool_calls or []:
        parts.append(f"**Tool call** {code_span(printable(call.tool_name or '?'))}:")
        parts.append(fence(printable(_tool_arguments(call.arguments_json), multiline=True), "json"))
    return "\n\n".join(parts)


def to_markdown(thread: Thread) -> str:
    """The thread as a Markdown transcript (ends with a newline)."""
    lines = [f"# {inline(thread.metadata.title or f'Thread {thread.id}')}", ""]
    lines += [f"- **{label}:** {inline(value)}" for label, value in header_facts(thread)]
    sections = [message_markdown(m) for m in thread.messages]
    return "\n".join(lines) + "\n\n---\n\n" + "\n\n".join(sections) + "\n"


def export(thread: Thread, fmt: ExportFormat, redaction: Redaction | None = None) -> str:
    """Export as ``"json"`` or ``"markdown"``, redacted (issue 12, item 1: an export is a copy
    that leaves loomsync's hands) with ``redaction`` (default: no allow-list).

    Raises:
        ValueError: an unknown format.
    """
    thread = (redaction or default_redaction()).thread(thread)
    if fmt == "json":
        return to_json(thread)
    if fmt == "markdown":
        return to_markdown(thread)
    raise ValueError(f"unknown export format {fmt!r} (json or markdown)")


__all__ = [
    "ExportFormat",
    "body",
    "code_span",
    "export",
    "fence",
    "header_facts",
    "inline",
    "to_json",
    "to_markdown",
]
