"""A tool call is judged the way the command ran (issue 27 item 1), and a shape-only rule asks
for its context (item 2): unit tests of the walker and engine both sides share
(loomsync/core/secrets: walk.py, views.py, rules.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from loomsync.core.secrets import default_redactor
from tests.secrets.samples import ALNUM, B64, TOKENS, fake

PW = fake(ALNUM, 6) + "!" + fake(ALNUM, 6)
TOKEN = fake(ALNUM, 24)
B86 = fake(B64, 86) + "=="


def _redacted(value: Any) -> str:
    """``value`` walked where a tool call's arguments sit, as JSON text."""
    new, found = default_redactor().redact_value_located(value, ("tool_calls", 0, "arguments_json"))
    text = json.dumps(new)
    assert bool(found) == (new is not value)
    return text


@pytest.mark.parametrize(
    "name", ["Authorization", "authorization", "AUTHORIZATION", "Proxy-Authorization"]
)
@pytest.mark.parametrize("scheme", ["Bearer ", "Basic ", "token ", ""])
def test_an_authorization_header_object_is_judged_by_its_name(name: str, scheme: str) -> None:
    text = _redacted({"headers": {name: f"{scheme}{TOKEN}", "Accept": "*/*"}})
    assert TOKEN not in text
    assert "[REDACTED:authorization-header]" in text


@pytest.mark.parametrize("name", ["Cookie", "Set-Cookie", "set-cookie", "COOKIE"])
def test_a_cookie_header_object_is_judged_by_its_name(name: str) -> None:
    text = _redacted({"headers": {name: f"session={TOKEN}; Path=/"}})
    assert TOKEN not in text
    assert "[REDACTED:cookie]" in text


@pytest.mark.parametrize(
    "name", ["X-Api-Key", "x-api-key", "X-Auth-Token", "PRIVATE-TOKEN", "Ocp-Apim-Subscription-Key"]
)
def test_other_credential_headers_are_judged_by_their_names(name: str) -> None:
    assert TOKEN not in _redacted({"headers": {name: TOKEN}})


@pytest.mark.parametrize(("name_key", "value_key"), [("name", "value"), ("key", "value")])
def test_har_and_postman_pairs_are_judged_by_their_name(name_key: str, value_key: str) -> None:
    pairs = [{name_key: "Authorization", value_key: f"Bearer {TOKEN}"},
             {name_key: "Cookie", value_key: f"sid={PW}"}]  # fmt: skip
    text = _redacted({"headers": pairs})
    assert TOKEN not in text
    assert PW not in text


@pytest.mark.parametrize(
    "argv",
    [
        ["curl", "-u", f"admin:{PW}", "https://ci.acme.dev"],
        ["curl", "--user", f"admin:{PW}", "https://ci.acme.dev"],
        ["sshpass", "-p", PW, "ssh", "root@host"],
        ["docker", "login", "ghcr.io", "-u", "bot", "-p", PW],
        ["/usr/bin/mysql", "-u", "root", f"-p{PW}", "shop"],
        ["mysqldump", f"--password={PW}", "shop"],
        ["redis-cli", "-a", PW, "ping"],
    ],
)
def test_an_argv_array_is_judged_as_one_command(argv: list[str]) -> None:
    text = _redacted({"command": argv})
    assert PW not in text
    assert "[REDACTED:password]" in text
    assert json.loads(text)["command"][0] == argv[0]  # the words stay words


@pytest.mark.parametrize(
    "argv",
    [
        ["mysql", "-u", "root", "-p", "shop"],  # -p alone prompts
        ["ssh", "-p", "2222", "deploy@web1"],
        ["mkdir", "-p", "/srv/app"],
        ["curl", "-u", "$API_USER:$API_PASS", "https://api.acme.dev"],
        ["git", "commit", "-m", "rotate the password policy"],
    ],
)
def test_argv_arrays_without_a_credential_are_kept(argv: list[str]) -> None:
    value = {"command": argv}
    assert default_redactor().redact_value(value) is value


def test_a_url_with_json_escaped_slashes_loses_its_password_in_text() -> None:
    text = '{"DATABASE_URL":"postgres:\\/\\/app:' + PW + '@db:5432\\/app"}'
    redacted = default_redactor().redact_text(text)
    assert redacted == '{"DATABASE_URL":"postgres:\\/\\/app:[REDACTED:url-password]@db:5432\\/app"}'


def test_text_is_judged_after_json_unescaping() -> None:
    text = '{"out":"DEBUG\\u003d1\\nDB_PASSWORD\\u003d' + PW + '\\n"}'
    assert PW not in default_redactor().redact_text(text)
    argv_text = '{"command":["sshpass","-p","' + PW + '","ssh","deploy@web1"]}'
    assert default_redactor().redact_text(argv_text) == argv_text.replace(PW, "[REDACTED:password]")


def test_a_github_token_in_doubly_escaped_json_keeps_its_kind() -> None:
    token = TOKENS["github-token"][0]
    text = '{\\"env\\":{\\"GITHUB_TOKEN\\":\\"' + token + '\\"}}'
    assert default_redactor().redact_text(text) == text.replace(token, "[REDACTED:github-token]")


@pytest.mark.parametrize(
    "context",
    [
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={v};EndpointSuffix=x",
        "az storage blob list --account-name acme --account-key {v}",
        "AZURE_STORAGE_KEY={v}",
        '{{"keyName": "key1",\n "permissions": "FULL",\n "value": "{v}"}}',
    ],
)
def test_an_azure_key_is_found_after_its_name(context: str) -> None:
    text = context.format(v=B86)
    assert B86 not in default_redactor().redact_text(text)


@pytest.mark.parametrize(
    "text",
    [
        f'<input type="hidden" name="authenticity_token" value="{B86}" />',
        f'<meta name="csrf-token" content="{B86}" />',
        f"Content-Digest: sha-512=:{B86}:",
        f'<script src="x.js" integrity="sha512-{B86}"></script>',
        f"$ openssl dgst -sha512 -binary app.tgz | base64\n{B86}\n",
        f'{{"signature": "{B86}", "alg": "Ed25519"}}',
        f'ETag: "{B86}"',
    ],
)
def test_86_character_base64_without_a_key_name_is_kept(text: str) -> None:
    assert default_redactor().redact_text(text) == text


@pytest.mark.parametrize(
    "value",
    [
        {"authenticity_token": B86, "commit": "Sign in"},
        {"headers": {"X-CSRF-Token": B86, "Content-Digest": f"sha-512=:{B86}:"}},
        {"__RequestVerificationToken": "CfDJ8" + fake(ALNUM, 60)},
        {"headers": {"Authorization": "Bearer ${GITHUB_TOKEN}", "Cookie": "$COOKIE"}},
        {"headers": [{"name": "Authorization", "value": "Bearer <token>"}]},
    ],
)
def test_structured_values_that_are_not_credentials_are_kept(value: dict[str, Any]) -> None:
    assert default_redactor().redact_value(value) is value
