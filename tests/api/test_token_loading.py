"""Loading the bearer token: environment or a private file, with clear refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetdesk.client import TokenError, load_token

SECRET = "fd_s3cr3t-token"


def write(path: Path, text: str, mode: int) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


def test_from_environment() -> None:
    token = load_token(environ={"FLEETDESK_TOKEN": f"  {SECRET}\n"})
    assert token is not None and token.get_secret_value() == SECRET
    assert SECRET not in repr(token) and SECRET not in str(token)


def test_neither_source_gives_none() -> None:
    assert load_token(environ={}) is None
    assert load_token(environ={"FLEETDESK_TOKEN": "   "}) is None


def test_other_variable_name() -> None:
    token = load_token("OTHER", environ={"OTHER": SECRET, "FLEETDESK_TOKEN": "x"})
    assert token is not None and token.get_secret_value() == SECRET


def test_private_file_wins_over_environment(tmp_path: Path) -> None:
    path = write(tmp_path / "token", SECRET + "\n", 0o600)
    token = load_token(token_file=path, environ={"FLEETDESK_TOKEN": "from-env"})
    assert token is not None and token.get_secret_value() == SECRET


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o602])
def test_loose_file_is_refused_naming_path_and_fix(tmp_path: Path, mode: int) -> None:
    path = write(tmp_path / "token", SECRET, mode)
    with pytest.raises(TokenError) as caught:
        load_token(token_file=path)
    assert str(path) in caught.value.message
    assert f"chmod 600 {path}" in caught.value.message
    assert f"{mode:04o}" in caught.value.message
    assert SECRET not in str(caught.value)


def test_missing_empty_and_multiword_files(tmp_path: Path) -> None:
    with pytest.raises(TokenError, match="does not exist"):
        load_token(token_file=tmp_path / "absent")
    with pytest.raises(TokenError, match="is empty"):
        load_token(token_file=write(tmp_path / "empty", "\n", 0o600))
    with pytest.raises(TokenError) as caught:
        load_token(token_file=write(tmp_path / "two", f"{SECRET} second-word", 0o600))
    assert SECRET not in str(caught.value)
    with pytest.raises(TokenError, match="not a regular file"):
        load_token(token_file=tmp_path)


def test_environment_token_with_control_characters_is_refused() -> None:
    with pytest.raises(TokenError, match=r"\$FLEETDESK_TOKEN"):
        load_token(environ={"FLEETDESK_TOKEN": "abc\x1b[2Jdef"})
