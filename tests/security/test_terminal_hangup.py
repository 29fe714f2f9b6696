"""A console whose terminal goes away ends, whether or not a hang-up signal comes with it."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from fleetdesk.server.embedded import EmbeddedServer


def test_a_console_whose_pty_closes_without_a_signal_ends_instead_of_spinning(
    server: EmbeddedServer, tmp_path: Path
) -> None:
    # The pty is not the console's controlling terminal (a new session that never claims it), so closing it
    # sends no SIGHUP: Textual's input thread read end-of-file in a loop, at half a core, and never ended.
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    console = subprocess.Popen(
        [sys.executable, "-m", "fleetdesk.cli", "console", "--server", server.url],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={
            **os.environ,
            "TERM": "xterm-256color",
            "FLEETDESK_TOKEN": server.oncall_token,
            "XDG_CONFIG_HOME": str(tmp_path),
        },
        start_new_session=True,
    )
    os.close(slave)
    try:
        shown = b""
        deadline = time.monotonic() + 30
        while b"models" not in shown and time.monotonic() < deadline:  # the fleet is on screen
            if select.select([master], [], [], 0.2)[0]:
                shown += os.read(master, 65536)
        assert b"models" in shown, shown[-2000:]
        os.close(master)  # the terminal window closing; nothing else reads it, so it is really gone
        master = -1
        console.wait(10)
    finally:
        if master >= 0:
            os.close(master)
        if console.poll() is None:
            console.kill()
            console.wait(10)
            raise AssertionError("the console outlived its terminal")
