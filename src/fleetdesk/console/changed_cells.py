"""Send the terminal only the cells that changed, not the line up to them.

Textual knows each change to the cell (its dirty spans are exact), but when it writes a partial
update it sends every widget's line from the widget's left edge up to the last changed cell. A new
bucket at the right end of a chart row resends the whole row; a burn rate at the end of a status
line resends the line. Over a slow link that prefix is most of the bytes of a live update.

``install`` replaces that one writing step with one that also crops on the left. It is a private
Textual method, so the patch checks the shape it expects and otherwise leaves Textual as it is
(more bytes, nothing broken); tests/bench/bench_console_live.py measures the effect.
"""

from __future__ import annotations

import inspect

from rich.cells import cell_len
from rich.console import Console
from rich.control import Control


def install() -> bool:
    """Patch Textual's partial-update writer; False when this Textual does not look as expected."""
    try:
        from textual._compositor import ChopsUpdate
    except ImportError:
        return False
    writer = getattr(ChopsUpdate, "render_segments", None)
    if writer is None or getattr(writer, "_fleetdesk", False):
        return writer is not None
    if list(inspect.signature(writer).parameters) != ["self", "console"]:
        return False
    _render_changed_cells._fleetdesk = True  # type: ignore[attr-defined]
    ChopsUpdate.render_segments = _render_changed_cells  # type: ignore[method-assign]
    return True


def _render_changed_cells(self, console: Console) -> str:  # type: ignore[no-untyped-def]
    """Textual's ChopsUpdate.render_segments, cropping each chop to its dirty span on both sides."""
    sequences: list[str] = []
    append = sequences.append
    for y, x1, x2 in self.spans:
        for end, (x, strip) in zip(self.chop_ends[y], self.chops[y].items()):
            if strip is None or x > x2 or end <= x1:
                continue
            start = x
            if x < x1 and cell_len(strip.text) == len(strip.text):  # a wide character must not be cut in half
                start = x1
            strip = strip.crop(start - x, min(end, x2) - x)
            append(Control.move_to(start, y).segment.text)
            append(strip.render(console))
    return "".join(sequences)
