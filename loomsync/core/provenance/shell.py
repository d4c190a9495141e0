"""Files a shell command writes, where the command line alone tells it reliably.

Found (each a test in tests/provenance/test_shell.py):

- ``sed -i`` / ``sed --in-place`` / ``perl -i`` / ``perl -pi -e``: the file operands (edit);
- output redirections ``> F``, ``>> F``, ``&> F``, ``1> F`` (write; ``/dev/*`` ignored), so
  also ``cat > F <<EOF … EOF`` and ``echo x >> F``; a here-document's body is the text written;
- ``tee [-a] F…`` (write), ``touch F…`` (write), ``rm [-f] F…`` (delete),
  ``mv A B`` (A deleted, B written), ``cp A B`` (B written) when B is not a folder path;
- ``apply_patch`` / ``git apply`` given the patch inline (Codex's envelope or a unified diff);
- ``cd DIR && …`` moves the folder later relative paths are read against;
  ``bash -c``/``sh -lc`` scripts (Codex's ``["bash", "-lc", …]``) are read inside.

Not found (a program decides what it writes, or the shell does at run time): scripts and
tools (``python x.py``, ``npm install``, formatters, ``git checkout``/``git apply F``),
globs (``sed -i s/a/b/ *.py``), variables and command substitution (``> "$OUT"``),
``cp``/``mv`` into a folder, ``xargs``, ``find -exec``, loops, and files written by a
command that runs in another folder than the one ``cd`` says (``pushd``, subshells).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass

from loomsync.core.provenance.patches import is_patch, patched_files

#: Longest command read (characters); longer ones are scanned for nothing.
MAX_COMMAND_CHARS = 200_000
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_SEPARATORS = {";", "&&", "||", "|", "&", "\n", "(", ")", "|&", ";;"}
_REDIRECTS = {">", ">>", "&>", "&>>", ">|", "1>", "1>>"}
_UNSURE = re.compile(r"[*?\[\]$`{}]")
_SHELLS = {"bash", "sh", "zsh", "dash"}


@dataclass(frozen=True, slots=True)
class ShellWrite:
    """A file a command writes: ``path`` as written in the command, made absolute against the
    folder ``cd`` moved to when it could be (else as written), ``action`` (``edit``,
    ``write`` or ``delete``), and ``text``, what is written when the command shows it (a
    here-document's body, ``echo``'s words, a patch's added lines), else ``""``."""

    path: str
    action: str
    text: str


def shell_writes(command: str, cwd: str | None = None) -> list[ShellWrite]:
    """The files ``command`` (one shell script, possibly many lines) writes, in order, as far
    as its text tells (module docstring); ``cwd`` is the folder it runs in. Never raises."""
    if not command or len(command) > MAX_COMMAND_CHARS:
        return []
    if is_patch(command):
        return [ShellWrite(f.path, f.action, f.added) for f in patched_files(command)]
    script, bodies = _cut_heredocs(command)
    tokens: list[str] = []
    pending = ""
    for line in script.split("\n"):  # one line at a time; a quote spanning lines joins them
        pending = f"{pending}\n{line}" if pending else line
        try:
            tokens.extend([*_words(pending), ";"])
            pending = ""
        except ValueError:  # an open quote: read on with the next line
            continue
    found: list[ShellWrite] = []
    folder = cwd
    for words, heredoc in _simple_commands(tokens, bodies):
        folder = _run(words, heredoc, folder, found)
    return found


def _words(text: str) -> list[str]:
    """Shell words and operators of ``text`` (POSIX quoting). Raises ValueError on an
    unclosed quote."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    return list(lexer)


def _cut_heredocs(command: str) -> tuple[str, list[str]]:
    """The command with each here-document body removed, and the bodies in order."""
    lines = command.split("\n")
    kept: list[str] = []
    bodies: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        kept.append(line)
        i += 1
        for match in _HEREDOC.finditer(line):
            strip_tabs, end = match.group(1) == "-", match.group(3)
            body: list[str] = []
            while i < len(lines) and (lines[i].lstrip("\t") if strip_tabs else lines[i]) != end:
                body.append(lines[i])
                i += 1
            i += 1
            bodies.append("\n".join(body))
    return "\n".join(kept), bodies


def _simple_commands(tokens: list[str], bodies: list[str]) -> list[tuple[list[str], str]]:
    """Split tokens into simple commands; each with the here-document body it reads, if any."""
    commands: list[tuple[list[str], str]] = []
    words: list[str] = []
    heredoc = ""
    for token in tokens:
        if token in _SEPARATORS:
            if words:
                commands.append((words, heredoc))
            words, heredoc = [], ""
        elif token.startswith("<<") and token in ("<<", "<<-"):
            heredoc = bodies.pop(0) if bodies else ""
            words.append(token)
        else:
            words.append(token)
    if words:
        commands.append((words, heredoc))
    return commands


def _sure(path: str) -> bool:
    return bool(path) and not _UNSURE.search(path) and not path.startswith("-")


def _at(folder: str | None, path: str) -> str:
    if folder and not posixpath.isabs(path) and not path.startswith("~"):
        return posixpath.join(folder, path)
    return path


def _run(words: list[str], heredoc: str, folder: str | None, found: list[ShellWrite]) -> str | None:
    """Record what one simple command writes; return the folder after it (``cd``)."""
    words, redirected = _redirections(words)
    for path in redirected:
        if _sure(path) and not path.startswith("/dev/"):
            text = heredoc or _echoed(words)
            found.append(ShellWrite(_at(folder, path), "write", text))
    while words and "=" in words[0] and not words[0].startswith("="):  # VAR=value cmd
        words = words[1:]
    if words and words[0] in ("sudo", "command", "exec", "time", "nohup"):
        words = words[1:]
    if not words:
        return folder
    name, args = posixpath.basename(words[0]), words[1:]
    if name == "cd":
        target = args[0] if args else ""
        if not _sure(target) or target.startswith("~"):
            return None  # somewhere we cannot tell: later relative paths are not trusted
        return (
            posixpath.normpath(_at(folder, target)) if folder or posixpath.isabs(target) else None
        )
    if name in _SHELLS and len(args) >= 2 and args[0] in ("-c", "-lc", "-ic", "-cl"):
        found.extend(shell_writes(args[1], folder))
        return folder
    if name in ("apply_patch", "applypatch") and args:
        found.extend(
            ShellWrite(_at(folder, f.path), f.action, f.added) for f in patched_files(args[0])
        )
        return folder
    for path, action in _operands(name, args):
        if _sure(path):
            found.append(ShellWrite(_at(folder, path), action, ""))
    return folder


def _redirections(words: list[str]) -> tuple[list[str], list[str]]:
    """Words without their redirections, and the files written by ``>``-like ones."""
    kept: list[str] = []
    targets: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("2", "0") and i + 1 < len(words) and words[i + 1] in (">", ">>"):
            i += 3  # stderr to a file: a log, not a file of the work
            continue
        if word in _REDIRECTS or (word.endswith(">") and word.rstrip(">") in ("1", "&")):
            if i + 1 < len(words) and words[i + 1] != "&":
                targets.append(words[i + 1])
            i += 2
            continue
        if word in ("<", "<<", "<<-", "<<<"):
            i += 2
            continue
        if word == ">&" or word.startswith(">&"):
            i += 2 if word == ">&" else 1
            continue
        kept.append(word)
        i += 1
    return kept, targets


def _echoed(words: list[str]) -> str:
    if words and words[0] in ("echo", "printf"):
        return " ".join(w for w in words[1:] if not w.startswith("-"))
    return ""


def _operands(name: str, args: list[str]) -> list[tuple[str, str]]:
    """The files command ``name`` writes, from its arguments (module docstring)."""
    if name == "sed":
        return _sed(args)
    if name == "perl":
        inplace = any(a.startswith("-") and not a.startswith("--") and "i" in a for a in args)
        if not inplace:
            return []
        rest = [a for a in args if not a.startswith("-")]
        # perl -pi -e 'SCRIPT' FILE…: the script follows -e, the files come after it
        return (
            [(a, "edit") for a in rest[1:]]
            if any("e" in a for a in args if a.startswith("-"))
            else []
        )
    if name == "tee":
        return [(a, "write") for a in args if not a.startswith("-")]
    if name == "touch":
        return [(a, "write") for a in args if not a.startswith("-")]
    if name in ("rm", "unlink"):
        if any(a.startswith("-") and "r" in a.lower() and not a.startswith("--") for a in args):
            return []  # a folder removed: its files are not named
        return [(a, "delete") for a in args if not a.startswith("-")]
    if name in ("mv", "cp"):
        plain = [a for a in args if not a.startswith("-")]
        if len(plain) != 2 or plain[1].endswith("/") or plain[1] in (".", ".."):
            return []
        if name == "cp" and any(a.startswith("-") and "r" in a.lower() for a in args):
            return []
        moved = [(plain[0], "delete")] if name == "mv" else []
        return [*moved, (plain[1], "write")]
    return []


def _sed(args: list[str]) -> list[tuple[str, str]]:
    """``sed -i[SUFFIX] [-e SCRIPT]… [SCRIPT] FILE…``: the files, when editing in place."""
    inplace = False
    script_given = False
    files: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-e", "--expression", "-f", "--file"):
            script_given = True
            i += 2
            continue
        if arg.startswith(("--expression=", "--file=")):
            script_given = True
        elif arg.startswith("--in-place") or (
            arg.startswith("-") and not arg.startswith("--") and "i" in arg
        ):
            inplace = True  # -i, -i.bak, -Ei: whatever follows the i is a backup suffix
            if arg == "-i" and i + 1 < len(args) and args[i + 1] == "":
                i += 1  # BSD/macOS sed: -i '' (no backup) is two words
        elif arg == "--":
            files.extend(args[i + 1 :])
            break
        elif not arg.startswith("-"):
            files.append(arg)
        i += 1
    if not inplace:
        return []
    if not script_given:
        files = files[1:]
    return [(f, "edit") for f in files]
