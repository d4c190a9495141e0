"""Each token kind, in the shapes real tools print it (issue 12 item 2)."""

from __future__ import annotations

import json

import pytest

from loomsync.core.secrets import KINDS, default_redactor, marker
from tests.secrets.samples import every_token

#: How tools print a value: ``{v}`` is the token, ``{n}`` an environment variable's name.
SHAPES = {
    "env output": "HOME=/home/dev\n{n}={v}\nPATH=/usr/bin",
    ".env file": "# local settings\n{n}={v}\nDEBUG=1\n",
    "export": "$ export {n}='{v}'",
    "curl header": "curl -sS -H 'X-Api-Key: {v}' https://api.example.com/v1/items",
    "http dump": "> GET /v1 HTTP/1.1\n> Host: api.example.com\n> X-Token: {v}\n>",
    "json config": '{{\n  "service": "billing",\n  "credentials": {{"value": "{v}"}}\n}}',
    "yaml": "service:\n  name: billing\n  credential: {v}\n",
    "toml": '[service]\nname = "billing"\nvalue = "{v}"\n',
    "python": 'client = Client(api="{v}", timeout=30)',
    "javascript": "const client = new Client({{ key: '{v}' }});",
    "docker inspect": '"Env": [\n    "{n}={v}",\n    "LANG=C.UTF-8"\n]',
    "prose": "the value is {v}.",
    "json escaped": '{{\\"{n}\\": \\"{v}\\"}}',
}

_CASES = [(kind, token, shape) for kind, token in every_token() for shape in SHAPES]


@pytest.mark.parametrize(
    ("kind", "token", "shape"), _CASES, ids=[f"{k}-{s}-{t[:6]}" for k, t, s in _CASES]
)
def test_token_in_each_shape_is_replaced_by_its_marker(kind: str, token: str, shape: str) -> None:
    text = SHAPES[shape].format(v=token, n="SERVICE_VALUE")
    redacted = default_redactor().redact_text(text)
    assert token not in redacted
    assert marker(kind) in redacted


@pytest.mark.parametrize(("kind", "token"), every_token())
def test_finding_spans_the_token_exactly(kind: str, token: str) -> None:
    text = f"value: {token}\n"
    findings = default_redactor().find(text)
    assert [(f.kind, text[f.start : f.end]) for f in findings] == [(kind, token)]


def test_every_claimed_kind_is_in_the_table() -> None:
    claimed = {kind for kind, _ in every_token()} | {
        "aws-secret-key",
        "azure-storage-key",
        "url-password",
        "authorization-header",
        "cookie",
        "secret-assignment",
        "password",
    }
    assert claimed == set(KINDS)


def test_gcp_service_account_json_loses_its_private_key() -> None:
    pem = next(t for k, t in every_token() if k == "private-key" and "BEGIN PRIVATE" in t)
    document = {
        "type": "service_account",
        "project_id": "demo-project",
        "private_key_id": "0123456789abcdef0123456789abcdef01234567",
        "private_key": pem + "\n",
        "client_email": "svc@demo-project.iam.gserviceaccount.com",
    }
    text = "$ cat sa.json\n" + json.dumps(document, indent=2)
    redacted = default_redactor().redact_text(text)
    assert "BEGIN PRIVATE KEY" not in redacted
    assert pem.splitlines()[1] not in redacted
    assert json.loads(redacted.split("\n", 1)[1])["private_key"] == marker("private-key") + "\n"


def test_truncated_pem_block_is_still_redacted() -> None:
    pem = next(t for k, t in every_token() if k == "private-key")
    head = "\n".join(pem.splitlines()[:5])
    redacted = default_redactor().redact_text(f"$ head -5 id_rsa\n{head}\n$ ")
    # the newline after the cut-off block stays (newcomer item 3: the block ends at its last line)
    assert redacted == f"$ head -5 id_rsa\n{marker('private-key')}\n$ "


def test_unsigned_and_five_part_jwts_are_redacted() -> None:
    token = next(t for k, t in every_token() if k == "jwt")
    header, payload, _ = token.split(".")
    for value in (f"{header}.{payload}.", f"{token}.abcdefghij.klmnopqrst"):
        assert default_redactor().redact_text(f"token {value} end") == "token [REDACTED:jwt] end"


def test_base64_of_json_is_not_a_jwt() -> None:
    text = "eyJub3QiOiAiYSB0b2tlbiJ9.eyJzdWIiOiAiMSJ9.c2lnbmF0dXJl"  # header without alg/typ
    assert default_redactor().find(text) == []


def test_telegram_token_in_its_api_url() -> None:
    token = next(t for k, t in every_token() if k == "telegram-bot-token")
    text = f"curl https://api.telegram.org/bot{token}/getMe"
    assert default_redactor().redact_text(text) == (
        "curl https://api.telegram.org/bot[REDACTED:telegram-bot-token]/getMe"
    )


def test_glued_tokens_are_all_redacted_at_once() -> None:
    # bounded rules see their neighbour only once it is a marker: one pass per token
    telegram = next(t for k, t in every_token() if k == "telegram-bot-token")
    aws = next(t for k, t in every_token() if k == "aws-access-key")
    text = telegram * 5 + " " + aws
    once = default_redactor().redact_text(text)
    assert once == marker("telegram-bot-token") * 5 + " " + marker("aws-access-key")
    assert default_redactor().redact_text(once) is once
