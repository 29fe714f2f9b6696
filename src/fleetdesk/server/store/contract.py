"""The store contract: what the server asks of its database, whichever database that is.

A store is opened from one location (``Store(where)``): a ``postgresql://`` URL opens the PostgreSQL store,
anything else is the path of a SQLite file. Both keep the same tables and columns and take the same SQL
(``?`` placeholders; the few expressions the two spell differently come from ``conn.dialect``), so the
store's modules, which hold all of the server's SQL, run unchanged on either, through the ``Connection`` below.

Guarantees every store gives:
- ``write()`` is one transaction: everything in it (an idempotency key, the change, its audit record and
  its events) commits together or not at all, and writers are serialized, so a check of the expected state
  inside it still holds at commit.
- ``read()`` is a consistent snapshot for several reads.
- ``migrate()`` brings the schema to the newest version through numbered migrations, and refuses a
  database that is newer than this fleetdesk or is not a fleetdesk database.
- The audit log is append-only in the database itself: no UPDATE, DELETE or upsert can rewrite a record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fleetdesk.domain.registry import Model, Registry
from fleetdesk.server.store import registry_log
from fleetdesk.server.store.dialect import Dialect
from fleetdesk.server.store.fleet_config import FleetConfig
from fleetdesk.server.store.seeding import (
    ADD_HISTORY,
    ADDED_HISTORY,
    TASK_BUCKET_COLUMNS,
    BucketRows,
    Columns,
    SeedProgress,
    add_day_counts,
    add_task_totals,
)
from fleetdesk.server.store.values import iso, parse_iso

if TYPE_CHECKING:
    from fleetdesk.fleets import Fleet


_HISTORY_TABLES = ("buckets", "task_buckets", "health_days")
"""The tables a seed fills with the fleet's history by bulk loading (Store.bulk_loading)."""


class StoreError(RuntimeError):
    """The database cannot be used (newer schema, not a fleetdesk database, …)."""


class StoreUnavailable(StoreError):
    """The database server cannot be reached now (down, restarting, connection lost): retry later."""


class AlreadySeeded(StoreError):
    """Seeding found the database seeded: by an earlier run, or by a replica started at the same time that
    took the write lock first."""


class Row(Protocol):
    """One result row: by column name, by position or slice, or unpacked in column order."""

    def __getitem__(self, key: int | str | slice, /) -> Any: ...

    def __iter__(self) -> Iterator[Any]: ...

    def keys(self) -> list[str]: ...


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """What the server's modules use of a database connection (sqlite3's own interface)."""

    @property
    def dialect(self) -> Dialect: ...

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Cursor: ...


class Store:
    """One fleetdesk database, used from many threads. The methods that raise NotImplementedError are
    what each kind of store implements (not abc-abstract: ``Store(where)`` must type-check)."""

    def __new__(cls, where: Path | str) -> Store:  # noqa: PYI034 - the subclass the location names
        # Store(where) opens the kind of store the location names, so every command taking --db takes
        # either kind without knowing there are two.
        if cls is Store:
            cls = _store_class(where)
        return super().__new__(cls)

    where: str
    """The location in plain words for messages (never a password)."""
    local_file: Path | None = None
    """The database file on this machine, when it is one (its disk is then watched for space)."""

    # --- connections and transactions ------------------------------------

    def connection(self) -> Connection:
        """This thread's connection, outside any transaction (single statements)."""
        raise NotImplementedError

    def write(
        self, waiting: Callable[[], None] | None = None
    ) -> AbstractContextManager[Connection]:
        """One write transaction: committed on normal exit, rolled back on any exception. ``waiting`` is
        called first if another process holds the write lock, before this one waits for it."""
        raise NotImplementedError

    def read(self) -> AbstractContextManager[Connection]:
        """A consistent snapshot for several reads."""
        raise NotImplementedError

    def close(self) -> None:
        """Close every connection this store opened."""
        raise NotImplementedError

    def ping(self) -> None:
        """Raise unless the database answers a query now (the readiness probe)."""
        self.connection().execute("SELECT 1").fetchone()

    def checkpoint(self) -> None:
        """Everything written so far in the database file itself, so that a plain copy of the file is the
        whole store (the embedded console's cached stores). Only a store that is one file can."""
        raise NotImplementedError

    def lead(self) -> bool:
        """Whether this process is the one that closes slots, recomputes SLOs and opens incidents, taking
        the role when no live process holds it. A store only one server uses always leads."""
        return True

    def warm(self, connections: int) -> None:
        """Get ready to serve this many threads at once (where connecting costs something)."""
        return None

    def watch_commits(self, wake: Callable[[], None]) -> None:
        """Call ``wake`` (from any thread) after another process commits a write, so this process's event
        streams read the new events. Nothing to watch where only one server writes."""
        return None

    # --- schema -----------------------------------------------------------

    def migrate(self) -> int:
        """Bring the schema to the newest version; returns the version found before. StoreError for a
        location that is not a fleetdesk database or cannot be used."""
        raise NotImplementedError

    def schema_version(self) -> int:
        """The schema version the database is at."""
        raise NotImplementedError

    def insert_rows(
        self, conn: Connection, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]
    ) -> None:
        """Append many rows (values for these columns) to a table in the current transaction."""
        conn.executemany(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
            rows,
        )

    def insert_columns(self, conn: Connection, table: str, batches: Iterable[Columns]) -> None:
        """Append batches of numeric rows, an array per column, to a table in the current transaction
        (seeding writes tens of millions)."""
        for batch in batches:
            conn.executemany(
                f"INSERT INTO {table} VALUES ({', '.join('?' * len(batch))})",
                zip(*(column.tolist() for column in batch), strict=True),
            )

    @contextmanager
    def bulk_loading(self, conn: Connection, tables: Sequence[str]) -> Iterator[None]:
        """Around filling these empty tables with a seed's history (in the current transaction): nothing here."""
        yield

    # --- fleet config and registry ------------------------------------------

    def is_seeded(self) -> bool:
        row = self.connection().execute("SELECT value FROM meta WHERE key = 'fleet'").fetchone()
        return row is not None

    def fleet_config(self) -> FleetConfig:
        row = self.connection().execute("SELECT value FROM meta WHERE key = 'fleet'").fetchone()
        if row is None:
            raise StoreError(f"{self.where}: database has no fleet (not seeded)")
        return FleetConfig.model_validate_json(row["value"])

    def model_keys(self) -> dict[str, int]:
        return {row[0]: row[1] for row in self.connection().execute("SELECT id, key FROM models")}

    def registry(self, config: FleetConfig) -> Registry:
        rows = self.connection().execute("SELECT record FROM models ORDER BY id").fetchall()
        return Registry(
            (Model.model_validate_json(row["record"]) for row in rows), config.vocabulary
        )

    def seed(
        self,
        fleet: Fleet,
        progress: SeedProgress | None = None,
        waiting: Callable[[], None] | None = None,
    ) -> int:
        """Fill an empty database from a fleet: registry, live state and every bucket. Returns bucket count.
        ``waiting`` is told when another process is writing first (a replica seeding it: see AlreadySeeded)."""
        file = fleet.file
        config = FleetConfig.of(file)
        keys = {model_id: key for key, model_id in enumerate(fleet.registry.models, start=1)}
        model_rows = [
            registry_log.model_row(model, keys[model.id], file.vocabulary)
            for model in fleet.registry.models.values()
        ]
        buckets = BucketRows(fleet, config, keys, None, progress)
        with self.write(waiting) as conn:
            if conn.execute("SELECT count(*) FROM models").fetchone()[0]:
                raise AlreadySeeded(f"{self.where}: already seeded")
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('fleet', ?)", (config.model_dump_json(),)
            )
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('history_end', ?)",
                (iso(fleet.timeline.end),),
            )
            # A statement for all, not one per model (on PostgreSQL each runs the summary counts' trigger).
            self.insert_rows(conn, "models", registry_log.MODEL_COLUMNS, model_rows)
            registry_log.record_seed(conn, fleet.timeline.end, file.types)
            self.insert_rows(
                conn,
                "model_versions",
                registry_log.MODEL_VERSION_COLUMNS,
                registry_log.seeded_models(fleet.registry.models.values()),
            )
            with self.bulk_loading(conn, _HISTORY_TABLES):
                self.insert_columns(conn, "buckets", buckets.batches())
                self.insert_rows(conn, "task_buckets", TASK_BUCKET_COLUMNS, buckets.task_rows)
                self.insert_columns(conn, "health_days", buckets.days)
            add_task_totals(conn, buckets.task_rows)  # an upsert: after the keys are back
            self._add_history(conn, buckets)
        return buckets.counted

    def _add_history(self, conn: Connection, buckets: BucketRows) -> None:
        """The new buckets' sums added to their models' totals, their newest bucket made the models' newest."""
        conn.execute(ADDED_HISTORY)
        self.insert_columns(conn, "added_history", buckets.totals)
        conn.execute(ADD_HISTORY)
        conn.execute("DROP TABLE added_history")

    def history_end(self) -> datetime | None:
        """Where the seeded (and since extended) history ends; None for a store seeded before this was kept."""
        row = (
            self.connection().execute("SELECT value FROM meta WHERE key = 'history_end'").fetchone()
        )
        return None if row is None else parse_iso(row["value"])

    def extend(self, fleet: Fleet, until: datetime, progress: SeedProgress | None = None) -> int:
        """Append the history's buckets from where it ends up to ``until`` (floored to a bucket), as if it had
        been seeded that long: ``fleet`` is the fleet this store was seeded from, its history ending where
        this store's does. One transaction: a crash leaves the store as it was. Returns the bucket count."""
        end = self.history_end()
        if end is None or end != fleet.timeline.end:
            raise StoreError(f"{self.where}: its history does not end where the fleet's does")
        timeline = fleet.continued_until(until)
        if not len(timeline):
            return 0
        buckets = BucketRows(fleet, self.fleet_config(), self.model_keys(), timeline, progress)
        with self.write() as conn:
            self.insert_columns(conn, "buckets", buckets.batches())
            self.insert_rows(conn, "task_buckets", TASK_BUCKET_COLUMNS, buckets.task_rows)
            add_task_totals(conn, buckets.task_rows)
            add_day_counts(conn, buckets.days)
            self._add_history(conn, buckets)
            conn.execute(
                "UPDATE meta SET value = ? WHERE key = 'history_end'", (iso(timeline.end),)
            )
        return buckets.counted


def _store_class(where: Path | str) -> type[Store]:
    if is_postgres_url(where):
        from fleetdesk.server.store.postgres import PostgresStore

        return PostgresStore
    from fleetdesk.server.store.sqlite import SqliteStore

    return SqliteStore


def is_postgres_url(where: Path | str) -> bool:
    """A ``postgresql://`` (or ``postgres://``) URL names a PostgreSQL database; anything else is a path."""
    return isinstance(where, str) and where.startswith(("postgresql://", "postgres://"))
