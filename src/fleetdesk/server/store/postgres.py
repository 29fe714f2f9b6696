"""The PostgreSQL store (psycopg 3): the database a team already runs, shared by several replicas.

Concurrency choices, giving the same guarantees as the SQLite store:
- Every write transaction first takes one transaction-scoped advisory lock, so writers queue across every
  replica as SQLite's writers queue on its file lock: an expected-state check made inside ``write()``
  still holds at commit, and an Idempotency-Key sent to two replicas at once is claimed by the first and
  replayed by the second. Event ids are then also handed out in commit order, which ``Last-Event-ID``
  resume relies on.
- Reads run as REPEATABLE READ READ ONLY transactions: one snapshot for several reads, never blocking.
- One connection per thread, in autocommit mode outside ``write()``/``read()`` (single statements).
- Replicas: every write transaction NOTIFYs one channel (delivered at commit, never for a rollback); each
  replica LISTENs on its own connection and wakes its event streams, which read the shared event log, so
  ``Last-Event-ID`` resumes on any replica. The leader holds a session advisory lock on its own
  connection: when its process dies the connection closes, the lock is free, and the next replica to ask
  (every few seconds, see server.app) takes it.
"""

from __future__ import annotations

import functools
import queue
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

import numpy as np

from fleetdesk.domain.text import sanitize
from fleetdesk.server.store.contract import Cursor, Store, StoreError, StoreUnavailable
from fleetdesk.server.store.dialect import POSTGRES
from fleetdesk.server.store.postgres_schema import MIGRATIONS
from fleetdesk.server.store.seeding import Columns, SeedProgress

if TYPE_CHECKING:
    from fleetdesk.fleets import Fleet

try:
    import psycopg
    from psycopg.copy import QueuedLibpqWriter
    from psycopg.rows import RowMaker
except ImportError:  # pragma: no cover - the postgres extra not installed
    psycopg = None  # type: ignore[assignment]

WRITE_LOCK = 0x666C6565  # pg_advisory_xact_lock key every writer takes ("flee")
MIGRATE_LOCK = 0x666C6566
LEADER_LOCK = 0x666C6567  # held (session lock) by the replica that closes slots
COMMITS_CHANNEL = (
    "fleetdesk_commits"  # NOTIFY at every write commit: replicas wake their event streams
)
CONNECT_TIMEOUT_S = 10
GONE_HOST = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": 10_000,
}
"""libpq's TCP options, so that a database host that vanishes without a reset (a failover, a dead machine or
network) fails the requests waiting on it within seconds: sent data unacknowledged for 10 s, or a connection
waiting on a reply with no probe answered, ends with an error (a 503, retried) instead of holding a request
thread for the ~15 minutes the kernel retransmits for. A URL's own values win (?keepalives_idle=30)."""

_BINARY = {"integer": ">i4", "bigint": ">i8", "double precision": ">f8"}
"""How COPY's binary format writes a value of each column type a numeric table has (insert_columns)."""
# The binary format's header (its signature, no flags, no extension) and trailer.
_COPY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + bytes(8)
_COPY_TRAILER = b"\xff\xff"


@functools.lru_cache(maxsize=4096)
def _translate(sql: str) -> str:
    """sqlite3's ``?`` placeholders as psycopg's ``%s`` (a literal % doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


class PgRow(tuple):  # type: ignore[type-arg]
    """A result row read by position or by column name, like sqlite3.Row."""

    __slots__ = ()
    _index: dict[str, int] = {}

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._index)


@functools.lru_cache(maxsize=1024)
def _row_class(names: tuple[str, ...]) -> type[PgRow]:
    return type("PgRow", (PgRow,), {"__slots__": (), "_index": {n: i for i, n in enumerate(names)}})


def _pg_row(cursor: Any) -> RowMaker[PgRow]:
    # The class itself makes the rows (a tuple from the values): no Python frame per row.
    if cursor.description is None:
        return PgRow
    return _row_class(tuple(column.name for column in cursor.description))


_RUN_AGAIN = ("BEGIN", "SELECT")
"""What a request thread's connection sends again, on a new connection, when the first statement after it sat idle
finds it dropped: the start of a transaction, or a read on its own (nothing that could have been applied)."""


class PgConnection:
    """sqlite3's connection interface (see contract.Connection) over one psycopg connection."""

    dialect = POSTGRES

    def __init__(
        self,
        raw: psycopg.Connection[PgRow],
        reopen: Callable[[], psycopg.Connection[PgRow]] | None = None,
    ) -> None:
        self.raw = raw
        self._reopen = reopen
        """Set on a request thread's connection (Store.connection), which holds nothing between transactions,
        unlike the leader's (its session lock) or the listener's (LISTEN)."""

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor:
        query = _translate(sql)
        idle = self._reopen is not None and not self.in_transaction
        try:
            with _unavailable_as_store_error():
                return self.raw.execute(query, parameters or None)  # type: ignore[arg-type]
        except StoreUnavailable:
            if not (idle and self.raw.broken and sql.startswith(_RUN_AGAIN)):
                raise
        # The database dropped this connection while it sat idle (a restart, a failover, an idle timeout):
        # nothing ran, so this runs again on a new one, instead of failing one request for each connection
        # the pool held when the database went away.
        self.reopen()
        with _unavailable_as_store_error():
            return self.raw.execute(query, parameters or None)  # type: ignore[arg-type]

    def reopen(self) -> None:
        """A new connection in place of this request thread's closed or dropped one."""
        assert self._reopen is not None, "only a request thread's connection is opened again"
        self.raw = self._reopen()

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Cursor:
        cursor = self.raw.cursor()
        with _unavailable_as_store_error():
            cursor.executemany(_translate(sql), parameters)  # type: ignore[arg-type]
        return cursor

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE


@contextmanager
def _unavailable_as_store_error() -> Iterator[None]:
    """A lost connection or a database that is down is StoreUnavailable (the API answers 503, retry)."""
    try:
        yield
    except psycopg.OperationalError as error:
        if isinstance(error, psycopg.errors.QueryCanceled | psycopg.errors.LockNotAvailable):
            raise
        raise StoreUnavailable(f"the database cannot be reached ({_said(error)})") from error


_PASSWORD = re.compile(r"^([^:/?#]+://[^:@/]*):.*@")
"""From a user name's colon to the URL's last @: what a URL that does not parse may hold of a password."""


def redacted(url: str) -> str:
    """The URL without its password, for messages and logs; also a URL that does not parse (a bad port or
    bracket), from its user name's colon to its last @."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _PASSWORD.sub(r"\1@", url, count=1)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at or ":" not in userinfo:
        return url
    return urlunsplit(parts._replace(netloc=f"{userinfo.split(':', 1)[0]}@{host}"))


def _said(error: Exception) -> str:
    """What psycopg or libpq said, on one line (libpq's hints come on their own indented lines)."""
    return sanitize(" ".join(str(error).split()))


class PostgresStore(Store):
    """One PostgreSQL database (its default schema), used from many threads and by several replicas."""

    def __init__(self, url: str) -> None:
        if psycopg is None:
            raise StoreError(
                "a postgresql:// database needs psycopg: pip install 'fleetdesk[postgres]'"
            )
        self.url = url
        self.where = sanitize(redacted(url))
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - parsed for its errors: a bad port or bracket
        except ValueError as error:
            raise StoreError(
                f"{self.where}: not a valid postgresql:// URL ({_said(error)})"
            ) from None
        given = parse_qs(parts.query)
        self._tcp: dict[str, Any] = {k: v for k, v in GONE_HOST.items() if k not in given}
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._connections: list[PgConnection] = []
        self._connections_lock = threading.Lock()
        self._leader: PgConnection | None = None
        self._leader_lock = threading.Lock()
        self._listening = threading.Event()  # set: the listener should keep going
        self._spare: queue.SimpleQueue[PgConnection] = queue.SimpleQueue()
        self._closed = False
        self._listener: threading.Thread | None = None
        self._emptied: set[str] = set()
        """Tables bulk_loading emptied in the seed's transaction (COPY may FREEZE their rows)."""

    # --- connections and transactions ------------------------------------

    def connection(self) -> PgConnection:
        conn: PgConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = self._spare.get_nowait()  # already in self._connections
            except queue.Empty:
                conn = self._pooled()
                with self._connections_lock:
                    self._connections.append(conn)
            self._local.conn = conn
        elif conn.raw.closed or conn.raw.broken:
            conn.reopen()  # in place: self._connections holds it, and close() closes what it holds now
        return conn

    def warm(self, connections: int) -> None:
        """Open connections in the background for request threads to take on their first request, so
        no request waits for a connection to be set up (the slowest part of a first write)."""

        def open_them() -> None:
            for _ in range(connections):
                try:
                    conn = self._pooled()
                except StoreUnavailable:
                    return
                with self._connections_lock:
                    if self._closed:
                        conn.raw.close()
                        return
                    self._connections.append(conn)  # closed by close() even if never taken
                self._spare.put(conn)

        threading.Thread(target=open_them, name="fleetdesk-warm", daemon=True).start()

    def _connect(self) -> PgConnection:
        """A connection of its own (the leader's, the listener's): never opened again behind its user's back."""
        return PgConnection(self._open())

    def _pooled(self) -> PgConnection:
        """A request thread's connection, opened again when the database dropped it while idle."""
        return PgConnection(self._open(), reopen=self._open)

    def _open(self) -> psycopg.Connection[PgRow]:
        try:
            return psycopg.connect(
                self.url,
                autocommit=True,
                row_factory=_pg_row,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name="fleetdesk",
                **self._tcp,
            )
        except psycopg.Error as error:
            raise StoreUnavailable(f"{self.where}: cannot connect ({_said(error)})") from None

    @contextmanager
    def write(self, waiting: Callable[[], None] | None = None) -> Iterator[PgConnection]:
        """One write transaction: committed on normal exit, rolled back on any exception."""
        conn = self.connection()
        with self._write_lock:
            conn.execute("BEGIN")
            try:
                if waiting is None:
                    conn.execute("SELECT pg_advisory_xact_lock(?)", (WRITE_LOCK,))
                elif not conn.execute(
                    "SELECT pg_try_advisory_xact_lock(?)", (WRITE_LOCK,)
                ).fetchone()[0]:
                    waiting()
                    conn.execute("SELECT pg_advisory_xact_lock(?)", (WRITE_LOCK,))
                yield conn
                conn.execute(f"NOTIFY {COMMITS_CHANNEL}")
                conn.execute("COMMIT")
            except BaseException:
                if not conn.raw.closed and conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    @contextmanager
    def read(self) -> Iterator[PgConnection]:
        """A consistent snapshot for several reads."""
        conn = self.connection()
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            yield conn
        finally:
            if not conn.raw.closed and conn.in_transaction:
                conn.execute("COMMIT")

    def close(self) -> None:
        self._listening.clear()
        if self._listener is not None:
            self._listener.join(timeout=5)
            self._listener = None
        with self._leader_lock:
            if self._leader is not None:
                self._leader.raw.close()  # gives the leadership up at once
                self._leader = None
        with self._connections_lock:
            self._closed = True
            for conn in self._connections:
                conn.raw.close()
            self._connections.clear()
        self._local = threading.local()

    # --- replicas -----------------------------------------------------------

    def lead(self) -> bool:
        with self._leader_lock:
            leader = self._leader
            if leader is not None and not (leader.raw.closed or leader.raw.broken):
                try:
                    leader.execute("SELECT 1")  # still connected, so still holding the lock
                    return True
                except StoreUnavailable:
                    pass
            if leader is not None:
                leader.raw.close()
            self._leader = None
            try:
                leader = self._connect()
            except StoreUnavailable:
                return False
            if leader.execute("SELECT pg_try_advisory_lock(?)", (LEADER_LOCK,)).fetchone()[0]:
                self._leader = leader
                return True
            leader.raw.close()
            return False

    def watch_commits(self, wake: Callable[[], None]) -> None:
        self._listening.set()
        self._listener = threading.Thread(
            target=self._listen, args=(wake,), name="fleetdesk-listen", daemon=True
        )
        self._listener.start()

    def _listen(self, wake: Callable[[], None]) -> None:
        while self._listening.is_set():
            try:
                conn = self._connect()
            except StoreUnavailable:
                self._listening.wait(1.0)
                continue
            try:
                conn.execute(f"LISTEN {COMMITS_CHANNEL}")
                wake()  # commits while we were not listening
                while self._listening.is_set():
                    for _ in conn.raw.notifies(timeout=0.5):
                        wake()
            except psycopg.Error:
                continue  # connection lost: connect again
            finally:
                conn.raw.close()

    def insert_rows(
        self, conn: Any, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]
    ) -> None:
        # COPY, each value packed by its column's type: a seed's models and its multi-task models' tasks.
        types = self._column_types(conn, table, columns)
        statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)"
        with conn.raw.cursor().copy(statement) as copy:
            copy.set_types(types)
            for row in rows:
                copy.write_row(row)

    def insert_columns(self, conn: Any, table: str, batches: Iterable[Columns]) -> None:
        # COPY in the binary format, each batch packed by numpy into COPY's own tuple layout (a field count,
        # then each field's length and big-endian value): no Python call per row or value, so one core feeds
        # PostgreSQL tens of millions of rows faster than it stores them. A separate thread sends while the
        # next batch is computed. FREEZE where bulk_loading emptied the table in this transaction: the rows
        # are written visible to all, and the VACUUM after the seed has nothing to do.
        types = self._column_types(conn, table)
        layout = np.dtype(
            [("fields", ">i2")]
            + [
                field
                for number, name in enumerate(types)
                for field in ((f"size{number}", ">i4"), (f"value{number}", _BINARY[name]))
            ]
        )
        freeze = ", FREEZE" if table in self._emptied else ""
        statement = f"COPY {table} FROM STDIN (FORMAT BINARY{freeze})"
        with conn.raw.cursor().copy(statement, writer=QueuedLibpqWriter(conn.raw.cursor())) as copy:
            copy.write(_COPY_SIGNATURE)
            for batch in batches:
                packed = np.empty(len(batch[0]), layout)
                packed["fields"] = len(types)
                for number, column in enumerate(batch):
                    packed[f"size{number}"] = layout[f"value{number}"].itemsize
                    packed[f"value{number}"] = column
                copy.write(packed.tobytes())
            copy.write(_COPY_TRAILER)

    @staticmethod
    def _column_types(conn: Any, table: str, columns: Sequence[str] | None = None) -> list[str]:
        """The types of these columns of the table (all of them, in order, for None)."""
        types = dict(
            conn.execute(
                "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
                " WHERE attrelid = ?::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
                (table,),
            ).fetchall()
        )
        return list(types.values()) if columns is None else [types[name] for name in columns]

    @contextmanager
    def bulk_loading(self, conn: Any, tables: Sequence[str]) -> Iterator[None]:
        # Emptied (so COPY can FREEZE: they are empty, the seed checked) and their indexes dropped, primary keys
        # too, while the rows are copied in; built again after, in the same transaction. Kept up row by row,
        # buckets_by_start (by start, across every model's history) took each row at a random page of an index
        # larger than the cache: seeding 50,000 models took 225 s. Built once after, by sorting, it takes 22 s.
        # The primary key, built by one sort after rather than row by row, takes half the time.
        keys = conn.execute(
            "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE contype = 'p' AND conrelid::regclass::text = ANY(?)",
            (list(tables),),
        ).fetchall()
        indexes = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()"
            " AND tablename = ANY(?) AND indexname NOT IN (SELECT conname FROM pg_constraint)",
            (list(tables),),
        ).fetchall()
        conn.execute(f"TRUNCATE {', '.join(tables)}")
        for name, _ in indexes:
            conn.execute(f"DROP INDEX {name}")
        for table, name, _ in keys:
            conn.execute(f"ALTER TABLE {table} DROP CONSTRAINT {name}")
        self._emptied = set(tables)
        try:
            yield
        finally:
            self._emptied = set()
        for table, name, definition in keys:
            conn.execute(f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}")
        for _, definition in indexes:
            conn.execute(definition)

    def seed(
        self,
        fleet: Fleet,
        progress: SeedProgress | None = None,
        waiting: Callable[[], None] | None = None,
    ) -> int:
        counted = super().seed(fleet, progress, waiting)
        # Planner statistics now, not whenever autovacuum gets to millions of COPYed rows. The visibility map,
        # without which the SLO passes' index-only scans of the buckets read the heap row by row (a full
        # recount at 10,000 models: 2.2 s before, 1.7 s after), COPY FREEZE has set already; only the models,
        # whose rows the seed updated with their totals, need a VACUUM.
        self.connection().execute("VACUUM models")
        self.connection().execute("ANALYZE")
        return counted

    # --- schema -----------------------------------------------------------

    def migrate(self) -> int:
        """Bring the schema to the newest version; returns the version found before. Replicas starting
        together migrate one at a time (an advisory lock)."""
        conn = self.connection()
        with self._write_lock:
            conn.execute("BEGIN")
            try:
                conn.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATE_LOCK,))
                found = self._version(conn)
                if found == 0 and self._tables(conn):
                    raise StoreError(
                        f"{self.where}: not a fleetdesk database (tables present, no schema version)"
                    )
                newest = MIGRATIONS[-1][0]
                if found > newest:
                    raise StoreError(
                        f"{self.where}: schema version {found} is newer than this fleetdesk"
                        f" ({newest}); upgrade fleetdesk"
                    )
                for version, _why, sql in MIGRATIONS:
                    if version <= found:
                        continue
                    conn.raw.execute(sql.encode())  # DDL is transactional: all of it or none
                    conn.execute("UPDATE fleetdesk_schema SET version = ?", (version,))
                conn.execute("COMMIT")
            except BaseException:
                if not conn.raw.closed and conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return found

    def schema_version(self) -> int:
        return self._version(self.connection())

    @staticmethod
    def _version(conn: PgConnection) -> int:
        if conn.execute("SELECT to_regclass('fleetdesk_schema')").fetchone()[0] is None:
            return 0
        return int(conn.execute("SELECT version FROM fleetdesk_schema").fetchone()[0])

    @staticmethod
    def _tables(conn: PgConnection) -> int:
        return int(
            conn.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
            ).fetchone()[0]
        )
