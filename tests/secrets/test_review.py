"""Regressions for the review of issue 12 on main (/work/wt/REVIEW.md, detector findings P1-2,
P1-3, P1-4, P1-6, P2-8, P2-9, P3-12, P5). Every planted value is the reviewer's invention."""

from __future__ import annotations

from typing import Any

import pytest

from loomsync.core.secrets import default_redactor, marker

GHP = "ghp_16C7e42F292c6912E7710c838347Ae178B4aQz"
HVS = "hvs.CAESIAb3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9dE1"
HEX32 = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
HEX40 = "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c"
PW = "Zq8pW2rT5v"
SA = marker("secret-assignment")


def redact(text: str) -> str:
    return default_redactor().redact_text(text)


def test_p1_2_url_password_with_a_raw_at_sign_is_redacted_whole() -> None:
    text = "postgres://app:Zq8p@W2rT5v@db:5432/app"
    assert redact(text) == "postgres://app:[REDACTED:url-password]@db:5432/app"
    assert default_redactor().redact_value({"u": text}) == {"u": "postgres://db:5432/app"}


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"export VAULT_TOKEN={HVS}", HVS),
        ("DB_PASSWORD=Zq8p.W2rT5v", "Zq8p.W2rT5v"),
        ("password: Zq8p.W2rT5v", "Zq8p.W2rT5v"),
        ('"api_token": "v1.Ab3dE5fG7hI9jK1lM3nO5pQ7"', "v1.Ab3dE5fG7hI9jK1lM3nO5pQ7"),
        (f"token  {HVS}", HVS),
    ],
)
def test_p1_3_values_with_dots_and_vault_tokens(text: str, secret: str) -> None:
    assert secret not in redact(text)


def test_p1_3_a_dotted_value_under_a_secret_json_key() -> None:
    value = {"vault_token": "hvs.CAESIAb3dE5fG7hI9jK1lM3nO5pQ7rS9"}
    assert default_redactor().redact_value(value) == {"vault_token": SA}


@pytest.mark.parametrize(
    "text",
    [
        f'env:\n  - name: DB_PASSWORD\n    value: "{PW}"',
        f'{{"name": "DB_PASSWORD", "value": "{PW}"}}',
        f'<add key="ApiKey" value="{PW}" />',
    ],
)
def test_p1_4_name_value_pairs_in_text(text: str) -> None:
    assert PW not in redact(text)


def test_p1_4_name_value_pairs_in_json() -> None:
    value = {"env": [{"name": "DB_PASSWORD", "value": PW}, {"name": "LOG_LEVEL", "value": "x1"}]}
    assert default_redactor().redact_value(value) == {
        "env": [{"name": "DB_PASSWORD", "value": SA}, {"name": "LOG_LEVEL", "value": "x1"}]
    }


def test_p1_4_a_secret_reference_is_not_a_value() -> None:
    text = (
        "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n"
        "        name: db-credentials\n        key: password"
    )
    assert redact(text) == text


def test_p1_6_a_token_as_a_key_becomes_its_marker_and_the_path_hides_it() -> None:
    value = {"metadata": {"extra": {"tokens": {GHP: "repo", "other": "x"}}}}
    new, found = default_redactor().redact_value_located(value)
    assert new == {
        "metadata": {"extra": {"tokens": {marker("github-token"): "repo", "other": "x"}}}
    }
    assert [(f.kind, f.path) for f in found] == [
        ("github-token", ("metadata", "extra", "tokens", marker("github-token")))
    ]
    assert default_redactor().redact_value(new) is new


def test_p1_6_colliding_keys_are_numbered_and_stay_idempotent() -> None:
    other = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"
    value = {marker("github-token"): "old", GHP: "a", other: "b"}
    new = default_redactor().redact_value(value)
    assert new == {
        marker("github-token"): "old",
        marker("github-token") + "#2": "a",
        marker("github-token") + "#3": "b",
    }
    assert default_redactor().redact_value(new) is new


def test_p1_6_token_keys_in_a_message_extra() -> None:
    from loomsync.core.document.model import Message

    message = Message.model_validate({"role": "user", "content": "hi", "extra": {GHP: 1}})
    new, found = default_redactor().redact_messages([message])
    assert new[0].model_dump()["extra"] == {marker("github-token"): 1}
    assert GHP not in repr(found)


@pytest.mark.parametrize(
    "text",
    [
        "git clone https://[REDACTED:github-token]@github.com/o/r.git",
        "postgres://[REDACTED:secret-assignment]@db/app",
        "x-access-token:[REDACTED:github-token]@github.com",
    ],
)
def test_p2_8_markers_are_never_rewritten(text: str) -> None:
    assert redact(text) == text
    assert default_redactor().find(text) == []


def test_p2_8_a_token_as_userinfo_gives_one_well_formed_marker() -> None:
    once = redact(f"git clone https://{GHP}@github.com/o/r.git")
    assert once == "git clone https://[REDACTED:github-token]@github.com/o/r.git"


@pytest.mark.parametrize(
    "text",
    [
        "    api_key=api_key,",
        "    token=token,",
        "    secret_key=SECRET_KEY,",
        "    api_key=settings.OPENAI_API_KEY,",
        "    password=form.password.data,",
        "    refresh_token=tokens['refresh'],",
        "    auth=HTTPBasicAuth(user, pw),",
        "    access_token=create_access_token(data={'sub': user.id}),",
        "    token=tokens.access;",
    ],
)
def test_p2_9_code_is_not_a_secret(text: str) -> None:
    assert redact(text) == text


def _thread(**extra: Any) -> dict[str, Any]:
    return {"id": "T-1", "conversation": {"messages": [{"role": "user", "content": "x"}]}, **extra}


def test_p3_12_structural_names_are_structural_only_at_their_absolute_path() -> None:
    value = {"metadata": {"extra": {"messages": [{"id": GHP, "role": GHP}]}}}
    new = default_redactor().redact_value(value)
    assert new == {
        "metadata": {"extra": {"messages": [{"id": marker("github-token"),
                                             "role": marker("github-token")}]}}
    }  # fmt: skip
    kept = _thread()
    kept["conversation"]["messages"][0]["id"] = "msg_01"
    assert default_redactor().redact_value(kept) is kept


def test_p3_12_sha_fields_are_kept_only_when_hex() -> None:
    sha = "e713a738d5fad476dffd3de1350596e750a2ce7e"
    kept = _thread(git_current_commit_sha=sha, git_commits=[sha])
    assert default_redactor().redact_value(kept) is kept
    leaked = _thread(git_current_commit_sha=GHP, git_commits=[sha, GHP])
    new = default_redactor().redact_value(leaked)
    assert new["git_current_commit_sha"] == marker("github-token")
    assert new["git_commits"] == [sha, marker("github-token")]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"wget --http-password {PW} https://x", PW),
        (f"openssl enc -aes-256-cbc -k {PW}", PW),
        ("  --token Ab3dE5fG7hI9jK1lM3nO5pQ7", "Ab3dE5fG7hI9jK1lM3nO5pQ7"),
        ("vault login s.Ab3dE5fG7hI9jK1lM3nO5pQ7", "s.Ab3dE5fG7hI9jK1lM3nO5pQ7"),
        (f"git clone https://{HEX40}@github.com/o/r.git", HEX40),
        ("…/c/b?sv=2022-11-02&sig=Ab3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9d%3D", "Ab3dE5fG7hI9"),
        (f"curl 'https://api.example.com/v1/x?key={HEX32}'", HEX32),
        (f"curl 'https://x/weather?q=London&appid={HEX32}'", HEX32),
        (f"curl 'https://api.example.com/v1/x?access_token={HEX32}'", HEX32),
        (f"<password>{PW}</password>", PW),
        (f"password = os.getenv('DB_PASSWORD', '{PW}')", PW),
        ("DB_PASSWORD='Zq8p W2rT5v'", "Zq8p W2rT5v"),
        ('{"password":"correct horse battery"}', "correct horse battery"),
        (f"\x1b[32mDB_PASSWORD\x1b[0m={PW}", PW),
        (f"setenv DB_PASSWORD {PW}", PW),
        (f"https://{HEX32}:@example.com/x", HEX32),
        (f"https://user:{PW}@例え.jp/x", PW),
    ],
)
def test_p5_misses(text: str, secret: str) -> None:
    assert secret not in redact(text)


def test_p5_quoted_value_with_spaces_under_a_json_key() -> None:
    value = {"password": "correct horse battery"}
    assert default_redactor().redact_value(value) == {"password": SA}


@pytest.mark.parametrize(
    "text",
    [
        "STORAGE_KEY=app-settings-v2",
        "LOCAL_STORAGE_KEY=todos_v3",
        "const TOKEN_KEY = 'auth_token_v2';",
        '"auth": "oauth2",',
        "auth: oauth2-proxy",
        "secret: db-credentials-v2",
        "tls_secret: ingress-tls-2024",
        "session_key=user:42:profile",
        "api_key: !vault prod/api_key",
        '{"password": "This field is required."}',
        "password: Enter your password",
        "    session_token=session_token_2,",
        "pass: 127/130 tests",
    ],
)
def test_p5_false_positives(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize("userinfo", [HEX40, f"{HEX40}:"])
def test_p5_a_token_as_the_whole_userinfo_of_a_url_field_is_dropped(userinfo: str) -> None:
    value = {"remote": f"https://{userinfo}@github.com/o/r.git"}
    assert default_redactor().redact_value(value) == {"remote": "https://github.com/o/r.git"}


def test_p5_a_sentry_dsn_keeps_its_public_key() -> None:
    dsn = "https://b5cb50cf82ac012b42d539e14a1f14a5@o652464.ingest.sentry.io/7470098"
    assert redact(f"SENTRY_DSN={dsn}") == f"SENTRY_DSN={dsn}"
    value = {"dsn": dsn}
    assert default_redactor().redact_value(value) is value


def test_p1_6_a_value_under_a_token_key_is_not_judged_by_the_marker_name() -> None:
    # "[REDACTED:aws-access-key]" ends in "key": as a name it would claim the value
    value = {"AKIAZ7Q3K4M5N6P7R8S9": "00001:"}
    once = default_redactor().redact_value(value)
    assert once == {marker("aws-access-key"): "00001:"}
    assert default_redactor().redact_value(once) is once
