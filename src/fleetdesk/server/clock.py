"""The server's notion of now: the real UTC clock, or a frozen one for tests, demos and drills."""

from __future__ import annotations

import threading
from datetime import UTC, datetime


class ClockError(ValueError):
    """The clock cannot be moved that way."""


class Clock:
    """Real UTC time by default; frozen at a given instant when ``frozen_at`` is set."""

    def __init__(self, frozen_at: datetime | None = None) -> None:
        if frozen_at is not None and frozen_at.tzinfo is None:
            raise ClockError("a frozen clock needs a timezone-aware time")
        self._frozen_at = None if frozen_at is None else frozen_at.astimezone(UTC)
        self._lock = threading.Lock()

    @property
    def frozen(self) -> bool:
        return self._frozen_at is not None

    def now(self) -> datetime:
        frozen = self._frozen_at
        return datetime.now(UTC) if frozen is None else frozen

    def set(self, moment: datetime) -> datetime:
        """Move a frozen clock forward (drills replay time this way)."""
        with self._lock:
            if self._frozen_at is None:
                raise ClockError(
                    "the server runs on the real clock; start it with --now to control time"
                )
            if moment.tzinfo is None:
                raise ClockError("time must be timezone-aware")
            moment = moment.astimezone(UTC)
            if moment < self._frozen_at:
                raise ClockError(
                    f"time only moves forward (server time is {self._frozen_at.isoformat()})"
                )
            self._frozen_at = moment
            return moment

    def undo(self, moved_from: datetime, moved_to: datetime) -> None:
        """Put a move back (its transaction did not commit), unless the clock has moved on since."""
        with self._lock:
            if self._frozen_at == moved_to:
                self._frozen_at = moved_from


def wall_clock() -> datetime:
    """Real UTC time, for security decisions (token expiry) that must not follow a frozen clock."""
    return datetime.now(UTC)
