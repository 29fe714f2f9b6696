"""Metric ingestion: batches of closed buckets, idempotent per model (and task) and bucket.

A bucket already stored with the same sums is a no-op; with different sums the
whole batch is refused (409) and nothing is stored: history is not rewritten
silently. Health is scored once, here, against the model type's bands (a
multi-task model's per task, the model judged by its worst task or its type's
task weights: server/task_buckets.py).
"""

from __future__ import annotations

from datetime import datetime

from fleetdesk.domain.bounds import MAX_TOTAL
from fleetdesk.domain.stability import StabilitySums
from fleetdesk.server import slo_board, task_buckets
from fleetdesk.server.backend import Backend
from fleetdesk.server.events import append_event
from fleetdesk.server.problems import MAX_LISTED, Problem
from fleetdesk.server.store import (
    HEALTH_BY_CODE,
    UNSTABLE,
    Connection,
    bucket_health,
    buckets,
    epoch,
    from_epoch,
    model_rows,
)
from fleetdesk.wire import (
    BucketClosedData,
    BucketConflict,
    EventType,
    FieldError,
    IngestRequest,
    IngestResult,
    ProblemType,
)

_SUMS = buckets.SUM_COLUMNS


def ingest(
    conn: Connection, backend: Backend, request: IngestRequest, now: datetime
) -> IngestResult:
    step = backend.config.bucket_seconds
    now_s = epoch(now)
    errors: list[FieldError] = []
    for index, bucket in enumerate(request.buckets):
        loc: list[str | int] = ["body", "buckets", index]
        start = epoch(bucket.start)
        if bucket.model_id not in backend.registry.models:
            errors.append(
                FieldError(loc=[*loc, "model_id"], message=f"unknown model {bucket.model_id!r}")
            )
        if start % step or bucket.start.microsecond:
            errors.append(
                FieldError(loc=[*loc, "start"], message=f"not aligned to the {step}s bucket length")
            )
        elif start + step > now_s:
            errors.append(
                FieldError(
                    loc=[*loc, "start"],
                    message=f"bucket has not closed yet (server time {now.isoformat()})",
                )
            )
    errors += task_buckets.label_errors(backend.config, backend.registry, request.buckets)
    if errors:
        raise Problem(
            422,
            ProblemType.VALIDATION,
            f"{len(errors)} invalid bucket(s): {errors[0].message}",
            title="Invalid buckets",
            errors=errors[:MAX_LISTED],
        )

    # Keyed by (model, task, start); task "" is a model judged as one series.
    fresh: dict[tuple[str, str, int], tuple[float, ...]] = {}
    conflicts: list[BucketConflict] = []
    unchanged = 0
    for bucket in request.buckets:
        key = (bucket.model_id, bucket.task or "", epoch(bucket.start))
        sums = tuple(getattr(bucket, name) for name in _SUMS)
        stored = fresh.get(key)
        if stored is None:
            stored = _stored(conn, backend.model_keys[key[0]], *key[1:])
            if stored is None:
                fresh[key] = sums
                continue
        if stored != sums:
            conflicts.append(
                BucketConflict(model_id=bucket.model_id, start=bucket.start, task=bucket.task)
            )
        else:
            unchanged += 1
    if conflicts:
        raise Problem(
            409,
            ProblemType.BUCKET_CONFLICT,
            f"{len(conflicts)} bucket(s) already stored with different sums; nothing was stored",
            title="Bucket conflict",
            conflicts=conflicts[:MAX_LISTED],
        )

    # Each model bucket with its health: a multi-task model's summed over its tasks and judged from them.
    model_buckets, task_rows = task_buckets.combine(
        backend.config,
        backend.registry,
        backend.model_keys,
        {key: sums for key, sums in fresh.items() if key[1]},
    )
    for (model_id, task, start), sums in fresh.items():
        if not task:
            bands = backend.config.bands_for(backend.registry.models[model_id])
            model_buckets[(model_id, start)] = (sums, bucket_health(bands, *sums))
    rows = []
    newest: dict[str, tuple[int, int, tuple[float, ...]]] = {}
    totals: dict[str, list[float]] = {}
    for (model_id, start), (sums, health) in model_buckets.items():
        rows.append((backend.model_keys[model_id], start, *sums, health))
        total = totals.setdefault(model_id, [0.0, 0.0, 0.0, 0.0])
        for i, value in enumerate(sums):
            total[i] += value
        if model_id not in newest or start > newest[model_id][0]:
            newest[model_id] = (start, health, sums)
    _refuse_overflowing_totals(conn, request, totals)
    buckets.insert(conn, rows)
    buckets.insert_tasks(conn, task_rows)
    model_rows.add_totals(conn, ((*total, model_id) for model_id, total in totals.items()))
    unstable = []
    for model_id, (start, health, sums) in sorted(newest.items()):
        signals = StabilitySums(**dict(zip(_SUMS, sums)))
        append_event(
            conn,
            EventType.BUCKET_CLOSED,
            now,
            model_id,
            BucketClosedData(
                model_id=model_id,
                start=from_epoch(start),
                health=HEALTH_BY_CODE[health],
                calibration=signals.calibration,
                normalized_entropy=signals.normalized_entropy,
            ),
        )
        if health == UNSTABLE:
            unstable.append(model_id)
    slo_board.refresh(
        conn, backend.config, backend.registry, backend.model_keys, now, newest.keys()
    )
    incident_ids = sorted(set(model_rows.open_incident_ids(conn, unstable).values()))
    return IngestResult(
        accepted=len(fresh), unchanged=unchanged, unstable=unstable, incident_ids=incident_ids
    )


def _stored(conn: Connection, model_key: int, task: str, start: int) -> tuple[float, ...] | None:
    """The sums stored for this bucket (of this task, for a multi-task model), if any."""
    if task:
        return buckets.task_sums_at(conn, model_key, task, start)
    return buckets.sums_at(conn, model_key, start)


def _refuse_overflowing_totals(
    conn: Connection, request: IngestRequest, totals: dict[str, list[float]]
) -> None:
    """422 naming the first bucket and field whose model's running total (a /metrics counter) would pass MAX_TOTAL."""
    errors: list[FieldError] = []
    for model_id, added in totals.items():
        stored = model_rows.totals(conn, model_id)
        index = next(i for i, bucket in enumerate(request.buckets) if bucket.model_id == model_id)
        errors.extend(
            FieldError(
                loc=["body", "buckets", index, name],
                message=f"the total {name} of {model_id} would pass {MAX_TOTAL:g}; nothing was stored",
            )
            for name, before, more in zip(_SUMS, stored, added)
            if not before + more <= MAX_TOTAL  # also true when a stored total is already inf or NaN
        )
    if errors:
        raise Problem(
            422,
            ProblemType.VALIDATION,
            f"{len(errors)} total(s) would overflow: {errors[0].message}",
            title="Invalid buckets",
            errors=errors[:MAX_LISTED],
        )
