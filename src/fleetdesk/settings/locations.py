"""Every file location fleetdesk uses, in one place (XDG base directories)."""

from __future__ import annotations

import os
from pathlib import Path

APP = "fleetdesk"
_SOURCE_ROOT = Path(__file__).resolve().parents[3]
_BUNDLED = Path(__file__).resolve().parents[1] / "_bundled"


def _xdg(variable: str, fallback: str) -> Path:
    base = os.environ.get(variable) or str(Path.home() / fallback)
    return Path(base) / APP


def config_dir() -> Path:
    return _xdg("XDG_CONFIG_HOME", ".config")


def config_file() -> Path:
    return config_dir() / "config.toml"


def data_dir() -> Path:
    return _xdg("XDG_DATA_HOME", ".local/share")


def state_dir() -> Path:
    return _xdg("XDG_STATE_HOME", ".local/state")


def cache_dir() -> Path:
    """Things fleetdesk can always make again (the embedded console's seeded stores)."""
    return _xdg("XDG_CACHE_HOME", ".cache")


def _shipped(name: str) -> Path:
    """A folder shipped with fleetdesk: in the wheel, or in a source checkout."""
    bundled = _BUNDLED / name
    return bundled if bundled.is_dir() else _SOURCE_ROOT / name


def fixtures_dir() -> Path:
    return _shipped("fixtures")


def fleets_dir() -> Path:
    return fixtures_dir() / "fleets"


def scenarios_dir() -> Path:
    return fixtures_dir() / "scenarios"


def themes_dirs() -> list[Path]:
    """Shipped themes first, then the user's own (which may override by name)."""
    return [_shipped("themes"), config_dir() / "themes"]
