"""The console writes only the cells that changed, with the fewest escape codes (fleetdesk.console.textual_seam)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from rich.color import ColorSystem
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual._compositor import ChopsUpdate
from textual.strip import Strip

from fleetdesk.console import textual_seam as terminal_writer
from fleetdesk.wire import ActionKind

MARK = Style(color="red", bold=True)
assert terminal_writer.install().complete
CONSOLE = Console(color_system="truecolor", force_terminal=True)


def written(strip: Strip, x1: int, x2: int) -> str:
    """What goes to the terminal when cells [x1, x2) of a widget drawn at column 1 of row 0 changed."""
    update = ChopsUpdate(
        [{0: None, 1: strip, 1 + strip.cell_length: None}],
        [(0, x1, x2)],
        [[1, 1 + strip.cell_length, 120]],
    )
    return update.render_segments(CONSOLE)


def test_a_change_at_the_end_of_a_line_sends_that_cell_not_the_line_before_it():
    row = Strip([Segment(" " * 40), Segment("▲ ▲▲", MARK)])
    out = written(
        row, 44, 45
    )  # the last mark (cells 41..44 hold "▲ ▲▲", shifted by the widget's column 1)
    assert out.startswith("\x1b[1;45H")
    assert out.count("▲") == 1 and " " * 10 not in out


def test_a_line_with_wide_characters_is_sent_from_the_widget_edge_so_none_is_cut_in_half():
    row = Strip([Segment("模型" * 5), Segment("▲", MARK)])
    out = written(row, 11, 12)
    assert out.startswith("\x1b[1;2H") and "模型" in out


def test_the_style_carries_over_between_changed_cells_and_the_update_ends_in_the_default_style():
    left, right = Strip([Segment("ab", MARK), Segment("  ")]), Strip([Segment("cd", MARK)])
    update = ChopsUpdate([{1: left, 5: right, 7: None}], [(0, 1, 3), (0, 5, 7)], [[5, 7, 120]])
    out = update.render_segments(CONSOLE)
    assert out.endswith("\x1b[1;6Hcd\x1b[0m")  # same style as "ab": no codes before "cd"
    assert [c[0] for c in cells(re.sub(r"\x1b\[\d+;\d+H", "", out))] == list("abcd")


def test_install_is_idempotent():
    assert terminal_writer.install().complete and terminal_writer.install().complete


# --- style switches -------------------------------------------------------------

FLAGS = {
    "1": "bold",
    "2": "dim",
    "3": "italic",
    "4": "underline",
    "5": "blink",
    "7": "reverse",
    "9": "strike",
}
OFF = {
    "22": ("bold", "dim"),
    "23": ("italic",),
    "24": ("underline",),
    "25": ("blink",),
    "27": ("reverse",),
    "29": ("strike",),
}


def cells(output: str) -> list[tuple[str, frozenset, str, str]]:
    """Each printed character with the style a terminal would show it in (a small SGR interpreter)."""
    flags: set[str] = set()
    fg = bg = "default"
    shown = []
    for sgr, text in re.findall(r"\x1b\[([0-9;]*)m|([^\x1b]+)", output):
        if text:
            shown += [(char, frozenset(flags), fg, bg) for char in text]
            continue
        codes = sgr.split(";") if sgr else ["0"]
        while codes:
            code = codes.pop(0)
            if code == "0":
                flags, fg, bg = set(), "default", "default"
            elif code in FLAGS:
                flags.add(FLAGS[code])
            elif code in OFF:
                flags -= set(OFF[code])
            elif code in ("38", "48"):
                value = ";".join(codes[:4]) if codes[0] == "2" else ";".join(codes[:2])
                codes = codes[4:] if codes[0] == "2" else codes[2:]
                fg, bg = (value, bg) if code == "38" else (fg, value)
            elif code == "39":
                fg = "default"
            elif code == "49":
                bg = "default"
            else:
                fg, bg = (code, bg) if code.startswith("3") or code.startswith("9") else (fg, code)
    assert not flags and fg == bg == "default", "a strip must end in the default style"
    return shown


COLOURS = st.sampled_from([None, "red", "#5fa8d3", "#121417", "#e0e0e0", "default"])
STYLES = st.builds(
    Style,
    color=COLOURS,
    bgcolor=COLOURS,
    bold=st.booleans(),
    dim=st.booleans(),
    italic=st.booleans(),
    underline=st.booleans(),
    reverse=st.booleans(),
    strike=st.booleans(),
)


@given(
    st.lists(
        st.tuples(st.text("ab ⣿", min_size=1, max_size=3), st.one_of(st.none(), STYLES)),
        min_size=1,
        max_size=8,
    )
)
def test_switching_by_difference_shows_every_cell_as_textual_would(runs):
    strip = Strip([Segment(text, style) for text, style in runs])
    ours = terminal_writer._render_strip(Strip(list(strip)), CONSOLE)
    textual = terminal_writer._textual_render_strip(Strip(list(strip)), CONSOLE)
    assert cells(ours) == cells(textual)
    assert len(ours) <= len(textual)


def test_a_colour_change_on_the_same_background_sends_only_the_colour():
    base = Style(color="#e0e0e0", bgcolor="#121417")
    switch = terminal_writer.transition(base, base + Style(color="#5fa8d3"), ColorSystem.TRUECOLOR)
    assert switch == "\x1b[38;2;95;168;211m"


# --- what the terminal shows ----------------------------------------------------------


def test_after_live_updates_the_terminal_shows_what_a_fresh_console_shows(server, tmp_path):
    """Changed cells only, styles by difference: the screen they build equals a fresh console's full paint."""
    import asyncio
    from datetime import timedelta

    from console_helpers import TIER2_EXPERIMENT
    from pydantic import SecretStr

    from fleetdesk.client import ActionIntent, FleetdeskClient
    from security.pty_console import PtyConsole

    def open_model(home):  # type: ignore[no-untyped-def]
        console = PtyConsole(server.url, server.oncall_token, home, size=(120, 40))
        try:
            console.open_model(
                TIER2_EXPERIMENT.split(".")[-1], "blast radius", since=console.wait_for("21 models")
            )
            console.settle()
        except BaseException:
            console.close()  # else the console outlives the test and spins on its closed terminal
            raise
        return console

    async def live_updates() -> None:
        async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as client:
            now = (await client.info()).now
            for hour in range(1, 7):  # buckets close, budgets and burn rates move, notes arrive
                await client.set_clock(now + timedelta(hours=hour))
                await client.perform(
                    ActionIntent.of(ActionKind.NOTE, TIER2_EXPERIMENT, text=f"update {hour}")
                )
                await asyncio.sleep(0.3)

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    watching = open_model(tmp_path / "a")
    try:
        before = watching.screen_text()
        asyncio.run(live_updates())
        watching.settle()
        assert watching.screen_text() != before
        fresh = open_model(tmp_path / "b")
        try:
            # Everything but the status line and the key bar (the fresh one says different things there).
            assert watching.screen_text().splitlines()[:-2] == fresh.screen_text().splitlines()[:-2]
        finally:
            fresh.close()
    finally:
        watching.close()


def test_every_patch_takes_on_the_pinned_textual():
    report = terminal_writer.install()
    assert report.complete, report.describe()
    from textual._compositor import ChopsUpdate
    from textual.widgets import Footer

    from fleetdesk.console.screens.base import ConsoleScreen

    assert ChopsUpdate.render_segments is terminal_writer._render_changed_cells
    assert Strip.render is terminal_writer._render_strip
    assert ConsoleScreen._compositor_refresh is terminal_writer._handoff_refresh
    assert Footer._bindings_ready is not None


def test_importing_the_console_patches_nothing_the_app_does_at_start():
    import subprocess
    import sys

    probe = (
        "from textual.strip import Strip\n"
        "before = Strip.render\n"
        "import fleetdesk.console.app\n"
        "assert Strip.render is before, 'patched on import'\n"
        "from fleetdesk.console.app import Backend, FleetdeskApp\n"
        "app = FleetdeskApp(Backend('http://127.0.0.1:9'))\n"
        "assert app.seam.complete and Strip.render is not before\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
