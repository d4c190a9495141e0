"""LOOMSYNC_JWT_SECRET_FILE / LOOMSYNC_CURSOR_SECRET_FILE (issue 34, docs/operations.md "Secrets
from files"): the secret read from a file (Docker secrets), with clear errors that never quote a
secret."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from jose import jwt
from pydantic import ValidationError
from typer.testing import CliRunner

from app.cli import cli
from app.config import Settings


def settings(**values: object) -> Settings:
    """Settings from ``values`` only (no .env, no LOOMSYNC_* of the caller)."""
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


@pytest.fixture
def secret_file(tmp_path: Path) -> tuple[Path, str]:
    """A file holding a random secret and a trailing line break, as `echo` or an editor leaves."""
    secret = secrets.token_urlsafe(48)
    path = tmp_path / "jwt_secret"
    path.write_text(secret + "\n")
    return path, secret


def test_secret_comes_from_the_file_without_its_line_break(secret_file: tuple[Path, str]) -> None:
    path, secret = secret_file
    loaded = settings(jwt_secret_file=path, cursor_secret_file=path)
    assert loaded.jwt_secret is not None
    assert loaded.cursor_secret is not None
    assert loaded.jwt_secret.get_secret_value() == secret
    assert loaded.cursor_secret.get_secret_value() == secret


def test_empty_variables_count_as_unset(secret_file: tuple[Path, str]) -> None:
    """docker-compose.yml passes LOOMSYNC_JWT_SECRET and LOOMSYNC_JWT_SECRET_FILE through,
    empty when the operator set only the other one."""
    path, secret = secret_file
    loaded = settings(jwt_secret="", jwt_secret_file=str(path))
    assert loaded.jwt_secret is not None
    assert loaded.jwt_secret.get_secret_value() == secret
    assert settings(jwt_secret="", jwt_secret_file="").jwt_secret is None


def test_the_same_secret_twice_is_fine(secret_file: tuple[Path, str]) -> None:
    """`serve` hands its settings to uvicorn's workers through LOOMSYNC_JWT_SECRET."""
    path, secret = secret_file
    loaded = settings(jwt_secret=secret, jwt_secret_file=path)
    assert loaded.jwt_secret is not None
    assert loaded.jwt_secret.get_secret_value() == secret


def test_two_different_secrets_are_refused_without_quoting_either(
    secret_file: tuple[Path, str],
) -> None:
    path, secret = secret_file
    other = secrets.token_urlsafe(48)
    with pytest.raises(ValidationError) as raised:
        settings(jwt_secret=other, jwt_secret_file=path)
    message = str(raised.value)
    assert "LOOMSYNC_JWT_SECRET and LOOMSYNC_JWT_SECRET_FILE are both set" in message
    assert secret not in message
    assert other[:8] not in message


def test_unreadable_or_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(ValidationError, match=r"LOOMSYNC_JWT_SECRET_FILE: cannot read .*nowhere"):
        settings(jwt_secret_file=missing)
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe" * 20)
    with pytest.raises(ValidationError, match=r"LOOMSYNC_CURSOR_SECRET_FILE: .* is not UTF-8"):
        settings(cursor_secret_file=binary)


def test_a_short_secret_in_a_file_is_refused_like_one_in_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "weak"
    path.write_text("changeme\n")
    with pytest.raises(ValidationError, match="LOOMSYNC_JWT_SECRET is a placeholder") as raised:
        settings(jwt_secret_file=path)
    assert "changeme" not in str(raised.value)


def test_token_create_signs_with_the_secret_from_the_file(
    secret_file: tuple[Path, str],
) -> None:
    """`loomsync-server token create` as `docker compose exec server …` runs it with Docker
    secrets: only LOOMSYNC_JWT_SECRET_FILE set."""
    path, secret = secret_file
    env = {
        "LOOMSYNC_JWT_SECRET": None,
        "LOOMSYNC_JWT_SECRET_FILE": str(path),
        "LOOMSYNC_JWT_ALGORITHMS": "HS256",
        "LOOMSYNC_JWT_ISSUER": None,
        "LOOMSYNC_JWT_AUDIENCE": None,
        "LOOMSYNC_ENV": None,
    }
    result = CliRunner().invoke(cli, ["token", "create", "--sub", "alice"], env=env)
    assert result.exit_code == 0, result.output
    claims = jwt.decode(result.stdout.strip(), secret, algorithms=["HS256"])
    assert claims["sub"] == "alice"
