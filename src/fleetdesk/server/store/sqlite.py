"""The SQLite store: one database file, the embedded default.

Durability and concurrency choices:
- WAL with ``synchronous=FULL``: a commit the API acknowledged survives SIGKILL
  and power loss; readers never block the writer.
- One process-wide write lock around ``BEGIN IMMEDIATE``: writers queue in
  Python (fair, no busy-loop sleeps) and SQLite's own lock is taken up front,
  so a transaction never fails half-way on a lock upgrade. ``busy_timeout``
  still covers other processes (``fleetdesk token create`` on a live db).
- Times are ISO 8601 UTC text (readable with the sqlite3 shell), except bucket
  starts, which are epoch seconds because SLO counting ranges over millions.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from fleetdesk.domain.text import sanitize
from fleetdesk.server.store.contract import Store, StoreError
from fleetdesk.server.store.dialect import SQLITE
from fleetdesk.server.store.sqlite_schema import MIGRATIONS, SCHEMA_VERSION

BUSY_TIMEOUT_MS = 10_000
UNTIL_COMMITTED_MS = 2**31 - 1  # SQLite's largest: 24 days


class SqliteConnection(sqlite3.Connection):
    """sqlite3's own connection, knowing its dialect (see store.dialect)."""

    dialect = SQLITE


class SqliteStore(Store):
    """One SQLite database file, used from many threads (one connection per thread)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.where = str(self.path)
        self.local_file = self.path
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._connections: list[SqliteConnection] = []
        self._connections_lock = threading.Lock()

    # --- connections and transactions ------------------------------------

    def connection(self) -> SqliteConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                check_same_thread=False,
                timeout=BUSY_TIMEOUT_MS / 1000,
                factory=SqliteConnection,
            )
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
            with self._connections_lock:
                self._connections.append(conn)
        return conn

    @contextmanager
    def write(self, waiting: Callable[[], None] | None = None) -> Iterator[SqliteConnection]:
        """One write transaction: committed on normal exit, rolled back on any exception."""
        conn = self.connection()
        with self._write_lock:
            if waiting is None:
                conn.execute("BEGIN IMMEDIATE")
            else:
                try:
                    self._begin_within(conn, 0)
                except sqlite3.OperationalError as error:
                    # The low byte: SQLITE_BUSY or one of its extended codes.
                    if error.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY:
                        raise
                    waiting()
                    self._begin_within(conn, UNTIL_COMMITTED_MS)
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                # A COMMIT that failed (a full disk) may leave the transaction open: without this rollback
                # every later write on this thread's connection would fail to BEGIN.
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    @staticmethod
    def _begin_within(conn: SqliteConnection, milliseconds: int) -> None:
        """BEGIN IMMEDIATE, waiting at most this long for another process's write lock. A writer that said it
        waits waits until the other commits, as a PostgreSQL writer waits on its lock (a seed of 10,000 models
        takes 40 s, past the 10 s every other write gives up after)."""
        conn.execute(f"PRAGMA busy_timeout={milliseconds}")
        try:
            conn.execute("BEGIN IMMEDIATE")
        finally:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")

    @contextmanager
    def read(self) -> Iterator[SqliteConnection]:
        """A consistent snapshot for several reads."""
        conn = self.connection()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def checkpoint(self) -> None:
        self.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        with self._connections_lock:
            for conn in self._connections:
                try:
                    conn.close()
                except sqlite3.ProgrammingError:
                    pass  # closed from its own thread already
            self._connections.clear()
        self._local = threading.local()

    # --- schema -----------------------------------------------------------

    def migrate(self) -> int:
        """Bring the schema to SCHEMA_VERSION; returns the version found before. StoreError for a path that is
        not a database (a directory, another kind of file, a place that cannot be written)."""
        where = sanitize(str(self.path))
        if self.path.exists() and not self.path.is_file():
            raise StoreError(
                f"{where}: not a regular file (a fleetdesk database is one SQLite file)"
            )
        try:
            conn = self.connection()
            found = conn.execute("PRAGMA user_version").fetchone()[0]
        except (
            sqlite3.DatabaseError
        ) as error:  # "file is not a database", "unable to open database file", ...
            raise StoreError(
                f"{where}: cannot use it as a fleetdesk database ({sanitize(str(error))})"
            ) from None
        if found > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: schema version {found} is newer than this fleetdesk ({SCHEMA_VERSION}); upgrade fleetdesk"
            )
        if found == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise StoreError(
                f"{self.path}: not a fleetdesk database (tables present, no schema version)"
            )
        for version, _why, sql in MIGRATIONS:
            if version <= found:
                continue
            with self._write_lock:
                # executescript runs the BEGIN/COMMIT itself; a failure leaves the
                # transaction open, which we roll back so the version stays put.
                try:
                    conn.executescript(
                        f"BEGIN IMMEDIATE;\n{sql}\nPRAGMA user_version = {version};\nCOMMIT;"
                    )
                except sqlite3.Error:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
        return found

    def schema_version(self) -> int:
        return self.connection().execute("PRAGMA user_version").fetchone()[0]

    # --- fleet config and registry ------------------------------------------
