"""Local search (issue 14 item 3): the SQLite index in the store folder, kept up to date
incrementally, with the server's semantics (ranked, no word required, identifiers as phrases,
snippets that mark a match, commit prefixes, private threads, strict ``web`` syntax)."""

from __future__ import annotations

import threading
from pathlib import Path

from loomsync import LocalThreadStore, Thread
from loomsync.core.textsearch.commits import commit_prefix, with_hex_prefix
from loomsync.core.textsearch.query import Unit, parse
from loomsync.store.localsearch import INDEX_NAME, LocalIndex, search_threads
from tests.client.conftest import new_thread


def _thread(title: str, *contents: str, **fields: object) -> Thread:
    messages = [{"role": "user", "content": c} for c in contents]
    return new_thread(0, metadata={"title": title}, conversation={"messages": messages}, **fields)


def _refreshed(store: LocalThreadStore) -> int:
    with LocalIndex.open(store.root / INDEX_NAME) as index:
        return index.refresh(store.search_source())


def test_the_index_lives_in_the_store_folder_and_reindexes_only_what_changed(
    tmp_path: Path,
) -> None:
    store = LocalThreadStore(tmp_path)
    first = store.save(_thread("one", "the wombat burrows"))
    store.save(_thread("two", "a quokka smiles"))
    assert [h.thread.id for h in store.search("wombat").hits] == [str(first.id)]
    assert (tmp_path / INDEX_NAME).is_file()
    assert _refreshed(store) == 0
    store.save(
        first.model_copy(update={"conversation": _thread("x", "a numbat digs").conversation})
    )
    assert _refreshed(store) == 1
    assert store.search("wombat").hits == []
    assert [h.thread.id for h in store.search("numbat").hits] == [str(first.id)]
    store.delete(str(first.id))
    assert store.search("numbat").hits == []
    assert [h.thread.title for h in store.search("quokka").hits] == ["two"]


def test_a_damaged_index_file_is_rebuilt(tmp_path: Path) -> None:
    store = LocalThreadStore(tmp_path)
    saved = store.save(_thread("one", "the wombat burrows"))
    store.search("wombat")
    (tmp_path / INDEX_NAME).write_bytes(b"not a database at all" * 100)
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"{INDEX_NAME}{suffix}").unlink(missing_ok=True)
    assert [h.thread.id for h in store.search("wombat").hits] == [str(saved.id)]


def test_words_spread_over_messages_and_a_word_the_thread_lacks_still_find_it() -> None:
    spread = _thread("setup", "the build uses webpack", "it takes ninety seconds")
    other = _thread("other", "nothing relevant here")
    hits = search_threads([spread, other], "webpack build seconds slow")
    assert [h.thread.title for h in hits] == ["setup"]
    assert hits[0].snippet is not None
    assert "<b>" in hits[0].snippet


def test_identifiers_match_as_phrases_not_scattered_parts() -> None:
    exact = _thread("exact", "CREATE UNIQUE INDEX messages_unique_session_uuid_index ON m")
    scattered = _thread("scattered", "index of messages, unique per session uuid")
    hits = search_threads([scattered, exact], "messages_unique_session_uuid_index")
    assert [h.thread.title for h in hits] == ["exact"]
    assert hits[0].snippet is not None
    assert "<b>" in hits[0].snippet


def test_the_users_words_outrank_a_tool_dump_and_the_best_message_is_chosen() -> None:
    dump = "deploy log line " * 2000
    thread = new_thread(
        0,
        conversation={
            "messages": [
                {"role": "tool", "content": f"{dump} staging deploy"},
                {"role": "user", "content": "why did the staging deploy fail?"},
            ]
        },
    )
    (hit,) = search_threads([thread], "staging deploy")
    assert hit.message_index == 1


def test_a_match_in_tool_call_text_gets_a_snippet_from_it_and_a_title_match_of_the_title() -> None:
    tool = new_thread(
        0,
        conversation={
            "messages": [
                {"role": "user", "content": "look around"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"tool_name": "bash", "arguments_json": {"cmd": "ls zyxfoo"}}],
                },
            ]
        },
    )
    titled = _thread("Plans for zyxfoo", "nothing else")
    hits = {h.thread.title: h for h in search_threads([tool, titled], "zyxfoo")}
    assert hits[None].message_index == 1
    assert hits[None].snippet is not None
    assert "<b>zyxfoo</b>" in hits[None].snippet
    assert hits["Plans for zyxfoo"].message_index is None
    assert hits["Plans for zyxfoo"].snippet == "Plans for <b>zyxfoo</b>"


def test_commit_prefixes_private_threads_and_japanese_substrings() -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    committed = _thread("c", "unrelated", git_commits=[sha])
    private = _thread("p", "技術スタックの選定", is_private=True)
    (hit,) = search_threads([committed, private], sha[:9])
    assert hit.thread.title == "c"
    (hit,) = search_threads([committed, private], "スタック")
    assert hit.thread.title == "p"
    assert hit.thread.is_private
    assert hit.snippet is not None
    assert "<b>" in hit.snippet


def test_web_syntax_requires_every_term_and_excludes_negated_ones() -> None:
    both = _thread("both", "webpack build")
    one = _thread("one", "webpack only")
    assert sorted(h.thread.title or "" for h in search_threads([both, one], "webpack build")) == [
        "both",
        "one",
    ]
    strict = search_threads([both, one], "webpack build", syntax="web")
    assert [h.thread.title for h in strict] == ["both"]
    negated = search_threads([both, one], "webpack -build", syntax="web")
    assert [h.thread.title for h in negated] == ["one"]


def test_a_refresh_commits_in_batches_and_concurrent_searches_agree(tmp_path: Path) -> None:
    store = LocalThreadStore(tmp_path)
    for i in range(6):
        store.save(_thread(f"t{i}", f"common word{i}"))
    with LocalIndex.open(tmp_path / INDEX_NAME) as index:
        assert index.refresh(store.search_source(), batch_seconds=0.0) == 6  # one per batch
        assert index.totals()[0] == 6
    store.save(_thread("t6", "common word6"))
    results: list[list[str]] = []
    errors: list[BaseException] = []

    def search() -> None:
        try:
            results.append(sorted(h.thread.title or "" for h in store.search("common").hits))
        except BaseException as exc:  # reported below
            errors.append(exc)

    workers = [threading.Thread(target=search) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert results == [[f"t{i}" for i in range(7)]] * 4
    assert _refreshed(store) == 0


def test_an_index_file_that_cannot_be_opened_leaves_search_working(tmp_path: Path) -> None:
    store = LocalThreadStore(tmp_path)
    saved = store.save(_thread("one", "the wombat burrows"))
    (tmp_path / INDEX_NAME).mkdir()  # SQLite cannot open a folder
    assert [h.thread.id for h in store.search("wombat").hits] == [str(saved.id)]


def test_a_hex_word_finds_a_longer_hash_in_text_and_equal_messages_pick_the_first() -> None:
    """The server's rules (app.threads.search.with_hex_prefix, the ranking's DISTINCT ON):
    ``26a7a89b`` is searched as the prefix ``'26a7a89b':*``, so a full hash a tool printed is
    found; of two equally scoring messages the earlier one is the thread's best."""
    line = "HEAD is now at 26a7a89b0c1d2e3f fix"
    printed = _thread("log", "intro", line, line)
    hits = search_threads([printed, _thread("other", "nothing")], "26a7a89b")
    assert [h.thread.title for h in hits] == ["log"]
    assert hits[0].message_index == 1
    assert hits[0].score == round(hits[0].score, 6)


def test_the_words_as_written_outrank_the_same_words_scattered() -> None:
    """The server's phrase bonus and quoted phrases (tests/threads/test_search_rank.py)."""
    exact = new_thread(
        0,
        metadata={"title": "exact"},
        conversation={
            "messages": [
                {
                    "role": "assistant",
                    "content": "Looking at the logs I saw the connection pool exhausted error "
                    "right after the deploy, so the workers were starved.",
                }
            ]
        },
    )
    scattered = _thread("scattered", "pool? connection? exhausted!")
    found = search_threads([exact, scattered], "connection pool exhausted")
    assert [h.thread.title for h in found] == ["exact", "scattered"]
    quoted = search_threads([exact, scattered], '"connection pool exhausted"')
    assert [h.thread.title for h in quoted] == ["exact"]
    assert quoted[0].snippet is not None
    assert "<b>" in quoted[0].snippet


def test_the_phrase_bonus_is_for_plain_words_in_a_row_only() -> None:
    """No bonus for one word, for ``web`` queries, nor for a hex word's two readings (its
    prefix or the word: alternatives, not words in a row)."""
    assert parse("connection pool").phrase == Unit(parse('"connection pool"').units[0].slots)
    assert parse("connection").phrase is None
    assert parse("connection pool", "web").phrase is None
    assert with_hex_prefix(parse("defaced"), commit_prefix("defaced")).phrase is None
    assert [
        h.thread.title for h in search_threads([_thread("wall", "the wall was defaced")], "defaced")
    ] == ["wall"]
