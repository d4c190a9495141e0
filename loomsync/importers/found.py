"""Which agents have written sessions on this machine (issue 28 item 4): ``loomsync agents``,
``loomsync import --all`` and ``loomsync watch`` with no ``[watch]`` entry ask this module.

An agent is *found* when one of its importer's ``default_paths()`` (which honour the agent's
own environment variables, ``$CODEX_HOME``, ``$CLAUDE_CONFIG_DIR``, …) exists. Its session
files are what ``discover`` finds there (a SQLite store is one file, however many sessions
it holds: counting those would mean reading every database). Agents excluded in config.toml
(``[import] exclude_agents``) are left out by the callers, through
:class:`~loomsync.importers.exclude.Exclusions`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from loomsync.importers import FORMATS
from loomsync.importers.common import Importer

#: ``live`` values and how ``loomsync agents`` says them.
LIVE_WORDS = {
    "append": "live (appended lines)",
    "rewrite": "live (file rewritten)",
    "sqlite": "live (SQLite rows)",
    "none": "import only",
}


@dataclass(frozen=True)
class FoundAgent:
    """One agent found here: its importer, its usual folders that exist, its session files
    there (None when not counted) and when ``loomsync watch`` last captured one of its files
    (the newest modification time it read, None if never)."""

    importer: Importer
    folders: tuple[Path, ...]
    files: int | None
    last_captured: datetime | None = None

    @property
    def name(self) -> str:
        """The importer's name (``claude-code``)."""
        return self.importer.name

    def as_dict(self) -> dict[str, object]:
        """The JSON form ``loomsync agents --json`` prints."""
        return {
            "name": self.name,
            "agent": self.importer.agent or self.name,
            "folders": [str(folder) for folder in self.folders],
            "files": self.files,
            "last_captured": self.last_captured.isoformat() if self.last_captured else None,
            "live": self.importer.live,
            "watched_by_default": self.importer.watch_by_default,
            "records": list(self.importer.records),
        }


def existing_folders(importer: Importer) -> tuple[Path, ...]:
    """The importer's usual folders that exist on this machine now (a file counts: some
    agents write one database)."""
    return tuple(dict.fromkeys(path for path in importer.default_paths() if path.exists()))


def session_files(importer: Importer, folders: tuple[Path, ...]) -> list[Path]:
    """The importer's session files under ``folders``, without duplicates, in order."""
    return list(dict.fromkeys(file for folder in folders for file in importer.discover(folder)))


def watched_files(importer: Importer, folders: tuple[Path, ...]) -> list[Path]:
    """The session files ``loomsync watch`` reads under ``folders``: :func:`session_files`
    without symbolic links (the watch never follows one out of its folder), so ``loomsync
    agents`` and the watch's ``watching <folder>: N file(s)`` count alike (newcomer
    finding 10)."""
    return [file for file in session_files(importer, folders) if not file.is_symlink()]


def found_agents(*, count: bool = True, captured: dict[str, int] | None = None) -> list[FoundAgent]:
    """Every registered agent with a usual folder on this machine, in registry order.

    ``count``: count their session files (``discover``, no file is parsed); ``captured``:
    importer name → newest ``mtime_ns`` the watch read (:func:`captured_times`).
    """
    agents: list[FoundAgent] = []
    for importer in FORMATS.values():
        folders = existing_folders(importer)
        if not folders:
            continue
        files = len(watched_files(importer, folders)) if count else None
        when = (captured or {}).get(importer.name)
        stamp = datetime.fromtimestamp(when / 1e9, tz=UTC) if when else None
        agents.append(FoundAgent(importer, folders, files, stamp))
    return agents


def captured_times(offsets_file: Path) -> dict[str, int]:
    """Importer name → the newest modification time (ns) of a file ``loomsync watch`` read
    for it, from its offsets database (:mod:`loomsync.watch.offsets`); {} when there is none
    (it is opened read-only, never created)."""
    import sqlite3

    if not offsets_file.is_file():
        return {}
    try:
        db = sqlite3.connect(f"{offsets_file.as_uri()}?mode=ro", uri=True)
        try:
            rows = db.execute(
                "SELECT format, MAX(mtime_ns) FROM files WHERE ignored = 0 AND format IS NOT NULL"
                " GROUP BY format"
            ).fetchall()
        finally:
            db.close()
    except sqlite3.Error:
        return {}
    return {str(name): int(value) for name, value in rows if value}


__all__ = [
    "LIVE_WORDS",
    "FoundAgent",
    "captured_times",
    "existing_folders",
    "found_agents",
    "session_files",
    "watched_files",
]
