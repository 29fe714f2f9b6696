"""Console benchmark: run it with ``.venv/bin/python tests/bench/bench_console.py`` (prints its figures).

Against the real server on the large fleet (started here, seeding not counted), the console runs as its
own process in a 120x40 pty, as an engineer would run it:
- start to first fleet paint, next to a bare Textual app showing one label (same pty, same run): the ratio;
- filter keystroke to repaint (median of several keys);
- console RSS once the fleet is shown;
- bytes written to the terminal per second in steady state with live updates, on the model view.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from pydantic import SecretStr
from terminal import BARE_APP, COLUMNS, ROWS, Terminal, keystroke_to_repaint

from fleetdesk.client import FleetdeskClient
from fleetdesk.server.embedded import start_embedded

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
PYTHON = sys.executable


async def drive_live_updates(url: str, token: str, seconds: float) -> int:
    """Move the frozen clock one bucket a second, so buckets close and SLOs change as in production."""
    moved = 0
    async with FleetdeskClient(url, SecretStr(token)) as client:
        info = await client.info()
        now = info.now
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            now += info.bucket
            await client.set_clock(now)
            moved += 1
            await asyncio.sleep(1.0)
    return moved


def main() -> None:
    env = {**os.environ, "TERM": "xterm-256color", "COLORTERM": "truecolor", "XDG_CONFIG_HOME": "/nonexistent"}
    env.pop("NO_COLOR", None)
    bare = Terminal([PYTHON, "-c", BARE_APP], env)
    bare_seconds = bare.wait_for(b"ready-marker")
    bare.close()

    server = start_embedded("large", now=NOW)
    try:
        console_env = {**env, "FLEETDESK_TOKEN": server.oncall_token}
        console = Terminal([PYTHON, "-m", "fleetdesk.cli", "console", "--server", server.url], console_env)
        try:
            first_paint = console.wait_for(b"page", timeout=120)
            console.read(1.0)
            rss = console.rss_mb()
            console.send("/")
            console.read(0.5)
            delays = [keystroke_to_repaint(console, key) for key in "reels t0"]
            console.send("\x1b")  # clear the filter
            console.read(1.0)
            console.send("\r")  # open the worst model: live charts
            console.read(3.0)
            before = len(console.output)
            start = time.perf_counter()
            with ThreadPoolExecutor(1) as pool:
                driver = pool.submit(asyncio.run, drive_live_updates(server.url, server.admin_token, 10.0))
                while not driver.done():
                    console.read(0.1)
                moved = driver.result()
            elapsed = time.perf_counter() - start
            steady_bytes = len(console.output) - before
        finally:
            console.close()
    finally:
        server.stop()

    print(f"bare Textual label app, start to first paint: {bare_seconds * 1000:.0f} ms")
    print(f"console on the large fleet (1,200 models), start to first fleet paint: {first_paint * 1000:.0f} ms")
    print(f"ratio console / bare app: {first_paint / bare_seconds:.1f}x")
    print(f"filter keystroke to repaint (1,200 rows): median {statistics.median(delays) * 1000:.0f} ms, "
          f"max {max(delays) * 1000:.0f} ms")
    print(f"console RSS with the fleet shown: {rss:.0f} MB")
    print(f"steady state on the model view at {COLUMNS}x{ROWS}, {moved} buckets closed in {elapsed:.1f} s: "
          f"{steady_bytes / elapsed / 1024:.2f} KB/s written to the terminal")


if __name__ == "__main__":
    main()


def test_console_figures() -> None:
    """The same run under pytest, so one command runs every benchmark."""
    main()
