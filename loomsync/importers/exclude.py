"""What is never read: agents and repositories excluded in config.toml (issue 28 item 4).

``[import]`` (:class:`loomsync.config.ImportConfig`) names agents to leave out and
repositories that must never leave the machine. A session belongs to a repository when:

- the session file itself lies inside the repository's folder (an Aider history, a SWE-agent
  trajectory): the file is never opened (:meth:`Exclusions.file`);
- its working folder (``cwd`` or ``workspace_root`` of the thread) is the folder or inside it
  (:meth:`Exclusions.thread`): the thread is dropped as soon as it is parsed, before it is
  redacted, stored, indexed or synced; nothing of it is kept;
- its git remote (``git_remote_url``) matches an excluded remote: ``git@github.com:acme/x.git``,
  ``https://github.com/acme/x`` and ``ssh://git@github.com/acme/x`` are one repository
  (compared as ``github.com/acme/x``, lower case, without ``.git``);
- Gemini CLI records no folder, only ``projectHash`` (the SHA-256 of the project's root
  path): a session whose hash is that of an excluded folder (one without globs) is dropped.

Paths are compared after making them absolute and resolving symbolic links on both sides
(newcomer finding 1): a configured folder is kept as written (``~`` expanded against
``$HOME``) and as resolved (for a glob, its leading folders without glob characters are
resolved); a file, ``cwd`` or ``workspace_root`` matches when its absolute form (relative
ones against the current folder, ``..`` folded) or its resolved form is, or is inside, one of
them. So ``/link/secret`` excludes the sessions of ``/real/secret`` (and the other way
round), ``~/src/x`` holds with a ``$HOME`` reached through a link, and ``import ../x`` is
excluded like ``import /abs/x``.

Patterns: a path (``~`` expands, relative to ``$HOME``) or a remote (has ``://`` or is
``user@host:path``, or starts with a host name such as ``github.com/``); both may hold
``fnmatch`` globs (``~/clients/*``, ``github.com/acme/*``). A session with no folder, remote
or hash is not excluded by repository (it cannot be told apart).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from loomsync.config import ImportConfig
from loomsync.core.document.model import Thread
from loomsync.importers.common import as_dict, as_str

_SCP = re.compile(r"^(?:[\w.-]+@)?([\w.-]+):(?!//)(.+)$")  # git@host:org/repo
_HOST_PATH = re.compile(r"^[\w-]+(?:\.[\w-]+)+/")  # github.com/org/repo
_GLOB = re.compile(r"[*?\[]")


def remote_key(remote: str) -> str:
    """``host/path`` of a git remote, lower case, without scheme, user, port or ``.git``
    (``git@github.com:Acme/X.git`` → ``github.com/acme/x``)."""
    text = remote.strip()
    if "://" in text:
        text = text.split("://", 1)[1]
        text = text.split("@", 1)[1] if "@" in text.split("/", 1)[0] else text
        host, _, rest = text.partition("/")
        text = f"{host.split(':', 1)[0]}/{rest}"
    elif match := _SCP.match(text):
        text = f"{match.group(1)}/{match.group(2)}"
    return text.rstrip("/").removesuffix(".git").lower()


def _is_remote(pattern: str) -> bool:
    text = pattern.strip()
    if text.startswith(("/", "~", ".")):
        return False
    return "://" in text or bool(_SCP.match(text)) or bool(_HOST_PATH.match(text))


@dataclass(frozen=True)
class Exclusions:
    """The ``[import]`` exclusions, ready to test agents, files and threads against.

    ``agents``: importer names (``-`` form); ``folders``: absolute folder patterns (each as
    written and resolved); ``remotes``: :func:`remote_key` patterns; ``written``: the
    config.toml pattern of each of ``folders``.
    """

    agents: frozenset[str] = frozenset()
    folders: tuple[str, ...] = ()
    remotes: tuple[str, ...] = ()
    #: the pattern of config.toml each of ``folders`` comes from (same order), to name it
    written: tuple[str, ...] = ()

    @classmethod
    def of(cls, config: ImportConfig, home: Path | None = None) -> Exclusions:
        """From config.toml's ``[import]`` (``home``: what relative folders are under;
        default ``$HOME``). Each folder pattern is kept as written (absolute) and resolved."""
        base = home or Path.home()
        folders: dict[str, str] = {}
        remotes: list[str] = []
        for pattern in config.exclude_repositories:
            if _is_remote(pattern):
                remotes.append(remote_key(pattern))
                continue
            text = pattern.strip()
            if text == "~" or text.startswith("~/"):
                text = str(base) + text[1:]  # ~ is the home given (default $HOME)
            path = Path(text).expanduser()
            written = _posix(os.path.normpath(path if path.is_absolute() else base / path))
            for form in (written, _resolved_pattern(written)):
                folders.setdefault(form, pattern.strip())
        agents = frozenset(name.replace("_", "-") for name in config.exclude_agents)
        return cls(agents, tuple(folders), tuple(remotes), tuple(folders.values()))

    def __bool__(self) -> bool:
        """True when anything is excluded."""
        return bool(self.agents or self.folders or self.remotes)

    def agent(self, name: str) -> bool:
        """True when the agent (importer name) is excluded."""
        return name in self.agents

    def _folder(self, path: str) -> str | None:
        """The config.toml pattern ``path`` (absolute, normalised) is excluded by (it is the
        folder or inside it), or None."""
        candidate = PurePosixPath(path)
        chain = [str(candidate), *(str(parent) for parent in candidate.parents)]
        for index, pattern in enumerate(self.folders):
            if _GLOB.search(pattern):
                if any(fnmatch.fnmatchcase(each, pattern) for each in chain):
                    return self._written(index, pattern)
            elif pattern in chain:
                return self._written(index, pattern)
        return None

    def _written(self, index: int, pattern: str) -> str:
        return self.written[index] if index < len(self.written) else pattern

    def _place(self, path: str | Path) -> str | None:
        """The pattern excluding ``path`` in its absolute or its resolved form, or None."""
        for form in _forms(path):
            if (found := self._folder(form)) is not None:
                return found
        return None

    def file_reason(self, path: Path) -> str | None:
        """The config.toml pattern of the excluded repository the session file ``path`` lies
        in (compared absolute and resolved), or None."""
        return self._place(path) if self.folders else None

    def file(self, path: Path) -> bool:
        """True when the session file ``path`` lies inside an excluded repository folder:
        it is never opened."""
        return self.file_reason(path) is not None

    def thread_reason(self, thread: Thread) -> str | None:
        """The config.toml pattern (folder, remote or the folder of a Gemini project hash)
        that excludes ``thread`` (module docstring), or None."""
        if self.folders:
            for folder in (thread.cwd, thread.workspace_root):
                if folder and (found := self._place(folder)) is not None:
                    return found
        if thread.git_remote_url and self.remotes:
            key = remote_key(thread.git_remote_url)
            for pattern in self.remotes:
                if fnmatch.fnmatchcase(key, pattern):
                    return pattern
        digest = as_str(as_dict(as_dict(thread.metadata.extra).get("source")).get("project_hash"))
        if digest:
            for index, folder in enumerate(self.folders):
                if not _GLOB.search(folder):
                    if hashlib.sha256(folder.encode()).hexdigest() == digest.lower():
                        return self._written(index, folder)
        return None

    def thread(self, thread: Thread) -> bool:
        """True when ``thread`` belongs to an excluded repository (module docstring)."""
        return self.thread_reason(thread) is not None


def _posix(path: str) -> str:
    return str(PurePosixPath(Path(path).as_posix())).rstrip("/") or "/"


def _resolved_pattern(pattern: str) -> str:
    """``pattern`` with its leading folders that hold no glob resolved (links followed)."""
    parts = PurePosixPath(pattern).parts
    plain = next((i for i, part in enumerate(parts) if _GLOB.search(part)), len(parts))
    head = Path(*parts[:plain]).resolve() if plain else Path("/")
    return _posix(str(PurePosixPath(head.as_posix(), *parts[plain:])))


def _forms(path: str | Path) -> list[str]:
    """``path`` absolute (against the current folder, ``..`` folded) and resolved."""
    absolute = _posix(os.path.abspath(os.path.expanduser(path)))
    try:
        resolved = _posix(str(Path(absolute).resolve()))
    except (OSError, RuntimeError):  # a link loop, a folder we may not read
        return [absolute]
    return [absolute] if resolved == absolute else [absolute, resolved]


__all__ = ["Exclusions", "remote_key"]
