"""Whether the console is in touch with the backend, and how old its data is."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from fleetdesk.client import ConnectionState, ConnectionUpdate


@dataclass
class Link:
    """The console's view of its link: the live feed's state and the last successful read."""

    stale_after: float = 90.0
    feed: ConnectionState | None = None
    feed_detail: str = ""
    read_ok: bool = True
    disconnected_since: datetime | None = None
    last_data: float | None = None
    """time.monotonic() of the last data received (a read or an event)."""
    _clock: object = field(default=time.monotonic, repr=False)

    @property
    def connected(self) -> bool:
        return self.disconnected_since is None

    def data_arrived(self) -> None:
        self.last_data = self._clock()  # type: ignore[operator]
        self._settle(read_ok=True)

    def read_failed(self) -> None:
        self._settle(read_ok=False)

    def feed_changed(self, update: ConnectionUpdate) -> None:
        self.feed = update.state
        self.feed_detail = update.detail
        self._settle(read_ok=self.read_ok)

    def _settle(self, read_ok: bool) -> None:
        self.read_ok = read_ok
        feed_down = self.feed is ConnectionState.RECONNECTING or (
            self.feed is ConnectionState.POLLING and self.feed_detail.startswith("polling failed")
        )
        if read_ok and not feed_down:
            self.disconnected_since = None
        elif self.disconnected_since is None:
            self.disconnected_since = datetime.now(UTC)

    def age_seconds(self) -> float | None:
        return None if self.last_data is None else self._clock() - self.last_data  # type: ignore[operator]

    def describe(self) -> tuple[str, bool]:
        """Words for the header and whether they are a warning: 'live', 'stale 3m', 'disconnected since …'."""
        if self.disconnected_since is not None:
            since = self.disconnected_since.strftime("%H:%M:%S")
            return f"disconnected since {since} UTC · data stale{self._age_suffix()}", True
        if self.last_data is None:
            return "connecting…", True
        age = self.age_seconds() or 0.0
        if age > self.stale_after:
            return f"stale {_short(age)}", True
        if self.feed is ConnectionState.POLLING:
            return "live (polling)", False
        return "live", False

    def _age_suffix(self) -> str:
        age = self.age_seconds()
        return "" if age is None else f" {_short(age)}"


def _short(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m"
    return f"{seconds // 3600:.0f}h"
