"""app.threads.scanning without a server: a body the detector changed is never stored as clean,
even when the detector says nothing about where (review P1-1's backstop), and an append body's
messages are walked as the thread's messages (the paths the 422 names are the body's)."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry, Counter

from app.config import SecretScanMode
from app.threads.scanning import (
    APPEND_MESSAGES,
    UNLOCATED,
    SecretScan,
    Spot,
    changes,
)
from loomsync.core.secrets import Located, Redactor, default_redactor, marker
from tests.threads.planted import github_token


class Silent(Redactor):
    """A detector that redacts every ``secret`` string and reports no finding."""

    def redact_value_located(
        self,
        value: Any,
        path: tuple[str | int, ...] = (),  # noqa: ARG002 (the signature overridden)
    ) -> tuple[Any, list[Located]]:
        def walk(item: Any) -> Any:
            if item == "secret":
                return marker("github-token")
            if isinstance(item, dict):
                new = {k: walk(v) for k, v in item.items()}
                return item if all(new[k] is v for k, v in item.items()) else new
            return item

        return walk(value), []


def scan(mode: SecretScanMode, redactor: Redactor) -> SecretScan:
    counter = Counter("t_secrets", "test", ("kind", "action"), registry=CollectorRegistry())
    return SecretScan(mode, redactor, counter)


@pytest.mark.parametrize("mode", ["redact", "reject"])
def test_a_change_without_findings_is_still_found_where_it_is(mode: SecretScanMode) -> None:
    body = {"metadata": {"title": "ok", "extra": {"x": "secret"}}}
    scanned = scan(mode, Silent()).scan(body)
    assert scanned.found
    assert list(scanned.spots) == [Spot(("metadata", "extra", "x"), "github-token")]
    assert scanned.details(("conversation", "messages"))["fields"] == ["metadata"]
    if mode == "redact":
        assert scanned.value == {
            "metadata": {"title": "ok", "extra": {"x": marker("github-token")}}
        }
    else:
        assert scanned.value is body
        assert scanned.errors()[0]["loc"] == ["body", "metadata", "extra", "x"]


def test_changes_names_a_container_whose_shape_changed() -> None:
    assert changes({"a": {"k": 1}}, {"a": {"[REDACTED:github-token]": 1}}) == [
        Spot(("a",), "github-token")
    ]
    assert changes(["x"], ["x", "y"]) == [Spot((), UNLOCATED)]
    body = {"a": ["x"]}
    assert changes(body, body) == []


def test_an_append_walks_its_messages_as_the_threads() -> None:
    """An ``id`` nested in a message's ``extra`` is not structure; the spots are the body's
    paths, and the audit counts the messages from the first new one."""
    token = github_token("backstop")
    body = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "tool", "content": "ok", "extra": {"build": {"id": token}}},
        ],
        "git_remote_url": "https://example.com/o/r.git",
    }
    scanned = scan("redact", default_redactor()).scan(body, APPEND_MESSAGES)
    assert list(scanned.spots) == [Spot(("messages", 1, "extra", "build", "id"), "github-token")]
    assert scanned.details(APPEND_MESSAGES, 5)["message_indexes"] == [6]
    assert scanned.value["messages"][0] is body["messages"][0]
    assert scanned.value["messages"][1]["extra"]["build"]["id"] == marker("github-token")
