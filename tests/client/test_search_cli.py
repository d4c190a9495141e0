"""``loomsync search`` after the issue 14 review: ``--syntax web``, a query of only common words,
and threads only this machine holds merged into an online search by comparable scores, each hit
saying where it was found. A real server; the command run as a person would."""

from __future__ import annotations

import json

from rich.cells import cell_len

from loomsync import Thread
from tests.client.conftest import LiveServer, Person, login, on_a_terminal
from tests.client.test_cli import lines
from tests.client.test_cli_view import screen


def note(title: str, *contents: str, **fields: object) -> Thread:
    messages = [{"role": "user", "content": c} for c in contents]
    return Thread.model_validate(
        {"metadata": {"title": title}, "conversation": {"messages": messages}, **fields}
    )


def test_web_syntax_excludes_a_word_and_a_leading_dash_goes_after_double_dash(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    agent = person.agent()
    beta = agent.save(note("Beta", "the ocelot met a beta tester"))
    gamma = agent.save(note("Gamma", "the ocelot met a gamma ray"))
    assert person("sync").code == 0
    for where in ([], ["--local"]):
        plain = json.loads(person("search", *where, "--json", "--", "ocelot -gamma").out)
        assert {h["thread"]["id"] for h in plain["hits"]} == {str(beta.id), str(gamma.id)}
        web = person("search", *where, "--syntax", "web", "--json", "--", "ocelot -gamma")
        assert [h["thread"]["id"] for h in json.loads(web.out)["hits"]] == [str(beta.id)]
        phrase = person("search", *where, "--syntax", "web", "--json", '"gamma ray"')
        assert [h["thread"]["id"] for h in json.loads(phrase.out)["hits"]] == [str(gamma.id)]


def test_only_common_words_say_there_is_nothing_to_search_for(person: Person) -> None:
    for query in ("the and of", "how do I", "?!"):
        result = person("search", query)
        assert (result.code, result.out) == (0, "")
        assert result.err == "nothing to search for: only common words\n"
    as_json = person("search", "--json", "how do I")
    assert json.loads(as_json.out)["hits"] == []
    assert as_json.err == "nothing to search for: only common words\n"


def test_a_thread_only_on_this_machine_is_scored_like_the_rest_and_marked(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    agent = person.agent()
    synced = [
        agent.save(note(f"Synced {i}", f"a wallaby note number {i}", "other words here"))
        for i in range(3)
    ]
    assert person("sync").code == 0
    private = agent.save(note("Private", "wallaby wallaby: the wallaby escaped", is_private=True))
    online = json.loads(person("search", "--json", "wallaby").out)
    assert online["source"] == "server"
    origins = {h["thread"]["id"]: h["origin"] for h in online["hits"]}
    assert origins == {**{str(t.id): "server" for t in synced}, str(private.id): "local"}
    scores = [h["score"] for h in online["hits"]]
    assert scores == sorted(scores, reverse=True)
    local = json.loads(person("search", "--local", "--json", "wallaby").out)
    assert {h["origin"] for h in local["hits"]} == {"local"}
    local_score = {h["thread"]["id"]: h["score"] for h in local["hits"]}[str(private.id)]
    online_score = {h["thread"]["id"]: h["score"] for h in online["hits"]}[str(private.id)]
    assert online_score == local_score  # the whole store's statistics, not its own
    assert local["hits"][0]["thread"]["id"] == str(private.id)

    shown = lines(person("search", "wallaby").out)
    assert shown[0] == "4 threads found: 3 on the server, 1 only on this machine for 'wallaby'"
    marked = [line for line in shown if line.endswith("only on this machine")]
    assert len(marked) == 1
    assert marked[0].startswith(f"{private.id}  Private  score ")


def test_search_hits_fit_80_columns_at_a_terminal_and_stay_whole_piped(
    person: Person, live_server: LiveServer, account: str
) -> None:
    """Issue 16 item 1, the class (review item 2): at a terminal of 80 columns a hit line and
    its snippet line never wrap: this machine's threads show their short id (as ``list``),
    the title is cut with ``…``, the score stays; piped, the whole id and title."""
    assert login(person, live_server, account).code == 0
    title = ("A very long title about the numbat migration plan " * 3).strip()
    body = "the numbat crossed the road " + "and kept going far away " * 10
    saved = person.agent().save(note(title, body))
    assert person("sync").code == 0
    lines_ = screen(on_a_terminal(person, "search", "numbat"))
    assert all(cell_len(line) <= 80 for line in lines_), lines_
    short = person("list").out  # piped: whole ids; the short one is what list shows on a tty
    assert str(saved.id) in short
    listed = screen(on_a_terminal(person, "list"))
    short_id = next(line.split()[0] for line in listed if line.startswith("T-0"))
    head = next(line for line in lines_ if line.startswith(short_id + "  "))
    assert str(saved.id) not in head
    assert "…  score " in head, head
    assert head.rstrip().split("  score ")[1].replace(".", "").isdigit(), head
    snippet = lines_[lines_.index(head) + 1]
    assert snippet.startswith("    message 0: "), snippet
    assert snippet.rstrip().endswith("…"), snippet
    piped = lines(person("search", "numbat").out)
    assert any(line.startswith(f"{saved.id}  {title}  score ") for line in piped), piped


def test_a_local_search_cut_by_n_says_there_are_more(person: Person) -> None:
    """README: ``-n 2: says if there are more`` (issue 30 item 8), offline too."""
    agent = person.agent()
    for index in range(3):
        agent.save(note(f"Walrus {index}", f"the walrus number {index}"))
    for where in (["--local"], []):  # [] : not logged in, this machine answers
        cut = person("search", *where, "walrus", "-n", "2")
        assert cut.code == 0, cut.err
        assert cut.out.splitlines()[0] == (
            "2 threads found on this machine for 'walrus', and more: a larger -n shows them"
        )
        whole = person("search", *where, "walrus", "-n", "3")
        assert whole.out.splitlines()[0] == "3 threads found on this machine for 'walrus'"
    as_json = json.loads(person("search", "--local", "--json", "walrus", "-n", "2").out)
    assert (len(as_json["hits"]), as_json["more_here"]) == (2, True)
    exact = json.loads(person("search", "--local", "--json", "walrus", "-n", "3").out)
    assert (len(exact["hits"]), exact["more_here"]) == (3, False)
