"""Symbols the console draws, in Unicode and in a plain-ASCII fallback.

Health is always shown as a symbol *and* a word, so it reads without colour
(NO_COLOR, the monochrome theme, a colour-blind engineer).
"""

from __future__ import annotations

from dataclasses import dataclass

from fleetdesk.wire import Attention, Health


@dataclass(frozen=True, slots=True)
class Glyphs:
    """One set of glyphs: everything the console draws that is not a letter."""

    attention: dict[Attention, str]
    health: dict[Health, str]
    separator: str
    arrow: str
    band: str
    violation: str
    baseline_mark: str
    braille: bool
    ellipsis: str
    missing: str
    """A value with no data (no budget yet, a bucket without events)."""


UNICODE = Glyphs(
    attention={
        Attention.PAGE: "‼ page",
        Attention.TICKET: "! ticket",
        Attention.UNSTABLE: "✗ unstable",
        Attention.NO_DATA: "? no data",
        Attention.OK: "✓ ok",
    },
    health={Health.STABLE: "✓", Health.UNSTABLE: "✗", Health.NO_DATA: "?"},
    separator=" · ",
    arrow="→",
    band="┄",
    violation="▲",
    baseline_mark="·",
    braille=True,
    ellipsis="…",
    missing="—",
)

ASCII = Glyphs(
    attention={
        Attention.PAGE: "!! page",
        Attention.TICKET: "! ticket",
        Attention.UNSTABLE: "x unstable",
        Attention.NO_DATA: "? no data",
        Attention.OK: "ok",
    },
    health={Health.STABLE: "+", Health.UNSTABLE: "x", Health.NO_DATA: "?"},
    separator=" | ",
    arrow="->",
    band="-",
    violation="^",
    baseline_mark=".",
    braille=False,
    ellipsis="...",
    missing="-",
)

ATTENTION_STYLE: dict[Attention, str] = {
    Attention.PAGE: "error",
    Attention.TICKET: "warning",
    Attention.UNSTABLE: "warning",
    Attention.NO_DATA: "foreground-muted",
    Attention.OK: "success",
}
"""Theme variable per attention level (the app resolves it to a colour)."""
