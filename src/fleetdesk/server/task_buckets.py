"""A multi-task model's buckets per task: the task label checked at ingest, the model's combined bucket built
from its tasks, and the tasks' health in the latest bucket (fleetdesk.domain.tasks says why; their rows and
running totals are store/buckets.py's).

A multi-task model's bucket arrives with every one of its tasks at once: its combined bucket and its health
are judged from all of them, and a closed bucket is never rewritten, so a bucket missing a task is refused
rather than judged on part of the model.
"""

from __future__ import annotations

from collections.abc import Sequence

from fleetdesk.domain.registry import Model, Registry
from fleetdesk.domain.stability import Health, StabilitySums
from fleetdesk.domain.tasks import model_health
from fleetdesk.server.store import (
    CODE_BY_HEALTH,
    HEALTH_BY_CODE,
    Connection,
    FleetConfig,
    bucket_health,
    epoch,
    from_epoch,
)
from fleetdesk.server.store.buckets import SUM_COLUMNS, tasks_at
from fleetdesk.wire import FieldError, IngestBucket, TaskHealth

Sums = tuple[float, ...]
"""weight, label_sum, prediction_sum, cross_entropy_sum"""


def label_errors(
    config: FleetConfig, registry: Registry, buckets: Sequence[IngestBucket]
) -> list[FieldError]:
    """Each bucket whose task label does not fit its model, and each model bucket that misses a task."""
    errors: list[FieldError] = []
    seen: dict[tuple[str, int], tuple[int, set[str]]] = {}
    for index, bucket in enumerate(buckets):
        model = registry.models.get(bucket.model_id)
        if model is None:
            continue  # refused already as an unknown model
        tasks = config.tasks_for(model)
        loc: list[str | int] = ["body", "buckets", index, "task"]
        if bucket.task is None and tasks:
            errors.append(
                FieldError(
                    loc=loc,
                    message=f"{bucket.model_id} is judged per task: each bucket names one of"
                    f" {', '.join(tasks)}",
                )
            )
        elif bucket.task is not None and bucket.task not in tasks:
            errors.append(
                FieldError(
                    loc=loc,
                    message=f"{bucket.task!r} is not a task of {bucket.model_id}"
                    f" (its tasks: {', '.join(tasks) or 'none, it is judged as one series'})",
                )
            )
        elif bucket.task is not None:
            seen.setdefault((bucket.model_id, epoch(bucket.start)), (index, set()))[1].add(
                bucket.task
            )
    for (model_id, start), (index, named) in seen.items():
        missing = [
            task for task in config.tasks_for(registry.models[model_id]) if task not in named
        ]
        if missing:
            errors.append(
                FieldError(
                    loc=["body", "buckets", index, "task"],
                    message=f"the bucket of {model_id} at {from_epoch(start).isoformat()} comes with"
                    f" every task at once; missing {', '.join(missing)}",
                )
            )
    return errors


def combine(
    config: FleetConfig,
    registry: Registry,
    model_keys: dict[str, int],
    fresh: dict[tuple[str, str, int], Sums],
) -> tuple[dict[tuple[str, int], tuple[Sums, int]], list[tuple]]:
    """The models' combined buckets ((model id, start) → (sums over its tasks, health of its worst task or by
    its type's task weights)) and the task rows to store, from the new task buckets ((model id, task, start) →
    sums)."""
    by_bucket: dict[tuple[str, int], dict[str, Sums]] = {}
    for (model_id, task, start), sums in fresh.items():
        by_bucket.setdefault((model_id, start), {})[task] = sums
    combined: dict[tuple[str, int], tuple[Sums, int]] = {}
    rows = []
    for (model_id, start), tasks in by_bucket.items():
        model = registry.models[model_id]
        bands = config.bands_for(model)
        healths = {}
        # Declared order, so the same tasks always sum to the same combined bucket, bit for bit.
        for task in config.tasks_for(model):
            sums = tasks[task]
            health = bucket_health(bands, *sums)
            healths[task] = HEALTH_BY_CODE[health]
            rows.append((model_keys[model_id], task, start, *sums, health))
        total = tuple(sum(column) for column in zip(*(tasks[t] for t in config.tasks_for(model))))
        verdict = model_health(healths, config.task_weights_for(model))
        combined[(model_id, start)] = (total, CODE_BY_HEALTH[verdict])
    return combined, rows


def latest(
    conn: Connection, config: FleetConfig, model: Model, model_key: int, start: int | None
) -> list[TaskHealth]:
    """Each of the model's tasks in its bucket at ``start`` (its latest closed one), in its type's order."""
    tasks = config.tasks_for(model)
    rows = (
        {}
        if not tasks or start is None
        else {row[0]: row for row in tasks_at(conn, model_key, start)}
    )
    views = []
    for task in tasks:
        row = rows.get(task)
        if row is None:
            views.append(
                TaskHealth(
                    task=task, health=Health.NO_DATA, calibration=None, normalized_entropy=None
                )
            )
            continue
        sums = StabilitySums(**dict(zip(SUM_COLUMNS, row[1:5])))
        views.append(
            TaskHealth(
                task=task,
                health=HEALTH_BY_CODE[row[5]],
                calibration=sums.calibration,
                normalized_entropy=sums.normalized_entropy,
            )
        )
    return views
