"""A paged time axis: aligned to round times, it jumps ahead a page when full instead of sliding every bucket."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_STEPS = (
    timedelta(minutes=5),
    timedelta(minutes=10),
    timedelta(minutes=15),
    timedelta(minutes=30),
    timedelta(hours=1),
    timedelta(hours=2),
    timedelta(hours=3),
    timedelta(hours=6),
    timedelta(hours=12),
    timedelta(days=1),
    timedelta(days=2),
    timedelta(days=7),
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
PAGES_PER_WINDOW = 4


def floor_to(moment: datetime, step: timedelta) -> datetime:
    return _EPOCH + ((moment - _EPOCH) // step) * step


@dataclass(frozen=True, slots=True)
class TimeAxis:
    start: datetime
    end: datetime

    @classmethod
    def paged(cls, window: timedelta, end: datetime) -> TimeAxis:
        """An axis covering at least [end - window, end], starting on a page boundary (a quarter window)."""
        page = window / PAGES_PER_WINDOW
        start = floor_to(end - window, page)
        return cls(start, start + window + page)

    @property
    def span(self) -> timedelta:
        return self.end - self.start

    def position(self, moment: datetime, width: int) -> float:
        """Where ``moment`` falls on ``width`` units (0 at start, width at end)."""
        return (moment - self.start) / self.span * width

    def ticks(self, columns: int, label_width: int) -> list[tuple[datetime, str]]:
        """Round moments to label, spaced so their labels do not touch."""
        most = max(1, columns // (label_width + 2))
        step = next((s for s in _STEPS if self.span / s <= most), _STEPS[-1])
        fmt = "%m-%d" if step >= timedelta(days=1) else "%H:%M"
        tick = floor_to(self.start, step)
        if tick < self.start:
            tick += step
        found = []
        while tick <= self.end:
            found.append((tick, tick.strftime(fmt)))
            tick += step
        return found
