"""A fleet's bucket rows as the store keeps them, for seeding a store or extending its history."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

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
    bucket_health,
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
"""Called after each model while buckets are written: (models done, models in all, buckets so far)."""


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
        self.fleet, self.config, self.keys, self.timeline, self.progress = (
            fleet,
            config,
            keys,
            timeline,
            progress,
        )
        self.totals: dict[str, list[float]] = {}
        self.task_rows: list[tuple] = []
        """The task rows of multi-task models (model_key, task, start, sums…, health), filled by rows()."""
        self.days: dict[tuple[int, int], list[int]] = {}
        self.counted = 0

    def rows(self) -> Iterator[tuple]:
        # The hot loop of seeding (~10⁶ rows): bucket_health inlined, epochs cached
        # (the fleet's timeline shares start datetimes between models).
        fleet, config, keys, days, totals, progress = (
            self.fleet,
            self.config,
            self.keys,
            self.days,
            self.totals,
            self.progress,
        )
        epochs: dict[datetime, int] = {}
        log = math.log
        models = len(fleet.registry.models)
        for done, (model_id, rows) in enumerate(fleet.all_rows(self.timeline), start=1):
            bands = config.bands_for(fleet.registry.models[model_id])
            low, high, ne_max = bands.calibration_low, bands.calibration_high, bands.ne_max
            least = bands.min_events  # fewer events than the tier asks for: no data
            key = keys[model_id]
            tasks = config.tasks_for(fleet.registry.models[model_id])
            weights = config.task_weights_for(fleet.registry.models[model_id])
            total_w = total_l = total_p = total_c = 0.0
            for start, weight, label_sum, prediction_sum, cross_entropy_sum in rows:
                total_w += weight
                total_l += label_sum
                total_p += prediction_sum
                total_c += cross_entropy_sum
                at = epochs.get(start)
                if at is None:
                    at = epochs[start] = int(start.timestamp())
                health = NO_DATA
                if tasks:
                    health = self._split(
                        key,
                        at,
                        tasks,
                        weights,
                        bands,
                        weight,
                        label_sum,
                        prediction_sum,
                        cross_entropy_sum,
                    )
                elif weight > 0.0 and weight >= least:
                    rate = label_sum / weight
                    if 0.0 < rate < 1.0:
                        calibration = prediction_sum / label_sum
                        ne = (cross_entropy_sum / weight) / -(
                            rate * log(rate) + (1.0 - rate) * log(1.0 - rate)
                        )
                        health = STABLE if low <= calibration <= high and ne <= ne_max else UNSTABLE
                day = days.get((key, at // DAY_SECONDS))
                if day is None:
                    day = days[(key, at // DAY_SECONDS)] = [0, 0, 0]
                day[health] += 1
                yield (key, at, weight, label_sum, prediction_sum, cross_entropy_sum, health)
            self.counted += len(rows)
            totals[model_id] = [total_w, total_l, total_p, total_c]
            if progress is not None:
                progress(done, models, self.counted)

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


def count_days(conn: Any, rows: list[tuple]) -> None:
    """Add newly inserted bucket rows (model_key, start, …, health) to the per-day health counts."""
    conn.executemany(
        "INSERT INTO health_days VALUES (?, ?, ?, ?, ?) ON CONFLICT (model_key, day) DO UPDATE SET"
        " good = health_days.good + excluded.good, bad = health_days.bad + excluded.bad,"
        " no_data = health_days.no_data + excluded.no_data",
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
