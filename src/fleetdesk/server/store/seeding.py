"""A fleet's bucket rows as the store keeps them, for seeding a store or extending its history."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fleetdesk.domain.stability import HealthBands
from fleetdesk.domain.tasks import model_health, split_synthetic
from fleetdesk.server.store.fleet_config import FleetConfig
from fleetdesk.server.store.values import (
    CODE_BY_HEALTH,
    DAY_SECONDS,
    HEALTH_BY_CODE,
    NO_DATA,
    STABLE,
    UNSTABLE,
    ColumnBands,
    bucket_health,
    bucket_healths,
)

if TYPE_CHECKING:
    from fleetdesk.domain.synthetic import Timeline
    from fleetdesk.fleets import Fleet

NEWEST_BUCKET = (
    "(last_bucket_start, last_weight, last_label_sum, last_prediction_sum, last_cross_entropy_sum) = (SELECT"
    " start, weight, label_sum, prediction_sum, cross_entropy_sum FROM buckets"
    " WHERE buckets.model_key = models.key ORDER BY start DESC LIMIT 1)"
)
"""The SET that brings a models row's newest bucket (start and sums) up to date after buckets were added to it."""

SeedProgress = Callable[[int, int, int], None]
"""Called as buckets are written, after each batch of models: (models done, models in all, buckets so far)."""

TASK_BUCKET_COLUMNS = (
    "model_key",
    "task",
    "start",
    "weight",
    "label_sum",
    "prediction_sum",
    "cross_entropy_sum",
    "health",
)
"""task_buckets' columns, in the order of BucketRows.task_rows."""

BATCH_MODELS = 256
"""Models generated and scored together: ~200,000 buckets a batch, a few tens of MB of columns."""

Columns = list[np.ndarray]
"""A batch of rows as one array per column of its table, in the table's column order."""


class BucketRows:
    """A fleet's bucket rows as the store keeps them (health scored, per-day counts and totals kept on the
    side), for seeding a store or extending its history."""

    def __init__(
        self,
        fleet: Fleet,
        config: FleetConfig,
        keys: dict[str, int],
        timeline: Timeline | None,
        progress: SeedProgress | None,
    ) -> None:
        self.fleet, self.config, self.keys, self.progress = fleet, config, keys, progress
        self.timeline = timeline or fleet.timeline
        self.totals: list[Columns] = []
        """What the buckets add to each model's row (ADDED_HISTORY's columns), filled by batches()."""
        self.task_rows: list[tuple] = []
        """The task rows of multi-task models (model_key, task, start, sums…, health), filled by batches()."""
        self.days: list[Columns] = []
        """The per-day health counts of the buckets (model_key, day, good, bad, no_data), filled by batches()."""
        self.counted = 0

    def batches(self) -> Iterator[Columns]:
        """The buckets table's rows (model_key, start, sums…, health), a batch of models at a time."""
        epochs = np.array([int(start.timestamp()) for start in self.timeline.starts], np.int64)
        model_ids = list(self.fleet.registry.models)
        for first in range(0, len(model_ids), BATCH_MODELS):
            ids = model_ids[first : first + BATCH_MODELS]
            columns = self.fleet.columns(ids, self.timeline)
            counts = np.diff(columns.bounds)
            keys = np.repeat(np.array([self.keys[model_id] for model_id in ids], np.int64), counts)
            starts = epochs[columns.position]
            sums = [
                columns.weight,
                columns.label_sum,
                columns.prediction_sum,
                columns.cross_entropy_sum,
            ]
            health = self._health(ids, columns.bounds, starts, sums)
            self.days.append(_day_counts(keys, starts, health))
            self.totals.append(_added_history(keys, starts, columns.bounds, sums))
            self.counted += len(starts)
            if self.progress is not None:
                self.progress(first + len(ids), len(model_ids), self.counted)
            yield [keys, starts, *sums, health]

    def _health(
        self, ids: list[str], bounds: np.ndarray, starts: np.ndarray, sums: list[np.ndarray]
    ) -> np.ndarray:
        models = [self.fleet.registry.models[model_id] for model_id in ids]
        bands = [self.config.bands_for(model) for model in models]
        counts = np.diff(bounds)

        def per_bucket(values: list[float]) -> np.ndarray:
            return np.repeat(np.array(values, np.float64), counts)

        health = bucket_healths(
            ColumnBands(
                per_bucket([band.calibration_low for band in bands]),
                per_bucket([band.calibration_high for band in bands]),
                per_bucket([band.ne_max for band in bands]),
                per_bucket([band.min_events for band in bands]),
            ),
            *sums,
        )
        for at, model in enumerate(models):
            tasks = self.config.tasks_for(model)
            if not tasks:
                continue
            weights = self.config.task_weights_for(model)
            key = self.keys[model.id]
            for row in range(bounds[at], bounds[at + 1]):
                health[row] = self._split(
                    key,
                    int(starts[row]),
                    tasks,
                    weights,
                    bands[at],
                    *(float(column[row]) for column in sums),
                )
        return health

    def _split(
        self,
        key: int,
        at: int,
        tasks: tuple[str, ...],
        weights: dict[str, float] | None,
        bands: HealthBands,
        *sums: float,
    ) -> int:
        """The model bucket's health from its tasks' (as at ingest), its task rows kept: the fleet's one series
        per model split over its tasks (fleetdesk.domain.tasks.split_synthetic)."""
        healths = {}
        for task, part in split_synthetic(tasks, sums):
            health = bucket_health(bands, *part)
            healths[task] = HEALTH_BY_CODE[health]
            self.task_rows.append((key, task, at, *part, health))
        return CODE_BY_HEALTH[model_health(healths, weights)]


ADDED_HISTORY = (
    "CREATE TEMP TABLE added_history (model_key INTEGER NOT NULL, total_weight DOUBLE PRECISION NOT NULL,"
    " total_label_sum DOUBLE PRECISION NOT NULL, total_prediction_sum DOUBLE PRECISION NOT NULL,"
    " total_cross_entropy_sum DOUBLE PRECISION NOT NULL, last_bucket_start BIGINT NOT NULL,"
    " last_weight DOUBLE PRECISION NOT NULL, last_label_sum DOUBLE PRECISION NOT NULL,"
    " last_prediction_sum DOUBLE PRECISION NOT NULL, last_cross_entropy_sum DOUBLE PRECISION NOT NULL)"
)
"""What new buckets add to their models' rows: the sums to add to the totals and the newest bucket, one row per
model that has any (a temp table: one UPDATE from it, not one per model)."""

ADD_HISTORY = (
    "UPDATE models SET total_weight = models.total_weight + a.total_weight,"
    " total_label_sum = models.total_label_sum + a.total_label_sum,"
    " total_prediction_sum = models.total_prediction_sum + a.total_prediction_sum,"
    " total_cross_entropy_sum = models.total_cross_entropy_sum + a.total_cross_entropy_sum,"
    " last_bucket_start = a.last_bucket_start, last_weight = a.last_weight, last_label_sum = a.last_label_sum,"
    " last_prediction_sum = a.last_prediction_sum, last_cross_entropy_sum = a.last_cross_entropy_sum"
    " FROM added_history AS a WHERE models.key = a.model_key"
)


def _added_history(
    keys: np.ndarray, starts: np.ndarray, bounds: np.ndarray, sums: list[np.ndarray]
) -> Columns:
    """ADDED_HISTORY's rows for a batch of models' buckets (ordered by model and start)."""
    some = np.diff(bounds) > 0
    first, last = bounds[:-1][some], bounds[1:][some] - 1
    return [
        keys[first],
        *(np.add.reduceat(column, first) if len(first) else column[first] for column in sums),
        starts[last],
        *(column[last] for column in sums),
    ]


def _day_counts(keys: np.ndarray, starts: np.ndarray, health: np.ndarray) -> Columns:
    """(model_key, day, good, bad, no_data) of buckets ordered by model and start: a row per model and day."""
    if not len(keys):  # every bucket of the batch's models stopped (a feed stop over all of it)
        return [np.empty(0, np.int64)] * 5
    days = starts // DAY_SECONDS
    first = np.flatnonzero(
        np.concatenate(([True], (keys[1:] != keys[:-1]) | (days[1:] != days[:-1])))
    )
    return [
        keys[first],
        days[first],
        *(
            np.add.reduceat((health == code).astype(np.int64), first)
            for code in (STABLE, UNSTABLE, NO_DATA)
        ),
    ]


_ADD_DAY = (
    "INSERT INTO health_days VALUES (?, ?, ?, ?, ?) ON CONFLICT (model_key, day) DO UPDATE SET"
    " good = health_days.good + excluded.good, bad = health_days.bad + excluded.bad,"
    " no_data = health_days.no_data + excluded.no_data"
)


def count_days(conn: Any, rows: list[tuple]) -> None:
    """Add newly inserted bucket rows (model_key, start, …, health) to the per-day health counts."""
    conn.executemany(
        _ADD_DAY,
        (
            (
                row[0],
                row[1] // DAY_SECONDS,
                int(row[-1] == STABLE),
                int(row[-1] == UNSTABLE),
                int(row[-1] == NO_DATA),
            )
            for row in rows
        ),
    )


def add_day_counts(conn: Any, days: Iterable[Columns]) -> None:
    """Add per-day health counts (model_key, day, good, bad, no_data) to the ones kept."""
    for batch in days:
        conn.executemany(_ADD_DAY, zip(*(column.tolist() for column in batch), strict=True))


def add_task_totals(conn: Any, rows: Iterable[Sequence]) -> None:
    """Add task rows (model_key, task, start, sums…, health) to the tasks' running totals (/metrics counters)."""
    totals: dict[tuple[int, str], list[float]] = {}
    for key, task, _start, *sums, _health in rows:
        total = totals.setdefault((key, task), [0.0, 0.0, 0.0, 0.0])
        for i, value in enumerate(sums):
            total[i] += value
    conn.executemany(
        "INSERT INTO task_totals VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (model_key, task) DO UPDATE SET"
        " total_weight = task_totals.total_weight + excluded.total_weight,"
        " total_label_sum = task_totals.total_label_sum + excluded.total_label_sum,"
        " total_prediction_sum = task_totals.total_prediction_sum + excluded.total_prediction_sum,"
        " total_cross_entropy_sum = task_totals.total_cross_entropy_sum + excluded.total_cross_entropy_sum",
        ((key, task, *total) for (key, task), total in totals.items()),
    )
