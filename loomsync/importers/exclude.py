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

Patterns: a path (``~`` expands, relative to ``$HOME``) or a remote (has ``://`` or is
``user@host:path``, or starts with a host name such as ``github.com/``); both may hold
``fnmatch`` globs (``~/clients/*``, ``github.com/acme/*``). A session with no folder, remote
or hash is not excluded by repository (it cannot be told apart).
"""

from __future__ import annotations

import fnmatch
import hashlib
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

    ``agents``: importer names (``-`` form); ``folders``: absolute folder patterns;
    ``remotes``: :func:`remote_key` patterns.
    """

    agents: frozenset[str] = frozenset()
    folders: tuple[str, ...] = ()
    remotes: tuple[str, ...] = ()

    @classmethod
    def of(cls, config: ImportConfig, home: Path | None = None) -> Exclusions:
        """From config.toml's ``[import]`` (``home``: what relative folders are under;
        default ``$HOME``)."""
        base = home or Path.home()
        folders: list[str] = []
        remotes: list[str] = []
        for pattern in config.exclude_repositories:
            if _is_remote(pattern):
                remotes.append(remote_key(pattern))
            else:
                text = pattern.strip()
                if text == "~" or text.startswith("~/"):
                    text = str(base) + text[1:]  # ~ is the home given (default $HOME)
                path = Path(text).expanduser()
                path = path if path.is_absolute() else base / path
                folders.append(str(PurePosixPath(path.as_posix())).rstrip("/") or "/")
        agents = frozenset(name.replace("_", "-") for name in config.exclude_agents)
        return cls(agents, tuple(folders), tuple(remotes))

    def __bool__(self) -> bool:
        """True when anything is excluded."""
        return bool(self.agents or self.folders or self.remotes)

    def agent(self, name: str) -> bool:
        """True when the agent (importer name) is excluded."""
        return name in self.agents

    def _folder(self, path: str) -> bool:
        """True when ``path`` (absolute) is an excluded folder or inside one."""
        candidate = PurePosixPath(path)
        chain = [str(candidate), *(str(parent) for parent in candidate.parents)]
        for pattern in self.folders:
            if _GLOB.search(pattern):
                if any(fnmatch.fnmatchcase(each, pattern) for each in chain):
                    return True
            elif pattern in chain:
                return True
        return False

    def file(self, path: Path) -> bool:
        """True when the session file ``path`` lies inside an excluded repository folder:
        it is never opened."""
        return bool(self.folders) and self._folder(str(path.absolute()))

    def thread(self, thread: Thread) -> bool:
        """True when ``thread`` belongs to an excluded repository (module docstring)."""
        for folder in (thread.cwd, thread.workspace_root):
            if folder and folder.startswith("/") and self._folder(folder):
                return True
        if thread.git_remote_url and self.remotes:
            key = remote_key(thread.git_remote_url)
            if any(fnmatch.fnmatchcase(key, pattern) for pattern in self.remotes):
                return True
        digest = as_str(as_dict(as_dict(thread.metadata.extra).get("source")).get("project_hash"))
        if digest:
            hashes = {
                hashlib.sha256(f.encode()).hexdigest() for f in self.folders if not _GLOB.search(f)
            }
            return digest.lower() in hashes
        return False


__all__ = ["Exclusions", "remote_key"]
