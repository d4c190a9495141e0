"""What ``loomsync import`` reads (issue 28 item 4): the FORMAT-or-PATH argument, ``--all``,
and the exclusions of config.toml's ``[import]`` (:mod:`loomsync.importers.exclude`).

- ``loomsync import FORMAT [PATH…]``: that agent's files (default: its usual folders);
- ``loomsync import auto [PATH…]`` or ``loomsync import PATH…``: each file read by the agent
  that recognises it; a folder (one copied from another machine too) is searched by every
  agent's ``discover``;
- ``loomsync import --all``: every agent found in its usual folders
  (:mod:`loomsync.importers.found`).

Excluded agents are left out of ``auto``, ``PATH`` and ``--all``, and named explicitly they are
refused; files inside an excluded repository are never opened.
"""

from __future__ import annotations

from pathlib import Path

import typer

from loomsync.cli import messages
from loomsync.importers import BROKEN, FORMATS
from loomsync.importers.exclude import Exclusions
from loomsync.importers.run import AUTO, detected_files, session_files


def broken_importers() -> list[str]:
    """One line per importer entry point that was left out (:data:`loomsync.importers.BROKEN`),
    for the commands that use the importers to say on stderr: a broken plug-in is said and
    skipped, never a reason to stop."""
    return [f"{line}; skipped" for line in BROKEN]


def chosen_files(
    fmt: str | None, paths: list[Path], every: bool, exclusions: Exclusions
) -> tuple[str, list[tuple[str, Path]]]:
    """``(mode, [(format, file)])`` for the command's arguments; ``mode`` is ``auto`` when
    each file's format was detected, else the format named.

    Raises:
        typer.BadParameter: no FORMAT, PATH or ``--all``; ``--all`` with paths; an unknown
            FORMAT that is no existing path either; an agent excluded in config.toml.
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
        if not Path(fmt).expanduser().exists():
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
    kept = [
        (name, file)
        for name, file in found
        if not exclusions.agent(name) and not exclusions.file(file)
    ]
    return fmt, kept


__all__ = ["broken_importers", "chosen_files"]
