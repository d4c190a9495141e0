"""Long output through a pager, like git (issue 16, item 7): ``loomsync show`` on a terminal.

The pager runs only when stdout is a terminal, the command was not given ``--no-pager``, and
the output is taller than the terminal (what fits is printed as it is). Which pager:
``LOOMSYNC_PAGER``, else ``PAGER``, else ``less -R``; ``cat`` or an empty value means none, and
so does a pager that is not installed. The command is run by ``sh -c`` (``PAGER="less -S"``
works), with ``LESS=FRX`` when ``LESS`` is unset, as git does: colours pass (``-R``), and
``less`` leaves the text on the screen when it quits (``-X``).

What is paged was rendered by the CLI's :class:`~loomsync.terminal.TerminalConsole`, so it is
already inert: the pager receives no control character of the thread's.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping

from rich.console import RenderableType
from rich.text import Text

from loomsync.terminal import TerminalConsole

DEFAULT = "less -R"


def pager_command(environ: Mapping[str, str]) -> str | None:
    """The pager to run: ``LOOMSYNC_PAGER``, ``PAGER``, then ``less -R``; None for ``cat``, an
    empty value, or a program that is not on ``PATH``."""
    command = environ.get("LOOMSYNC_PAGER", environ.get("PAGER", DEFAULT)).strip()
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if not words or words[0] == "cat" or shutil.which(words[0]) is None:
        return None
    return command


def _height(text: str, width: int) -> int:
    """Terminal lines ``text`` (with its styles' escape codes) takes at ``width`` columns."""
    lines = Text.from_ansi(text).plain.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return sum(max(1, -(-Text(line).cell_len // max(width, 1))) for line in lines)


def page(console: TerminalConsole, renderable: RenderableType, *, enabled: bool = True) -> None:
    """Print ``renderable``; through the pager when ``enabled``, ``console`` is a terminal,
    there is a pager (:func:`pager_command`) and it is taller than the terminal."""
    command = pager_command(os.environ) if enabled and console.is_terminal else None
    if command is None:
        console.print(renderable)
        return
    with console.capture() as captured:
        console.print(renderable)
    text = captured.get()
    if _height(text, console.width) < console.height:
        console.file.write(text)
        console.file.flush()
        return
    env = {**os.environ}
    env.setdefault("LESS", "FRX")
    process = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env)
    assert process.stdin is not None
    try:
        process.stdin.write(text.encode("utf-8", "replace"))
        process.stdin.close()
    except BrokenPipeError:
        pass  # the reader quit early (q in less): nothing more to show
    while True:
        try:
            process.wait()
            return
        except KeyboardInterrupt:
            continue  # Ctrl-C is the pager's (less stays open, as with git)


__all__ = ["DEFAULT", "page", "pager_command"]
