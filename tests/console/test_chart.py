"""The chart repaints only the cells that changed, and its time axis pages instead of sliding."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from console_helpers import TIER2_EXPERIMENT
from pydantic import SecretStr
from textual.app import App, ComposeResult

from fleetdesk.client import FleetdeskClient
from fleetdesk.console.glyphs import ASCII, UNICODE
from fleetdesk.console.widgets.model.chart import CALIBRATION, StabilityChart
from fleetdesk.console.widgets.model.grid import Grid
from fleetdesk.console.widgets.model.time_axis import TimeAxis
from fleetdesk.wire import Window


class Harness(App):
    def __init__(self, glyphs) -> None:
        super().__init__()
        self.glyphs = glyphs

    def compose(self) -> ComposeResult:
        yield StabilityChart(CALIBRATION, self.glyphs)


def test_changed_runs_cover_only_differences():
    before, after = Grid(10, 2), Grid(10, 2)
    after.put(3, 1, "x")
    after.put(4, 1, "y")
    after.put(8, 0, "z")
    assert sorted(after.changed_runs(before)) == [(3, 1, 2), (8, 0, 1)]
    assert list(after.changed_runs(after)) == []


def test_axis_pages_to_round_times():
    end = datetime(2026, 11, 30, 13, 0, tzinfo=UTC)
    axis = TimeAxis.paged(timedelta(hours=24), end)
    assert axis.start == datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    assert axis.end >= end
    # One more bucket does not move the axis; it jumps only at the next page.
    assert TimeAxis.paged(timedelta(hours=24), end + timedelta(hours=1)) == axis
    assert all(label.endswith(":00") for _, label in axis.ticks(100, 5))


async def test_same_data_repaints_nothing_and_new_data_repaints_a_few_cells(server):
    async with FleetdeskClient(server.url, SecretStr(server.oncall_token)) as client:
        series = await client.stability(TIER2_EXPERIMENT, Window.H24)
    for glyphs in (UNICODE, ASCII):
        app = Harness(glyphs)
        async with app.run_test(size=(80, 12)) as pilot:
            chart = app.query_one(StabilityChart)
            chart.set_series(series)
            await pilot.pause()
            full = chart.cells_refreshed
            assert full >= 80 * 11
            chart.set_series(series)
            assert chart.cells_refreshed == full  # same data: nothing sent
            shorter = series.model_copy(update={"points": series.points[:-1]})
            chart.set_series(shorter)
            changed = chart.cells_refreshed - full
            assert 0 < changed < 80  # one bucket fewer: a handful of cells
            text = "\n".join(chart.grid.plain())
            assert ("⠀" not in text) if glyphs is ASCII else True
            assert "calibration" in text and "12:00" in text
