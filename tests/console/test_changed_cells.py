"""The console sends the terminal only the cells that changed (see fleetdesk.console.changed_cells)."""

from __future__ import annotations

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual._compositor import ChopsUpdate
from textual.strip import Strip

from fleetdesk.console import changed_cells

MARK = Style(color="red", bold=True)


def written(strip: Strip, x1: int, x2: int) -> str:
    """What goes to the terminal when cells [x1, x2) of a widget drawn at column 1 of row 0 changed."""
    assert changed_cells.install()
    update = ChopsUpdate([{0: None, 1: strip, 1 + strip.cell_length: None}], [(0, x1, x2)],
                         [[1, 1 + strip.cell_length, 120]])
    return update.render_segments(Console(color_system="truecolor", force_terminal=True))


def test_a_change_at_the_end_of_a_line_sends_that_cell_not_the_line_before_it():
    row = Strip([Segment(" " * 40), Segment("▲ ▲▲", MARK)])
    out = written(row, 44, 45)  # the last mark (cells 41..44 hold "▲ ▲▲", shifted by the widget's column 1)
    assert out.startswith("\x1b[1;45H")
    assert out.count("▲") == 1 and " " * 10 not in out


def test_a_line_with_wide_characters_is_sent_from_the_widget_edge_so_none_is_cut_in_half():
    row = Strip([Segment("模型" * 5), Segment("▲", MARK)])
    out = written(row, 11, 12)
    assert out.startswith("\x1b[1;2H") and "模型" in out


def test_install_is_idempotent():
    assert changed_cells.install() and changed_cells.install()
