"""Console settings: the config file's top level (TOML, XDG config dir), then FLEETDESK_CONSOLE_* variables, then flags."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError
from pydantic_settings import SettingsConfigDict

from fleetdesk.domain.urls import HttpUrlText
from fleetdesk.settings.config_file import (
    FileSettings,
    SettingsError,
    console_table,
    settings_error,
)

DEFAULT_THEME = "fleetdesk-dark"
DAY_SECONDS = 86_400.0


class ConsoleSettings(FileSettings):
    """Everything the console can be told before it starts; each field documents itself."""

    file_table = staticmethod(console_table)

    model_config = SettingsConfigDict(
        env_prefix="FLEETDESK_CONSOLE_", extra="forbid", allow_inf_nan=False
    )

    server_url: HttpUrlText | None = Field(default=None)
    """Backend to talk to, e.g. https://fleetdesk.internal:8443 (flag: --server)."""

    token_file: Path | None = Field(default=None)
    """A 0600 file holding the bearer token; without it the token comes from $FLEETDESK_TOKEN."""

    theme: str = DEFAULT_THEME
    """Theme name: fleetdesk-dark, fleetdesk-light, fleetdesk-high-contrast, fleetdesk-monochrome, or your own."""

    ascii: bool = False
    """Draw boxes and charts with ASCII only (for terminals or fonts without box/braille glyphs)."""

    read_only: bool = False
    """Hide every playbook action key."""

    keymap: dict[str, str] = Field(default_factory=dict)
    """Binding id to keys, e.g. {"rollback" = "R"}; ids are listed in the help screen (?)."""

    poll_seconds: float = Field(default=30.0, gt=0.0, le=DAY_SECONDS)
    """Seconds between full refreshes (counted from the end of the last one); live events fill the gaps."""

    stale_after_seconds: float = Field(default=90.0, gt=0.0, le=DAY_SECONDS)
    """Data older than this is marked stale in the header."""

    cursor_hold_seconds: float = Field(default=5.0, ge=0.0)
    """After you move the fleet table's cursor, a new page at the top leaves it where you put it for this
    long (the status line says where the page is); otherwise the cursor moves onto the new worst page."""


def load_settings(**flags: Any) -> ConsoleSettings:
    """Settings from the config file and environment, with the non-None ``flags`` on top; SettingsError if unusable."""
    try:
        return ConsoleSettings(
            **{name: value for name, value in flags.items() if value is not None}
        )
    except ValidationError as error:
        raise settings_error(error, "FLEETDESK_CONSOLE_*") from None


__all__ = ["ConsoleSettings", "SettingsError", "load_settings"]
