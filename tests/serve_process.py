"""A real ``fleetdesk serve`` subprocess on loopback: on a port the system picks (port 0), or on a fixed one so
that it can be SIGKILLed and restarted in place. Its own process, so a load generator in the test's process does
not share the server's GIL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from fleetdesk.server.auth import create_token
from fleetdesk.server.store import Store
from fleetdesk.wire import AccessRole
from ports import free_port

NOW = "2026-11-30T12:00:00+00:00"


def admin_token(db: Path, user: str = "chaos") -> str:
    """A token minted straight into a (new or existing) database, as `fleetdesk token create` does."""
    store = Store(db)
    store.migrate()
    try:
        return create_token(store, user, AccessRole.ADMIN, [])
    finally:
        store.close()


class ServeProcess:
    """``fleetdesk serve --db DB --port PORT``; ``log`` collects everything it prints (stdout and stderr), ``url``
    is where it listens once started."""

    def __init__(
        self, db: Path | str, port: int = 0, *extra: str, env: dict[str, str] | None = None
    ) -> None:
        self.db, self.port, self.extra, self.env = db, port, extra, env
        self.url = f"http://127.0.0.1:{port}"
        self.log: list[str] = []
        self.process: subprocess.Popen[str] | None = None
        self._pump: threading.Thread | None = None

    def start(self) -> ServeProcess:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fleetdesk.cli",
                "serve",
                "--db",
                str(self.db),
                "--port",
                str(self.port),
                "--now",
                NOW,
                *self.extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=self.env,
        )
        assert self.process.stdout is not None
        # The banner is printed once the socket listens and the db is ready; a new db's seeding is said first.
        for line in self.process.stdout:
            self.log.append(line)
            if line.startswith("fleetdesk serving"):
                break
        else:
            self.process.wait(30)
            raise AssertionError(f"fleetdesk serve did not start: {''.join(self.log)}")
        self.url = line.rsplit(" on ", 1)[1].strip()
        self._pump = threading.Thread(target=self._read, args=(self.process,), daemon=True)
        self._pump.start()
        return self

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            self.log.append(line)

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as in a crash or an OOM kill."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self._reap()
        assert self.process.returncode == -signal.SIGKILL

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
        self._reap()

    def _reap(self) -> None:
        if self.process is None:
            return
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(15)
        if self._pump is not None:
            self._pump.join(10)
        if self.process.stdout is not None:
            self.process.stdout.close()


def serve_ready(db: Path, *extra: str) -> tuple[ServeProcess, str]:
    """``fleetdesk serve`` seeding a new ``db`` from the small fleet (``extra`` may name another), once /readyz
    answers; and an admin token for it."""
    token = admin_token(db)
    server = ServeProcess(db, free_port(), "--fleet", "small", *extra).start()
    ready = httpx.get(server.url + "/readyz", timeout=10)
    if ready.status_code != 200:
        server.stop()
        raise AssertionError(f"fleetdesk serve is not ready: {ready.text}")
    return server, token
