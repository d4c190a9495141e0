"""Importers: session files written by coding agents → thread documents (API.md section 2).

Each format is a module with a pure ``parse(path) -> ImportResult`` and an :class:`Importer`
entry in :data:`FORMATS`::

    from loomsync.importers import FORMATS, import_path

    result = import_path(Path("~/.codex/sessions").expanduser())
    for thread in result.threads: ...
    result.warnings, result.skipped  # unreadable files; damaged lines by reason

Thread ids are stable: ``T-<session uuid>`` when the agent names its session with a UUID,
otherwise a UUIDv5 (:data:`~loomsync.importers.common.NAMESPACE`) over the format and the
session's identity, so importing again gives the same ids and the same documents. With
``owner`` (the token's ``sub``) every id is re-keyed for that owner (:meth:`ThreadId.owned`,
issue 15 item 5): two people importing one file get two threads, and the same person gets the
same ids on every machine. ``loomsync import`` always passes an owner.
"""

from __future__ import annotations

import logging
from importlib.metadata import entry_points
from pathlib import Path

from loomsync.importers.common import Importer, ImportResult, owned_by

#: The entry-point group importers are found through (issue 28 item 2). A third party ships an
#: importer as a package of its own whose metadata names a module attribute holding an
#: :class:`Importer`::
#:
#:     [project.entry-points."loomsync.importers"]
#:     myagent = "loomsync_myagent:IMPORTER"
#:
#: The built-in importers are registered the same way, in this project's pyproject.toml.
ENTRY_POINT_GROUP = "loomsync.importers"

log = logging.getLogger("loomsync.importers")

#: One line per entry point of :data:`ENTRY_POINT_GROUP` that was left out (it failed to load,
#: or is not an :class:`Importer`): the library logs them; the CLI says them on stderr.
BROKEN: list[str] = []


def _load() -> dict[str, Importer]:
    """Every importer of :data:`ENTRY_POINT_GROUP`, by name, in detection order.

    An entry point that fails to load, or names something that is not an :class:`Importer`,
    is logged once and left out: one broken plug-in never stops the others. Two importers of
    one name: the one from this package wins, then the first found.
    """
    found: dict[str, Importer] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            importer = point.load()
        except Exception as exc:  # a third party's import error must not stop the others
            BROKEN.append(f"importer {point.name} ({point.value}) does not load: {exc}")
            log.warning("%s", BROKEN[-1])
            continue
        if not isinstance(importer, Importer):
            BROKEN.append(f"importer {point.name} ({point.value}) is not a loomsync Importer")
            log.warning("%s", BROKEN[-1])
            continue
        builtin = point.value.startswith("loomsync.")
        if importer.name in found and not builtin:
            continue
        found[importer.name] = importer
    ordered = sorted(found.values(), key=lambda importer: (importer.order, importer.name))
    return {importer.name: importer for importer in ordered}


#: Every supported format by name, in the order :func:`detect_format` tries them.
FORMATS: dict[str, Importer] = _load()


def detect_format(path: Path) -> str | None:
    """The name of the format of the file ``path`` (a look at its name and first bytes), or
    None if no importer recognises it (or it cannot be read)."""
    if not path.is_file():
        return None
    return next((name for name, importer in FORMATS.items() if importer.detect(path)), None)


def parse_file(importer: Importer, path: Path, owner: str | None = None) -> ImportResult:
    """``importer.parse(path)``, its threads re-keyed for ``owner`` (:func:`owned_by`; None:
    the file's own ids)."""
    result = importer.parse(path)
    if owner is not None:
        result.threads = [owned_by(thread, owner) for thread in result.threads]
    return result


def import_path(path: Path, format: str | None = None, *, owner: str | None = None) -> ImportResult:
    """Import every session file at ``path`` (a file, or a folder searched recursively).

    With ``format`` only that importer is used; otherwise each file is read by the format
    :func:`detect_format` finds. A file no importer recognises is reported in ``warnings``
    when it was named directly; files that cannot be read are reported and skipped.

    ``owner``: re-key every id for this owner (:func:`parse_file`); None gives the ids the
    files carry, as before issue 15.

    Raises:
        KeyError: ``format`` is not a key of :data:`FORMATS`.
    """
    result = ImportResult()
    importers = [FORMATS[format]] if format is not None else list(FORMATS.values())
    if path.is_file():
        name = format or detect_format(path)
        if name is None:
            result.warnings.append(f"{path}: not a session file of a known format")
        else:
            result.add(parse_file(FORMATS[name], path, owner))
        return result
    if not path.exists():
        result.warnings.append(f"{path}: no such file or folder")
        return result
    seen: set[Path] = set()
    for importer in importers:
        for file in importer.discover(path):
            if file not in seen:
                seen.add(file)
                result.add(parse_file(importer, file, owner))
    return result


__all__ = [
    "BROKEN",
    "FORMATS",
    "ImportResult",
    "Importer",
    "detect_format",
    "import_path",
    "parse_file",
]
