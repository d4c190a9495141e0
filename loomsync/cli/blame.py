"""``loomsync blame FILE[:LINE[-LINE]]``, ``loomsync why SHA`` and ``loomsync hooks``
(issue 32 items 3 and 5; docs/client.md). Registered on the one typer app of
:mod:`loomsync.cli.main`.

``blame`` runs ``git blame --porcelain`` here, then asks, for each line, which sessions wrote
it: the commit's ``Loomsync-Thread`` trailers first, then the server (every teammate's
threads you may read) or, offline or not logged in, this machine's threads. Output as git
blame's neighbours: one line per file line, short ids, cut to the terminal (80 columns when
unknown); piped, tab-separated full values; ``--json`` for scripts.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from loomsync.blame.answer import Hit, merged
from loomsync.cli.main import JsonOption, _store, app, console, errors
from loomsync.cli.render import print_json
from loomsync.errors import SyncError
from loomsync.terminal import printable

if TYPE_CHECKING:
    from loomsync.blame import gitblame

hooks_app = typer.Typer(help="Git hooks: name the live session in each commit message.")
app.add_typer(hooks_app, name="hooks")

_TARGET = re.compile(r"(?P<file>.+?)(?::(?P<first>\d+)(?:-(?P<last>\d+))?)?", re.DOTALL)
#: Lines one ``blame`` asks the server about (a whole large file is blamed locally only).
MAX_ONLINE_LINES = 200


def _short(thread_id: str) -> str:
    return thread_id[:10]


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _parse_target(target: str) -> tuple[Path, int | None, int | None]:
    """``FILE``, ``FILE:LINE`` or ``FILE:FIRST-LAST``; a file whose own name ends in ``:N``
    (or holds a newline) is that file when no shorter name with lines fits."""
    match = _TARGET.fullmatch(target)
    if match is None or not match["first"] or not Path(match["file"]).exists():
        if Path(target).exists():
            return Path(target), None, None
        raise typer.BadParameter(f"no such file: {target}", param_hint="FILE")
    first = int(match["first"])
    last = int(match["last"]) if match["last"] else first
    if first < 1 or last < first:
        wanted = "LINE starts at 1" if not match["last"] else "FIRST-LAST must be ascending, from 1"
        raise typer.BadParameter(wanted, param_hint="FILE")
    return Path(match["file"]), first, last


def _from(source: str) -> str:
    """``the server`` or ``this machine``, for a sentence."""
    return "the server" if source == "server" else source


def _answers(
    repo: gitblame.Repository, lines: list[gitblame.BlamedLine], offline: bool
) -> tuple[list[list[Hit]], str]:
    """Per line, its hits; and where they came from (``server`` or ``this machine``)."""
    from loomsync.blame import gitblame
    from loomsync.blame import local as local_answers
    from loomsync.blame import online as online_answers

    trailers: dict[str, list[Hit]] = {}
    for commit in {line.commit for line in lines if line.commit}:
        trailers[commit] = [
            Hit(t, "trailer", None, [commit]) for t in gitblame.trailer_threads(repo.root, commit)
        ]
    with _store() as store:
        source = "this machine"
        found: list[list[Hit]] | None = None
        if store.client is not None and not offline and len(lines) <= MAX_ONLINE_LINES:
            try:
                found = [
                    online_answers.line_hits(
                        store.client, repo.path, line.text, line.commit, repo.remote
                    )
                    for line in lines
                ]
                source = "server"
            except SyncError as exc:
                errors.print(
                    Text(printable(f"{exc}; answering from this machine."), style="yellow")
                )
        if found is None:
            threads = list(store.local.iter_threads())
            found = [
                local_answers.line_hits(threads, repo, line.commit, line.text) for line in lines
            ]
    return [
        merged(trailers.get(line.commit or "", []), hits)
        for line, hits in zip(lines, found, strict=True)
    ], source


def _print_row(cells: list[str]) -> None:
    """One tab-separated row: each cell made printable (a tab in it becomes a space)."""
    console.write_text("\t".join(printable(c.replace("\t", " ")) for c in cells) + "\n")


@app.command()
def blame(
    target: Annotated[str, typer.Argument(help="FILE, FILE:LINE or FILE:FIRST-LAST.")],
    offline: Annotated[
        bool, typer.Option("--offline", help="Answer from this machine's threads only.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Which sessions wrote these lines: git blame, then the threads behind each line's commit
    (the one whose edit holds the line first)."""
    from loomsync.blame import gitblame

    file, first, last = _parse_target(target)
    repo = gitblame.locate(file)
    if repo is None:
        raise typer.BadParameter(f"{file} is not in a git work tree", param_hint="FILE")
    lines = gitblame.blame(repo, first, last)
    if not lines:
        errors.print(Text(printable(f"git blame found no line of {target}."), style="yellow"))
        raise typer.Exit(1)
    answers, source = _answers(repo, lines, offline)
    if as_json:
        print_json(
            console,
            {
                "file": repo.path,
                "repository": repo.remote,
                "source": source,
                "lines": [
                    {
                        "line": line.number,
                        "commit": line.commit,
                        "text": line.text,
                        "threads": [h.as_json() for h in hits],
                    }
                    for line, hits in zip(lines, answers, strict=True)
                ],
            },
        )
        return
    piped = not console.is_terminal
    width = console.width if console.is_terminal else 80
    for line, hits in zip(lines, answers, strict=True):
        best = hits[0] if hits else None
        if piped:
            cells = [
                line.commit or "",
                best.thread_id if best else "",
                best.match if best else "",
                "" if best is None or best.message_index is None else str(best.message_index),
                str(line.number),
                line.text,
            ]
            _print_row(cells)
            continue
        where = (
            f"{_short(best.thread_id)}#{best.message_index}"
            if best and best.message_index is not None
            else (_short(best.thread_id) if best else "-")
        )
        more = f"+{len(hits) - 1}" if len(hits) > 1 else ""
        head = f"{(line.commit or 'uncommitted')[:8]} {where:<16} {(best.match if best else ''):<7}{more:>3} {line.number:>4}) "
        console.print(printable(_cut(head + line.text.expandtabs(4), width)), highlight=False)
    if not piped:
        errors.print(Text(printable(f"threads from {_from(source)}"), style="dim"))


@app.command()
def why(
    sha: Annotated[str, typer.Argument(help="A commit: SHA, prefix of 7+, or any git ref.")],
    offline: Annotated[
        bool, typer.Option("--offline", help="Answer from this machine's threads only.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """The sessions behind one commit: its trailers, then the threads that observed it."""
    from loomsync.blame import gitblame
    from loomsync.blame import local as local_answers
    from loomsync.blame import online as online_answers

    here = gitblame.locate(Path.cwd())
    commit = (gitblame.full_sha(here.root, sha) if here else None) or sha.lower()
    if not re.fullmatch(r"[0-9a-f]{7,64}", commit):
        raise typer.BadParameter(f"not a commit here: {sha}", param_hint="SHA")
    trailers = [
        Hit(t, "trailer", None, [commit])
        for t in (gitblame.trailer_threads(here.root, commit) if here else [])
    ]
    remote = here.remote if here else None
    with _store() as store:
        found: list[Hit] | None = None
        source = "this machine"
        if store.client is not None and not offline:
            try:
                found = online_answers.commit_hits(store.client, commit, remote)
                source = "server"
            except SyncError as exc:
                errors.print(
                    Text(printable(f"{exc}; answering from this machine."), style="yellow")
                )
        if found is None:
            found = local_answers.commit_hits(store.local.iter_threads(), commit, here)
    hits = merged(trailers, found)
    if as_json:
        print_json(
            console, {"commit": commit, "source": source, "threads": [h.as_json() for h in hits]}
        )
        return
    if not hits:
        errors.print(
            Text(
                printable(f"No session found for {commit[:12]} (on {_from(source)})."),
                style="yellow",
            )
        )
        raise typer.Exit(1)
    piped = not console.is_terminal
    width = console.width if console.is_terminal else 80
    for hit in hits:
        if piped:
            cells = [hit.thread_id, hit.match, hit.title or "", ",".join(hit.files)]
            _print_row(cells)
        else:
            files = f" [{', '.join(hit.files)}]" if hit.files else ""
            row = f"{_short(hit.thread_id)} {hit.match:<7} {hit.title or '(untitled)'}{files}"
            console.print(printable(_cut(row, width)), highlight=False)


@hooks_app.command("install")
def hooks_install(
    force: Annotated[
        bool, typer.Option("--force", help="Replace another prepare-commit-msg hook.")
    ] = False,
) -> None:
    """Add a prepare-commit-msg hook to this repository: commits made while a captured session
    of it is live get a ``Loomsync-Thread: T-…`` trailer."""
    from loomsync.blame import gitblame, hooks

    here = gitblame.locate(Path.cwd())
    if here is None:
        raise typer.BadParameter("run it inside a git work tree")
    try:
        hook = hooks.install(here.root, force=force)
    except hooks.HookExists as exc:
        errors.print(Text.assemble(("error:", "red"), " ", printable(str(exc))))
        raise typer.Exit(1) from None
    console.print(printable(f"installed {hook}"), highlight=False)


@hooks_app.command("trailer", hidden=True)
def hooks_trailer(
    message_file: Annotated[Path, typer.Argument()],
    source: Annotated[str, typer.Argument()] = "",
) -> None:
    """What the hook runs: add trailers for the live sessions of this repository."""
    from loomsync.blame import gitblame, hooks

    here = gitblame.locate(Path.cwd())
    if here is None:
        return
    with _store() as store:
        live = hooks.live_threads(store.local, here.root, here.remote)
    hooks.add_trailers(message_file, here.root, live, source)
