"""``loomsync watch`` stays in the folders it was given (issue 27 item 6), with real symbolic
links made before the watch starts and while it runs: a link to a folder or to a file, inside a
watched agent folder, never gets the sessions it leads to imported, whether the event library
reports paths through the link or not. The real session written beside them is imported.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from loomsync.watch.confine import within
from tests.client.conftest import Person, wait_for
from tests.client.test_watch import (
    CODEX_DIR,
    ROLLOUT,
    Watch,
    copy_lines,
    expected,
    local_counts,
    watches,  # noqa: F401 (the fixture)
)

SESSIONS = Path(".codex") / "sessions"


def rollout_copy(folder: Path, number: int, lines: slice | None = None) -> Path:
    """The real rollout under another session id (``…b52`` → ``…<number>``) in ``folder``,
    written line by line (``lines`` of it); its path."""
    session = f"019b7f94-51b4-7593-922e-ba12b5b7{number:04d}"
    text = ROLLOUT.read_text().replace("019b7f94-51b4-7593-922e-ba12b5b73b52", session)
    staged = Path(tempfile.mkdtemp()) / "rollout.jsonl"
    staged.write_text(text)
    target = folder / ROLLOUT.name.replace("019b7f94-51b4-7593-922e-ba12b5b73b52", session)
    copy_lines(staged, target, pause=0, lines=lines)
    shutil.rmtree(staged.parent)
    return target


def test_links_made_before_and_during_the_watch_are_not_followed(
    person: Person,
    watches: list[Watch],  # noqa: F811
) -> None:
    watched = person.home / SESSIONS
    watched.mkdir(parents=True)
    elsewhere = person.home / "elsewhere"  # outside every watched folder
    before, during, files = elsewhere / "before", elsewhere / "during", elsewhere / "files"
    for folder in (before, during, files):
        folder.mkdir(parents=True)
    first = rollout_copy(before, 1, slice(0, 4))  # sessions behind a link made before the start
    lone = rollout_copy(files, 2)
    (watched / "linked-before").symlink_to(before, target_is_directory=True)
    (watched / "2026").mkdir()
    (watched / "2026" / "deeper").symlink_to(before, target_is_directory=True)
    (watched / lone.name).symlink_to(lone)  # a link to a session file

    watches.append(watch := Watch(person, "--verbose"))
    counts: list[int] = []

    def written(number: int) -> Path:
        """A session really in the folder, written, and waited for until its import is
        logged: the watcher runs, and the batch of events holding its last one was handled
        (the batch's other paths after it, in order)."""
        real = rollout_copy(person.home / CODEX_DIR, number)
        counts.extend(expected("codex", real, None).values())  # ids: the machine's key
        wait_for(lambda: watch.lines(real.name), what=f"the real session {number}")
        return real

    real = written(5)  # the watcher runs from here on
    rollout_copy(during, 3)
    (watched / "linked-during").symlink_to(during, target_is_directory=True)
    (watched / "2026" / "renamed").mkdir()
    nested = watched / "2026" / "renamed" / "link"
    nested.symlink_to(during, target_is_directory=True)  # made in a folder made meanwhile
    copy_lines(ROLLOUT, first, pause=0, lines=slice(4, None))  # grows behind the first link
    # (the rest of the original's lines: the session id of line 0 is the copy's)
    rollout_copy(during, 4)  # a new session behind the links made meanwhile
    os.utime(lone)  # the linked file changes too
    written(6)
    written(7)  # its batch of events comes after the one of 6 was handled whole
    assert sorted(local_counts(person).values()) == sorted(counts), watch.text()
    imported = watch.lines("imported ")  # a real session may be imported in two steps
    assert all(str(person.home / CODEX_DIR / "rollout-") in line for line in imported), watch.text()
    assert str(real) in imported[0]
    for name in ("linked-before", "linked-during", "deeper", "/link/", str(elsewhere)):
        assert not [line for line in imported if name in line], watch.text()


def test_within_refuses_any_link_component_below_the_root(tmp_path: Path) -> None:
    """The rule itself (loomsync/watch/confine.py), on real links: a link at any depth below
    the root, a path that climbs out, or one outside the root is not within; the root may be
    reached through a link (the user named it); a missing component is no link."""
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "s.jsonl").write_text("{}\n")
    real_root = tmp_path / "real-root"
    (real_root / "a" / "b").mkdir(parents=True)
    (real_root / "a" / "b" / "s.jsonl").write_text("{}\n")
    (real_root / "a" / "to-folder").symlink_to(outside, target_is_directory=True)
    (real_root / "a" / "b" / "to-file.jsonl").symlink_to(outside / "deep" / "s.jsonl")
    (real_root / "a" / "inner").symlink_to(real_root / "a" / "b", target_is_directory=True)
    root = tmp_path / "root-link"
    root.symlink_to(real_root, target_is_directory=True)
    for base in (real_root, root):
        assert within(base / "a" / "b" / "s.jsonl", base)
        assert within(base, base)
        assert within(base / "a" / "gone" / "x.jsonl", base)  # deleted since the event
        assert not within(base / "a" / "to-folder", base)
        assert not within(base / "a" / "to-folder" / "deep" / "s.jsonl", base)
        assert not within(base / "a" / "b" / "to-file.jsonl", base)
        assert not within(base / "a" / "inner" / "s.jsonl", base)  # a link inside, too
        assert not within(base / "a" / ".." / ".." / "outside" / "deep" / "s.jsonl", base)
    assert not within(outside / "deep" / "s.jsonl", real_root)
