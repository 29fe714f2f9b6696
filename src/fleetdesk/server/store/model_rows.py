"""The ``models`` table's live and derived state: what is serving, health, attention, SLO, running totals.

The registry records in the same rows are ``registry_log``'s. Every listing of models orders by ``ORDER``,
which the schema's indexes follow (sqlite_schema.py), so a page is an index walk, not a sort.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any

from fleetdesk.domain.attention import Attention
from fleetdesk.domain.stability import StabilitySums, signals
from fleetdesk.server.store import listing
from fleetdesk.server.store.buckets import SUM_COLUMNS
from fleetdesk.server.store.contract import Connection, Row
from fleetdesk.server.store.dialect import Dialect
from fleetdesk.server.store.seeding import NEWEST_BUCKET
from fleetdesk.server.store.values import json_records

ORDER = {
    "worst": "attention_rank, tier_rank, budget_remaining IS NULL, budget_remaining, id",
    "id": "id",
    "tier": "tier_rank, id",
    "budget": "budget_remaining IS NULL, budget_remaining, tier_rank, id",
}
"""The ORDER BY of each listing sort (the wire's ``ModelSort`` values)."""


_LAST_SUMS = tuple(f"last_{column}" for column in SUM_COLUMNS)
"""The sums of a model's newest bucket, kept on its row (NULL without buckets)."""


def last_sums(row: Row) -> StabilitySums:
    """A row's newest bucket's sums (empty for a model without buckets)."""
    if row["last_weight"] is None:
        return StabilitySums()
    return StabilitySums.model_construct(**{c: row[f"last_{c}"] for c in SUM_COLUMNS})


def last_signals(row: Row) -> tuple[float, float] | None:
    """The (calibration, NE) of a row's newest bucket; None without data."""
    weight = row["last_weight"]
    if weight is None:
        return None
    return signals(
        weight, row["last_label_sum"], row["last_prediction_sum"], row["last_cross_entropy_sum"]
    )


@functools.cache
def _incident_group(dialect: Dialect) -> str:
    """A shared-cause incident's surface and start as a JSON array column, one primary-key seek for the rows
    with an incident."""
    return (
        f"(SELECT {dialect.json_array('app', 'surface', 'label', 'began_at')} FROM incident_origins"
        "  WHERE incident_id = models.open_incident_id AND shared = 1) AS incident_group"
    )


@functools.cache
def _summary_columns(dialect: Dialect) -> str:
    return (
        "id, serving_model_id, traffic_share, launch_phase, launch_halted, experiment_ended, health,"
        " attention, budget_remaining, max_burn_rate, alerts, open_incident_id, last_bucket_start,"
        # The latest bucket's sums, so the fleet table can show both signals.
        f" {', '.join(_LAST_SUMS)}, {_incident_group(dialect)}"
    )


def _like(text: str) -> str:
    return "%" + text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def page(
    conn: Connection,
    *,
    app: str | None,
    surface: str | None,
    tiers: Sequence[str],
    role: str | None,
    health: str | None,
    query: str | None,
    sort: str,
    offset: int,
    limit: int,
) -> tuple[int, list[Row]]:
    """(models matching every filter given, the page of their summary rows in ``sort``'s order);
    ``query`` matches any part of a model's search text, case-insensitive."""
    where: list[str] = []
    params: list[object] = []
    for column, value in (("app", app), ("surface", surface), ("role", role), ("health", health)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(str(value))
    if tiers:
        where.append(f"tier IN ({','.join('?' * len(tiers))})")
        params.extend(tiers)
    if query:
        where.append("search_text LIKE ? ESCAPE '\\'")
        params.append(_like(query))
    return listing.page(
        conn,
        "models",
        _summary_columns(conn.dialect),
        where,
        params,
        ORDER[sort],
        offset,
        limit,
        total=None if where else fleet_size(conn),
    )


def table_page(conn: Connection, offset: int, limit: int) -> tuple[int, list[Row]]:
    """(models in all, a page of what the fleet table shows of them beside their registry record, worst first):
    id, health, attention, budget_remaining, open_incident_id, the newest bucket's four sums, incident_group.
    Read by position: by name, ten lookups a row were a fifth of a 50,000-model load's time on PostgreSQL."""
    return listing.page(
        conn,
        "models",
        "id, health, attention, budget_remaining, open_incident_id,"
        f" {', '.join(_LAST_SUMS)}, {_incident_group(conn.dialect)}",
        [],
        [],
        ORDER["worst"],
        offset,
        limit,
        total=fleet_size(conn),
    )


def detail(conn: Connection, model_id: str) -> Row | None:
    """The model's summary row with its stored SLO status (JSON, column ``slo``)."""
    row: Row | None = conn.execute(
        f"SELECT {_summary_columns(conn.dialect)}, slo FROM models WHERE id = ?", (model_id,)
    ).fetchone()
    return row


def slo(conn: Connection, model_id: str) -> str:
    """The model's stored SLO status (JSON)."""
    return str(conn.execute("SELECT slo FROM models WHERE id = ?", (model_id,)).fetchone()["slo"])


def states(conn: Connection, model_ids: Sequence[str]) -> dict[str, Row]:
    """By id, these models' id, health, attention, alerts and open_incident_id (unknown ids left out)."""
    return {
        row["id"]: row
        for ids, values in conn.dialect.one_of("id", model_ids)
        for row in conn.execute(
            f"SELECT id, health, attention, alerts, open_incident_id FROM models WHERE {ids}",
            values,
        )
    }


def judgements(conn: Connection, model_ids: Sequence[str]) -> dict[str, Row]:
    """By id, these models' judged state as stored (what ``set_judgement`` writes): id, health, attention,
    alerts, budget_remaining, max_burn_rate and slo."""
    return {
        row["id"]: row
        for ids, values in conn.dialect.one_of("id", model_ids)
        for row in conn.execute(
            "SELECT id, health, attention, alerts, budget_remaining, max_burn_rate, slo FROM models"
            f" WHERE {ids}",
            values,
        )
    }


def situations(conn: Connection, model_ids: Sequence[str]) -> dict[str, Row]:
    """By id, what the playbook looks at of these models: live state, health, attention, incident, alerts,
    budget and their latest bucket's sums (``last_sums``)."""
    return {
        row["id"]: row
        for ids, values in conn.dialect.one_of("id", model_ids)
        for row in conn.execute(
            "SELECT id, serving_model_id, traffic_share, launch_phase, launch_halted, experiment_ended, health,"
            f" attention, open_incident_id, alerts, budget_remaining, {', '.join(_LAST_SUMS)}"
            f" FROM models WHERE {ids}",
            values,
        )
    }


def counts(conn: Connection) -> list[Row]:
    """(health, tier, attention, how many models) for each triple that has ever had models: the triggers'
    ``model_counts``, a few dozen rows whatever the fleet's size."""
    return conn.execute(
        "SELECT health, tier, attention, n FROM model_counts WHERE n > 0"
    ).fetchall()


def fleet_size(conn: Connection) -> int:
    """How many models there are, from the summary's counts: PostgreSQL counts a table by reading all of it,
    and an unfiltered listing of the fleet asks at every page."""
    return sum(row[3] for row in counts(conn))


def worst(conn: Connection, limit: int) -> list[Row]:
    """The summary rows of up to ``limit`` models that need attention, worst first."""
    # On the rank, not on ``attention != 'ok'``: a range of the worst-first index ends where the healthy
    # models begin, where the inequality walked every one of them (9 ms at 10,000 models, for 6 rows).
    return conn.execute(
        f"SELECT {_summary_columns(conn.dialect)} FROM models WHERE attention_rank < ?"
        f" ORDER BY {ORDER['worst']} LIMIT ?",
        (Attention.OK.rank, limit),
    ).fetchall()


def totals(conn: Connection, model_id: str) -> Row:
    """The model's running totals: total_weight, total_label_sum, total_prediction_sum, total_cross_entropy_sum."""
    row: Row = conn.execute(
        "SELECT total_weight, total_label_sum, total_prediction_sum, total_cross_entropy_sum"
        " FROM models WHERE id = ?",
        (model_id,),
    ).fetchone()
    return row


def every_total(conn: Connection) -> list[Row]:
    """Each model's id, type, tier and running totals, by id (the /metrics counters)."""
    return conn.execute(
        "SELECT id, type, tier, total_weight, total_label_sum, total_prediction_sum, total_cross_entropy_sum"
        " FROM models ORDER BY id"
    ).fetchall()


def add_totals(conn: Connection, rows: Iterable[Sequence[Any]]) -> None:
    """Add ingested sums to models' running totals and bring their newest bucket up to date (the buckets are
    stored already): (weight, label_sum, prediction_sum, cross_entropy_sum, model id) each."""
    conn.executemany(
        "UPDATE models SET total_weight = total_weight + ?, total_label_sum = total_label_sum + ?,"
        " total_prediction_sum = total_prediction_sum + ?, total_cross_entropy_sum = total_cross_entropy_sum + ?,"
        f" {NEWEST_BUCKET} WHERE id = ?",
        rows,
    )


_JUDGEMENT = (
    "health",
    "attention",
    "attention_rank",
    "budget_remaining",
    "max_burn_rate",
    "alerts",
    "slo",
    "id",
)


def set_judgement(conn: Connection, rows: Sequence[Sequence[Any]]) -> None:
    """Store models' judged state: (health, attention, attention_rank, budget_remaining, max_burn_rate,
    alerts JSON, slo JSON, model id) each."""
    if conn.dialect.postgres and rows:
        # One statement, the rows bound as one JSON array: on PostgreSQL a statement per model (a round trip,
        # a plan, a row version each) was 22 s of a first start at 50,000 models, where all of them change;
        # binding each column as an array, psycopg's escaping of each element took 6 s of it.
        conn.execute(
            "UPDATE models SET health = j.health, attention = j.attention, attention_rank = j.attention_rank,"
            " budget_remaining = j.budget_remaining, max_burn_rate = j.max_burn_rate, alerts = j.alerts,"
            " slo = j.slo FROM json_to_recordset(?::json) AS j (health text, attention text,"
            " attention_rank integer, budget_remaining double precision, max_burn_rate double precision,"
            " alerts text, slo text, id text) WHERE models.id = j.id",
            (json_records(_JUDGEMENT, rows),),
        )
        return
    conn.executemany(
        "UPDATE models SET health = ?, attention = ?, attention_rank = ?, budget_remaining = ?, max_burn_rate = ?,"
        " alerts = ?, slo = ? WHERE id = ?",
        rows,
    )


def set_live(
    conn: Connection,
    model_id: str,
    serving_model_id: str,
    traffic_share: float,
    launch_phase: str,
    launch_halted: bool,
    experiment_ended: bool,
) -> None:
    """Store the model's live state (what an action changed)."""
    conn.execute(
        "UPDATE models SET serving_model_id = ?, traffic_share = ?, launch_phase = ?, launch_halted = ?,"
        " experiment_ended = ? WHERE id = ?",
        (
            serving_model_id,
            traffic_share,
            launch_phase,
            int(launch_halted),
            int(experiment_ended),
            model_id,
        ),
    )


def open_incident_id(conn: Connection, model_id: str) -> int | None:
    """The model's open or acknowledged incident, None without one (or for an unknown model)."""
    row = conn.execute("SELECT open_incident_id FROM models WHERE id = ?", (model_id,)).fetchone()
    return None if row is None else row["open_incident_id"]


def open_incident_ids(conn: Connection, model_ids: Sequence[str]) -> dict[str, int]:
    """The open incident of each of these models that has one."""
    return {
        row[0]: int(row[1])
        for ids, values in conn.dialect.one_of("id", model_ids)
        for row in conn.execute(
            f"SELECT id, open_incident_id FROM models WHERE {ids} AND open_incident_id IS NOT NULL",
            values,
        )
    }


def set_open_incident(conn: Connection, model_id: str, incident_id: int) -> None:
    """The model is now part of this incident."""
    conn.execute("UPDATE models SET open_incident_id = ? WHERE id = ?", (incident_id, model_id))


def release_incident(conn: Connection, model_ids: Sequence[str], incident_id: int) -> None:
    """These models are no longer in this (resolved) incident; one that moved on to another keeps that."""
    for ids, values in conn.dialect.one_of("id", model_ids):
        conn.execute(
            f"UPDATE models SET open_incident_id = NULL WHERE {ids} AND open_incident_id = ?",
            (*values, incident_id),
        )


def count_in_trouble(conn: Connection, model_ids: Sequence[str]) -> int:
    """How many of these models page, ticket or are unstable now."""
    return sum(
        int(
            conn.execute(
                f"SELECT count(*) FROM models WHERE {ids} AND attention IN ('page', 'ticket', 'unstable')",
                values,
            ).fetchone()[0]
        )
        for ids, values in conn.dialect.one_of("id", model_ids)
    )


def key_of(conn: Connection, model_id: str) -> int | None:
    """The model's row key (what its buckets are filed under), None for an unknown model."""
    row = conn.execute("SELECT key FROM models WHERE id = ?", (model_id,)).fetchone()
    return None if row is None else int(row["key"])
