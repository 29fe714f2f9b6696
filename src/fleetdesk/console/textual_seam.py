"""The one seam to Textual's (and Rich's) private API: every use of it is in this module, installed at app start.

fleetdesk's slow-link drawing needs three things Textual keeps private. ``install()`` (called by
``FleetdeskApp.__init__``, never as an import side effect) puts each in place only when Textual still has
the shape it was written for, and says which took in a ``SeamReport``; tests/console/test_textual_seam.py
fails on the pinned Textual when one did not.

1. **Changed cells only** (``ChopsUpdate.render_segments``, ``Strip.render``). Textual knows each change to the
   cell (its dirty spans are exact) but writes every widget's line from the widget's left edge up to the last
   changed cell, and writes each run of one style as "whole style, text, reset". The replacements crop on the
   left too and emit only the codes that change between runs (Rich's ``Style._make_ansi_codes``).
   tests/bench/bench_console_live.py measures the effect.
2. **Covered screens stay off the wire** (``Screen._compositor_refresh`` on ``ConsoleScreen``). Textual repaints
   a changed screen through the screen stacked on top of it and marks the area dirty again, so every later
   change resent the whole screen; under an opaque screen the change is handed to the top screen once.
3. **The key bar changes in place** (``FooterKey``, its ``_disabled`` flag, ``Footer._bindings_ready``):
   ``KeyFooter`` flips a key between dim and bright without Textual's rebuild of the whole footer.

Fallback: a patch that does not take leaves Textual's own behaviour, which draws the same screen with more
bytes (about 27 KB/s instead of 0.3 KB/s for two live charts at 120x40) and rebuilds the footer more often.
Nothing breaks; the console says "slow-link drawing off" once at start. Textual is pinned in pyproject.toml
to the range the tests cover.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from rich.cells import cell_len
from rich.color import ColorSystem
from rich.console import Console
from rich.control import Control
from rich.style import Style
from textual.screen import Screen
from textual.widget import Widget

_FLAGS = (
    ("italic", "3", "23"),
    ("underline", "4", "24"),
    ("blink", "5", "25"),
    ("reverse", "7", "27"),
    ("strike", "9", "29"),
)
_EXOTIC = ("underline2", "frame", "encircle", "overline", "conceal", "blink2")
"""Style parts written the long way (a full reset, then every code)."""
_textual_render_strip = None
"""Textual's own Strip.render, kept for strips with hyperlinks (written with OSC 8 around the text)."""


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
            if x < x1 and cell_len(strip.text) == len(
                strip.text
            ):  # a wide character must not be cut in half
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
        append(
            transition(current, None, color_system)
        )  # hyperlinks: Textual's own writer (OSC 8 around the text)
        append(_textual_render_strip(strip, console))  # type: ignore[misc]
        return None
    for segment in strip:
        style = (
            segment.style
            if segment.style and segment.style._make_ansi_codes(color_system)
            else None
        )
        if style != current:
            append(transition(current, style, color_system))
            current = style
        append(segment.text)
    return current


@lru_cache(
    maxsize=4096
)  # a screen uses a few dozen styles; a repaint switches between them thousands of times
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
        codes.extend(
            new.color.downgrade(color_system).get_ansi_codes(True) if new.color else ("39",)
        )
    if old.bgcolor != new.bgcolor:
        codes.extend(
            new.bgcolor.downgrade(color_system).get_ansi_codes(False) if new.bgcolor else ("49",)
        )
    if not codes:
        return ""
    return min(f"\x1b[{';'.join(codes)}m", reset, key=len)


def _color_system(console: Console) -> ColorSystem:
    """The console's colour system, truecolor when it reports none (as Textual's own Strip.render does)."""
    return console._color_system or ColorSystem.TRUECOLOR


def _exotic(style: Style) -> bool:
    return any(getattr(style, name) for name in _EXOTIC)


# --- 2. covered screens -------------------------------------------------------


def _handoff_refresh(self: Screen) -> None:
    """Screen._compositor_refresh for a console screen: under an opaque screen, hand what changed here to
    the top screen (a toast leaving uncovers it), once, instead of marking it dirty here again."""
    if self.app.screen is not self and self.covered():  # type: ignore[attr-defined]
        dirty = self._compositor._dirty_regions
        if dirty:
            self.app.screen.refresh(*dirty)
        dirty.clear()
        self._dirty_widgets.clear()
        return
    Screen._compositor_refresh(self)


# --- 3. the key bar -----------------------------------------------------------


def footer_keys(footer: Widget) -> Iterable[Widget]:
    """The footer's key widgets (Textual's FooterKey), each with ``key`` and ``action``."""
    from textual.widgets._footer import FooterKey

    return footer.query(FooterKey)


def set_footer_key_state(item: Widget, enabled: bool, tooltip: str | None) -> None:
    """Dim or brighten one footer key in place, as Textual's own rebuild would draw it."""
    item._disabled = not enabled  # type: ignore[attr-defined]  # what Textual's FooterKey checks on a click
    item.set_class(not enabled, "-disabled")
    item.tooltip = tooltip


def mark_bindings_ready(footer: Widget) -> None:
    """What Textual's Footer.bindings_changed records before it rebuilds (it draws nothing until then)."""
    footer._bindings_ready = True  # type: ignore[attr-defined]


# --- installing ---------------------------------------------------------------


@dataclass(frozen=True)
class SeamReport:
    """Which patches took; Textual's own behaviour stands for the others."""

    taken: tuple[str, ...] = ()
    missing: tuple[str, ...] = field(default_factory=tuple)

    @property
    def complete(self) -> bool:
        return not self.missing

    def describe(self) -> str:
        return (
            "this Textual is not the one fleetdesk was tested with; drawing the usual way (more bytes over "
            f"slow links): {', '.join(self.missing)}"
        )


def _footer_shape_ok() -> bool:
    try:
        from textual.widgets import Footer
        from textual.widgets._footer import FooterKey
    except ImportError:
        return False
    # FooterKey sets _disabled in __init__ (and checks it on a click); Footer draws once _bindings_ready is set.
    return (
        "_disabled" in FooterKey.__init__.__code__.co_names
        and hasattr(Footer, "_bindings_ready")
        and hasattr(Footer, "bindings_changed")
    )


def install() -> SeamReport:
    """Put every patch in place that still fits this Textual (idempotent); report which took."""
    from fleetdesk.console.screens.base import ConsoleScreen

    taken: list[str] = []
    missing: list[str] = []
    for name, ok in (
        ("changed-cells writer", _install_writer()),
        ("covered screens", _install_handoff(ConsoleScreen)),
        ("in-place key bar", _footer_shape_ok()),
    ):
        (taken if ok else missing).append(name)
    return SeamReport(tuple(taken), tuple(missing))


def _install_handoff(screen_class: type[Screen]) -> bool:
    current = getattr(Screen, "_compositor_refresh", None)
    if current is None or list(inspect.signature(current).parameters) != ["self"]:
        return False
    screen_class._compositor_refresh = _handoff_refresh  # type: ignore[method-assign]
    return True


def _install_writer() -> bool:
    """Patch Textual's terminal writer (1); False when this Textual does not look as expected."""
    try:
        from textual._compositor import ChopsUpdate
        from textual.strip import Strip
    except ImportError:
        return False
    global _textual_render_strip
    if Strip.render is not _render_strip:
        _textual_render_strip = Strip.render
    patched = []
    for owner, name, replacement in (
        (ChopsUpdate, "render_segments", _render_changed_cells),
        (Strip, "render", _render_strip),
    ):
        current = getattr(owner, name, None)
        if (
            current is not replacement
            and current is not None
            and list(inspect.signature(current).parameters) == ["self", "console"]
        ):
            setattr(owner, name, replacement)
        patched.append(getattr(owner, name, None) is replacement)
    return all(patched)
