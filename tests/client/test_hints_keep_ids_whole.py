"""A hint that carries an id to copy is never broken inside the id at a terminal (issue 30
item 8: ``share --link``'s ``Revoke it: loomsync share T-… --revoke <link id>`` was written as
one long line, which an 80-column terminal cut at column 80, in the middle of the link id).
The CLI runs on a pseudo terminal of 80 columns against the real server; each line it wrote
must fit, so the terminal itself never wraps one."""

from __future__ import annotations

import re

from rich.cells import cell_len

from tests.client.conftest import LiveServer, Person, login, new_thread, on_a_terminal
from tests.client.test_cli_view import screen

ID = re.compile(r"(?:T-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def test_share_links_revoke_hint_keeps_both_ids_whole_at_80_columns(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    thread_id = str(person.agent().save(new_thread(1, visibility="organization")).id)
    shown = screen(on_a_terminal(person, "share", thread_id, "--link", "--expires", "7d"))
    assert all(cell_len(line) <= 80 for line in shown), shown
    ids = [found for line in shown for found in ID.findall(line)]
    assert ids[:2] == [thread_id, thread_id], shown  # "reads T-…", "share T-…"
    link_id = ids[2]
    listed = person("share", thread_id, "--links")
    assert listed.out.splitlines()[1].split("\t")[0] == link_id  # the whole id, to copy
