"""A character grid that knows which of its cells changed since the last frame.

Charts draw a whole frame into a grid; the widget then refreshes only the
cells that differ from what the terminal already shows (see DESIGN.md,
"Drawing over slow links").
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.segment import Segment
from rich.style import Style

Cell = tuple[str, Style | None]
BLANK: Cell = (" ", None)

# Braille dot bits for (sub-column, sub-row) inside one cell (2 x 4 dots).
_BRAILLE_BITS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))
BRAILLE_BASE = 0x2800


class Grid:
    """width x height cells of (character, style)."""

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.rows: list[list[Cell]] = [[BLANK] * width for _ in range(height)]
        # Braille dots per cell, merged as layers draw over each other.
        self._dots: dict[tuple[int, int], int] = {}

    def put(self, x: int, y: int, char: str, style: Style | None = None) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            self.rows[y][x] = (char, style)

    def text(self, x: int, y: int, text: str, style: Style | None = None) -> None:
        for offset, char in enumerate(text):
            self.put(x + offset, y, char, style)

    def dot(self, sub_x: int, sub_y: int, style: Style | None) -> None:
        """Set one braille dot; sub-coordinates are 2 per cell across and 4 per cell down."""
        x, y = sub_x // 2, sub_y // 4
        if not (0 <= x < self.width and 0 <= y < self.height):
            return
        bits = self._dots.get((x, y), 0) | _BRAILLE_BITS[sub_x % 2][sub_y % 4]
        self._dots[(x, y)] = bits
        self.rows[y][x] = (chr(BRAILLE_BASE + bits), style)

    def changed_runs(self, previous: Grid | None) -> Iterator[tuple[int, int, int]]:
        """(x, y, length) of each horizontal run of cells that differ from ``previous``."""
        if previous is None or previous.width != self.width or previous.height != self.height:
            for y in range(self.height):
                yield 0, y, self.width
            return
        for y, (new, old) in enumerate(zip(self.rows, previous.rows)):
            x = 0
            while x < self.width:
                if new[x] == old[x]:
                    x += 1
                    continue
                start = x
                while x < self.width and new[x] != old[x]:
                    x += 1
                yield start, y, x - start

    def segments(self, y: int, base: Style) -> list[Segment]:
        """One row as Rich segments, neighbours with the same style merged."""
        out: list[Segment] = []
        run: list[str] = []
        run_style: Style | None = None
        for char, style in self.rows[y]:
            if char == " " and run and _blank_safe(run_style):
                style = run_style  # a space looks the same in any foreground: one escape code fewer per gap
            if style is not run_style and run:
                out.append(Segment("".join(run), base + run_style if run_style else base))
                run = []
            run_style = style
            run.append(char)
        if run:
            out.append(Segment("".join(run), base + run_style if run_style else base))
        return out

    def plain(self) -> list[str]:
        return ["".join(char for char, _ in row) for row in self.rows]


def _blank_safe(style: Style | None) -> bool:
    """A blank cell drawn in ``style`` looks like a plain blank (no background, underline or reverse)."""
    return style is None or not (style.bgcolor or style.underline or style.reverse or style.strike)
