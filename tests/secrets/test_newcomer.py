"""A newcomer's findings on the detector (tests/secrets/labelled/newcomer): bracketed values in
quotes and .env lines, query-string values that ran past ``&``, a cut-off PEM block that ate
the next word. Each case failed before its fix."""

from __future__ import annotations

import pytest

from loomsync.core.secrets import default_redactor, marker

SA = marker("secret-assignment")
PEM_1 = "MIIEowIBAAKCAQEA0Zq8pW2rT5vXk9mQ2vR7tLpAb3dE5fG7hI9jK1lM3nO5pQ7r"
PEM_2 = "S9tU1vW3xY5zA7bC9dE1Zq8pW2rT5vXk9mQ2vR7tLpAb3dE5fG7hI9jK1lM3nO5"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('DB_PASSWORD="Xk9mQ2(vR7tLp"', f'DB_PASSWORD="{SA}"'),
        ("password: Xk9m(Q2vR7tLp", f"password: {SA}"),
        ('{"password": "Xk9m[Q2vR7tLp"}', f'{{"password": "{SA}"}}'),
        ("export API_TOKEN='Xk9m<Q2vR7tLp'", f"export API_TOKEN='{SA}'"),
        ('API_SECRET="Xk9m`Q2vR7tLp"', f'API_SECRET="{SA}"'),
        ("DB_PASSWORD=Xk9m(Q2vR7tLp)", f"DB_PASSWORD={SA}"),
        ("password: Xk9m(Q2vR7tLp)", f"password: {SA}"),
        (
            "$ cat .env\nDJANGO_SECRET_KEY='django-insecure-20rn)6hw1hs((@57*tcoz#dantni)qsuha5"
            "+1liy'\nDEBUG=1",
            f"$ cat .env\nDJANGO_SECRET_KEY='{SA}'\nDEBUG=1",
        ),
    ],
)
def test_a_value_with_brackets_is_a_literal_not_code(text: str, expected: str) -> None:
    """Item 1: quoted values and .env line values keep ( ) [ ] { } < > ` as symbols."""
    assert default_redactor().redact_text(text) == expected


def test_a_json_field_with_brackets_under_a_secret_key() -> None:
    """Item 1, the walk: a JSON string under ``password`` is a literal."""
    assert default_redactor().redact_value({"password": "Xk9m[Q2vR7tLp"}) == {"password": SA}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "GET /api?access_token=X1y2Z3w4V5u6T7s8&page=2&sort=desc",
            f"GET /api?access_token={SA}&page=2&sort=desc",
        ),
        (
            "password=hunter2horse&username=jo&remember=true",
            f"password={SA}&username=jo&remember=true",
        ),
        (
            "GET /callback?code=1&client_secret=Ab3dE5fG7hI9jK1l&redirect_uri=https://app/cb"
            " HTTP/1.1",
            f"GET /callback?code=1&client_secret={SA}&redirect_uri=https://app/cb HTTP/1.1",
        ),
    ],
)
def test_a_query_or_form_value_stops_at_the_next_parameter(text: str, expected: str) -> None:
    """Item 2: ``&name=`` ends a value; the parameters after it stay."""
    assert default_redactor().redact_text(text) == expected


def test_a_cut_off_pem_block_ends_at_the_blank_line() -> None:
    """Item 3: a block with no END line keeps the blank line and the traceback after it."""
    text = (
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_1}\n{PEM_2}\n\nTraceback (most recent call last):"
    )
    expected = f"{marker('private-key')}\n\nTraceback (most recent call last):"
    assert default_redactor().redact_text(text) == expected


def test_a_cut_off_pem_block_ends_before_a_line_that_is_not_base64() -> None:
    """Item 3: no blank line, the next line is prose: it stays whole."""
    text = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_1}\nTraceback (most recent call last):"
    expected = f"{marker('private-key')}\nTraceback (most recent call last):"
    assert default_redactor().redact_text(text) == expected


@pytest.mark.parametrize(
    "text", ["BUILD_KEY=linux-x64-release", 's3_key = "reports/2026/q1/summary-final-v2.pdf"']
)
def test_a_platform_slug_and_an_object_path_are_not_secrets(text: str) -> None:
    """Item 4: false positives (a build matrix key, an S3 object key)."""
    assert default_redactor().redact_text(text) == text


def test_a_routable_gitlab_token_is_redacted_whole() -> None:
    """Item 4: the ``.01.<base36>`` tail of a GitLab token is part of it."""
    token = "glpat-Ab3dE5fG7hI9jK1lM3nO.01.0k9xyz7qa"
    assert default_redactor().redact_text(f"token {token} ok") == "token [REDACTED:gitlab-token] ok"
