"""Threads, messages and JSON values: field rules, same-object returns, allow-lists and
previews (issue 12 items 1-3, API.md section 9)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from loomsync.core.document.model import Message, Thread
from loomsync.core.secrets import KINDS, Located, Redactor, default_redactor, marker
from tests.secrets.samples import PASSWORD, TOKENS, every_token

GHP = TOKENS["github-token"][0]
AKIA = TOKENS["aws-access-key"][0]


def thread(**fields: Any) -> Thread:
    document: dict[str, Any] = {
        "id": "T-0194b7c2-7a43-7c1e-9a55-2b1d3c4e5f60",
        "conversation": {"messages": [{"role": "user", "content": "hello"}]},
        **fields,
    }
    return Thread.model_validate(document)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"https://dev:{PASSWORD}@git.example.com/org/x.git", "https://git.example.com/org/x.git"),
        (f"https://{GHP}@github.com/org/x.git", "https://github.com/org/x.git"),
        (f"https://x-access-token:{GHP}@github.com/org/x", "https://github.com/org/x"),
    ],
)
def test_git_remote_url_loses_its_userinfo(url: str, expected: str) -> None:
    new, found = default_redactor().redact_thread(thread(git_remote_url=url))
    assert new.git_remote_url == expected
    assert [f.path for f in found] == [("git_remote_url",)]
    assert found[0].message_index is None


@pytest.mark.parametrize(
    "url", ["https://github.com/org/x.git", "git@github.com:org/x.git", "ssh://git@host/x"]
)
def test_git_remote_url_without_credentials_is_kept(url: str) -> None:
    original = thread(git_remote_url=url)
    assert default_redactor().redact_thread(original) == (original, [])


def test_a_whole_url_anywhere_loses_userinfo_but_free_text_keeps_the_user() -> None:
    value = {"endpoint": f"postgres://app:{PASSWORD}@db:5432/app",
             "note": f"connect to postgres://app:{PASSWORD}@db:5432/app now"}  # fmt: skip
    assert default_redactor().redact_value(value) == {
        "endpoint": "postgres://db:5432/app",
        "note": "connect to postgres://app:[REDACTED:url-password]@db:5432/app now",
    }


def test_structural_fields_are_never_touched() -> None:
    # SHA fields are kept while hex (P3-12); a message id is scanned (see the ids test below)
    sha = "e713a738d5fad476dffd3de1350596e750a2ce7e"
    original = thread(git_initial_commit_sha=sha, git_commits=[sha])
    original.conversation.messages[0].id = "msg_01A09q90qw90lq917835lq9"
    new, found = default_redactor().redact_thread(original)
    assert new is original
    assert found == []


def test_tool_call_arguments_and_unknown_fields_are_redacted() -> None:
    message = Message.model_validate(
        {
            "role": "assistant",
            "content": "running it",
            "tool_calls": [
                {
                    "id": "call_1",
                    "tool_name": "shell",
                    "arguments_json": {"command": f"export GH={GHP}", "env": {"id": AKIA}},
                }
            ],
            "x_vendor": {"nested": [f"token {GHP}"]},
        }
    )
    (new,), found = default_redactor().redact_messages([message], first_index=7)
    call = new.tool_calls[0]  # type: ignore[index]
    assert call.id == "call_1"
    assert call.arguments_json == {
        "command": "export GH=[REDACTED:github-token]",
        "env": {"id": "[REDACTED:aws-access-key]"},
    }
    assert new.model_extra == {"x_vendor": {"nested": ["token [REDACTED:github-token]"]}}
    assert {f.message_index for f in found} == {7}
    assert sorted(f.path for f in found) == [
        ("conversation", "messages", 7, "tool_calls", 0, "arguments_json", "command"),
        ("conversation", "messages", 7, "tool_calls", 0, "arguments_json", "env", "id"),
        ("conversation", "messages", 7, "x_vendor", "nested", 0),
    ]


@pytest.mark.parametrize(
    ("key", "redacted"),
    [
        ("password", True),
        ("apiKey", True),
        ("client_secret", True),
        ("X-Auth-Token", True),
        ("max_tokens", False),
        ("token_count", False),
        ("tokenizer", False),
        ("primary_key", False),
        ("next_page_token", False),
        ("key", False),
    ],
)
def test_json_key_that_names_a_secret(key: str, redacted: bool) -> None:
    value = {key: PASSWORD, "other": PASSWORD}
    result = default_redactor().redact_value(value)
    assert result["other"] == PASSWORD
    assert result[key] == (marker("secret-assignment") if redacted else PASSWORD)


def test_unchanged_values_are_the_same_objects() -> None:
    value = {"a": ["plain", {"b": "text"}], "n": 1}
    assert default_redactor().redact_value(value) is value
    original = thread(metadata={"title": "t", "tags": ["x"], "extra": {"k": "v"}})
    assert default_redactor().redact_thread(original)[0] is original
    messages = [Message(role="user", content="hi"), Message(role="user", content=GHP)]
    new, _ = default_redactor().redact_messages(messages)
    assert new[0] is messages[0]
    assert new[1] is not messages[1]


def test_title_tags_and_workspace_are_redacted() -> None:
    original = thread(
        workspace_root=f"/home/dev/{GHP}",
        metadata={"title": f"fix {AKIA}", "tags": [GHP], "extra": {"api_token": PASSWORD}},
    )
    new, found = default_redactor().redact_thread(original)
    assert new.workspace_root == "/home/dev/[REDACTED:github-token]"
    assert new.metadata.title == "fix [REDACTED:aws-access-key]"
    assert new.metadata.tags == ["[REDACTED:github-token]"]
    assert new.metadata.extra == {"api_token": "[REDACTED:secret-assignment]"}
    assert new.conversation.messages == original.conversation.messages
    assert len(found) == 4


def test_thread_messages_are_located_by_index() -> None:
    original = thread()
    original.conversation.messages.append(Message(role="tool", content=f"key={AKIA}"))
    new, found = default_redactor().redact_thread(original)
    assert new.conversation.messages[1].content == "key=[REDACTED:aws-access-key]"
    assert found == [
        Located("aws-access-key", ("conversation", "messages", 1, "content"), 1, "AKIA…(20 chars)")
    ]
    assert default_redactor().scan_thread(original) == found
    assert original.conversation.messages[1].content == f"key={AKIA}"


def test_redacted_thread_round_trips_through_json() -> None:
    original = thread(git_remote_url=f"https://{GHP}@github.com/o/r")
    original.conversation.messages.append(Message(role="tool", content=PASSWORD + " " + GHP))
    new, _ = default_redactor().redact_thread(original)
    assert Thread.model_validate_json(new.model_dump_json()) == new


def test_allow_list_exact_and_pattern() -> None:
    other = TOKENS["github-token"][1]
    text = f"{GHP} {other} {AKIA}"
    assert Redactor(allow=[GHP]).redact_text(text) == (
        f"{GHP} [REDACTED:github-token] [REDACTED:aws-access-key]"
    )
    assert Redactor(allow_patterns=[r"gh[po]_.*"]).redact_text(text) == (
        f"{GHP} {other} [REDACTED:aws-access-key]"
    )
    assert (
        Redactor(allow_patterns=[r"gh"]).redact_text(text).count("github-token") == 2
    )  # fullmatch
    assert Redactor(allow=[PASSWORD]).redact_value({"password": PASSWORD}) == {"password": PASSWORD}
    with pytest.raises(re.error):
        Redactor(allow_patterns=["("])


@pytest.mark.parametrize(("kind", "token"), every_token())
def test_preview_shows_at_most_the_public_prefix_and_the_length(kind: str, token: str) -> None:
    found = default_redactor().scan_thread(thread(metadata={"title": f"see {token}"}))
    assert [f.kind for f in found] == [kind]
    preview = found[0].preview
    assert preview.endswith(f"…({len(token)} chars)")
    head = preview.split("…", 1)[0]
    assert head in ("", *KINDS[kind].prefixes)
    assert token[len(head) : len(head) + 4] not in preview


def test_located_never_holds_the_secret() -> None:
    original = thread(metadata={"extra": {"password": PASSWORD, "note": f"-p{PASSWORD}"}})
    found = default_redactor().scan_thread(original)
    assert found
    assert PASSWORD not in json.dumps([f.__repr__() for f in found])


def test_thread_findings_come_in_document_order() -> None:
    original = thread(metadata={"title": f"fix {GHP}"}, git_remote_url=f"https://{GHP}@h/x")
    original.conversation.messages.append(Message(role="tool", content=f"key={AKIA}"))
    found = default_redactor().scan_thread(original)
    assert [f.path[0] for f in found] == ["git_remote_url", "conversation", "metadata"]


def test_message_and_tool_call_ids_are_scanned_and_ordinary_ids_kept() -> None:
    """A token as a message ``id``, a tool call ``id`` or a ``tool_call_id`` is redacted with its
    path (the two ids of one call stay equal); ``toolu_…``, ``call_…`` and UUIDs are kept."""
    call = {"id": GHP, "tool_name": "x", "arguments_json": {}}
    value = {
        "id": "T-0194b7c2-7a43-7c1e-9a55-2b1d3c4e5f60",
        "conversation": {
            "messages": [
                {"role": "assistant", "content": "hi", "id": GHP, "tool_calls": [call]},
                {"role": "tool", "content": "ok", "tool_call_id": GHP},
            ]
        },
    }
    new, found = default_redactor().redact_value_located(value)
    first, second = new["conversation"]["messages"]
    assert first["id"] == first["tool_calls"][0]["id"] == marker("github-token")
    assert second["tool_call_id"] == first["tool_calls"][0]["id"]
    assert new["id"] == value["id"]
    at = ("conversation", "messages")
    assert [(f.kind, f.path) for f in found] == [
        ("github-token", (*at, 0, "id")),
        ("github-token", (*at, 0, "tool_calls", 0, "id")),
        ("github-token", (*at, 1, "tool_call_id")),
    ]
    alone = {"role": "user", "content": "hi", "id": GHP}
    assert default_redactor().redact_value(alone)["id"] == marker("github-token")
    ordinary = {
        "id": "T-0194b7c2-7a43-7c1e-9a55-2b1d3c4e5f60",
        "conversation": {
            "messages": [
                {
                    "role": "assistant",
                    "content": "hi",
                    "id": "msg_01A09q90qw90lq917835lq9",
                    "tool_calls": [
                        {"id": "toolu_01A09q90qw90lq917835lq9", "tool_name": "x"},
                        {"id": "call_abc123DEF456ghi789", "tool_name": "y"},
                    ],
                },
                {
                    "role": "tool",
                    "content": "ok",
                    "id": "0194b7c2-7a43-7c1e-9a55-2b1d3c4e5f60",
                    "tool_call_id": "toolu_01A09q90qw90lq917835lq9",
                },
            ]
        },
    }
    assert default_redactor().redact_value(ordinary) is ordinary
    model = Thread.model_validate(ordinary)
    assert default_redactor().redact_thread(model)[0] is model
    leaked = Message.model_validate(value["conversation"]["messages"][0])
    [redacted], located = default_redactor().redact_messages([leaked], 4)
    assert redacted.id == marker("github-token")
    assert sorted(f.path for f in located) == [
        ("conversation", "messages", 4, "id"),
        ("conversation", "messages", 4, "tool_calls", 0, "id"),
    ]
