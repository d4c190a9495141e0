"""Which folders ``loomsync watch`` watches, and for which format (issue 17 item 1).

By default the usual folders of the agents that write sessions as they work: Codex
(``~/.codex/sessions``, ``~/.codex/archived_sessions``, or under ``$CODEX_HOME``), Claude Code
(``~/.claude/projects``, and ``$CLAUDE_CONFIG_DIR/projects``) and Gemini CLI
(``~/.gemini/tmp``). ``[watch]`` in config.toml replaces a format's folders (relative to
``$HOME`` unless absolute), names Aider workspaces, and adds folders of any format::

    [watch]
    codex = [".codex/sessions"]
    aider = ["src/shop", "src/blog"]
    folders = ["agent-logs"]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loomsync.config import WatchConfig
from loomsync.importers import FORMATS

#: Formats watched in their usual folders when ``[watch]`` does not name them.
WATCHED_BY_DEFAULT = ("codex", "claude-code", "gemini-cli")

#: The name ends of the files each format writes; other files in a watched folder are not
#: looked at (lock files, temporary files, Gemini's ``logs.json`` is told apart by ``detect``).
SUFFIXES: dict[str, tuple[str, ...]] = {
    "codex": (".jsonl",),
    "claude-code": (".jsonl",),
    "gemini-cli": (".json",),
    "aider": (".aider.chat.history.md",),
    "codex-tui": (".jsonl",),
    "swe-agent": (".traj", ".json"),
    "openhands": (".json", ".jsonl"),
}
_ANY_SUFFIX = tuple(sorted({end for ends in SUFFIXES.values() for end in ends}))


@dataclass(frozen=True, slots=True)
class Source:
    """One watched folder: ``root`` (absolute) and the ``format`` its files are read with
    (None: each file by the format that recognises it, :func:`loomsync.importers.detect_format`)."""

    root: Path
    format: str | None

    def wants(self, path: Path) -> bool:
        """True if ``path`` (under :attr:`root`) has a name a session file of this source
        may have; hidden temporary files (``.x.json.tmp``) do not."""
        ends = SUFFIXES.get(self.format, _ANY_SUFFIX) if self.format else _ANY_SUFFIX
        return path.name.endswith(ends)


def _folder(home: Path, text: str) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else home / path


def sources(config: WatchConfig, home: Path | None = None) -> list[Source]:
    """The watched folders of ``config`` (``home`` defaults to ``$HOME``), in a stable order,
    without duplicates (the first format naming a folder keeps it)."""
    home = home or Path.home()
    found: dict[Path, Source] = {}
    for name, importer in FORMATS.items():
        # a format with no [watch] key of its own (a newer or third-party importer) is unset
        configured: list[str] | None = getattr(config, name.replace("-", "_"), None)
        if configured is None:
            roots = importer.default_paths() if name in WATCHED_BY_DEFAULT else []
        else:
            roots = [_folder(home, text) for text in configured]
        for root in roots:
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


__all__ = ["SUFFIXES", "WATCHED_BY_DEFAULT", "Source", "source_of", "sources"]
