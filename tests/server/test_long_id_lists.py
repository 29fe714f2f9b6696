"""Every query that binds a list the fleet's size bounds takes a list of any length: SQLite refuses a statement
with more bound values than its build allows (32,766 by default, 250,000 in Debian's) and PostgreSQL one with
more than 65,535, and a shared-cause group, an ingest or an SLO pass at 50,000 models binds that many ids. Each
list here is the small fleet's ids (or keys) and 260,000 that match nothing; every answer must be the one the
fleet's own ids alone give."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from fleetdesk.server import slo_board
from fleetdesk.server.backend import Backend
from fleetdesk.server.clock import Clock
from fleetdesk.server.store import buckets, incident_rows, model_rows

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
ABSENT = 260_000


def _rows(rows: list) -> list[tuple]:  # type: ignore[type-arg]
    return sorted(tuple(row) for row in rows)


def test_lists_longer_than_either_store_binds(new_database: Callable[[], Path | str]) -> None:
    backend = Backend.open(new_database(), "small", Clock(NOW))
    try:
        ids = sorted(backend.registry.models)
        many = ids + [f"absent-{n}" for n in range(ABSENT)]
        keys = sorted(backend.model_keys.values())
        many_keys = keys + list(range(10**7, 10**7 + ABSENT))
        last = slo_board.windows_at(backend.config, NOW).last_slot
        with backend.store.read() as conn:
            assert set(model_rows.states(conn, many)) == set(ids)
            assert set(model_rows.situations(conn, many)) == set(ids)
            incidents = model_rows.open_incident_ids(conn, many)
            assert incidents and incidents == model_rows.open_incident_ids(conn, ids)
            assert (
                model_rows.count_in_trouble(conn, many)
                == model_rows.count_in_trouble(conn, ids)
                > 0
            )
            incident_ids = sorted(set(incidents.values()))
            assert _rows(
                incident_rows.shared_origins(
                    conn, incident_ids + list(range(10**7, 10**7 + ABSENT))
                )
            ) == (_rows(incident_rows.shared_origins(conn, incident_ids)))
            for read in (
                lambda chosen: buckets.health_at(conn, [last, last - 3600], chosen),
                lambda chosen: buckets.health_counts(conn, last - 86_400, last, chosen),
                lambda chosen: buckets.day_counts(conn, last // 86_400 - 7, last // 86_400, chosen),
            ):
                every = _rows(read(None))
                assert every and _rows(read(many_keys)) == every == _rows(read(keys))
        model_id, incident_id = next(iter(incidents.items()))
        with backend.write() as conn:
            model_rows.release_incident(conn, [*many, model_id], incident_id)
        with backend.store.read() as conn:
            assert model_id not in model_rows.open_incident_ids(conn, many)
    finally:
        backend.close()
