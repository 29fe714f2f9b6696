"""The SQLite store: migrations, seeding, reuse, append-only audit log, durability settings."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetdesk.domain.stability import HealthBands, StabilitySums, binary_entropy
from fleetdesk.fleets import load_fleet
from fleetdesk.server.backend import Backend
from fleetdesk.server.clock import Clock
from fleetdesk.server.store import (
    HEALTH_BY_CODE,
    MIGRATIONS,
    SCHEMA_VERSION,
    AlreadySeeded,
    Store,
    StoreError,
    bucket_health,
)
from fleetdesk.server.store.model_rows import ORDER
from fleetdesk.server.store.values import ColumnBands, bucket_healths
from fleetdesk.wire import ModelSort

MIGRATIONS_BEFORE = list(MIGRATIONS)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_migrate_creates_schema_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite")
    assert store.migrate() == 0
    assert store.schema_version() == SCHEMA_VERSION
    assert store.migrate() == SCHEMA_VERSION  # second run: nothing to do
    tables = {
        row[0]
        for row in store.connection().execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    assert {
        "models",
        "buckets",
        "incidents",
        "incident_events",
        "notes",
        "audit_log",
        "idempotency",
        "tokens",
        "events",
        "pages",
        "meta",
    } <= tables
    store.close()


def test_worst_first_pages_walk_an_index_instead_of_sorting_the_fleet(tmp_path: Path) -> None:
    """The console loads a 10,000-model fleet in pages; a page must not sort the whole fleet again."""
    store = Store(tmp_path / "db.sqlite")
    store.migrate()
    plan = (
        store.connection()
        .execute(
            f"EXPLAIN QUERY PLAN SELECT id FROM models ORDER BY {ORDER[ModelSort.WORST]} LIMIT 500 OFFSET 9500"
        )
        .fetchall()
    )
    steps = " | ".join(row[-1] for row in plan)
    assert "models_worst" in steps and "TEMP B-TREE" not in steps, steps
    store.close()


def test_refuses_newer_schema_and_foreign_databases(tmp_path: Path) -> None:
    newer = tmp_path / "newer.sqlite"
    with sqlite3.connect(newer) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer"):
        Store(newer).migrate()
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE something (x)")
    with pytest.raises(StoreError, match="not a fleetdesk database"):
        Store(foreign).migrate()


def test_durability_pragmas(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite")
    store.migrate()
    conn = store.connection()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] > 0
    store.close()


def test_seed_stores_every_bucket_with_the_domain_health(tmp_path: Path) -> None:
    fleet = load_fleet("small", end_at=NOW)
    store = Store(tmp_path / "db.sqlite")
    store.migrate()
    count = store.seed(fleet)
    conn = store.connection()
    assert conn.execute("SELECT count(*) FROM buckets").fetchone()[0] == count
    assert conn.execute("SELECT count(*) FROM models").fetchone()[0] == len(fleet.registry)
    stored = {
        (row[0], row[1]): row[2]
        for row in conn.execute(
            "SELECT models.id, start, buckets.health FROM buckets JOIN models ON models.key = buckets.model_key"
        )
    }
    expected = 0
    for model_id, bucket in fleet.all_buckets():
        expected += 1
        domain_health = fleet.bands_for(model_id).health(bucket)
        assert HEALTH_BY_CODE[stored[(model_id, int(bucket.start.timestamp()))]] is domain_health
    assert expected == count
    with pytest.raises(AlreadySeeded, match="already seeded"):
        store.seed(fleet)
    store.close()


@pytest.mark.parametrize(
    ("weight", "labels", "predictions", "cross_entropy"),
    [
        (0.0, 0.0, 0.0, 0.0),
        (10.0, 0.0, 1.0, 3.0),
        (10.0, 10.0, 9.0, 3.0),
        (100.0, 10.0, 10.5, 30.0),
        (100.0, 10.0, 13.0, 30.0),
        (100.0, 10.0, 10.0, 90.0),
    ],
)
def test_fast_bucket_health_matches_the_domain(
    weight: float, labels: float, predictions: float, cross_entropy: float
) -> None:
    bands = load_fleet("small").file.default_bands
    sums = StabilitySums(
        weight=weight, label_sum=labels, prediction_sum=predictions, cross_entropy_sum=cross_entropy
    )
    assert HEALTH_BY_CODE[
        bucket_health(bands, weight, labels, predictions, cross_entropy)
    ] is bands.health(sums)


_SUMS = st.tuples(
    st.one_of(st.just(0.0), st.floats(min_value=-1.0, max_value=1e12), st.just(math.inf)),
    st.floats(min_value=-0.1, max_value=1.1),  # the label rate, outside (0, 1) too
    st.floats(min_value=0.0, max_value=3.0),  # calibration
    st.floats(min_value=0.0, max_value=2.0),  # NE, as a factor of the band's edge
    st.sampled_from([0.0, 1e-16, -1e-16, 4e-16, -4e-16, 1e-9, -1e-9]),  # how close to the edge
)


@settings(max_examples=300, deadline=None)
@given(
    sums=st.lists(_SUMS, min_size=1, max_size=40),
    bands=st.tuples(
        st.floats(min_value=0.5, max_value=0.99),
        st.floats(min_value=1.01, max_value=1.5),
        st.floats(min_value=0.5, max_value=1.2),
        st.sampled_from([0.0, 100.0]),
    ),
)
def test_bucket_health_over_columns_is_bucket_healths_bucket_for_bucket(sums, bands) -> None:  # noqa: ANN001
    """A seed scores its buckets in numpy, whose log can differ from math.log in the last bit: every bucket
    must still get bucket_health's verdict, NE right at the band's edge and rates at 0 or 1 included."""
    low, high, ne_max, least = bands
    band = HealthBands(calibration_low=low, calibration_high=high, ne_max=ne_max, min_events=least)
    columns: list[list[float]] = [[], [], [], []]
    for weight, rate, calibration, ne, closeness in sums:
        labels = weight * rate
        entropy = binary_entropy(rate) if 0.0 < rate < 1.0 else 1.0
        at_edge = ne_max * entropy * weight * (1.0 + closeness)
        for column, value in zip(
            columns,
            (weight, labels, labels * calibration, at_edge if ne == 1.0 else at_edge * ne),
            strict=True,
        ):
            column.append(value)
    arrays = [np.array(column) for column in columns]
    per_bucket = ColumnBands(*(np.full(len(sums), value) for value in (low, high, ne_max, least)))
    assert bucket_healths(per_bucket, *arrays).tolist() == [
        bucket_health(band, *bucket) for bucket in zip(*columns, strict=True)
    ]


def test_existing_database_is_reused_not_reseeded(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    backend = Backend.open(db, "small", Clock(NOW))
    with backend.write() as conn:
        conn.execute(
            "UPDATE models SET launch_halted = 1 WHERE id = 'ig_feed_late-stage_mtml.x1-watch-time'"
        )
    buckets = backend.store.connection().execute("SELECT count(*) FROM buckets").fetchone()[0]
    backend.close()
    reopened = Backend.open(db, "large", Clock(NOW))  # a different fleet name must not reseed
    conn = reopened.store.connection()
    assert reopened.config.name == "small"
    assert conn.execute("SELECT count(*) FROM buckets").fetchone()[0] == buckets
    assert (
        conn.execute(
            "SELECT launch_halted FROM models WHERE id = 'ig_feed_late-stage_mtml.x1-watch-time'"
        ).fetchone()[0]
        == 1
    )
    reopened.close()


def test_audit_log_is_append_only(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite")
    store.migrate()
    with store.write() as conn:
        conn.execute(
            "INSERT INTO audit_log (at, actor, role, action, model_id, reason, idempotency_key, detail)"
            " VALUES ('2026-01-01T00:00:00.000000+00:00', 'a', 'admin', 'note', 'm', 'r', 'k', '{}')"
        )
    for statement in ("UPDATE audit_log SET actor = 'mallory'", "DELETE FROM audit_log"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            with store.write() as conn:
                conn.execute(statement)
    assert store.connection().execute("SELECT actor FROM audit_log").fetchall()[0][0] == "a"
    store.close()


def test_seeding_opens_incidents_for_models_already_paging(tmp_path: Path) -> None:
    backend = Backend.open(tmp_path / "db.sqlite", "small", Clock(NOW))
    conn = backend.store.connection()
    paging = {row[0] for row in conn.execute("SELECT id FROM models WHERE attention = 'page'")}
    in_incidents = {
        row[0]
        for row in conn.execute(
            "SELECT id FROM models WHERE attention = 'page' AND open_incident_id IS NOT NULL"
        )
    }
    assert paging and paging == in_incidents
    backend.close()


def test_a_failing_migration_leaves_the_previous_version_intact(
    tmp_path: Path, monkeypatch
) -> None:  # noqa: ANN001
    from fleetdesk.server.store import sqlite as store_module

    db = tmp_path / "db.sqlite"
    Store(db).migrate()
    broken = (
        SCHEMA_VERSION + 1,
        "test: a migration that fails half-way",
        "CREATE TABLE half_done (x); INSERT INTO no_such_table VALUES (1);",
    )
    monkeypatch.setattr(store_module, "MIGRATIONS", [*store_module.MIGRATIONS, broken])
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    store = Store(db)
    with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
        store.migrate()
    conn = store.connection()
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert (
        conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").fetchone()[0]
        == 0
    )
    store.close()
    working = (SCHEMA_VERSION + 1, "test: a migration that works", "CREATE TABLE added_later (x);")
    monkeypatch.setattr(store_module, "MIGRATIONS", [*MIGRATIONS_BEFORE, working])
    upgraded = Store(db)
    assert upgraded.migrate() == SCHEMA_VERSION
    assert upgraded.schema_version() == SCHEMA_VERSION + 1
    upgraded.close()


def test_migration_2_backfills_day_counts_from_existing_buckets(
    tmp_path: Path, monkeypatch
) -> None:  # noqa: ANN001
    from fleetdesk.server.store import sqlite as store_module

    db = tmp_path / "db.sqlite"
    monkeypatch.setattr(store_module, "MIGRATIONS", MIGRATIONS_BEFORE[:1])
    Store(db).migrate()
    with sqlite3.connect(db) as conn:  # a version-1 database with some history
        day = 20_000 * 86_400
        conn.executemany(
            "INSERT INTO buckets VALUES (?, ?, 1, 0.1, 0.1, 0.3, ?)",
            [(1, day, 0), (1, day + 3600, 1), (1, day + 86_400, 2), (2, day, 0)],
        )
    monkeypatch.setattr(store_module, "MIGRATIONS", MIGRATIONS_BEFORE)
    store = Store(db)
    assert store.migrate() == 1
    rows = sorted(tuple(row) for row in store.connection().execute("SELECT * FROM health_days"))
    assert rows == [(1, 20_000, 1, 1, 0), (1, 20_001, 0, 0, 1), (2, 20_000, 1, 0, 0)]
    store.close()


def test_the_summary_counts_follow_every_kind_of_change_to_the_models(
    new_database: Callable[[], Path | str],
) -> None:
    """model_counts (the fleet summary) is kept by triggers: a row at a time on SQLite, a statement at a time
    on PostgreSQL. Whatever a statement does (many models at once, one, none of the counted columns, some
    models twice in one transaction, a delete), the counts stay those of the models."""
    store = Store(new_database())
    store.migrate()
    store.seed(load_fleet("small", end_at=NOW))

    def counts() -> tuple[list[tuple], list[tuple]]:
        conn = store.connection()
        kept = conn.execute(
            "SELECT health, tier, attention, n FROM model_counts WHERE n > 0 ORDER BY 1, 2, 3"
        ).fetchall()
        actual = conn.execute(
            "SELECT health, tier, attention, count(*) FROM models GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
        ).fetchall()
        return [tuple(row) for row in kept], [tuple(row) for row in actual]

    seeded, actual = counts()
    assert seeded == actual and sum(row[3] for row in seeded) == 21
    with store.write() as conn:
        conn.execute("UPDATE models SET health = 'stable', attention = 'ok' WHERE key <= 10")
        conn.execute("UPDATE models SET health = 'unstable' WHERE key BETWEEN 6 AND 14")
        conn.execute("UPDATE models SET attention = 'page', tier = 'TIER0' WHERE key = 5")
        conn.execute("UPDATE models SET total_weight = total_weight + 1")  # no counted column
        conn.execute("UPDATE models SET health = 'no_data' WHERE key < 0")  # no model
    kept, actual = counts()
    assert kept == actual and kept != seeded and sum(row[3] for row in kept) == 21
    with store.write() as conn:
        conn.execute("DELETE FROM models WHERE key > 18")
    kept, actual = counts()
    assert kept == actual and sum(row[3] for row in kept) == 18
    store.close()
