"""What the MCP tools return as text (issue 17 item 3): search snippets with their matches
marked in plain text, and a range of a thread's messages within a character budget.

Everything here is made of text that came from threads, so every piece goes through
:func:`~loomsync.terminal.printable` (an MCP client may show a tool result in a terminal):
a control character or an escape sequence arrives as a visible escape, never raw.

A budget is counted in characters of the returned text. Messages are shown whole while they
fit, and the text ends with a note naming the messages left out and the ``read_thread`` call
that reads on from the first of them; only a first message that does not fit alone is shown
cut (with the call that reads it alone in a larger budget). Tool output is shortened to
:data:`TOOL_OUTPUT_CHARS` and the title and facts to a line each, so a budget of 1,000 always
holds the header and a part of a message.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass

from loomsync.core.document import jsontext
from loomsync.core.document.model import Message, Thread, format_utc_minute
from loomsync.export import header_facts
from loomsync.terminal import clip, printable

#: Marks around a matched word in a snippet (``«ocelot»``): plain text, unlike the server's
#: ``<b>…</b>`` HTML, and rare in code and prose, so a model tells them from the text.
MARK_OPEN, MARK_CLOSE = "«", "»"
#: Characters of one tool message's output shown (the rest is counted in a note).
TOOL_OUTPUT_CHARS = 2_000
#: Characters of one tool call's arguments shown.
ARGUMENT_CHARS = 300
#: The largest budget a caller may ask for, and the default one.
MAX_BUDGET, DEFAULT_BUDGET = 100_000, 20_000
#: Room kept at the end of a budget for the note on what was left out.
NOTE_ROOM = 400

_BOLD = re.compile(r"<b>(.*?)</b>", re.DOTALL)


def plain_snippet(snippet: str) -> str:
    """A server-style snippet (``<b>`` around matches, the rest HTML-escaped) as plain text,
    each match between :data:`MARK_OPEN` and :data:`MARK_CLOSE`, made printable (one line)."""
    parts: list[str] = []
    position = 0
    for match in _BOLD.finditer(snippet):
        parts.append(html.unescape(snippet[position : match.start()]))
        parts.append(MARK_OPEN + html.unescape(match.group(1)) + MARK_CLOSE)
        position = match.end()
    parts.append(html.unescape(snippet[position:]))
    return printable("".join(parts))


def _cut(text: str, limit: int, what: str) -> str:
    """``text`` shortened to at most ``limit`` characters, ending with how much was left out."""
    if len(text) <= limit:
        return text
    room = max(limit - 80, 1)  # the line saying what was left out takes under 80
    kept = clip(text, room, multiline=True)
    return f"{kept}\n[… {len(text) - len(kept) + 1:,} more characters of {what} not shown]"


def _arguments(arguments: object) -> str:
    text = arguments if isinstance(arguments, str) else jsontext.dumps(arguments)
    return clip(text, ARGUMENT_CHARS)


def message_text(index: int, message: Message) -> str:
    """One message: ``[index] role (tool name) · time``, its text (tool output cut at
    :data:`TOOL_OUTPUT_CHARS`), then one ``→ tool call: name {arguments}`` line per call."""
    head = f"[{index}] {message.role}"
    if message.tool_name:
        head += f" ({message.tool_name})"
    if message.created_at:
        head += f" · {format_utc_minute(message.created_at)} UTC"
    lines = [printable(head)]
    content = printable(message.content, multiline=True)
    if message.role == "tool":
        content = _cut(content, TOOL_OUTPUT_CHARS, "tool output")
    if content:
        lines.append(content)
    for call in message.tool_calls or []:
        name = call.tool_name or "?"
        lines.append(printable(f"→ tool call: {name} {_arguments(call.arguments_json)}"))
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Page:
    """A range of a thread as text.

    Attributes:
        text: the header, the messages, and the note on what was left out.
        first: index of the first message shown.
        last: index of the last message shown (whole or cut); ``first - 1`` when none.
        next_from: the ``from`` that reads on (None: nothing left in the range asked for).
    """

    text: str
    first: int
    last: int
    next_from: int | None


def header(thread: Thread) -> str:
    """The thread's title and facts (id, workspace, git, model, created, tags, messages)."""
    lines = [printable(clip(thread.metadata.title or "(untitled)", 200))]
    lines += [printable(clip(f"{label}: {value}", 300)) for label, value in header_facts(thread)]
    return "\n".join(lines)


def _blocks(thread: Thread, first: int, last: int) -> Iterable[tuple[int, str]]:
    for index in range(first, last + 1):
        yield index, message_text(index, thread.messages[index])


def page(thread: Thread, first: int, last: int | None, budget: int) -> Page:
    """Messages ``first`` to ``last`` (inclusive; None: to the end) of ``thread`` as text of
    at most about ``budget`` characters (see the module docstring). ``first`` past the end
    gives the header and a note saying how many messages there are.

    Raises:
        ValueError: ``first`` < 0, ``last`` < ``first``, or ``budget`` < 1.
    """
    if first < 0 or budget < 1 or (last is not None and last < first):
        raise ValueError("need 0 <= from <= to and a budget of at least 1")
    count = len(thread.messages)
    end = count - 1 if last is None else min(last, count - 1)
    top = header(thread)
    if first >= count:
        span = f" (0 to {count - 1})" if count else ""
        note = f"This thread has {count} messages{span}; from={first} is past the end."
        return Page(f"{top}\n\n{note}", first, first - 1, None)
    parts = [top, f"Messages {first} to {end} of {count} (0 is the first):"]
    used = sum(len(p) + 2 for p in parts)
    shown = first - 1
    cut_last = False
    for index, block in _blocks(thread, first, end):
        room = budget - used - NOTE_ROOM
        if len(block) > room:
            if shown < first:  # not even the first fits: it is shown cut
                parts.append(_cut(block, max(room, 200), f"message {index}"))
                shown, cut_last = index, True
            break  # the rest is read on from this message
        parts.append(block)
        used += len(block) + 2
        shown = index
    if shown < end or cut_last:
        parts.append(_left_out(thread, shown, end, cut_last, budget))
    return Page("\n\n".join(parts), first, shown, shown + 1 if shown < end else None)


def _left_out(thread: Thread, shown: int, end: int, cut_last: bool, budget: int) -> str:
    tid = str(thread.id)
    notes = []
    if cut_last and budget >= MAX_BUDGET:
        notes.append(f"Message {shown} was cut: it is longer than this tool returns at once.")
    elif cut_last:
        notes.append(
            f"Message {shown} was cut to fit the {budget:,}-character budget: read it alone with "
            f'read_thread(id="{tid}", from={shown}, to={shown}, max_chars={MAX_BUDGET}).'
        )
    if shown < end:
        notes.append(
            f"Messages {shown + 1} to {end} are not shown: read on with "
            f'read_thread(id="{tid}", from={shown + 1}).'
        )
    return "[" + " ".join(notes) + "]"


__all__ = [
    "ARGUMENT_CHARS",
    "DEFAULT_BUDGET",
    "MARK_CLOSE",
    "MARK_OPEN",
    "MAX_BUDGET",
    "TOOL_OUTPUT_CHARS",
    "Page",
    "header",
    "message_text",
    "page",
    "plain_snippet",
]
