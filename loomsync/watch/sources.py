"""Which folders ``loomsync watch`` watches, and for which agent (issue 17 item 1, issue 28).

Everything comes from the importers' own declarations (:class:`loomsync.importers.Importer`),
so an importer added to the ``loomsync.importers`` entry-point group is watched with no change
here:

- **Without a ``[watch]`` entry for an agent** it is watched in its usual folders
  (``default_paths()``) when its ``live`` is not ``none`` and either ``watch_by_default`` is
  set (its folders are waited for when missing) or one of its folders exists (the agent was
  found on this machine, :mod:`loomsync.importers.found`). An import-only agent
  (``live="none"``) is never watched. The rule for ``watch_by_default`` (newcomer finding 7):
  only the big command-line agents whose folder is in ``$HOME`` and commonly appears after
  loomsync is set up (Codex, Claude Code, Gemini CLI) declare it; the running watch derives
  its folders again every few seconds (:class:`loomsync.watch.loop.Watched`), so any other
  agent's folder that appears later (or a project added to Crush's ``projects.json``) is
  watched from then on too: the flag only decides which missing folders the start-up line
  names.
- **A ``[watch]`` key naming an agent** replaces its folders (relative to ``$HOME`` unless
  absolute); ``[]`` watches none of it. ``folders`` adds folders of any agent::

      [watch]
      codex = [".codex/sessions"]
      aider = ["src/shop", "src/blog"]
      folders = ["agent-logs"]

- **``[import] exclude_agents``** leaves an agent out altogether, configured or not.

Which files of a folder are looked at: those whose name ends with one of the agent's
``suffixes`` (any registered agent's for a ``folders`` entry).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loomsync.config import WatchConfig
from loomsync.errors import ConfigError
from loomsync.importers import FORMATS
from loomsync.importers.exclude import Exclusions


def watched_by_default() -> tuple[str, ...]:
    """The agents watched in their usual folders even before those exist."""
    return tuple(
        name for name, imp in FORMATS.items() if imp.watch_by_default and imp.live != "none"
    )


def suffixes(name: str | None) -> tuple[str, ...]:
    """The name ends of the files agent ``name`` writes (every agent's for None)."""
    if name is not None:
        return FORMATS[name].suffixes
    return tuple(sorted({end for importer in FORMATS.values() for end in importer.suffixes}))


@dataclass(frozen=True, slots=True)
class Source:
    """One watched folder: ``root`` (absolute) and the ``format`` its files are read with
    (None: each file by the format that recognises it, :func:`loomsync.importers.detect_format`)."""

    root: Path
    format: str | None

    def wants(self, path: Path) -> bool:
        """True if ``path`` (under :attr:`root`) has a name a file of this source's agent
        may have (its ``suffixes``; a ``-wal`` or ``-shm`` of a SQLite store among them);
        hidden temporary files (``.x.json.tmp``) do not."""
        ends = suffixes(self.format if self.format in FORMATS else None)
        return path.name.endswith(ends)


def _folder(home: Path, text: str) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else home / path


def _configured(config: WatchConfig) -> dict[str, list[str]]:
    """``[watch]``'s agent keys by importer name.

    Raises:
        ConfigError: a key names no installed importer.
    """
    configured = config.agent_folders()
    unknown = sorted(name for name in configured if name not in FORMATS)
    if unknown:
        raise ConfigError(
            f"invalid client configuration: watch.{unknown[0]}: no such agent; installed:"
            f" {', '.join(FORMATS)}"
        )
    return configured


def sources(
    config: WatchConfig, home: Path | None = None, exclusions: Exclusions | None = None
) -> list[Source]:
    """The watched folders of ``config`` (``home`` defaults to ``$HOME``), in a stable order,
    without duplicates (the first agent naming a folder keeps it); see the module docstring.

    Raises:
        ConfigError: ``[watch]`` names an agent no importer is installed for.
    """
    home = home or Path.home()
    exclusions = exclusions or Exclusions()
    configured = _configured(config)
    by_default = watched_by_default()
    found: dict[Path, Source] = {}
    for name, importer in FORMATS.items():
        if exclusions.agent(name):
            continue
        if name in configured:
            roots = [_folder(home, text) for text in configured[name]]
        elif importer.live == "none":
            roots = []
        else:
            usual = importer.default_paths()
            roots = usual if name in by_default else [p for p in usual if p.exists()]
        for root in roots:
            root = root.parent if root.is_file() else root  # a database: watch its folder
            found.setdefault(root, Source(root, name))
    for text in config.folders:
        root = _folder(home, text)
        found.setdefault(root, Source(root, None))
    return list(found.values())


def source_of(path: Path, watched: list[Source]) -> Source | None:
    """The source whose folder holds ``path`` (the deepest one), or None."""
    best: Source | None = None
    for source in watched:
        if path.is_relative_to(source.root) and (
            best is None or len(source.root.parts) > len(best.root.parts)
        ):
            best = source
    return best


__all__ = ["Source", "source_of", "sources", "suffixes", "watched_by_default"]
