"""Client configuration: config.toml, the token file (mode 0600), environment overrides."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from loomsync import ClientPaths, ConfigError, load_config
from loomsync.config import clear_login, default_paths, save_login


def test_login_is_stored_with_a_private_token_and_other_keys_kept(tmp_path: Path) -> None:
    paths = ClientPaths.under(tmp_path)
    paths.config_dir.mkdir(parents=True)
    paths.config_file.write_text('retries = 7\nserver_url = "http://old"\n')
    save_login(paths, "http://127.0.0.1:8080/", "tok-123")
    config = load_config(paths)
    assert (config.server_url, config.retries, config.logged_in) == (
        "http://127.0.0.1:8080",
        7,
        True,
    )
    assert config.token is not None
    assert config.token.get_secret_value() == "tok-123"
    assert stat.S_IMODE(paths.token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(paths.config_dir.stat().st_mode) == 0o700
    assert clear_login(paths)
    assert not load_config(paths).logged_in
    assert not clear_login(paths)


def test_environment_overrides_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = ClientPaths.under(tmp_path)
    save_login(paths, "http://from-file", "file-token")
    monkeypatch.setenv("LOOMSYNC_SERVER_URL", "http://from-env")
    monkeypatch.setenv("LOOMSYNC_TOKEN", "env-token")
    config = load_config(paths)
    assert config.server_url == "http://from-env"
    assert config.token is not None
    assert config.token.get_secret_value() == "env-token"


def test_a_broken_config_file_is_a_config_error(tmp_path: Path) -> None:
    paths = ClientPaths.under(tmp_path)
    paths.config_dir.mkdir(parents=True)
    paths.config_file.write_text("server_url = [unclosed")
    with pytest.raises(ConfigError, match=r"config\.toml"):
        load_config(paths)
    paths.config_file.write_text("retries = -1\n")
    with pytest.raises(ConfigError, match="retries"):
        load_config(paths)


def test_default_folders_follow_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONFIG", "DATA", "STATE"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / name.lower()))
    paths = default_paths()
    assert paths.threads_dir == tmp_path / "data" / "loomsync" / "threads"
    assert (
        paths.sync_dir / "queue.sqlite3"
        == tmp_path / "state" / "loomsync" / "sync" / "queue.sqlite3"
    )
    assert paths.token_file == tmp_path / "config" / "loomsync" / "token"


def test_environment_names_any_case_json_tables_and_bad_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = ClientPaths.under(tmp_path)
    monkeypatch.setenv("loomsync_retries", "5")
    monkeypatch.setenv("LOOMSYNC_REDACTION", '{"allow": ["AKIAIOSFODNN7EXAMPLE"]}')
    config = load_config(paths, retries=9)  # the environment wins over values passed in
    assert config.retries == 5
    assert config.redaction.allow == ["AKIAIOSFODNN7EXAMPLE"]
    monkeypatch.setenv("LOOMSYNC_REDACTION", "{not json")
    with pytest.raises(ConfigError, match="LOOMSYNC_REDACTION"):
        load_config(paths)
    monkeypatch.delenv("LOOMSYNC_REDACTION")
    monkeypatch.setenv("LOOMSYNC_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="timeout"):
        load_config(paths)
