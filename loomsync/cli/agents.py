"""``loomsync agents``: the coding agents found on this machine (issue 28 item 4;
:mod:`loomsync.importers.found`).

One row per agent whose usual folder exists (agents excluded in config.toml's ``[import]``
are left out, unless ``--all``, which marks them ``excluded`` in the LIVE column: newcomer
finding 11): its name, its folder, how many session files are there, when
``loomsync watch`` last captured one of them, whether it is captured live or imported only,
and what its files record. A table fitted to the terminal, tab-separated when piped, or
``--json``, like the other listing commands (:mod:`loomsync.cli.tables`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from loomsync.cli.main import JsonOption, _warn, app, console
from loomsync.cli.render import print_json, print_table
from loomsync.cli.tables import Column
from loomsync.config import default_paths, load_config
from loomsync.terminal import printable


@app.command("agents")
def agents_command(
    as_json: JsonOption = False,
    show_excluded: Annotated[
        bool, typer.Option("--all", help="Also agents excluded in config.toml [import].")
    ] = False,
) -> None:
    """List the coding agents found on this machine: folder, session files, last capture,
    live or import only, what they record."""
    from loomsync.cli.importing import broken_importers
    from loomsync.importers.exclude import Exclusions
    from loomsync.importers.found import LIVE_WORDS, FoundAgent, captured_times, found_agents
    from loomsync.watch import offsets_file

    paths = default_paths()
    exclusions = Exclusions.of(load_config(paths).imports)
    _warn(broken_importers())
    rows = [
        agent
        for agent in found_agents(captured=captured_times(offsets_file(paths)))
        if show_excluded or not exclusions.agent(agent.name)
    ]
    if as_json:
        print_json(
            console,
            [{**row.as_dict(), "excluded": exclusions.agent(row.name)} for row in rows],
        )
        return
    if not rows:
        console.print("No coding agent's folder found on this machine.")
        return

    def when(row: FoundAgent) -> str:
        return row.last_captured.strftime("%Y-%m-%d %H:%M") if row.last_captured else "-"

    def live(row: FoundAgent, words: dict[str, str]) -> str:
        if exclusions.agent(row.name):
            return "excluded"  # neither imported nor watched (config.toml [import])
        return words.get(row.importer.live, row.importer.live)

    columns: list[Column[FoundAgent]] = [
        Column("AGENT", lambda r: r.name),
        Column("FILES", lambda r: "-" if r.files is None else str(r.files), justify="right"),
        Column("CAPTURED", when, drop=2),
        Column(
            "LIVE",
            lambda r: live(r, LIVE_WORDS),
            terminal=lambda r: live(r, dict.fromkeys(LIVE_WORDS, "live") | {"none": "import"}),
            drop=3,
        ),
        Column("RECORDS", lambda r: ", ".join(r.importer.records), shrink=True, drop=1),
        Column(
            "FOLDER", lambda r: ", ".join(map(str, r.folders)), shrink=True, weight=2, min_width=12
        ),
    ]
    print_table(console, columns, rows)
    left_out = sorted(exclusions.agents)
    if left_out and not show_excluded:
        console.print(printable(f"Excluded in config.toml: {', '.join(left_out)}."))


__all__ = ["agents_command"]
