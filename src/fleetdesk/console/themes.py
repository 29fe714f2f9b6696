"""Themes as TOML files (shipped ``themes/`` first, then the user's own), turned into Textual themes."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError
from textual.theme import Theme

from fleetdesk.domain.text import sanitize
from fleetdesk.settings import locations
from fleetdesk.settings.local_files import MIB, read_text_file


class ThemeFile(BaseModel):
    """One theme file; colours are any CSS colour Textual understands."""

    model_config = ConfigDict(extra="forbid")

    name: str
    dark: bool = True
    primary: str
    secondary: str | None = None
    accent: str | None = None
    foreground: str | None = None
    background: str | None = None
    surface: str | None = None
    panel: str | None = None
    success: str | None = None
    warning: str | None = None
    error: str | None = None

    def to_theme(self) -> Theme:
        return Theme(**self.model_dump())


def load_themes(directories: list[Path] | None = None) -> tuple[list[Theme], list[str]]:
    """Every theme found (later folders override earlier ones by name) and a problem per unreadable file."""
    found: dict[str, Theme] = {}
    problems: list[str] = []
    for directory in directories if directories is not None else locations.themes_dirs():
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.toml")):
            try:
                theme = ThemeFile.model_validate(
                    tomllib.loads(read_text_file(path, MIB))
                ).to_theme()
            except (OSError, tomllib.TOMLDecodeError, ValidationError, ValueError) as error:
                problems.append(
                    sanitize(
                        f"theme {path.name} skipped: {type(error).__name__}: {error}", limit=300
                    )
                )
                continue
            found[theme.name] = theme
    return list(found.values()), problems
