"""One message of a thread as what the page shows: its role, its Markdown as safe HTML, and
its tool calls and tool output as collapsed boxes with their size (a call's with its command or
first argument), each cut to a preview unless the whole message is asked for (the "show all"
link). A Claude Code slash-command turn shows as the command (``/review args``).

A message is any JSON object (API.md section 2 keeps unknown fields and does not type them
strictly), so every field is read defensively: a field of an unexpected type is shown as JSON.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from markupsafe import Markup, escape

from app.web.clipped import Clipped, decoded_size, json_size, partial_string
from app.web.pagetime import page_time
from app.web.render.gist import call_gist, slash_command
from app.web.render.highlight import language_of_path
from app.web.render.markdown import markdown_html, plain_html, plain_notice
from app.web.render.text import clean, human_size, preview, utf8_size
from loomsync.core.document import jsontext

#: Roles with their own look; any other role is shown as written, styled as "other".
ROLES = frozenset({"user", "assistant", "tool", "system"})
#: Preview limits of Markdown text (user and assistant messages).
TEXT_CHARS, TEXT_LINES = 6_000, 120
#: Preview limits of tool calls' arguments and tool output.
BOX_CHARS, BOX_LINES = 3_000, 40
#: A string argument of a tool call with a line break and at least this many characters is
#: shown as a block of its own (a file's content, a patch, a script), highlighted as the file
#: the call names (``file_path`` or ``path``), instead of as one escaped JSON string.
BLOCK_ARGUMENT_CHARS = 20
_PATH_ARGUMENTS = ("file_path", "path", "filename")
#: What "show all" shows of one part at most (characters; no line limit): a browser lays out
#: a 10 MB line for seconds, and nobody reads it there. Beyond it, the page links the raw
#: message (``…/m/{seq}/raw``).
FULL_CHARS = 1_000_000
_UNLIMITED_LINES = 1 << 62
#: Characters of Markdown one page of previews renders at most (about 0.3 s of markdown-it-py
#: on the most hostile input; the real threads' busiest page has 23,166). Messages past it
#: are shown as plain text with a notice; their own page (``/m/{seq}``) renders them.
PAGE_MARKDOWN_CHARS = 30_000


@dataclass(slots=True)
class MarkdownBudget:
    """What is left of a page's Markdown allowance (characters), spent message by message."""

    left: int = PAGE_MARKDOWN_CHARS

    def take(self, chars: int) -> bool:
        """Spend ``chars`` if that many are left (True), else spend nothing (False)."""
        if chars > self.left:
            return False
        self.left -= chars
        return True


def _limits(full: bool, chars: int, lines: int) -> tuple[int, int]:
    return (FULL_CHARS, _UNLIMITED_LINES) if full else (chars, lines)


@dataclass(frozen=True, slots=True)
class Box:
    """A collapsed part of a message: a tool call's arguments or a tool's output."""

    kind: str  # "call" or "output"
    label: str  # the tool's name (cleaned text; the template escapes it)
    size: str  # the full size, for people
    html: Markup  # the preview (or everything)
    complete: bool  # False: ``html`` is a preview, "show all" gives the rest
    note: str = ""  # e.g. "exit code 1"
    gist: str = ""  # a call's command or first argument, one line (app/web/render/gist.py)


@dataclass(frozen=True, slots=True)
class MessageView:
    """What the page shows of message ``seq`` (the ``#m-<seq>`` anchor, 0-based as search's
    ``message_index``)."""

    seq: int
    role: str  # one of ROLES or "other": a CSS class
    role_label: str  # the role as written (cleaned)
    created_at: str | None
    text: Markup | None  # the Markdown content as HTML; None when empty
    text_size: str
    text_complete: bool
    boxes: list[Box] = field(default_factory=list)
    full: bool = False  # the "show all" view (limits of FULL_CHARS), not the page's preview

    @property
    def complete(self) -> bool:
        """True when nothing of the message was cut."""
        return self.text_complete and all(box.complete for box in self.boxes)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return jsontext.dumps(value, indent=2, separators=(",", ": "))


def _size(text: str) -> int:
    """Bytes of ``text``, all of it for a :class:`Clipped` prefix (a large message's digest)."""
    return text.full_bytes if isinstance(text, Clipped) else utf8_size(text)


def _box(kind: str, label: str, text: str, language: str, full: bool, note: str = "") -> Box:
    cut = preview(text, *_limits(full, BOX_CHARS, BOX_LINES))
    return Box(
        kind=kind,
        label=clean(label)[:200],
        size=human_size(_size(text)),
        html=Markup(plain_html(cut.text, language)),
        complete=cut.complete,
        note=note,
    )


_CLIPPED_OUTPUT = re.compile(r'\{"output":\s*"')


def _tool_output(content: str) -> tuple[str, str, str]:
    """The text to show of a tool's output, its language and a note: the ``output`` of a
    ``{"output": …, "metadata": {"exit_code": …}}`` result (Codex's shell tool), else as is
    (of a clipped one, the start of its ``output``)."""
    start = _CLIPPED_OUTPUT.match(content) if isinstance(content, Clipped) else None
    if isinstance(content, Clipped) and start is not None:
        encoded = content[start.end() :]
        output = partial_string('"' + encoded)
        size = decoded_size(output, encoded, content.full_bytes - start.end())
        return Clipped(output, size), "", ""
    if content.startswith('{"output"') and len(content) < 5_000_000:
        try:
            parsed = jsontext.loads(content)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
            meta = parsed.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
            return parsed["output"], "", f"exit code {code}" if code is not None else ""
    return content, "", ""


def _call_box(label: str, arguments: Any, full: bool) -> Box:
    """A tool call's box: its arguments as JSON, long multi-line strings as blocks of their own."""
    gist = call_gist(arguments)
    if not isinstance(arguments, dict):
        text = arguments if isinstance(arguments, str) else _as_text(arguments)
        return replace(_box("call", label, text, "json", full), gist=gist)
    blocks = {
        key: value
        for key, value in arguments.items()
        if isinstance(value, str) and len(value) >= BLOCK_ARGUMENT_CHARS and "\n" in value
    }
    if not blocks:
        return replace(_box("call", label, _as_text(arguments), "json", full), gist=gist)
    path = next((arguments[k] for k in _PATH_ARGUMENTS if isinstance(arguments.get(k), str)), "")
    language = language_of_path(path) if path else ""
    rest = {key: value for key, value in arguments.items() if key not in blocks}
    chars, lines = _limits(full, BOX_CHARS, BOX_LINES)
    parts: list[str] = []
    complete = True
    if rest:
        cut = preview(_as_text(rest), chars, lines)
        parts.append(plain_html(cut.text, "json"))
        complete = cut.complete
    for key, value in blocks.items():
        cut = preview(value, chars, lines)
        parts.append(f'<p class="arg"><code>{escape(clean(key)[:200])}</code></p>')
        parts.append(plain_html(cut.text, language))
        complete = complete and cut.complete
    return Box(
        kind="call",
        label=clean(label)[:200],
        size=human_size(json_size(arguments, _as_text(arguments))),
        html=Markup("".join(parts)),
        complete=complete,
        gist=gist,
    )


def _calls(raw: Any, full: bool) -> list[Box]:
    if not isinstance(raw, list):
        return [] if raw is None else [_box("call", "tool_calls", _as_text(raw), "json", full)]
    boxes = []
    for call in raw:
        if not isinstance(call, dict):
            boxes.append(_box("call", "tool call", _as_text(call), "json", full))
            continue
        name = _as_text(call.get("tool_name")) or "tool call"
        boxes.append(_call_box(name, call.get("arguments_json"), full))
    return boxes


def page_views(messages: Iterable[tuple[int, Any]]) -> list[MessageView]:
    """The previews of one page's ``(seq, message)`` pairs, sharing one
    :class:`MarkdownBudget` so a page of hostile Markdown costs a bounded time."""
    budget = MarkdownBudget()
    return [message_view(seq, body, budget=budget) for seq, body in messages]


def message_view(
    seq: int, message: Any, *, full: bool = False, budget: MarkdownBudget | None = None
) -> MessageView:
    """The view of ``message`` (a decoded message object) at position ``seq``: long parts cut
    to previews, or with ``full`` up to :data:`FULL_CHARS` each. With ``budget``, text that
    does not fit what is left of it is shown plain, with a notice."""
    if not isinstance(message, dict):
        message = {"role": "other", "content": _as_text(message)}
    role_raw = _as_text(message.get("role")) or "unknown"
    role = role_raw if role_raw in ROLES else "other"
    content = _as_text(message.get("content"))
    created = message.get("created_at")
    boxes = _calls(message.get("tool_calls"), full)
    text: Markup | None = None
    complete = True
    if role == "tool":
        shown, language, note = _tool_output(content)
        label = _as_text(message.get("tool_name")) or "tool"
        boxes.insert(0, _box("output", label, shown, language, full, note))
    elif role == "user" and (command := slash_command(content)) is not None:
        text = Markup(f'<p class="command"><code>{escape(command)}</code></p>')
    elif content:
        cut = preview(content, *_limits(full, TEXT_CHARS, TEXT_LINES))
        if budget is None or budget.take(len(cut.text)):
            text = Markup(markdown_html(cut.text))
        else:
            text = Markup(plain_notice(cut.text, "this page's Markdown allowance is spent"))
        complete = cut.complete
    return MessageView(
        seq=seq,
        role=role,
        role_label=clean(role_raw)[:40],
        created_at=page_time(created, seconds=True) if isinstance(created, str) else None,
        text=text,
        text_size=human_size(_size(content)),
        text_complete=complete,
        boxes=boxes,
        full=full,
    )
