"""Properties of redaction (issue 12 item 2), with hypothesis: JSON is never corrupted, text
without a finding is unchanged, redacting twice changes nothing, and a planted secret is gone
whatever surrounds it."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from loomsync.core.secrets import default_redactor, marker
from loomsync.core.secrets.shapes import is_placeholder
from tests.secrets.samples import BOUNDED, PASSWORD, every_token

TOKENS = [token for _, token in every_token()]
PIECES = [
    *TOKENS,
    PASSWORD,
    "DB_PASSWORD=",
    "Authorization: Bearer ",
    "Cookie: sid=",
    "https://user:",
    "@host/x",
    "-----BEGIN PRIVATE KEY-----\n",
    "-----END PRIVATE KEY-----",
    marker("github-token"),
    "[REDACTED:",
    "${TOKEN}",
    "ghp_",
    "eyJ",
    "://",
    '"password": "',
    "\\n",
    "\n",
    " ",
    "=",
    ":",
    '"',
    "'",
]
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Text mixing arbitrary characters (lone surrogates too) with secrets and their contexts.
texts = st.lists(st.one_of(st.text(max_size=12), st.sampled_from(PIECES)), max_size=12).map("".join)
#: Keys: short text, secret names, and tokens (a key holding a token becomes its marker).
keys = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["password", "api_key", "id", "token", "name", "value", marker("jwt")]),
    st.sampled_from(TOKENS),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), texts),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=12,
)


def same_shape(before: Any, after: Any) -> bool:
    """Same structure and types, keys in the same order (a key may only become a marker);
    only strings may differ."""
    if isinstance(before, dict):
        return (
            isinstance(after, dict)
            and len(before) == len(after)
            and all(
                (kb == ka or ka.startswith("[REDACTED:")) and same_shape(before[kb], after[ka])
                for kb, ka in zip(before, after, strict=True)
            )
        )
    if isinstance(before, list):
        return (
            isinstance(after, list)
            and len(before) == len(after)
            and all(same_shape(a, b) for a, b in zip(before, after, strict=True))
        )
    if isinstance(before, str):
        return isinstance(after, str)
    return type(before) is type(after) and before == after


@SETTINGS
@given(json_values)
def test_redact_value_never_corrupts_json(value: Any) -> None:
    before = json.dumps(value)
    result = default_redactor().redact_value(value)
    json.dumps(result)
    assert same_shape(value, result)
    assert json.dumps(value) == before  # the input is never modified


@SETTINGS
@given(json_values)
def test_redact_value_is_idempotent(value: Any) -> None:
    once = default_redactor().redact_value(value)
    assert default_redactor().redact_value(once) is once


@SETTINGS
@given(texts)
def test_text_without_a_finding_is_unchanged(text: str) -> None:
    redactor = default_redactor()
    if not redactor.find(text):
        assert redactor.redact_text(text) is text


@SETTINGS
@given(texts)
def test_redacting_twice_changes_nothing(text: str) -> None:
    once = default_redactor().redact_text(text)
    assert default_redactor().redact_text(once) is once


@SETTINGS
@given(st.sampled_from(every_token()), st.text(max_size=40), st.text(max_size=40))
def test_planted_token_is_removed_whatever_surrounds_it(
    item: tuple[str, str], before: str, after: str
) -> None:
    kind, token = item
    if kind in BOUNDED:  # these rules need a non-alphanumeric neighbour, as real text has
        before, after = before + " ", " " + after
    redacted = default_redactor().redact_text(before + token + after)
    assert token not in redacted


@SETTINGS
@given(
    st.text(max_size=40),
    st.text(max_size=40),
    st.sampled_from(["DB_PASSWORD=", "export API_KEY=", "password: ", '"secret": "']),
    st.text(alphabet="abcdefghjkmnpqrstuvwyzABCDEFGHJKLMNPQRSTUVWYZ", min_size=8, max_size=30),
)
def test_planted_assignment_is_removed_whatever_surrounds_it(
    before: str, after: str, name: str, letters: str
) -> None:
    value = "7" + letters + "9"
    assume(not is_placeholder(value))  # 7CHANGEME9 is one, by design
    text = f"{before}\n{name}{value}\n{after}"
    assert value not in default_redactor().redact_text(text)
