"""A throwaway PostgreSQL cluster for the tests, from Debian's ``postgresql`` binaries.

``initdb`` into a temp dir and ``pg_ctl start`` on a free loopback port, as an unprivileged user (initdb
refuses root: under root the cluster runs as ``fleetdesk-pg``, created if missing). Each test gets its own
database (``fresh_database``); the cluster is stopped and its folder removed at the end of the session.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ports import free_port

STORE_KINDS = ["sqlite", "postgresql"]
"""The stores the store and API suites run against (their conftest parametrizes ``store_kind``)."""

PG_USER = "fleetdesk-pg"
"""The unprivileged user the cluster runs as when the tests run as root."""


def postgres_bin() -> Path | None:
    """The newest installed /usr/lib/postgresql/<version>/bin holding initdb, or None."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parent.parent.name),
    )
    return Path(found[-1]).parent if found else None


def _run_as(user: str | None, *command: str, netns: str | None = None) -> None:
    if user is not None:
        command = ("runuser", "-u", user, "--", *command)
    if netns is not None:
        command = ("ip", "netns", "exec", netns, *command)
    subprocess.run(command, check=True, capture_output=True, text=True, timeout=120)


def _unprivileged_user() -> str | None:
    """None when we are not root (the cluster runs as us); else the cluster user, created if missing."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER],
            check=True,
            capture_output=True,
        )
    return PG_USER


class Cluster:
    def __init__(self, host: str, port: int, user: str, pg_ctl: Callable[..., None]) -> None:
        self.host, self.port, self.user = host, port, user
        self._numbers = itertools.count(1)
        self._pg_ctl = pg_ctl
        """Runs pg_ctl on this cluster's data folder with the arguments it is given."""

    @contextmanager
    def down(self) -> Iterator[None]:
        """The cluster stopped (as for a restart or a failover) until the block ends, then started again. Use a
        cluster of the test's own (running_cluster): the session's serves every other test."""
        self._pg_ctl("-m", "fast", "-w", "stop")
        try:
            yield
        finally:
            self._pg_ctl("-w", "start")

    def drop_connections(self, url: str) -> int:
        """End every connection to the database at ``url`` as a restart or a failover would; how many."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as admin:
            row = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (url.rsplit("/", 1)[1],),
            ).fetchone()
        assert row is not None
        return int(row[0])

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database}"

    def fresh_database(self) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        name = f"t{os.getpid()}_{next(self._numbers)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def settle(self) -> None:
        """Write every dirty page out now: after a large seed or copy, PostgreSQL's checkpointer would
        otherwise spread those writes over the next minutes, and they would stall the fsyncs of
        whatever is measured then (on either store: they share the disk)."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute("CHECKPOINT")
        os.sync()

    def copy_database(self, url: str) -> str:
        """A new database copied from the one at ``url`` (nobody may be connected to it); its URL."""
        import psycopg

        name = f"t{os.getpid()}_{next(self._numbers)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {url.rsplit('/', 1)[1]}")
        return self.url(name)


@contextmanager
def running_cluster(host: str = "127.0.0.1", netns: str | None = None) -> Iterator[Cluster]:
    """Start a cluster for the session; stop it and remove its folder afterwards. ``host`` is the address
    it listens on, in network namespace ``netns`` if one is given (see tests/far_host.py)."""
    binaries = postgres_bin()
    if binaries is None:
        raise RuntimeError(
            "PostgreSQL binaries not found under /usr/lib/postgresql/*/bin"
            " (apt-get install -y postgresql)"
        )
    user = _unprivileged_user()
    folder = Path(tempfile.mkdtemp(prefix="fleetdesk-pg-"))
    data = folder / "data"
    if user is not None:
        shutil.chown(folder, user)
    role = user or pwd.getpwuid(os.geteuid()).pw_name
    port = free_port()
    _run_as(
        user,
        str(binaries / "initdb"),
        "-D",
        str(data),
        "-U",
        role,
        "--auth=trust",
        "--encoding=UTF8",
        "--no-sync",
    )
    if host != "127.0.0.1":  # initdb trusts loopback only
        with open(data / "pg_hba.conf", "a", encoding="utf-8") as hba:
            hba.write("host all all samenet trust\n")
    options = (
        f"-c listen_addresses={host} -c port={port} -c unix_socket_directories={folder}"
        " -c max_connections=400 -c fsync=off -c synchronous_commit=off"
        " -c full_page_writes=off -c shared_buffers=128MB"
        # A throwaway cluster's databases live minutes: autovacuum only wrote in the background while other
        # figures were measured (seeding runs VACUUM ANALYZE itself).
        " -c autovacuum=off"
    )

    def pg_ctl(*arguments: str) -> None:
        _run_as(
            user,
            str(binaries / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(folder / "log"),
            *arguments,
            netns=netns,
        )

    pg_ctl("-w", "start")
    try:
        yield Cluster(host, port, role, pg_ctl)
    finally:
        pg_ctl("-m", "immediate", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)
