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
import fcntl
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import termios
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from pydantic import SecretStr

from fleetdesk.client import FleetdeskClient
from fleetdesk.server.embedded import start_embedded

COLUMNS, ROWS = 120, 40
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
PYTHON = sys.executable
BARE_APP = textwrap.dedent(
    """
    from textual.app import App
    from textual.widgets import Label

    class Bare(App):
        def compose(self):
            yield Label("ready-marker")

    Bare().run()
    """
)


class Terminal:
    """A child process on a pty of COLUMNS x ROWS; collects what it writes."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        self.started = time.perf_counter()
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                        start_new_session=True, close_fds=True)
        os.close(slave)
        self.output = bytearray()

    def read(self, seconds: float) -> int:
        """Read for ``seconds``; returns the bytes read."""
        end = time.perf_counter() + seconds
        count = 0
        while (left := end - time.perf_counter()) > 0:
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    break
                self.output += data
                count += len(data)
        return count

    def wait_for(self, marker: bytes, timeout: float = 60.0) -> float:
        """Seconds since start until ``marker`` appeared in the output."""
        end = time.perf_counter() + timeout
        while marker not in self.output:
            if time.perf_counter() > end:
                raise TimeoutError(f"{marker!r} did not appear")
            self.read(0.01)
        return time.perf_counter() - self.started

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
        os.close(self.master)


def keystroke_to_repaint(terminal: Terminal, key: str) -> float:
    terminal.read(0.3)  # let the previous repaint finish
    sent = time.perf_counter()
    terminal.send(key)
    ready, _, _ = select.select([terminal.master], [], [], 5.0)
    if not ready:
        return float("nan")
    terminal.read(0.0)
    return time.perf_counter() - sent


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
