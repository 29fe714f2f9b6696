"""Migration 8 on each store: a database seeded before it gets its registry as it stands as version 0, models
and type records, so reads as of any earlier time and diffs from version 0 work on old databases too."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fleetdesk.fleets import load_fleet
from fleetdesk.server.store import SCHEMA_VERSION, Store, model_rows, registry_log

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
FEED_TYPE = "ig_feed_late-stage_mtml"
RECORD = {
    "owner_team": "ig-feed-ranking",
    "description": "Instagram Feed late-stage multi-task ranking.",
    "default_tier": "TIER3",
    "runbook_url": "https://runbooks.example/ig-feed-ranking",
}


LAST_SUMS = ("last_weight", "last_label_sum", "last_prediction_sum", "last_cross_entropy_sum")


def as_before_version_8(store: Store) -> None:
    """The database as fleetdesk left it at schema version 7, with one type record in its fleet config
    (the tables of 8 and of every later migration dropped: migrating again creates them)."""
    with store.write() as conn:
        # 10's counting triggers (15's on PostgreSQL), and the indexes it replaced.
        for trigger in ("insert", "delete", "update"):
            conn.execute(
                f"DROP TRIGGER model_counts_{trigger} ON models"
                if conn.dialect.postgres
                else f"DROP TRIGGER model_counts_{trigger}"
            )
        if conn.dialect.postgres:
            conn.execute("DROP FUNCTION model_counts_follow()")
        conn.execute("CREATE INDEX models_health_tier ON models (health, tier)")
        conn.execute("CREATE INDEX models_attention ON models (attention)")
        conn.execute("DELETE FROM meta WHERE key = 'ingest_log_forgotten'")  # 11's
        for column in LAST_SUMS:  # 12's
            conn.execute(f"ALTER TABLE models DROP COLUMN {column}")
        for table in (
            "ingest_log",
            "model_counts",
            "task_totals",
            "task_buckets",
            "type_versions",
            "model_versions",
            "registry_versions",
        ):
            conn.execute(f"DROP TABLE {table}")
        config = json.loads(
            conn.execute("SELECT value FROM meta WHERE key = 'fleet'").fetchone()[0]
        )
        config["types"] = {FEED_TYPE: RECORD}
        conn.execute("UPDATE meta SET value = ? WHERE key = 'fleet'", (json.dumps(config),))
        if conn.dialect.postgres:
            conn.execute("DROP FUNCTION registry_history_append_only()")
            conn.execute("UPDATE fleetdesk_schema SET version = 7")
    if not store.connection().dialect.postgres:
        store.connection().execute("PRAGMA user_version = 7")


def test_migration_8_records_the_registry_as_it_stands_as_version_0(
    new_database: Callable[[], Path | str],
) -> None:
    fleet = load_fleet("small", end_at=NOW)
    where = new_database()
    store = Store(where)
    store.migrate()
    store.seed(fleet)
    as_before_version_8(store)
    store.close()

    store = Store(where)
    assert store.migrate() == 7 and store.schema_version() == SCHEMA_VERSION == 15
    with store.read() as conn:
        seeded = registry_log.latest_version(conn)
        assert seeded is not None and seeded.version == 0 and seeded.at == fleet.timeline.end
        assert registry_log.registry_at(conn, 0) == fleet.registry.models
        assert list(registry_log.types_at(conn, 0)) == [FEED_TYPE]
        earlier = registry_log.version_at(conn, datetime(2020, 1, 1, tzinfo=UTC))
        assert earlier is not None and earlier.version == 0  # before any change: as seeded
        # 10 counted the models already there for the fleet summary.
        assert sum(row[3] for row in model_rows.counts(conn)) == len(fleet.registry.models)
        # 12 put each model's newest bucket's sums on its row.
        kept = conn.execute(
            f"SELECT id, {', '.join(LAST_SUMS)} FROM models WHERE last_weight IS NOT NULL ORDER BY id"
        ).fetchall()
        newest = conn.execute(
            "SELECT m.id, b.weight, b.label_sum, b.prediction_sum, b.cross_entropy_sum FROM models m"
            " JOIN buckets b ON b.model_key = m.key AND b.start = (SELECT max(start) FROM buckets"
            " WHERE model_key = m.key) ORDER BY m.id"
        ).fetchall()
        assert [tuple(row) for row in kept] == [tuple(row) for row in newest] and len(newest) > 20
    store.close()


def test_seeding_records_version_0(new_database: Callable[[], Path | str]) -> None:
    fleet = load_fleet("small", end_at=NOW)
    store = Store(new_database())
    store.migrate()
    store.seed(fleet)
    with store.read() as conn:
        assert registry_log.registry_at(conn, 0) == fleet.registry.models
        history = registry_log.model_history(conn, "ig_feed_late-stage_mtml.v41")
        assert [(v.version, v.actor, kind.value) for v, kind, _ in history] == [
            (0, "fleetdesk", "create")
        ]
    store.close()


@pytest.mark.parametrize(
    "rewrite",
    [
        "UPDATE model_versions SET record = NULL",
        "DELETE FROM model_versions",
        "UPDATE registry_versions SET actor = 'someone else'",
        "DELETE FROM registry_versions",
    ],
)
def test_the_database_refuses_to_rewrite_the_registry_history(
    new_database: Callable[[], Path | str], rewrite: str
) -> None:
    store = Store(new_database())
    store.migrate()
    store.seed(load_fleet("small", end_at=NOW))
    with pytest.raises(Exception, match="append-only"), store.write() as conn:
        conn.execute(rewrite)
    with store.read() as conn:
        assert len(registry_log.registry_at(conn, 0)) == 21
    store.close()
