"""A program in a 120x40 pty, as an engineer would run it: what it writes, when, and its memory.

Shared by the console benchmarks; ``BARE_APP`` is the reference every start-up time is compared with.
"""

from __future__ import annotations

import fcntl
import os
import pty
import queue
import struct
import subprocess
import termios
import textwrap
import threading
import time
from pathlib import Path

import pyte

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


def terminal_env(token: str = "") -> dict[str, str]:
    """The environment of a program under test: a colour terminal, no user config, the token if given."""
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "XDG_CONFIG_HOME": "/nonexistent",
    }
    env.pop("NO_COLOR", None)
    if token:
        env["FLEETDESK_TOKEN"] = token
    return env


class Terminal:
    """A child process on a pty of COLUMNS x ROWS; collects what it writes, and when.

    A thread reads the pty and stamps each chunk as it arrives; the terminal emulator that tells what
    is on screen runs on the caller's side, so its (slow, pure Python) work never delays a timestamp.
    """

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)
        self.output = bytearray()
        """Every byte consumed so far (see ``read``)."""
        self.read_at = self.started
        """When the last consumed chunk arrived."""
        # What is on screen, read off a terminal emulator fed the same bytes: the console sends only
        # changed cells, so text already shown is not in the bytes written after it.
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self._stream = pyte.ByteStream(self.screen)
        self._arrived: queue.SimpleQueue[tuple[float, bytes]] = queue.SimpleQueue()
        self._closed = False
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                data = b""
            self._arrived.put((time.perf_counter(), data))
            if not data:
                return

    def _consume(self, timeout: float) -> int:
        """Take the next chunk that arrives within ``timeout`` seconds: 0 when none, -1 once the pty closed."""
        if self._closed:
            return -1
        try:
            arrived, data = self._arrived.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return 0
        if not data:
            self._closed = True
            return -1
        self.read_at = arrived
        self.output += data
        self._stream.feed(data)
        return len(data)

    def read(self, seconds: float) -> int:
        """Consume what arrives for ``seconds``; returns the bytes."""
        end = time.perf_counter() + seconds
        count = 0
        while (left := end - time.perf_counter()) > 0:
            got = self._consume(left)
            if got < 0:
                break
            count += got
        return count

    def shows(self, text: str) -> bool:
        return any(text in line for line in self.screen.display)

    def wait_for(self, marker: bytes, timeout: float = 60.0, since: int = 0) -> float:
        """Seconds from start to the arrival of the output that put ``marker`` on screen after byte ``since``."""
        end = time.perf_counter() + timeout
        text = marker.decode()
        while len(self.output) <= since or not self.shows(text):
            if time.perf_counter() > end or self._consume(end - time.perf_counter()) < 0:
                screen = "\n".join(line.rstrip() for line in self.screen.display if line.strip())
                raise TimeoutError(
                    f"{marker!r} did not appear (exit {self.process.poll()}, {len(self.output)} bytes "
                    f"read); screen:\n{screen}"
                )
        return self.read_at - self.started

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
