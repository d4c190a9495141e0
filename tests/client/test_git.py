"""Git context from real repositories made in tmp_path with the git command line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from loomsync import MemoryThreadStore, normalize_remote_url, resume, snapshot_git_state
from tests.client.conftest import new_thread

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def commit(repo: Path, name: str) -> str:
    (repo / name).write_text(name)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", f"add {name}")
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "remote", "add", "origin", "https://user:secret-token@GitHub.com/acme/webapp.git")
    commit(path, "README")
    return path


def test_first_snapshot_sets_initial_and_current_state(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    thread = snapshot_git_state(new_thread(1), repo)
    assert (thread.git_initial_branch, thread.git_branch) == ("main", "main")
    assert (thread.git_initial_commit_sha, thread.git_current_commit_sha) == (head, head)
    assert (thread.git_start_dirty, thread.git_end_dirty) == (False, False)
    assert thread.git_commits == [head]
    assert thread.git_remote_url == "github.com/acme/webapp"
    assert thread.workspace_root == str(repo.resolve())


def test_later_snapshots_keep_the_initial_state_and_append_new_commits(repo: Path) -> None:
    start = git(repo, "rev-parse", "HEAD")
    thread = snapshot_git_state(new_thread(1), repo)
    git(repo, "checkout", "-q", "-b", "feature/auth")
    second = commit(repo, "a.txt")
    third = commit(repo, "b.txt")
    (repo / "untracked.txt").write_text("wip")

    thread = snapshot_git_state(thread, repo)
    thread = snapshot_git_state(thread, repo)  # nothing new: no duplicates
    assert (thread.git_initial_branch, thread.git_initial_commit_sha, thread.git_start_dirty) == (
        "main",
        start,
        False,
    )
    assert (thread.git_branch, thread.git_current_commit_sha, thread.git_end_dirty) == (
        "feature/auth",
        third,
        True,
    )
    assert thread.git_commits == [start, second, third]


def test_detached_head_and_an_empty_repository(repo: Path, tmp_path: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "--detach")
    detached = snapshot_git_state(new_thread(0), repo)
    assert (detached.git_branch, detached.git_current_commit_sha) == (None, head)

    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "trunk")
    fresh = snapshot_git_state(new_thread(0), empty)
    assert (fresh.git_branch, fresh.git_current_commit_sha, fresh.git_commits) == (
        "trunk",
        None,
        [],
    )
    assert fresh.git_remote_url is None


def test_outside_a_repository_nothing_changes_and_nothing_fails(tmp_path: Path) -> None:
    thread = new_thread(1)
    assert snapshot_git_state(thread, tmp_path) == thread
    assert snapshot_git_state(thread, tmp_path / "does-not-exist") == thread


def test_without_git_installed_nothing_changes(
    repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-binaries-here"))
    thread = new_thread(1)
    assert snapshot_git_state(thread, repo) == thread


@pytest.mark.parametrize(
    ("url", "normalized"),
    [
        ("git@github.com:user/project.git", "github.com/user/project"),
        ("https://github.com/user/project", "github.com/user/project"),
        ("https://token:x-oauth@github.com/user/project.git/", "github.com/user/project"),
        (
            "ssh://git@GitLab.example.com:2222/group/sub/project.git",
            "gitlab.example.com/group/sub/project",
        ),
        ("git://example.org/user/project.git", "example.org/user/project"),
        ("/srv/git/project.git", "/srv/git/project"),
        ("file:///srv/git/project.git", "/srv/git/project"),
    ],
)
def test_remote_urls_are_normalised_to_host_owner_repo(url: str, normalized: str) -> None:
    assert normalize_remote_url(url) == normalized


def test_resume_tells_what_changed_since_the_last_save(repo: Path, tmp_path: Path) -> None:
    store = MemoryThreadStore()
    thread = store.save(snapshot_git_state(new_thread(3, metadata={"title": "Auth work"}), repo))
    git(repo, "checkout", "-q", "-b", "feature/x")
    new_sha = commit(repo, "c.txt")
    (repo / "README").write_text("changed")

    resumed = resume(str(thread.id), repo, store=store)
    changes = resumed.changes
    assert resumed.thread.id == thread.id
    assert (changes.previous_branch, changes.branch, changes.branch_changed) == (
        "main",
        "feature/x",
        True,
    )
    assert changes.new_commits == [(new_sha, "add c.txt")]
    assert changes.dirty is True
    assert not changes.workspace_changed
    lines = resumed.summary_lines()
    assert lines[0].startswith(f'Resuming thread {thread.id} "Auth work" (3 messages')
    assert "- branch changed: main -> feature/x" in lines
    assert f"    {new_sha[:7]} add c.txt" in lines
    assert "- uncommitted changes in the working tree" in lines

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = resume(str(thread.id), elsewhere, store=store)
    assert moved.changes.workspace_changed
    assert moved.summary_lines()[1:] == [
        f"- workspace changed: {repo.resolve()} -> {elsewhere.resolve()}",
        f"- {elsewhere.resolve()} is not a git repository",
    ]


def test_resume_with_nothing_changed_says_so(repo: Path) -> None:
    store = MemoryThreadStore()
    thread = store.save(snapshot_git_state(new_thread(1), repo))
    assert resume(str(thread.id), repo, store=store).summary_lines()[1:] == [
        "- nothing changed since the last save"
    ]
