"""What ``loomsync import`` reads (issue 28 item 4): the FORMAT-or-PATH argument, ``--all``,
and the exclusions of config.toml's ``[import]`` (:mod:`loomsync.importers.exclude`).

- ``loomsync import FORMAT [PATH…]``: that agent's files (default: its usual folders);
- ``loomsync import auto [PATH…]`` or ``loomsync import PATH…``: each file read by the agent
  that recognises it; a folder (one copied from another machine too) is searched by every
  agent's ``discover``;
- ``loomsync import --all``: every agent found in its usual folders
  (:mod:`loomsync.importers.found`).

Excluded agents are left out of ``auto``, ``PATH`` and ``--all``, and named explicitly they are
refused; files inside an excluded repository are never opened; what was left out is said
(newcomer finding 4).

The first argument is a FORMAT when it is ``auto`` or a registered importer's name; else it is
a PATH when it exists, holds a ``/``, starts with ``.`` or ``~``, or ends in a dot suffix
(``nope.jsonl``): a missing one is ``error: no such file or folder``, exit code 1 (newcomer
finding 6). A bare word that is none of these is an unknown FORMAT (a usage error, exit code
2). A folder named like a format is reached as ``./pi``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import typer

from loomsync.cli import messages
from loomsync.importers import BROKEN, FORMATS
from loomsync.importers.exclude import Exclusions
from loomsync.importers.run import AUTO, ImportSummary, detected_files, session_files


def broken_importers() -> list[str]:
    """One line per importer entry point that was left out (:data:`loomsync.importers.BROKEN`),
    for the commands that use the importers to say on stderr: a broken plug-in is said and
    skipped, never a reason to stop."""
    return [f"{line}; skipped" for line in BROKEN]


@dataclass
class Chosen:
    """What ``loomsync import`` reads: ``mode`` (``auto`` when each file's format was
    detected, else the format named), ``files`` (``[(format, file)]``), ``paths`` (the paths
    named, the PATH argument included) and ``left_out`` (the files config.toml excludes,
    counted in :attr:`ImportSummary.excluded_agents` / ``excluded_by``)."""

    mode: str
    files: list[tuple[str, Path]]
    paths: list[Path]
    left_out: ImportSummary = field(default_factory=ImportSummary)


def is_path_argument(text: str) -> bool:
    """True when the first argument of ``import``, not a registered format, names a path
    (module docstring): it exists, holds a path separator, starts with ``.`` or ``~``, or
    ends in a dot suffix."""
    if Path(text).expanduser().exists() or text.startswith((".", "~")):
        return True
    return "/" in text or os.sep in text or bool(Path(text).suffix)


def chosen_files(fmt: str | None, paths: list[Path], every: bool, exclusions: Exclusions) -> Chosen:
    """The files the command's arguments name (:class:`Chosen`).

    Raises:
        typer.BadParameter: no FORMAT, PATH or ``--all``; ``--all`` with paths; an unknown
            FORMAT that is no path either (:func:`is_path_argument`); an agent excluded in
            config.toml.
        InvalidInputError: a named path does not exist or is of no (or another) format.
    """
    if every:
        if paths or fmt not in (None, AUTO):
            raise typer.BadParameter(
                "--all imports every agent's usual folders: name no FORMAT or PATH with it",
                param_hint="'--all'",
            )
        fmt = AUTO
    if fmt is None:
        raise typer.BadParameter(
            "name a FORMAT (auto, or one `loomsync agents` lists), a PATH, or --all",
            param_hint="'FORMAT'",
        )
    if fmt != AUTO and fmt not in FORMATS:
        if not is_path_argument(fmt):
            raise typer.BadParameter(
                messages.unknown_import_format(fmt, list(FORMATS)), param_hint="'FORMAT'"
            )
        paths, fmt = [Path(fmt), *paths], AUTO  # `loomsync import PATH`: recognised here
    if fmt != AUTO and exclusions.agent(fmt):
        raise typer.BadParameter(
            f"{fmt} is excluded in config.toml ([import] exclude_agents)", param_hint="'FORMAT'"
        )
    if fmt == AUTO:
        found = detected_files(paths)
    else:
        found = [(fmt, file) for file in session_files(fmt, paths)]
    chosen = Chosen(fmt, [], paths)
    for name, file in found:
        if exclusions.agent(name):
            chosen.left_out.excluded_agents[name] += 1
        elif (place := exclusions.file_reason(file)) is not None:
            chosen.left_out.excluded += 1
            chosen.left_out.excluded_by[place] += 1
        else:
            chosen.files.append((name, file))
    return chosen


__all__ = ["Chosen", "broken_importers", "chosen_files", "is_path_argument"]
