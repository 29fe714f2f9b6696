"""How the console writes to the terminal: only the cells that changed, with the fewest escape codes.

Two steps of Textual's writer cost most of the bytes of a live update over a slow link:

- Textual knows each change to the cell (its dirty spans are exact), but writes every widget's line
  from the widget's left edge up to the last changed cell. A new bucket at the right end of a chart row
  resends the whole row; a burn rate at the end of a status line resends the line.
- Each run of one style is written as "set the whole style, text, reset", so every colour change
  repeats the background and attributes (about 40 bytes in truecolor) and resets after itself.

``install`` replaces those two private steps (ChopsUpdate.render_segments and Strip.render) with
versions that crop on the left too and emit only the codes that change between runs. Each checks
the shape it expects and otherwise leaves Textual as it is (more bytes, nothing broken);
tests/bench/bench_console_live.py measures the effect.
"""

from __future__ import annotations

import inspect
from functools import lru_cache

from rich.cells import cell_len
from rich.color import ColorSystem
from rich.console import Console
from rich.control import Control
from rich.style import Style

_FLAGS = (("italic", "3", "23"), ("underline", "4", "24"), ("blink", "5", "25"), ("reverse", "7", "27"),
          ("strike", "9", "29"))
_EXOTIC = ("underline2", "frame", "encircle", "overline", "conceal", "blink2")
"""Style parts written the long way (a full reset, then every code)."""
_textual_render_strip = None
"""Textual's own Strip.render, kept for strips with hyperlinks (written with OSC 8 around the text)."""


def install() -> bool:
    """Patch Textual's terminal writer; False when this Textual does not look as expected."""
    try:
        from textual._compositor import ChopsUpdate
        from textual.strip import Strip
    except ImportError:
        return False
    global _textual_render_strip
    if Strip.render is not _render_strip:
        _textual_render_strip = Strip.render
    patched = False
    for owner, name, replacement in ((ChopsUpdate, "render_segments", _render_changed_cells),
                                     (Strip, "render", _render_strip)):
        current = getattr(owner, name, None)
        if current is replacement:
            patched = True
        elif current is not None and list(inspect.signature(current).parameters) == ["self", "console"]:
            setattr(owner, name, replacement)
            patched = True
    return patched


def _render_changed_cells(self, console: Console) -> str:  # type: ignore[no-untyped-def]
    """Textual's ChopsUpdate.render_segments, cropping each chop to its dirty span on both sides.

    The style carries over from one chop to the next (a cursor move keeps it), so a change next to
    another in the same colours costs a move and its text.
    """
    color_system = _color_system(console)
    sequences: list[str] = []
    append = sequences.append
    current: Style | None = None
    for y, x1, x2 in self.spans:
        for end, (x, strip) in zip(self.chop_ends[y], self.chops[y].items()):
            if strip is None or x > x2 or end <= x1:
                continue
            start = x
            if x < x1 and cell_len(strip.text) == len(strip.text):  # a wide character must not be cut in half
                start = x1
            strip = strip.crop(start - x, min(end, x2) - x)
            append(Control.move_to(start, y).segment.text)
            current = _styled(strip, current, console, append)
    append(transition(current, None, color_system))
    return "".join(sequences)


def _render_strip(self, console: Console) -> str:  # type: ignore[no-untyped-def]
    """Textual's Strip.render, switching styles by difference; the strip still ends in the default style."""
    cached = getattr(self, "_render_cache", None)
    if cached is None:
        color_system = _color_system(console)
        out: list[str] = []
        out.append(transition(_styled(self, None, console, out.append), None, color_system))
        cached = self._render_cache = "".join(out)
    return cached


def _styled(strip, current: Style | None, console: Console, append) -> Style | None:  # type: ignore[no-untyped-def]
    """Append the strip's text and the style switches it needs, starting in ``current``; returns the style it ends in."""
    color_system = _color_system(console)
    if any(segment.style is not None and segment.style.link for segment in strip):
        append(transition(current, None, color_system))  # hyperlinks: Textual's own writer (OSC 8 around the text)
        append(_textual_render_strip(strip, console))  # type: ignore[misc]
        return None
    for segment in strip:
        style = segment.style if segment.style and segment.style._make_ansi_codes(color_system) else None
        if style != current:
            append(transition(current, style, color_system))
            current = style
        append(segment.text)
    return current


@lru_cache(maxsize=4096)  # a screen uses a few dozen styles; a repaint switches between them thousands of times
def transition(old: Style | None, new: Style | None, color_system: ColorSystem) -> str:
    """The escape sequence that takes the terminal from style ``old`` to ``new`` (None: the default)."""
    if new is None:
        return "\x1b[0m" if old is not None else ""
    if old is None:
        return f"\x1b[{new._make_ansi_codes(color_system)}m"
    reset = f"\x1b[0;{new._make_ansi_codes(color_system)}m"
    if _exotic(old) or _exotic(new):
        return reset
    codes: list[str] = []
    bold, dim = bool(old.bold), bool(old.dim)
    if (bold and not new.bold) or (dim and not new.dim):
        codes.append("22")  # turns off both bold and dim
        bold = dim = False
    if new.bold and not bold:
        codes.append("1")
    if new.dim and not dim:
        codes.append("2")
    for name, on, off in _FLAGS:
        if bool(getattr(old, name)) != bool(getattr(new, name)):
            codes.append(on if getattr(new, name) else off)
    if old.color != new.color:
        codes.extend(new.color.downgrade(color_system).get_ansi_codes(True) if new.color else ("39",))
    if old.bgcolor != new.bgcolor:
        codes.extend(new.bgcolor.downgrade(color_system).get_ansi_codes(False) if new.bgcolor else ("49",))
    if not codes:
        return ""
    return min(f"\x1b[{';'.join(codes)}m", reset, key=len)


def _color_system(console: Console) -> ColorSystem:
    """The console's colour system, truecolor when it reports none (as Textual's own Strip.render does)."""
    return console._color_system or ColorSystem.TRUECOLOR


def _exotic(style: Style) -> bool:
    return any(getattr(style, name) for name in _EXOTIC)
