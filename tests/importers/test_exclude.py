"""config.toml's ``[import]`` exclusions (issue 28 item 4; loomsync/importers/exclude.py): how
a session maps to the repository it must never leave, tested on real imported threads."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from loomsync.config import ImportConfig
from loomsync.importers import FORMATS
from loomsync.importers.exclude import Exclusions, remote_key
from tests.importers.corpus import TRANSCRIPTS

ROLLOUT = next((TRANSCRIPTS / "codex-rollout").glob("rollout-2026-02-23T12-54*.jsonl"))
GEMINI = TRANSCRIPTS / "gemini-cli" / "session-2025-12-01T21-45-5b959dae.json"


def _of(*patterns: str, home: Path = Path("/home/alice")) -> Exclusions:
    return Exclusions.of(ImportConfig(exclude_repositories=list(patterns)), home)


@pytest.mark.parametrize(
    "remote",
    [
        "git@github.com:Acme/Secret.git",
        "https://github.com/acme/secret",
        "https://token@github.com/acme/secret.git/",
        "ssh://git@github.com:22/acme/secret.git",
        "github.com/acme/secret",
    ],
)
def test_every_spelling_of_a_remote_is_one_repository(remote: str) -> None:
    assert remote_key(remote) == "github.com/acme/secret"


def test_a_codex_session_is_excluded_by_its_folder_its_parent_a_glob_or_its_remote() -> None:
    [thread] = FORMATS["codex"].parse(ROLLOUT).threads
    assert thread.cwd
    assert thread.git_remote_url
    parent = str(Path(thread.cwd).parent)
    assert _of(thread.cwd).thread(thread)
    assert _of(parent).thread(thread)
    assert _of(parent + "/*").thread(thread)
    assert _of(thread.git_remote_url).thread(thread)
    assert _of(thread.git_remote_url.rsplit("/", 1)[0] + "/*").thread(thread)
    assert not _of(thread.cwd + "-other", "github.com/someone/else").thread(thread)
    assert not _of(thread.cwd + "x").thread(thread)  # a folder whose name only starts alike


def test_a_gemini_chat_is_excluded_by_the_hash_of_its_project_folder() -> None:
    [thread] = FORMATS["gemini-cli"].parse(GEMINI).threads
    digest = thread.metadata.extra["source"]["project_hash"]
    assert hashlib.sha256(b"/home/alice/other").hexdigest() != digest
    assert not _of("/home/alice/other").thread(thread)
    patched = thread.model_copy(deep=True)
    patched.metadata.extra["source"]["project_hash"] = hashlib.sha256(
        b"/home/alice/secret"
    ).hexdigest()
    assert _of("~/secret").thread(patched)
    assert _of("secret").thread(patched)  # relative to $HOME


def test_a_file_inside_an_excluded_folder_is_never_opened_and_agents_by_either_spelling() -> None:
    exclusions = Exclusions.of(
        ImportConfig(exclude_agents=["claude_code"], exclude_repositories=["/srv/secret"])
    )
    assert exclusions.file(Path("/srv/secret/.aider.chat.history.md"))
    assert not exclusions.file(Path("/srv/secrets/.aider.chat.history.md"))
    assert exclusions.agent("claude-code")
    assert not exclusions.agent("codex")
    assert not Exclusions()
