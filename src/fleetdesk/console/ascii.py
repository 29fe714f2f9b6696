"""``--ascii``: nothing but ASCII reaches the screen.

The console's own glyphs have ASCII forms chosen to read well (``console.glyphs.ASCII``: ``!! page``,
``->``, ``...``). Everything else a screen draws — Textual's box borders and scrollbars, the footer's
separator, toasts' edges, key symbols, Rich's ellipsis, Markdown bullets and table lines, and data that
holds non-ASCII letters — goes through ``AsciiOnly``, a line filter Textual applies to every widget's lines
before they are composed (the way it applies NO_COLOR): each character becomes ASCII of the same width,
so nothing moves. Box drawing becomes ``+ - |``, block and shade characters (scrollbar ends, border edges)
become blanks, accented letters lose their accents, and what has no ASCII form becomes ``?``.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from rich.cells import cell_len
from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

_NAMED = {
    "…": ".",
    "·": "|",
    "•": "*",
    "▪": "*",
    "‣": ">",
    "◦": "o",
    "⭑": "*",
    "●": "*",
    "■": "#",
    "—": "-",
    "–": "-",
    "‐": "-",
    "−": "-",
    "→": ">",
    "←": "<",
    "↑": "^",
    "↓": "v",
    "⏎": "J",
    "⌫": "<",
    "‼": "!",
    "✓": "+",
    "✗": "x",
    "×": "x",
    "≤": "<",
    "≥": ">",
    "“": '"',
    "”": '"',
    "‘": "'",
    "’": "'",
    "\u00a0": " ",
}
"""Characters the console and Textual commonly draw, with the ASCII that reads most like them."""

KEY_NAMES = {
    "↑": "up",
    "↓": "down",
    "←": "left",
    "→": "right",
    "⏎": "enter",
    "⌫": "backspace",
    "⇥": "tab",
}
"""Textual's key symbols as the words an ASCII terminal shows instead."""


class AsciiOnly(LineFilter):
    """Every character of every line as ASCII of the same width (see the module docstring)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [
            segment
            if segment.text.isascii() or segment.control
            else Segment(to_ascii(segment.text), segment.style, segment.control)
            for segment in segments
        ]


class _Table(dict[int, str]):
    """str.translate's table, filled in as characters are met."""

    def __missing__(self, code: int) -> str:
        text = self[code] = ascii_for(chr(code))
        return text


_TABLE = _Table()


@lru_cache(maxsize=4096)  # the same border and scrollbar runs come back on every repaint
def to_ascii(text: str) -> str:
    """``text`` in ASCII, one cell for one cell."""
    return text.translate(_TABLE)


def ascii_for(char: str) -> str:
    """The ASCII standing in for one character, as wide as the character is on a terminal."""
    width = cell_len(char)
    if char.isascii() or width == 0:
        return char if char.isascii() else ""
    text = _NAMED.get(char) or _by_name(char)
    return (text * width)[:width] if len(text) == 1 else text.ljust(width, "?")[:width]


def _by_name(char: str) -> str:
    name = unicodedata.name(char, "")
    if name.startswith("BOX DRAWINGS"):
        horizontal = "HORIZONTAL" in name or "LEFT" in name or "RIGHT" in name
        vertical = "VERTICAL" in name or " UP" in name or " DOWN" in name
        if "ARC" in name or (horizontal and vertical):
            return "+"
        return "-" if horizontal else "|"
    if "BLOCK" in name or "SHADE" in name or name.startswith("BRAILLE PATTERN BLANK"):
        return " "
    if name.startswith("BRAILLE"):
        return "."
    plain = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode()
    return plain or "?"
