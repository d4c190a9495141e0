"""One line that says what a collapsed part of a message holds, and Claude Code's slash-command
turns read as the command (issue 30 item 8: a newcomer saw only ``Tool call shell 1.2 KB`` on
every collapsed call, and ``<command-message>review is running…</command-message>
<command-name>/review</command-name>…`` as raw tags).

- :func:`call_gist`: a tool call's command (``command`` / ``cmd``, a list joined by spaces), else
  its first argument: one printable line (:func:`app.web.render.text.clean`, line breaks as
  ``⏎``), cut to :data:`GIST_CHARS` with ``…``. The template escapes it.
- :func:`slash_command`: ``/review args`` when a user turn is only Claude Code's
  ``<command-name>``, ``<command-message>`` and ``<command-args>`` tags (as its session files
  record a slash command), else None: any other text is left as written.
"""

from __future__ import annotations

import re
from typing import Any

from app.web.render.text import clean
from loomsync.core.document import jsontext

#: Characters of a gist at most (a summary line; the box holds the rest).
GIST_CHARS = 120
#: Arguments that hold the command a call runs, looked at first.
_COMMAND_KEYS = ("command", "cmd")
_SPACES = re.compile(r"[ \t]+")
#: A turn made only of Claude Code's command tags (any order, whitespace between).
_TAG = r"<(command-name|command-message|command-args)>([\s\S]{0,10000}?)</\1>"
_TAGS_ONLY = re.compile(rf"\s*(?:{_TAG}\s*)+")
_ONE_TAG = re.compile(_TAG)


def one_line(value: Any, limit: int = GIST_CHARS) -> str:
    """``value`` as one printable line of at most ``limit`` characters (a string as written,
    anything else as compact JSON), ``…`` where it was cut."""
    text = value if isinstance(value, str) else jsontext.dumps(value)
    text = _SPACES.sub(" ", text[: limit * 4].strip().replace("\r\n", "\n").replace("\n", " ⏎ "))
    text = clean(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def call_gist(arguments: Any) -> str:
    """The command a tool call runs, or its first argument, as one line ("" when it has
    none)."""
    if isinstance(arguments, dict):
        for key in _COMMAND_KEYS:
            command = arguments.get(key)
            if isinstance(command, list) and all(isinstance(part, str) for part in command):
                return one_line(" ".join(command))
            if isinstance(command, str) and command.strip():
                return one_line(command)
        first = next(iter(arguments.values()), None)
        return "" if first is None or first == "" else one_line(first)
    if isinstance(arguments, str):
        return one_line(arguments)
    return "" if arguments is None else one_line(arguments)


def slash_command(content: str) -> str | None:
    """``/name args`` when ``content`` is only Claude Code's command tags with a name, else
    None."""
    if len(content) > 20_000 or not _TAGS_ONLY.fullmatch(content):
        return None
    tags = {name: value.strip() for name, value in _ONE_TAG.findall(content)}
    name = tags.get("command-name", "")
    if not name:
        return None
    if not name.startswith("/"):
        name = f"/{name}"
    args = tags.get("command-args", "")
    return one_line(f"{name} {args}" if args else name, 1_000)


__all__ = ["GIST_CHARS", "call_gist", "one_line", "slash_command"]
