"""The bucket tables: each model's buckets (``buckets``), a multi-task model's per task (``task_buckets``,
with running ``task_totals``) and the per-day health counts (``health_days``) that SLO windows read."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fleetdesk.server.store.contract import Connection, Row
from fleetdesk.server.store.seeding import add_task_totals, count_days

SUM_COLUMNS = ("weight", "label_sum", "prediction_sum", "cross_entropy_sum")
_SUMS = ", ".join(SUM_COLUMNS)


def insert(conn: Connection, rows: list[tuple]) -> None:
    """New model buckets (model_key, start, sums…, health), counted into their days' health and logged for
    the SLO pass (``ingest_log``)."""
    conn.executemany("INSERT INTO buckets VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    conn.executemany(
        "INSERT INTO ingest_log (model_key, start, health) VALUES (?, ?, ?)",
        [(row[0], row[1], row[-1]) for row in rows],
    )
    count_days(conn, rows)


def log_position(conn: Connection) -> tuple[int, int]:
    """(the newest logged bucket's sequence number, how far the log has been forgotten): both 0 at first."""
    newest = conn.execute("SELECT max(seq) FROM ingest_log").fetchone()[0]
    forgotten = int(
        conn.execute("SELECT value FROM meta WHERE key = 'ingest_log_forgotten'").fetchone()[0]
    )
    return max(int(newest or 0), forgotten), forgotten


def logged_since(conn: Connection, seq: int) -> list[Row]:
    """(model_key, start, health) of each bucket logged after ``seq``."""
    return conn.execute(
        "SELECT model_key, start, health FROM ingest_log WHERE seq > ? ORDER BY seq", (seq,)
    ).fetchall()


def forget_logged(conn: Connection, upto: int) -> None:
    """Drop the log up to ``upto`` (counted in by the SLO pass), noting how far (never less far than before:
    a former leader's late pass must not make forgotten buckets look still logged)."""
    conn.execute("DELETE FROM ingest_log WHERE seq <= ?", (upto,))
    conn.execute(
        "UPDATE meta SET value = ? WHERE key = 'ingest_log_forgotten' AND CAST(value AS BIGINT) < ?",
        (str(upto), upto),
    )


def insert_tasks(conn: Connection, rows: Iterable[Sequence]) -> None:
    """New task buckets (model_key, task, start, sums…, health), added to the tasks' running totals (each
    at most its model's, which ingest keeps below MAX_TOTAL: sums are never negative)."""
    rows = list(rows)
    conn.executemany("INSERT INTO task_buckets VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    add_task_totals(conn, rows)


def sums_at(conn: Connection, model_key: int, start: int) -> tuple[float, ...] | None:
    """The sums stored for the model's bucket at ``start``, None when there is none."""
    row = conn.execute(
        f"SELECT {_SUMS} FROM buckets WHERE model_key = ? AND start = ?", (model_key, start)
    ).fetchone()
    return None if row is None else tuple(row)


def task_sums_at(
    conn: Connection, model_key: int, task: str, start: int
) -> tuple[float, ...] | None:
    """The sums stored for one task's bucket at ``start``, None when there is none."""
    row = conn.execute(
        f"SELECT {_SUMS} FROM task_buckets WHERE model_key = ? AND task = ? AND start = ?",
        (model_key, task, start),
    ).fetchone()
    return None if row is None else tuple(row)


def tasks_at(conn: Connection, model_key: int, start: int) -> list[Row]:
    """The model's task buckets at ``start``: (task, sums…, health) each."""
    return conn.execute(
        f"SELECT task, {_SUMS}, health FROM task_buckets WHERE model_key = ? AND start = ?",
        (model_key, start),
    ).fetchall()


def series(conn: Connection, model_id: str, task: str | None, start: int, end: int) -> list[Row]:
    """(start, sums…) of the model's buckets (one task's, when given) with start in [start, end), oldest
    first. A model's whole series is its ``buckets`` rows (the sum over its tasks, for a multi-task model)."""
    table, task_match, task_value = (
        ("buckets", "", ()) if task is None else ("task_buckets", " AND task = ?", (task,))
    )
    return conn.execute(
        f"SELECT start, {_SUMS} FROM {table}"
        f" WHERE model_key = (SELECT key FROM models WHERE id = ?){task_match}"
        " AND start >= ? AND start < ? ORDER BY start",
        (model_id, *task_value, start, end),
    ).fetchall()


def task_totals(conn: Connection) -> list[Row]:
    """Each task's running totals with its model's id: (id, task, total_weight, total_label_sum,
    total_prediction_sum, total_cross_entropy_sum), by model id then task."""
    return conn.execute(
        "SELECT models.id, task, task_totals.total_weight, task_totals.total_label_sum,"
        " task_totals.total_prediction_sum, task_totals.total_cross_entropy_sum"
        " FROM task_totals JOIN models ON models.key = task_totals.model_key ORDER BY models.id, task"
    ).fetchall()


def last_start_with(conn: Connection, model_key: int, health: int) -> int | None:
    """The start of the model's newest bucket of this health code, None when it has none."""
    row = conn.execute(
        "SELECT start FROM buckets WHERE model_key = ? AND health = ? ORDER BY start DESC LIMIT 1",
        (model_key, health),
    ).fetchone()
    return None if row is None else int(row["start"])


def first_start(conn: Connection, model_key: int) -> int | None:
    """The start of the model's oldest bucket, None when it has none."""
    first = conn.execute(
        "SELECT min(start) FROM buckets WHERE model_key = ?", (model_key,)
    ).fetchone()[0]
    return None if first is None else int(first)


def _per_chunk(
    conn: Connection, sql: str, params: Sequence[int], keys: Sequence[int] | None
) -> list[Row]:
    """``sql`` (``{scope}`` where the model condition goes) run for these model keys, one statement per chunk
    of keys (see Dialect.one_of); for every current model when None, a condition that still names models
    so SQLite seeks per model instead of scanning. Each query here groups by model, so a chunk's rows are
    whole."""
    if keys is None:
        return conn.execute(
            sql.format(scope=" AND model_key IN (SELECT key FROM models)"), params
        ).fetchall()
    return [
        row
        for condition, values in conn.dialect.one_of("model_key", keys)
        for row in conn.execute(
            sql.format(scope=f" AND {condition}"), [*params, *values]
        ).fetchall()
    ]


def day_counts(
    conn: Connection, first_day: int, last_day: int, keys: Sequence[int] | None
) -> list[Row]:
    """(model_key, good, bad, no_data) summed over the days in [first_day, last_day], per model."""
    return _per_chunk(
        conn,
        "SELECT model_key, sum(good), sum(bad), sum(no_data) FROM health_days"
        " WHERE day >= ? AND day <= ?{scope} GROUP BY model_key",
        [first_day, last_day],
        keys,
    )


def health_counts(conn: Connection, after: int, upto: int, keys: Sequence[int] | None) -> list[Row]:
    """(model_key, health, how many) of the buckets with start in (after, upto], per model and health."""
    return _per_chunk(
        conn,
        "SELECT model_key, health, count(*) FROM buckets WHERE start > ? AND start <= ?{scope}"
        " GROUP BY model_key, health",
        [after, upto],
        keys,
    )


def health_at(conn: Connection, starts: Sequence[int], keys: Sequence[int] | None) -> list[Row]:
    """(model_key, start, health) of the buckets starting at any of ``starts``."""
    marks = ",".join("?" * len(starts))
    return _per_chunk(
        conn,
        f"SELECT model_key, start, health FROM buckets WHERE start IN ({marks}){{scope}}",
        starts,
        keys,
    )
