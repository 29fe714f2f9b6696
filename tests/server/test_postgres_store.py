"""The PostgreSQL store against a real cluster: the same schema, seeding and guarantees as the SQLite store."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from fleetdesk.fleets import load_fleet
from fleetdesk.server.store import (
    SCHEMA_VERSION,
    AlreadySeeded,
    Store,
    StoreError,
    postgres_schema,
)
from fleetdesk.server.store.postgres import PostgresStore, redacted
from ports import free_port
from postgres_cluster import Cluster

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def url(postgres: Cluster) -> str:
    return postgres.fresh_database()


def test_a_postgresql_url_opens_the_postgresql_store_and_a_path_sqlite(
    url: str, tmp_path: Path
) -> None:
    assert type(Store(url)).__name__ == "PostgresStore"
    assert type(Store(tmp_path / "db.sqlite")).__name__ == "SqliteStore"
    assert type(Store(str(tmp_path / "postgresql.sqlite"))).__name__ == "SqliteStore"


def test_migrations_reach_the_same_version_as_sqlite_once(url: str) -> None:
    assert postgres_schema.MIGRATIONS[-1][0] == SCHEMA_VERSION
    store = Store(url)
    assert store.migrate() == 0
    assert store.schema_version() == SCHEMA_VERSION
    assert store.migrate() == SCHEMA_VERSION  # second run: nothing to do
    store.close()


def test_refuses_newer_schema_and_foreign_databases(postgres: Cluster) -> None:
    newer = postgres.fresh_database()
    store = Store(newer)
    store.migrate()
    store.connection().execute("UPDATE fleetdesk_schema SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="newer"):
        store.migrate()
    store.close()
    foreign = postgres.fresh_database()
    with psycopg.connect(foreign, autocommit=True) as conn:
        conn.execute("CREATE TABLE something (x integer)")
    with pytest.raises(StoreError, match="not a fleetdesk database"):
        Store(foreign).migrate()


def test_an_unreachable_database_is_a_store_error_without_the_password(postgres: Cluster) -> None:
    url = f"postgresql://someone:s3cret-pw@127.0.0.1:{postgres.port}/no_such_database"
    with pytest.raises(StoreError) as raised:
        Store(url).migrate()
    assert "s3cret-pw" not in str(raised.value)
    assert "no_such_database" in str(raised.value)
    assert redacted(url) == f"postgresql://someone@127.0.0.1:{postgres.port}/no_such_database"


def test_a_refused_connection_is_said_on_one_line() -> None:
    """libpq puts its hint on an indented line of its own: the message folds it in, not as \\x0a\\x09."""
    with pytest.raises(StoreError) as raised:  # nothing listens on a free port
        Store(f"postgresql://someone:s3cret-pw@127.0.0.1:{free_port()}/fleet").migrate()
    message = str(raised.value)
    assert "Connection refused Is the server running" in message
    assert "\\x0" not in message and "\n" not in message and "s3cret-pw" not in message


@pytest.mark.parametrize(
    ("url", "shown", "said"),
    [
        (
            "postgresql://someone:s3cret-pw@db.internal:99999/fleet",
            "postgresql://someone@db.internal:99999/fleet",
            "Port out of range 0-65535",
        ),
        (
            "postgresql://someone:s3cret-pw@[::1/fleet",
            "postgresql://someone@[::1/fleet",
            "Invalid IPv6 URL",
        ),
        (
            "postgres://someone:s3c@ret-pw@[fe80::1/fleet",
            "postgres://someone@[fe80::1/fleet",
            "Invalid IPv6 URL",
        ),
    ],
)
def test_a_url_that_does_not_parse_is_a_store_error_without_the_password(
    url: str, shown: str, said: str
) -> None:
    with pytest.raises(StoreError) as raised:
        Store(url)
    assert str(raised.value) == f"{shown}: not a valid postgresql:// URL ({said})"


def test_an_ipv6_host_keeps_its_brackets_when_the_password_is_taken_out() -> None:
    assert redacted("postgresql://u:pw@[::1]:5432/db?sslmode=require") == (
        "postgresql://u@[::1]:5432/db?sslmode=require"
    )
    assert redacted("postgresql://u@[::1]:5432/db") == "postgresql://u@[::1]:5432/db"


def test_connections_give_up_on_a_vanished_host_within_seconds_unless_the_url_says_otherwise(
    url: str,
) -> None:
    """GONE_HOST's TCP options on every connection (tests/reliability/test_database_vanished.py shows what
    they do); a team's own value in the URL wins."""
    for given, idle in ((url, "10"), (f"{url}?keepalives_idle=30", "30")):
        store = Store(given)
        try:
            parameters = store.connection().raw.info.get_parameters()
        finally:
            store.close()
        assert parameters["keepalives_idle"] == idle
        assert parameters["tcp_user_timeout"] == "10000"


def test_seeding_stores_the_same_rows_as_sqlite(url: str, tmp_path: Path) -> None:
    fleet = load_fleet("small", end_at=NOW)
    stores = [Store(tmp_path / "db.sqlite"), Store(url)]
    tables = {}
    for store in stores:
        store.migrate()
        count = store.seed(fleet)
        conn = store.connection()
        tables[type(store).__name__] = {
            query: [tuple(row) for row in conn.execute(query).fetchall()]
            for query in (
                "SELECT * FROM buckets ORDER BY model_key, start",
                "SELECT * FROM health_days ORDER BY model_key, day",
                "SELECT id, key, record, search_text, total_weight, last_bucket_start FROM models"
                " ORDER BY id",
                "SELECT key, value FROM meta ORDER BY key",
            )
        }
        assert conn.execute("SELECT count(*) FROM buckets").fetchone()[0] == count
        with pytest.raises(AlreadySeeded, match="already seeded"):
            store.seed(fleet)
        store.close()
    assert tables["SqliteStore"] == tables["PostgresStore"]


def test_seeding_builds_again_the_indexes_it_drops_while_copying(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history's indexes and primary keys are dropped while the seed copies rows in and built after, in
    its transaction: a seed that fails half way leaves them as they were, and one that succeeds has them all."""
    from fleetdesk.server.store.seeding import BucketRows

    fleet = load_fleet("small", end_at=NOW)
    store = Store(url)
    store.migrate()

    def indexes() -> list[tuple[str, str]]:
        rows = store.connection().execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()"
            " ORDER BY indexname"
        )
        return [tuple(row) for row in rows]

    before = indexes()
    assert {"buckets_by_start", "buckets_pkey", "health_days_pkey"} <= {name for name, _ in before}
    batches = BucketRows.batches

    def breaks_half_way(self: BucketRows):  # noqa: ANN202
        for number, batch in enumerate(batches(self)):
            if number == 1:
                raise RuntimeError("the history broke half way")
            yield batch

    monkeypatch.setattr("fleetdesk.server.store.seeding.BATCH_MODELS", 4)
    with monkeypatch.context() as patch:
        patch.setattr(BucketRows, "batches", breaks_half_way)
        with pytest.raises(RuntimeError, match="half way"):
            store.seed(fleet)
    assert indexes() == before
    assert store.connection().execute("SELECT count(*) FROM buckets").fetchone()[0] == 0
    store.seed(fleet)
    assert indexes() == before
    store.close()


_RECORD = (
    "INSERT INTO audit_log (id, at, actor, role, action, model_id, reason, idempotency_key, detail)"
    " VALUES (1, '2026-01-01T00:00:00.000000+00:00', 'a', 'admin', 'note', 'm', 'r', 'k', '{}')"
)


@pytest.mark.parametrize(
    "rewrite",
    [
        "UPDATE audit_log SET actor = 'mallory'",
        "DELETE FROM audit_log",
        "TRUNCATE audit_log",
        _RECORD + " ON CONFLICT (id) DO UPDATE SET actor = 'mallory'",
        _RECORD,  # the same id again
    ],
)
def test_the_database_refuses_to_rewrite_the_audit_log(url: str, rewrite: str) -> None:
    store = Store(url)
    store.migrate()
    with store.write() as conn:
        conn.execute(_RECORD)
    with pytest.raises(psycopg.Error, match="append-only|duplicate key"):
        with store.write() as conn:
            conn.execute(rewrite)
    # As another client of the database (not through fleetdesk's code) too.
    with psycopg.connect(url, autocommit=True) as raw:
        with pytest.raises(psycopg.Error, match="append-only|duplicate key"):
            raw.execute(rewrite.replace("%", "%%"))
    assert store.connection().execute("SELECT actor FROM audit_log").fetchall() == [("a",)]
    store.close()


def test_writers_of_two_replicas_never_lose_an_update(url: str) -> None:
    """Read-check-write inside write() holds under concurrency: each replica's store (own connections)
    increments one value it read, 4 threads each; no increment is lost."""
    first = Store(url)
    first.migrate()
    first.connection().execute("INSERT INTO meta (key, value) VALUES ('counter', '0')")
    replicas = [first, Store(url)]
    rounds = 25

    def bump(store: Store) -> None:
        for _ in range(rounds):
            with store.write() as conn:
                (value,) = conn.execute("SELECT value FROM meta WHERE key = 'counter'").fetchone()
                conn.execute(
                    "UPDATE meta SET value = ? WHERE key = 'counter'", (str(int(value) + 1),)
                )

    threads = [threading.Thread(target=bump, args=(store,)) for store in replicas for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    value = first.connection().execute("SELECT value FROM meta WHERE key = 'counter'").fetchone()
    assert int(value[0]) == len(threads) * rounds
    for store in replicas:
        store.close()


def test_a_failed_write_rolls_back_and_the_connection_stays_usable(url: str) -> None:
    store = Store(url)
    assert isinstance(store, PostgresStore)
    store.migrate()
    with pytest.raises(psycopg.Error):
        with store.write() as conn:
            conn.execute("INSERT INTO meta (key, value) VALUES ('kept', 'no')")
            conn.execute("INSERT INTO no_such_table VALUES (1)")
    with store.write() as conn:
        conn.execute("INSERT INTO meta (key, value) VALUES ('after', 'yes')")
    keys = {row["key"] for row in store.connection().execute("SELECT key FROM meta").fetchall()}
    assert "after" in keys and "kept" not in keys
    store.close()


def test_a_seeded_history_is_all_visible_so_slo_passes_never_read_its_heap(url: str) -> None:
    """The seed copies the history with FREEZE into tables it emptied in its transaction: their pages are
    all-visible at once, which the SLO passes' index-only scans need (and no VACUUM of millions of rows)."""
    store = Store(url)
    store.migrate()
    store.seed(load_fleet("small", end_at=NOW))
    for table in ("buckets", "health_days"):
        pages, visible = (
            store.connection()
            .execute("SELECT relpages, relallvisible FROM pg_class WHERE relname = ?", (table,))
            .fetchone()
        )
        assert pages > 0 and visible == pages, table
    store.close()
