"""The engine: the RE2 set never hides a rule, detect-secrets' patterns are the token rules'
source, and spans are right in any text (issue 12 item 2)."""

from __future__ import annotations

import random

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from loomsync.core.secrets import default_redactor
from loomsync.core.secrets.engine import trigger
from loomsync.core.secrets.rules import all_rules
from tests.secrets.samples import PASSWORD, TOKENS, URLSAFE, every_token
from tests.secrets.test_kinds import SHAPES

RULES = all_rules()
CONTEXTS = [
    f"DB_PASSWORD={PASSWORD}",
    f'{{"password": "{PASSWORD}"}}',
    f"Authorization: Bearer {PASSWORD}",
    f"Cookie: sid={PASSWORD}",
    f"postgres://u:{PASSWORD}@db/x",
    f"mysql -uroot -p{PASSWORD}",
    f"aws_secret_access_key = {PASSWORD}{PASSWORD}{PASSWORD}"[:64],
]
TEXTS = [
    shape.format(v=token, n="NAME") for _, token in every_token() for shape in SHAPES.values()
] + CONTEXTS


def test_trigger_cuts_after_the_first_top_level_repetition() -> None:
    assert trigger(r"gh[pousr]_[A-Za-z0-9_]{36,251}") == r"gh[pousr]_[A-Za-z0-9_]{4}"
    assert trigger(r"eyJ[a-z]{8,}\.[a-z]{8,}") == r"eyJ[a-z]{4}"
    assert trigger(r"(?:a{2}|b)c{3}d") == r"(?:a{2}|b)c{3}"
    assert trigger(r"[{]x{2}") == r"[{]x{2}"
    assert trigger(r"\{{2}y") == r"\{{2}"
    assert trigger(r"abc") == "abc"


def test_each_rules_trigger_matches_wherever_the_rule_does() -> None:
    checked = 0
    for rule in RULES:
        pattern = re2.compile(rule.pattern)
        cut = re2.compile(rule.trigger or trigger(rule.pattern))
        for text in TEXTS:
            if pattern.search(text):
                assert cut.search(text), (rule.kind, rule.pattern, text)
                checked += 1
    assert checked > len(TEXTS)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(TEXTS), st.text(max_size=30), st.text(max_size=30))
def test_trigger_property_holds_in_any_surroundings(text: str, before: str, after: str) -> None:
    whole = before + text + after
    for rule in RULES:
        if re2.search(rule.pattern, whole):
            assert re2.search(rule.trigger or trigger(rule.pattern), whole), rule.pattern


def test_every_detect_secrets_pattern_of_a_claimed_kind_is_a_rule() -> None:
    from detect_secrets.plugins import github_token, gitlab_token, sendgrid, stripe

    patterns = {rule.pattern for rule in RULES}
    for plugin in (github_token.GitHubTokenDetector, gitlab_token.GitLabTokenDetector,
                   sendgrid.SendGridDetector, stripe.StripeDetector):  # fmt: skip
        for compiled in plugin.denylist:
            adapted = compiled.pattern.removesuffix(r"(?!\w)").replace("{50,1024}", "{50,}")
            assert adapted in patterns


def test_spans_are_characters_in_text_with_emoji_and_lone_surrogates() -> None:
    token = TOKENS["github-token"][0]
    text = f"\U0001f600 é \ud800 {token} \udfff ✓ {PASSWORD}-p"
    findings = default_redactor().find(text)
    assert [text[f.start : f.end] for f in findings] == [token]
    assert default_redactor().redact_text(text) == (
        f"\U0001f600 é \ud800 [REDACTED:github-token] \udfff ✓ {PASSWORD}-p"
    )


def test_a_token_after_megabytes_of_text_is_found() -> None:
    token = TOKENS["slack-token"][0]
    text = ("lorem ipsum key: value, token=abc; Bearer x\n" * 120_000) + token
    assert default_redactor().redact_text(text).endswith("[REDACTED:slack-token]")


def test_a_token_prefix_inside_random_text_is_not_a_token() -> None:
    # CI found it: 8,000 random URL-safe characters held "…0xcsk-oSPr…" (an openai-key),
    # "…l_AIzawSz…" (a google-api-key) about once in forty strings, and were cut up
    rng = random.Random(7)
    blobs = ["".join(rng.choices(URLSAFE, k=8000)) for _ in range(40)]
    # a URL, a JWT (its header is decoded) and a PEM block carry their own structure
    structured = {"slack-webhook", "jwt", "private-key"}
    blobs += ["Xq9" + token + "Zr" for kind, token in every_token() if kind not in structured]
    assert [blob for blob in blobs if default_redactor().find(blob)] == []


@pytest.mark.parametrize("before", ["\\n", "\\t", "%3D", "%22", "=", '"', " ", "/"])
def test_a_token_after_an_escape_or_a_percent_encoded_byte_is_found(before: str) -> None:
    for kind, token in every_token():
        if (kind, before) == ("telegram-bot-token", "%22"):
            continue  # digits before digits: one longer run
        text = f"x{before}{token}\\n"
        assert default_redactor().redact_text(text) == f"x{before}[REDACTED:{kind}]\\n", kind
