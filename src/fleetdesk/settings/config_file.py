"""The config file (``config.toml`` in the XDG config dir): the console's settings at its top level, the
server's in its ``[server]`` table, the snapshot's secret patterns in ``[snapshot]``. A key nobody knows is an error naming the key and the file: a misspelled
setting must not vanish silently."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import ValidationError
from pydantic_settings import BaseSettings, InitSettingsSource, PydanticBaseSettingsSource

from fleetdesk.domain.text import sanitize
from fleetdesk.settings import locations
from fleetdesk.settings.local_files import MIB, read_text_file

SERVER_TABLE = "server"
SNAPSHOT_TABLE = "snapshot"


class SettingsError(ValueError):
    """The config file or a setting is unusable; the message says which and why, on one line."""


def config_file_values() -> dict[str, Any]:
    """The whole config file; read as any named file is (regular, at most 1 MiB), never waited on."""
    path = locations.config_file()
    where = sanitize(str(path))
    try:
        text = read_text_file(path, MIB)
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        why = getattr(error, "strerror", None) or "not UTF-8 text"
        raise SettingsError(f"config file {where}: cannot read it ({sanitize(why)})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(
            f"config file {where}: not valid TOML ({sanitize(str(error))})"
        ) from None


def console_table() -> dict[str, Any]:
    """The console's settings: the file's top level, without the server's and the snapshot's tables."""
    return {
        key: value
        for key, value in config_file_values().items()
        if key not in (SERVER_TABLE, SNAPSHOT_TABLE)
    }


def server_table() -> dict[str, Any]:
    """The server's settings: the file's ``[server]`` table."""
    table = config_file_values().get(SERVER_TABLE, {})
    if not isinstance(table, dict):
        raise SettingsError(
            f"config file {sanitize(str(locations.config_file()))}: '{SERVER_TABLE}' must be a table"
        )
    return table


def settings_error(error: ValidationError, variables: str, table: str = "") -> SettingsError:
    """One line naming the setting, where settings come from, and what is wrong with it."""
    first = error.errors(include_url=False)[0]
    field = ".".join(str(part) for part in first["loc"])
    where = f"[{table}] of " if table else ""
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    if first["type"] == "extra_forbidden":
        return SettingsError(
            sanitize(
                f"unknown setting '{field}' in {where}config file {locations.config_file()}"
                f" (or {variables} variables){more}"
            )
        )
    what = f"{field}: " if field else ""
    message = first["msg"].removeprefix("Value error, ")
    return SettingsError(
        sanitize(
            f"settings ({where}config file {locations.config_file()}, {variables} variables,"
            f" flags): {what}{message}{more}"
        )
    )


class FileSettings(BaseSettings):
    """Settings read from flags (init), then the environment, then the part of the config file ``file_table``
    returns, in that order of precedence."""

    file_table: ClassVar[Callable[[], dict[str, Any]]]

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            env_settings,
            InitSettingsSource(settings_cls, init_kwargs=cls.file_table()),
        )
