"""What is printed is redacted even for files older clients wrote (review P6-16), and
``scan`` finds what a save replaces by the same walk (review P6-15)."""

from __future__ import annotations

import json

import pytest

from loomsync.core.document import codec
from loomsync.store import shown
from loomsync.store.redaction import Redaction
from tests.client.conftest import Person
from tests.client.test_redaction import AWS, AWS_MARK, GH, GH_MARK, holds_no_secret, leaky
from tests.client.test_secrets_cli import THREAD, write_raw


def test_show_and_local_search_print_an_old_unredacted_file_redacted(person: Person) -> None:
    write_raw(person)
    for args in (["show", THREAD], ["show", THREAD, "--json"], ["search", "key", "--local"]):
        printed = person(*args)
        assert printed.code == 0, printed.err
        assert holds_no_secret(printed.out + printed.err), args
    assert AWS_MARK in person("show", THREAD).out
    hits = json.loads(person("search", "deploy", "--local", "--json").out)["hits"]
    assert [hit["thread"]["id"] for hit in hits] == [THREAD]
    assert holds_no_secret(json.dumps(hits))
    assert AWS in (person.paths.threads_dir / f"{THREAD}.jsonl").read_text()  # file unchanged


def test_scan_walks_the_document_once_the_way_a_save_redacts_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    thread = leaky()
    redaction = Redaction()

    def no_reencoding(*_args: object, **_kwargs: object) -> bytes:
        raise AssertionError("scan re-encoded the whole thread")

    monkeypatch.setattr(codec, "encode_thread", no_reencoding)
    found = redaction.scan(thread)
    redacted, located = redaction.located(thread)
    assert found == located
    assert {item.kind for item in found} == {"aws-access-key", "github-token"}
    before, after = codec.document(thread), codec.document(redacted)
    for item in found:  # every finding is a string the save replaced, at the reported path
        old, new = before, after
        for part in item.path:
            old, new = old[part], new[part]
        assert old != new
        assert AWS_MARK in new or GH_MARK in new
    assert [item.message_index for item in found if item.path[0] == "conversation"] == [0, 1]


def test_a_snippet_whose_highlight_splits_a_token_is_redacted_whole() -> None:
    """The server's ``<b>`` may cut a token in two runs: detection reads the text untagged."""
    redaction = Redaction()
    split = f"use &amp; <b>{GH[:6]}</b>{GH[6:]} now"
    assert shown.snippet(redaction, split) == f"use &amp; {GH_MARK} now"
    plain = "a <b>deploy</b> &lt;script&gt;"
    assert shown.snippet(redaction, plain) is plain
