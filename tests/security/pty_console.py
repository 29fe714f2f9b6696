"""The real ``fleetdesk console`` under a real pseudo-terminal, with every byte it writes captured."""

from __future__ import annotations

import fcntl
import os
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pyte

# Textual's own control sequences: CSI (cursor, style, modes), OSC up to BEL/ST, and two-byte ESC forms.
_SEQUENCE = re.compile(
    rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_=>78]"
)


def visible(data: bytes) -> str:
    """The text a terminal would print, with control sequences removed (positions are lost)."""
    return _SEQUENCE.sub(b"", data).decode("utf-8", errors="replace")


class PtyConsole:
    """``fleetdesk console --server URL`` on a pty of ``size``; the token only in the environment."""

    def __init__(self, url: str, token: str, home: Path, size: tuple[int, int] = (120, 40)) -> None:
        columns, rows = size
        self.output = bytearray()
        # The console sends only the cells that change, so what is on screen is read off a terminal
        # emulator fed the same bytes, not off the bytes since some mark.
        self._screen = pyte.Screen(columns, rows)
        self._stream = pyte.ByteStream(self._screen)
        self._lock = threading.Lock()
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_STATE_HOME": str(home / "state"),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "COLUMNS": str(columns),
            "LINES": str(rows),
            "FLEETDESK_TOKEN": token,
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "fleetdesk.cli", "console", "--server", url],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=home,
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)
        self._master = master
        self._reader = threading.Thread(target=self._read, name="pty-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 65536)
            except OSError:  # EIO once the child side is closed
                return
            if not chunk:
                return
            with self._lock:
                self.output.extend(chunk)
                self._stream.feed(chunk)

    def captured(self) -> bytes:
        with self._lock:
            return bytes(self.output)

    def screen_text(self) -> str:
        """What the terminal shows now, line by line."""
        with self._lock:
            return "\n".join(line.rstrip() for line in self._screen.display)

    def visible_since(self, mark: int) -> str:
        return visible(self.captured()[mark:])

    def send(self, keys: str) -> None:
        os.write(self._master, keys.encode())

    def wait_for(self, *texts: str, deadline: float = 30.0, since: int = 0) -> int:
        """Wait until every one of ``texts`` is on screen, after output past byte ``since``; returns the output
        length then. Texts that one key brings are waited for together: one paint can bring them all, so a
        second wait counted from the first one's mark would wait for output that never comes."""
        give_up = time.monotonic() + deadline
        while True:
            data = self.captured()
            screen = self.screen_text()
            if len(data) > since and all(text in screen for text in texts):
                return len(data)
            if self.process.poll() is not None or time.monotonic() > give_up:
                missing = [text for text in texts if text not in screen]
                raise AssertionError(
                    f"{missing!r} never appeared (exit {self.process.poll()}); screen:\n{screen}"
                )
            time.sleep(0.05)

    def open_model(self, words: str, shown: str, since: int = 0) -> int:
        """Open the one model the filter ``words`` leaves, as an engineer does: "/", the words, Enter to the
        table (its selected row is the only match), Enter; returns the output length once ``shown`` is on screen."""
        self.send("/")
        mark = self.wait_for("filter: id, type words", since=since)
        self.send(words)
        mark = self.wait_for("(1 shown)", since=mark)
        self.send("\r")
        mark = self.wait_for("q Quit", since=mark)
        self.send("\r")
        return self.wait_for(shown, since=mark)

    def resize(self, columns: int, rows: int) -> None:
        """Resize the terminal, as a window manager does (the console repaints everything)."""
        with self._lock:
            self._screen.resize(rows, columns)
        fcntl.ioctl(self._master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        os.killpg(self.process.pid, signal.SIGWINCH)

    def settle(self, quiet: float = 0.5, deadline: float = 15.0) -> None:
        """Wait until the console has written nothing for ``quiet`` seconds."""
        give_up = time.monotonic() + deadline
        seen, since = len(self.captured()), time.monotonic()
        while time.monotonic() - since < quiet and time.monotonic() < give_up:
            time.sleep(0.05)
            if len(self.captured()) != seen:
                seen, since = len(self.captured()), time.monotonic()

    def close(self) -> None:
        """Quit with ctrl+q; kill the process if it does not go."""
        if self.process.poll() is None:
            self.send("\x11")
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._reader.join(5)
        os.close(self._master)
