"""Invented credentials shaped like the real formats (prefix, length, alphabet), for the tests.

Every value is generated here from a fixed seed, so no key is written in the repository
and none is real; the same run always makes the same values.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable

_RNG = random.Random(12)
ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def fake(alphabet: str, length: int) -> str:
    """``length`` characters of ``alphabet``, from the module's fixed-seed generator."""
    return "".join(_RNG.choice(alphabet) for _ in range(length))


def drawer(seed: str) -> Callable[[str, int], str]:
    """``draw(alphabet, length)``: random characters from a generator seeded with ``seed`` (a
    test's fresh values, unlike the module's fixed ones)."""
    rng = random.Random(seed)

    def draw(alphabet: str, length: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(length))

    return draw


def _b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def _pem(label: str) -> str:
    body = base64.b64encode(_RNG.randbytes(600)).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----"


#: One invented token of each token kind (several where the kind has several formats).
TOKENS: dict[str, list[str]] = {
    "aws-access-key": ["AKIA" + fake(UPPER, 16), "ASIA" + fake(UPPER, 16)],
    "github-token": [
        "ghp_" + fake(ALNUM, 36),
        "gho_" + fake(ALNUM, 36),
        "github_pat_" + fake(ALNUM, 22) + "_" + fake(ALNUM, 59),
    ],
    "gitlab-token": ["glpat-" + fake(URLSAFE, 20)],
    "slack-token": ["xoxb-" + fake("0123456789", 12) + "-" + fake("0123456789", 13) + "-"
                    + fake(ALNUM, 24), "xoxp-" + fake("0123456789", 11) + "-" + fake(ALNUM, 32)],
    "slack-webhook": ["https://hooks.slack.com/services/T" + fake(UPPER, 8) + "/B"
                      + fake(UPPER, 10) + "/" + fake(ALNUM, 24)],
    "stripe-key": ["sk_live_" + fake(ALNUM, 24), "rk_test_" + fake(ALNUM, 99)],
    "openai-key": ["sk-proj-" + fake(URLSAFE, 74) + fake(ALNUM, 4),
                   "sk-" + fake(ALNUM, 20) + "T3BlbkFJ" + fake(ALNUM, 20)],
    "anthropic-key": ["sk-ant-api03-" + fake(URLSAFE, 93) + "AA"],
    "google-api-key": ["AIza" + fake(URLSAFE, 35)],
    "azure-storage-key": [fake(B64, 86) + "=="],
    "twilio-key": ["AC" + fake(HEX, 32), "SK" + fake(HEX, 32)],
    "sendgrid-key": ["SG." + fake(URLSAFE, 22) + "." + fake(URLSAFE, 43)],
    "mailchimp-key": [fake(HEX, 32) + "-us14"],
    "npm-token": ["npm_" + fake(ALNUM, 36)],
    "pypi-token": ["pypi-AgEIcHlwaS5vcmc" + fake(URLSAFE, 120)],
    "discord-token": ["M" + fake(URLSAFE, 23) + "." + fake(URLSAFE, 6) + "." + fake(URLSAFE, 27)],
    "telegram-bot-token": [fake("123456789", 9) + ":AA" + fake(URLSAFE, 33)],
    "square-token": ["sq0atp-" + fake(URLSAFE, 22), "sq0csp-" + fake(URLSAFE, 43),
                     "EAAA" + fake(URLSAFE, 60)],
    "huggingface-token": ["hf_" + fake(string.ascii_letters, 34)],
    "digitalocean-token": ["dop_v1_" + fake(HEX, 64)],
    "jwt": [_b64url({"alg": "HS256", "typ": "JWT"}) + "." + _b64url({"sub": "u-42", "iat": 1})
            + "." + fake(URLSAFE, 43)],
    "private-key": [_pem("RSA PRIVATE KEY"), _pem("OPENSSH PRIVATE KEY"), _pem("PRIVATE KEY")],
}  # fmt: skip

#: A password-like value for the context rules (a digit, mixed case, a symbol).
PASSWORD = "Tr0ub4dor&" + fake(ALNUM, 8)

#: Token kinds whose rule needs a boundary: no letter, digit, ``_`` or ``-`` right next to the
#: token (a prefix inside a longer random string is not a token). Only URLs, JWTs (their
#: header is decoded) and PEM blocks carry structure enough to be found glued.
BOUNDED = frozenset(TOKENS) - {"slack-webhook", "jwt", "private-key"}


#: Kinds whose token has no prefix of its own: a shape every SHA-512 digest, Ed25519 signature
#: and Rails CSRF token shares (86 base64 characters and ``==``), found only after its name
#: (issue 27 item 2; tests/secrets/test_structured.py), so not among the bare tokens.
CONTEXT_ONLY = frozenset({"azure-storage-key"})


def every_token() -> list[tuple[str, str]]:
    """``(kind, token)`` for every invented token that is found without context."""
    return [
        (kind, token)
        for kind, tokens in TOKENS.items()
        if kind not in CONTEXT_ONLY
        for token in tokens
    ]
