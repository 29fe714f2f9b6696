"""Console benchmark: the model view over a slow link, while a drill feeds it one bucket a second.

The fleet gets a live feed exactly as in the README's drill (the calibration-drift scenario): every second the backend's clock moves one bucket and every model's bucket for it is
posted. The backend runs in its own process, as in a drill; the console runs in a 120x40 pty, as an
engineer would run it, with the drifting experiment open. Figures:
- bytes written to the terminal per second on the model view, averaged over 30 s (budget 1 KB/s);
- bytes of the first complete fleet paint (budget 60 KB);
- Enter on the fleet table to the model view's complete paint, and switching its charts to 28 days
  of hourly buckets (budget 150 ms each); the reference is a keystroke the fleet table answers
  (cursor down: one row repainted).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import SecretStr

from bench_console import PYTHON, Terminal
from fleetdesk.client import FleetdeskClient
from fleetdesk.drills.backend import DrillBackend
from fleetdesk.drills.replay import ReplayPlan, Tick, drill_fleet, plan_replay, replay, write_fleet
from fleetdesk.drills.scenario import load_scenario

SCENARIO = "experiment-calibration-drift"
MODEL = "ig_feed_late-stage_mtml.x2-long-history"
STEADY_SECONDS = 30.0
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
            last = quiet_since = time.perf_counter()
    return last - sent


async def feed(url: str, token: SecretStr, plan: ReplayPlan, seconds: float) -> int:
    """Replay the drill at one bucket a second for ``seconds``; returns the buckets closed."""
    sent = 0
    async with FleetdeskClient(url, token) as client:
        async def send(tick: Tick) -> None:
            nonlocal sent
            await client.set_clock(tick.end)
            await client.ingest(list(tick.buckets))
            sent += 1

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(replay(plan, send, speed=1.0), seconds)
    return sent


def test_model_view_over_a_slow_link(figures, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    scenario, _ = load_scenario(SCENARIO)
    fleet = drill_fleet(scenario, SCENARIO)
    plan = plan_replay(scenario, fleet)
    backend = DrillBackend.start(write_fleet(fleet, tmp_path / "fleet.json"), plan.start)
    env = {**os.environ, "TERM": "xterm-256color", "COLORTERM": "truecolor", "XDG_CONFIG_HOME": "/nonexistent",
           "FLEETDESK_TOKEN": backend.oncall_token.get_secret_value()}
    env.pop("NO_COLOR", None)
    try:
        console = Terminal([PYTHON, "-m", "fleetdesk.cli", "console", "--server", backend.url], env)
        try:
            console.wait_for(b"x2-long-history", timeout=120)
            console.read(1.0)
            first_paint = len(console.output)
            cursor = statistics.median(paint_seconds(console, key) for key in ("\x1b[B", "\x1b[A") * 3)
            console.send("/")
            console.read(0.3)  # keys typed in the same packet as "/" still reach the table (Textual focus is queued)
            console.send("x2-long")
            console.read(1.0)
            console.send("\r")  # back to the table: the model is the only row
            console.read(1.0)
            table_end = len(console.output)
            opened = paint_seconds(console, "\r")
            assert b"x2-long-history" in console.output[table_end:], "the model view did not open"
            window_28d = paint_seconds(console, "5")
            console.send("3")  # back to 24 hours: the window an engineer watches
            console.read(2.0)
            before, began = len(console.output), time.perf_counter()
            with ThreadPoolExecutor(1) as pool:
                feeding = pool.submit(asyncio.run, feed(backend.url, backend.admin_token, plan, STEADY_SECONDS))
                while not feeding.done():
                    console.read(0.1)
                closed = feeding.result()
            elapsed = time.perf_counter() - began
            steady = (len(console.output) - before) / elapsed
        finally:
            console.close()
    finally:
        backend.stop()

    assert closed >= STEADY_SECONDS - 3, f"the feed closed only {closed} buckets"
    figures.record(f"terminal bytes/s, model view, 1 bucket/s for {elapsed:.0f} s, 120x40", steady / 1024, "KB/s",
                   budget=1.0)
    figures.record(f"first complete fleet paint ({len(fleet.registry.models)} models), 120x40", first_paint / 1024, "KB", budget=60.0)
    figures.record("open a model view (Enter to complete paint)", opened * 1000, "ms", budget=150.0,
                   reference=cursor * 1000, reference_name="cursor key")
    figures.record("switch its charts to 28 days of hourly buckets", window_28d * 1000, "ms", budget=150.0,
                   reference=cursor * 1000, reference_name="cursor key")
