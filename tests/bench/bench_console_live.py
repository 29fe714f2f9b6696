"""Console benchmark: the model view over a slow link, while a drill feeds it one bucket a second.

The fleet gets a live feed exactly as in the README's drill (the calibration-drift scenario): every
second the backend's clock moves one bucket and every model's bucket for it is
posted. The backend runs in its own process, as in a drill; the console runs in a 120x40 pty, as an
engineer would run it. Figures:
- bytes written to the terminal per second on the model view of a healthy model whose charts and SLO
  take a new bucket every second, averaged over 30 s (budget 1 KB/s); then the same on the drifting
  experiment while it pages and its alerts flip every bucket (no budget: what an incident costs);
- bytes of the first complete fleet paint (budget 60 KB);
- Enter on the fleet table to the model view's complete paint (median of 3 opens), switching its charts to 28 days
  of hourly buckets, and opening it again with its charts at 28 days (the window stays for the next model
  opened) (budget 150 ms each); the reference is a keystroke the fleet table answers (cursor down: one row
  repainted).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import SecretStr
from terminal import Terminal, terminal_env

from fleetdesk.client import FleetdeskClient
from fleetdesk.drills.backend import DrillBackend
from fleetdesk.drills.replay import ReplayPlan, drill_fleet, plan_replay, write_fleet
from fleetdesk.drills.scenario import load_scenario

SCENARIO = "experiment-calibration-drift"
MODEL = "ig_feed_late-stage_mtml.x2-long-history"
"""The experiment that drifts: paging within seconds, its alerts flapping from then on."""
HEALTHY = "ig_feed_late-stage_mtml.v41"
"""Its baseline: healthy, with a new bucket every second (the steady state)."""
STEADY_SECONDS = 30.0
OPENS = 3
"""Opens of the model view per figure (the median counts): one open on a shared box is mostly noise."""
QUIET = 0.4
"""A paint is complete when the console has written nothing for this long."""


def paint_seconds(terminal: Terminal, keys: str) -> float:
    """Seconds from sending ``keys`` to the last byte of the paint they cause (to within 10 ms)."""
    terminal.read(QUIET)
    sent = time.perf_counter()
    terminal.send(keys)
    last = sent
    quiet_since = time.perf_counter()
    while time.perf_counter() - quiet_since < QUIET:
        if terminal.read(0.01):
            last, quiet_since = terminal.read_at, time.perf_counter()
    return last - sent


class Feed:
    """The drill's live feed, one bucket a second, resumable: each ``run`` goes on where the last stopped."""

    def __init__(self, url: str, token: SecretStr, plan: ReplayPlan) -> None:
        self.url, self.token, self.ticks, self.sent = url, token, plan.ticks, 0

    async def run(self, seconds: float) -> int:
        """Send ticks for ``seconds``; returns how many buckets closed."""
        first, began = self.sent, time.perf_counter()
        async with FleetdeskClient(self.url, self.token) as client:
            while (due := began + (self.sent - first)) < began + seconds:
                await asyncio.sleep(max(0.0, due - time.perf_counter()))
                tick = self.ticks[self.sent]
                await client.set_clock(tick.end)
                await client.ingest(list(tick.buckets))
                self.sent += 1
        return self.sent - first


def watch(console: Terminal, feed: Feed, seconds: float) -> tuple[float, int, float]:
    """Bytes per second the console writes while the feed runs for ``seconds``; with buckets closed and time."""
    before, began = len(console.output), time.perf_counter()
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(asyncio.run, feed.run(seconds))
        while not running.done():
            console.read(0.1)
        closed = running.result()
    elapsed = time.perf_counter() - began
    if os.environ.get("FLEETDESK_BENCH_DUMP"):  # the bytes, to see what a change costs
        Path(os.environ["FLEETDESK_BENCH_DUMP"]).write_bytes(bytes(console.output[before:]))
    return (len(console.output) - before) / elapsed, closed, elapsed


def open_model(console: Terminal, words: str, times: int = 1) -> float:
    """Filter the fleet to one model and open it ``times`` times (Esc between); the median seconds from
    Enter to its complete paint."""
    console.send(
        "/\x15" + words
    )  # in one write, as over a slow link; ctrl+u clears an earlier filter
    console.read(1.0)
    console.send("\r")  # back to the table: the model is the only row
    console.read(1.0)
    samples = []
    for attempt in range(times):
        if attempt:
            console.send("\x1b")
            console.read(1.0)
        shown = len(console.output)
        samples.append(paint_seconds(console, "\r"))
        opened = len(console.output) > shown and console.shows(f"model {words}")
        assert opened, f"the model view of {words} did not open"
    return statistics.median(samples)


def test_model_view_over_a_slow_link(figures, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    scenario, _ = load_scenario(SCENARIO)
    fleet = drill_fleet(scenario, SCENARIO)
    plan = plan_replay(scenario, fleet)
    backend = DrillBackend.start(write_fleet(fleet, tmp_path / "fleet.json"), plan.start)
    env = terminal_env(backend.oncall_token.get_secret_value())
    try:
        console = Terminal(
            [sys.executable, "-m", "fleetdesk.cli", "console", "--server", backend.url], env
        )
        try:
            console.wait_for(b"x2-long-history", timeout=120)
            console.read(1.0)
            first_paint = len(console.output)
            cursor = statistics.median(
                paint_seconds(console, key) for key in ("\x1b[B", "\x1b[A") * 3
            )
            feed = Feed(backend.url, backend.admin_token, plan)
            opened = open_model(console, HEALTHY, times=OPENS)
            window_28d = paint_seconds(console, "5")
            console.send("\x1b")
            console.read(1.0)
            opened_28d = open_model(
                console, HEALTHY, times=OPENS
            )  # the window stays for the next model opened
            console.send("3")  # back to 24 hours: the window an engineer watches
            console.read(2.0)
            steady, closed, elapsed = watch(console, feed, STEADY_SECONDS)
            console.send("\x1b")
            console.read(1.0)
            open_model(console, MODEL)
            paging, paging_closed, paging_elapsed = watch(console, feed, STEADY_SECONDS)
        finally:
            console.close()
    finally:
        backend.stop()

    assert min(closed, paging_closed) >= STEADY_SECONDS - 3, (
        f"the feed closed only {closed}, {paging_closed} buckets"
    )
    figures.record(
        f"terminal bytes/s, model view, 1 bucket/s for {elapsed:.0f} s, 120x40",
        steady / 1024,
        "KB/s",
        budget=1.0,
    )
    figures.record(
        f"  same, on a model paging and flapping every bucket ({paging_elapsed:.0f} s)",
        paging / 1024,
        "KB/s",
    )
    figures.record(
        f"first complete fleet paint ({len(fleet.registry.models)} models), 120x40",
        first_paint / 1024,
        "KB",
        budget=60.0,
    )
    figures.record(
        f"open a model view (Enter to complete paint, median of {OPENS})",
        opened * 1000,
        "ms",
        budget=150.0,
        reference=cursor * 1000,
        reference_name="cursor key",
    )
    figures.record(
        "switch its charts to 28 days of hourly buckets",
        window_28d * 1000,
        "ms",
        budget=150.0,
        reference=cursor * 1000,
        reference_name="cursor key",
    )
    figures.record(
        f"open a model view with its charts at 28 days of hourly buckets (median of {OPENS})",
        opened_28d * 1000,
        "ms",
        budget=150.0,
        reference=cursor * 1000,
        reference_name="cursor key",
    )
