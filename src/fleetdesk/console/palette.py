"""Theme colours as opaque Rich colour strings, for text drawn in code rather than in CSS."""

from __future__ import annotations

from textual.app import App
from textual.color import Color, ColorParseError

_cache: dict[tuple[int, str], dict[str, str]] = {}


def palette(app: App) -> dict[str, str]:
    """Theme variable name -> '#rrggbb' (colours with alpha are blended over the background); cached per theme."""
    key = (id(app), app.theme)
    if key not in _cache:
        _cache[key] = _resolve(app)
    return _cache[key]


def _resolve(app: App) -> dict[str, str]:
    variables = app.theme_variables
    try:
        background = Color.parse(variables.get("background", "#000000"))
    except ColorParseError:
        background = Color(0, 0, 0)
    out: dict[str, str] = {}
    for name in (
        "primary",
        "secondary",
        "accent",
        "foreground",
        "foreground-muted",
        "success",
        "warning",
        "error",
    ):
        value = variables.get(name)
        if not value:
            continue
        try:
            colour = Color.parse(value)
        except ColorParseError:
            continue
        out[name] = (background + colour).hex6 if colour.a < 1 else colour.hex6
    return out
