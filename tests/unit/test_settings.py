"""Settings from the config file, the environment and flags: a key nobody knows is an error naming it and the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetdesk.cli import main
from fleetdesk.settings import locations
from fleetdesk.settings.console import SettingsError, load_settings
from fleetdesk.settings.server import load_server_settings


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    monkeypatch.setattr(locations, "config_file", lambda: path)
    for name in ("FLEETDESK_SERVER_PORT", "FLEETDESK_CONSOLE_THEME", "FLEETDESK_WEBHOOK_SECRET"):
        monkeypatch.delenv(name, raising=False)
    return path


def test_a_misspelled_console_key_names_the_key_and_the_file(config: Path) -> None:
    config.write_text('themee = "fleetdesk-light"\n')
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "unknown setting 'themee'" in str(caught.value) and str(config) in str(caught.value)


def test_a_misspelled_server_key_names_the_table_the_key_and_the_file(config: Path) -> None:
    config.write_text('theme = "fleetdesk-light"\n\n[server]\nprot = 9000\n')
    assert (
        load_settings().theme == "fleetdesk-light"
    )  # the console does not read the server's table
    with pytest.raises(SettingsError) as caught:
        load_server_settings()
    assert "unknown setting 'prot' in [server] of config file" in str(caught.value)
    assert str(config) in str(caught.value)


def test_server_settings_come_from_the_file_then_the_environment_then_flags(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config.write_text('[server]\nport = 9001\nhost = "127.0.0.2"\nalert_ttl = 2\n')
    settings = load_server_settings()
    assert (settings.port, settings.host, settings.alert_ttl) == (9001, "127.0.0.2", 2.0)
    monkeypatch.setenv("FLEETDESK_SERVER_PORT", "9002")
    assert load_server_settings().port == 9002
    assert load_server_settings(port="9003").port == 9003


def test_the_webhook_secret_comes_from_the_environment_never_a_flag(
    config: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FLEETDESK_WEBHOOK_SECRET", "s3cret-signing-key")
    settings = load_server_settings(webhook_url="http://127.0.0.1:9/hook")
    assert (
        settings.webhook_secret is not None
        and settings.webhook_secret.get_secret_value() == "s3cret-signing-key"
    )
    assert "s3cret" not in repr(settings) and "s3cret" not in settings.model_dump_json()
    assert main(["serve", "--webhook-secret", "x"]) == 2  # no such flag
    assert "unrecognized arguments" in capsys.readouterr().err


def test_serve_refuses_a_bad_value_from_the_file_in_one_line(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config.write_text("[server]\nport = 99999\n")
    assert main(["serve"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "port" in error and "65535" in error
