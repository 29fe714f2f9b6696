"""A program in a 120x40 pty, as an engineer would run it: what it writes, when, and its memory.

Shared by the console benchmarks; ``BARE_APP`` is the reference every start-up time is compared with.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import textwrap
import time
from pathlib import Path

COLUMNS, ROWS = 120, 40
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

    def _read_chunk(self, timeout: float) -> int:
        """Whatever the program wrote within ``timeout`` seconds, one read; -1 once it closed the pty."""
        ready, _, _ = select.select([self.master], [], [], max(timeout, 0.0))
        if not ready:
            return 0
        try:
            data = os.read(self.master, 65536)
        except OSError:
            return -1
        self.output += data
        return len(data)

    def read(self, seconds: float) -> int:
        """Read for ``seconds``; returns the bytes read."""
        end = time.perf_counter() + seconds
        count = 0
        while (left := end - time.perf_counter()) > 0:
            got = self._read_chunk(left)
            if got < 0:
                break
            count += got
        return count

    def wait_for(self, marker: bytes, timeout: float = 60.0, since: int = 0) -> float:
        """Seconds since start until ``marker`` appeared in the output after byte ``since`` (checked on every read)."""
        end = time.perf_counter() + timeout
        while self.output.find(marker, since) < 0:
            if time.perf_counter() > end or self._read_chunk(end - time.perf_counter()) < 0:
                raise TimeoutError(f"{marker!r} did not appear")
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
