"""The drill's embedded backend, in a child process of its own.

The reference backend is Python too; in the console's process it would share
the GIL with the console and the replay, and a compressed replay keeps it
busy scoring every bucket, so keys would wait behind ingestion. A child
process gets its own core. It is the same ``start_embedded`` server (random
loopback port, temp database, frozen clock at the scenario's start); the
tokens come back over a private pipe, and the child stops when told or when
the pipe closes (the parent died).
"""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass, field
from datetime import datetime
from multiprocessing.connection import Connection
from pathlib import Path

from pydantic import SecretStr

START_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0


class BackendStartError(RuntimeError):
    """The drill's backend did not come up."""


def _serve(fleet_path: str, now: datetime, pipe: Connection) -> None:
    # The console owns the terminal: anything this process prints (a warning, a server error) would
    # land in the middle of its screen, and stay there. It goes to a log beside the drill's fleet.
    log = os.open(
        Path(fleet_path).with_name("backend.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600
    )
    os.dup2(log, 1)
    os.dup2(log, 2)
    try:
        from fleetdesk.server.embedded import start_embedded

        server = start_embedded(fleet_path, now=now)
    except Exception as error:  # reported to the parent, which shows it in plain words
        pipe.send(("error", f"{type(error).__name__}: {error}"))
        return
    try:
        pipe.send(("ready", server.url, server.admin_token, server.oncall_token))
        try:
            pipe.recv()
        except EOFError:
            pass
    finally:
        server.stop()


@dataclass
class DrillBackend:
    """A running drill backend: its URL, an admin token (replay) and an on-call token (the engineer)."""

    url: str
    admin_token: SecretStr = field(repr=False)
    oncall_token: SecretStr = field(repr=False)
    _process: multiprocessing.process.BaseProcess = field(repr=False)
    _pipe: Connection = field(repr=False)

    @classmethod
    def start(cls, fleet_path: Path, now: datetime) -> DrillBackend:
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        process = context.Process(
            target=_serve,
            args=(str(fleet_path), now, theirs),
            name="fleetdesk-drill-backend",
            daemon=True,
        )
        process.start()
        theirs.close()
        if not ours.poll(START_TIMEOUT):
            process.kill()
            raise BackendStartError(f"the drill backend did not start within {START_TIMEOUT:g}s")
        try:
            message = ours.recv()
        except EOFError:
            process.join(STOP_TIMEOUT)
            raise BackendStartError(
                f"the drill backend exited during start-up (exit code {process.exitcode})"
            ) from None
        if message[0] != "ready":
            process.join(STOP_TIMEOUT)
            raise BackendStartError(f"the drill backend did not start: {message[1]}")
        _, url, admin, oncall = message
        return cls(
            url=url,
            admin_token=SecretStr(admin),
            oncall_token=SecretStr(oncall),
            _process=process,
            _pipe=ours,
        )

    def stop(self) -> None:
        """Stop the server (its temp database goes with it) and wait for the process."""
        try:
            self._pipe.send("stop")
        except OSError:
            pass  # already gone
        self._pipe.close()
        self._process.join(STOP_TIMEOUT)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(STOP_TIMEOUT)

    def __enter__(self) -> DrillBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
