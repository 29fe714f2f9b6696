"""Loading the bearer token from the environment or a private file, never from argv."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from pydantic import SecretStr

from fleetdesk.client._errors import TokenError
from fleetdesk.settings.local_files import KIB, FileRefused, read_text_file

DEFAULT_ENV_VAR = "FLEETDESK_TOKEN"
# A bearer token is one printable word; anything else is a paste accident.
_TOKEN = re.compile(r"[\x21-\x7e]+")
MAX_TOKEN_FILE_BYTES = 4 * KIB
"""A token is under 100 bytes; a bigger file is the wrong file (and is not read into memory)."""


def load_token(
    env_var: str = DEFAULT_ENV_VAR,
    token_file: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> SecretStr | None:
    """The token from ``token_file`` when given (it must be 0600), else from ``env_var``; None when neither."""
    if token_file is not None:
        return _from_file(Path(token_file))
    value = (os.environ if environ is None else environ).get(env_var, "").strip()
    if not value:
        return None
    if not _TOKEN.fullmatch(value):
        raise TokenError(f"the token in ${env_var} contains spaces or control characters")
    return SecretStr(value)


def _from_file(path: Path) -> SecretStr:
    try:
        info = path.stat()
    except FileNotFoundError:
        raise TokenError(f"token file {path} does not exist") from None
    except OSError as error:
        raise TokenError(f"cannot read token file {path}: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise TokenError(f"token file {path} is not a regular file")
    loose = stat.S_IMODE(info.st_mode) & 0o077
    if loose:
        raise TokenError(
            f"token file {path} is readable or writable by other users"
            f" (mode {stat.S_IMODE(info.st_mode):04o}); run: chmod 600 {path}"
        )
    try:
        value = read_text_file(path, MAX_TOKEN_FILE_BYTES).strip()
    except FileRefused as error:
        raise TokenError(f"token file {path} {error.strerror}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TokenError(f"cannot read token file {path}: {type(error).__name__}") from None
    if not value:
        raise TokenError(f"token file {path} is empty")
    if not _TOKEN.fullmatch(value):
        # Never echo the content: it is (almost) a secret.
        raise TokenError(f"token file {path} holds more than one word or control characters")
    return SecretStr(value)
