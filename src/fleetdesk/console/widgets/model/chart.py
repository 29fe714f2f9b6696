"""A stability chart (calibration or NE) drawn into a character grid, repainting only cells that changed."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from fleetdesk.console.glyphs import Glyphs
from fleetdesk.console.palette import palette
from fleetdesk.console.widgets.model.grid import Grid
from fleetdesk.console.widgets.model.time_axis import TimeAxis
from fleetdesk.wire import Health, HealthBands, SignalGap, StabilityPoint, StabilitySeries

AXIS_WIDTH = 6  # y labels like "1.05" or "0.850" plus a gap
PLOT_LIMIT = 1e300
"""Values are held to ±this before scaling: padding and rounding the range of any finite values stays finite."""
HOLDOUT_MARK = "o"
"""The holdout's overlay without braille (its own mark, so it reads without colour)."""


class Signal:
    """One of the two stability signals: how to read it, where its healthy band is, and its gap to another model."""

    def __init__(
        self,
        name: str,
        read: Callable[[StabilityPoint], float | None],
        band: Callable[[HealthBands], tuple[float | None, float]],
        change: Callable[[SignalGap], float | None],
    ) -> None:
        self.name = name
        self.read = read
        self.band = band
        self.change = change


CALIBRATION = Signal(
    "calibration",
    lambda p: p.calibration,
    lambda b: (b.calibration_low, b.calibration_high),
    lambda g: g.calibration_change,
)
NE = Signal("NE", lambda p: p.normalized_entropy, lambda b: (None, b.ne_max), lambda g: g.ne_change)


class StabilityChart(Widget):
    """Title, the gap to the baseline (and holdout) and a legend; the plot with its healthy band and the baseline
    (and, when asked, the holdout) overlaid, unstable buckets marked; a paged time axis."""

    DEFAULT_CSS = """
    StabilityChart { height: 11; min-width: 30; }
    """

    def __init__(self, signal: Signal, glyphs: Glyphs, **kwargs) -> None:
        super().__init__(**kwargs)
        self.signal = signal
        self.glyphs = glyphs
        self.series: StabilitySeries | None = None
        self.holdout = False
        """Overlay the holdout too (when the model has one)."""
        self.grid: Grid | None = None
        self._input: tuple | None = None
        self._y_range: tuple[float, float] | None = None
        self.cells_refreshed = 0
        """Cells sent for repaint since mount (for tests and the bench)."""

    def set_series(self, series: StabilitySeries) -> None:
        """Show ``series``; nothing is redrawn when it is the same data."""
        self.series = _carried_over(self.series, series)
        self._redraw()

    def show_holdout(self, shown: bool) -> None:
        """Overlay the holdout as well as the baseline (or not); redraws only the cells that change."""
        if shown != self.holdout:
            self.holdout = shown
            self._redraw()

    def on_resize(self) -> None:
        self._redraw()

    def restyle(self) -> None:
        self._input = None
        self._redraw()

    def _redraw(self) -> None:
        width, height = self.size.width, self.size.height
        if width <= 0 or height <= 0:
            return
        key = (width, height, self.series, self.holdout)
        if key == self._input:
            return
        self._input = key
        grid = self._draw(width, height)
        previous, self.grid = self.grid, grid
        for x, y, length in grid.changed_runs(previous):
            self.cells_refreshed += length
            self.refresh(Region(x, y, length, 1))

    def render_line(self, y: int) -> Strip:
        base = self.rich_style
        if self.grid is None or y >= self.grid.height:
            return Strip.blank(self.size.width, base)
        return Strip(self.grid.segments(y, base), self.grid.width)

    # --- drawing --------------------------------------------------------------

    def _styles(self) -> dict[str, Style]:
        colours = palette(self.app)
        return {
            "model": Style(color=colours.get("primary"), bold=True),
            "baseline": Style(color=colours.get("secondary"), dim=True),
            "holdout": Style(color=colours.get("accent"), dim=True),
            "band": Style(color=colours.get("success"), dim=True),
            "bad": Style(color=colours.get("error"), bold=True),
            "muted": Style(color=colours.get("foreground-muted")),
            "title": Style(bold=True),
        }

    def _draw(self, width: int, height: int) -> Grid:
        grid = Grid(width, height)
        styles = self._styles()
        series = self.series
        title = self.signal.name
        if series is None:
            grid.text(0, 0, f"{title}: loading…", styles["title"])
            return grid
        plot_top, plot_bottom = 1, height - 3  # rows of the plot area, inclusive
        plot_left, plot_width = AXIS_WIDTH, width - AXIS_WIDTH
        if plot_bottom < plot_top or plot_width < 4:
            grid.text(0, 0, f"{title}: too small", styles["title"])
            return grid
        rows = plot_bottom - plot_top + 1
        points = [(p, self.signal.read(p)) for p in series.points]
        baseline = [(p, self.signal.read(p)) for p in series.baseline_points]
        holdout = (
            [(p, self.signal.read(p)) for p in series.holdout_points] if self._holdout_shown else []
        )
        low, high = self.signal.band(series.bands)
        values = (
            [v for _, v in points + baseline + holdout if v is not None]
            + [high]
            + ([low] if low is not None else [])
        )
        values = [min(max(v, -PLOT_LIMIT), PLOT_LIMIT) for v in values]
        bottom, top = self._y_range = _steady_range(self._y_range, min(values), max(values))
        if low is None:
            bottom = max(0.0, bottom)

        def row_of(value: float, sub: int) -> int:
            """Sub-row (0 at the top) of ``value`` with ``sub`` sub-rows per cell."""
            share = (top - value) / (top - bottom)
            return min(rows * sub - 1, max(0, round(share * (rows * sub - 1))))

        axis = TimeAxis.paged(series.window.duration, series.end)
        self._legend(grid, styles, series)
        # y labels: the band edges and the range ends.
        for value in (top, high, low, bottom):
            if value is None:
                continue
            grid.text(
                0,
                plot_top + row_of(value, 1),
                _number(value).rjust(AXIS_WIDTH - 1),
                styles["muted"],
            )
        # the healthy band edges, drawn first so data draws over them.
        for edge in (low, high):
            if edge is None:
                continue
            y = plot_top + row_of(edge, 1)
            for x in range(plot_left, width):
                grid.put(x, y, self.glyphs.band, styles["band"])
        sub_x = 2 if self.glyphs.braille else 1
        sub_y = 4 if self.glyphs.braille else 1

        def plot(
            series_points: Sequence[tuple[StabilityPoint, float | None]], style_of, mark: str
        ) -> None:
            previous: tuple[int, int] | None = None
            for point, value in series_points:
                if value is None:
                    previous = None  # a gap (no data) is left visibly empty
                    continue
                moment = point.start + series.bucket / 2
                x = int(axis.position(moment, plot_width * sub_x))
                y = row_of(value, sub_y)
                style = style_of(point)
                if self.glyphs.braille:
                    for px, py in _line(previous, (x, y)):
                        grid.dot(plot_left * 2 + px, plot_top * 4 + py, style)
                else:
                    grid.put(plot_left + x, plot_top + y, mark, style)
                previous = (x, y)

        plot(baseline, lambda p: styles["baseline"], self.glyphs.baseline_mark)
        plot(holdout, lambda p: styles["holdout"], HOLDOUT_MARK)
        plot(
            points, lambda p: styles["bad"] if p.health is Health.UNSTABLE else styles["model"], "*"
        )
        # unstable buckets marked under the plot, so they read without colour
        for point in series.points:
            if point.health is Health.UNSTABLE:
                x = int(axis.position(point.start + series.bucket / 2, plot_width))
                grid.put(plot_left + x, plot_bottom + 1, self.glyphs.violation, styles["bad"])
        self._time_labels(grid, axis, plot_left, plot_width, height - 1, styles["muted"])
        return grid

    @property
    def _holdout_shown(self) -> bool:
        return self.holdout and self.series is not None and self.series.holdout_model_id is not None

    def _legend(self, grid: Grid, styles: dict[str, Style], series: StabilitySeries) -> None:
        """Title, the newest value and the window, the gap to each overlaid model as numbers, then the
        legend's keys as far as they fit (whole keys only: at 80 columns the keys are what is left out,
        never the numbers)."""
        gaps: list[tuple[str, Style | None]] = []
        for gap in series.gaps:
            if gap.relation == "holdout" and not self._holdout_shown:
                continue
            change = self.signal.change(gap)
            words = "no data" if change is None else f"{change * 100:+.1f}%"
            gaps.append((f"{words} vs {gap.relation}  ", styles["title"]))
        window: list[tuple[str, Style | None]] = [(f" {series.window}  ", styles["muted"])]
        heading = [(self.signal.name, styles["title"]), *self._now(styles, series)]
        if len("".join(text for text, _ in heading + window + gaps).rstrip()) > grid.width:
            # Two charts side by side at 80 columns: the numbers keep their room, the window (the time
            # axis and the status line say it too) gives its room up.
            window = [("  ", None)]
        heading += window + gaps
        keys = [[("⣿ " if self.glyphs.braille else "* ", styles["model"]), ("model  ", None)]]
        if series.baseline_model_id:
            keys.append(
                [(self.glyphs.baseline_mark * 2 + " ", styles["baseline"]), ("baseline  ", None)]
            )
        if self._holdout_shown:
            keys.append(
                [
                    ("⣿ " if self.glyphs.braille else HOLDOUT_MARK * 2 + " ", styles["holdout"]),
                    ("holdout  ", None),
                ]
            )
        keys += [
            [(self.glyphs.band * 2 + " ", styles["band"]), ("band  ", None)],
            [(self.glyphs.violation + " ", styles["bad"]), ("unstable", None)],
        ]
        x = 0
        for text, style in heading:
            grid.text(x, 0, text, style)
            x += len(text)
        for key in keys:
            width = sum(len(text.rstrip()) for text, _ in key) + 1
            if x + width > grid.width:
                break
            for text, style in key:
                grid.text(x, 0, text, style)
                x += len(text)

    def _now(
        self, styles: dict[str, Style], series: StabilitySeries
    ) -> list[tuple[str, Style | None]]:
        """The newest bucket's value as a number (a chart alone says "about 1.3"), red when it is unstable;
        an older value would read as now, so a newest bucket without data says so."""
        if not series.points:
            return [(" no data", styles["muted"])]
        newest = series.points[-1]
        value = self.signal.read(newest)
        if value is None:
            return [(" no data", styles["muted"])]
        style = styles["bad"] if newest.health is Health.UNSTABLE else styles["title"]
        return [(" ", None), (_number(value), style)]

    @staticmethod
    def _time_labels(
        grid: Grid, axis: TimeAxis, left: int, width: int, y: int, style: Style
    ) -> None:
        for moment, label in axis.ticks(width, 5):
            x = left + int(axis.position(moment, width))
            if x + len(label) <= grid.width:
                grid.text(x, y, label, style)


def _carried_over(shown: StabilitySeries | None, new: StabilitySeries) -> StabilitySeries:
    """``new`` plus the buckets of ``shown`` that slid out of the window but are still on the paged axis.

    The server sends exactly the window; the axis shows up to a page more. Keeping those buckets
    means a new bucket changes a few cells at the right, instead of the oldest one also vanishing
    at the left (which repaints the whole row between the two).
    """
    if (
        shown is None
        or shown.model_id != new.model_id
        or shown.window is not new.window
        or shown.end > new.end
    ):
        return new
    axis_start = TimeAxis.paged(new.window.duration, new.end).start

    def merged(old: list[StabilityPoint], fresh: list[StabilityPoint]) -> list[StabilityPoint]:
        return [p for p in old if axis_start <= p.start < new.start] + fresh

    return new.model_copy(
        update={
            "points": merged(shown.points, new.points),
            "baseline_points": merged(shown.baseline_points, new.baseline_points),
            "holdout_points": merged(shown.holdout_points, new.holdout_points),
        }
    )


def _steady_range(
    shown: tuple[float, float] | None, low: float, high: float
) -> tuple[float, float]:
    """The y range for data spanning [low, high]: the one shown while the data still fits it well.

    A range fitted tightly to the data moves with every new bucket, and a moved range redraws every
    cell of the chart. So the range is padded, rounded to the span's own decade, and kept until the
    data leaves it or shrinks to under half of it.
    """
    # At least 1e-9: a span that rounds to nothing would make the step below 0.
    pad = max((high - low) * 0.1 or abs(high) * 0.05 or 0.05, 1e-9)
    low, high = low - pad, high + pad
    if (
        shown is not None
        and shown[0] <= low
        and high <= shown[1]
        and (high - low) * 2 >= shown[1] - shown[0]
    ):
        return shown
    step = 10 ** math.floor(math.log10(high - low))
    return math.floor(low / step) * step, math.ceil(high / step) * step


def _number(value: float) -> str:
    """At most AXIS_WIDTH - 1 characters, however large the value."""
    if abs(value) < 10:
        return f"{value:.3f}"
    return (
        f"{value:.1f}"
        if abs(value) < 1000
        else f"{value:.0e}".replace("e+0", "e").replace("e+", "e")
    )


def _line(start: tuple[int, int] | None, end: tuple[int, int]) -> list[tuple[int, int]]:
    """Bresenham points from ``start`` to ``end`` (just ``end`` when there is no start)."""
    if start is None:
        return [end]
    (x0, y0), (x1, y1) = start, end
    points = []
    dx, dy = abs(x1 - x0), -abs(y1 - y0)
    step_x, step_y = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
    error = dx + dy
    while True:
        points.append((x0, y0))
        if (x0, y0) == (x1, y1):
            return points
        twice = 2 * error
        if twice >= dy:
            error += dy
            x0 += step_x
        if twice <= dx:
            error += dx
            y0 += step_y
