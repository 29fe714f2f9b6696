"""The text rows of a Textual SVG screenshot, to assert on what a screenshot shows."""

from __future__ import annotations

import html
import re

_TEXT = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>')


def rows(svg: str) -> list[str]:
    """Each screen row's text, with segments placed by their x position (12.2 px a cell in Rich's export)."""
    found: dict[float, list[tuple[float, str]]] = {}
    for match in _TEXT.finditer(svg):
        found.setdefault(float(match[2]), []).append(
            (float(match[1]), html.unescape(match[3]).replace("\xa0", " "))
        )
    lines = []
    for y in sorted(found):
        line = ""
        for x, text in sorted(found[y]):
            line = line.ljust(round(x / 12.2)) + text
        lines.append(line.rstrip())
    return lines
