"""The small fleet with another story: the tests that need one write a variant of it to a temp file.

Times are absolute: the variant's history is moved to end at ``now`` first (the servers of the tests
run with their clock frozen there), then the incidents are added.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fleetdesk.domain.fleet import FleetFile, IncidentKind, MetricIncident
from fleetdesk.domain.stability import binary_entropy
from fleetdesk.fleets import load_fleet
from fleetdesk.fleets.files import shift_history
from fleetdesk.wire import IngestBucket

FIXED_NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)

IG_FEED = (  # every funnel stage of Instagram Feed in the small fleet
    "ig_feed_sourcing_two-tower.v9",
    "ig_feed_early-stage_dlrm.v18",
    "ig_feed_late-stage_mtml.v41",
    "ig_feed_late-stage_mtml.x1-watch-time",
    "ig_feed_late-stage_mtml.x2-long-history",
    "ig_feed_late-stage_mtml.holdout-2026h2",
)


def held(
    model_id: str, kind: IncidentKind, start: datetime, hours: int, magnitude: float
) -> list[MetricIncident]:
    """A shift at full magnitude from ``start`` for ``hours`` buckets (a calibration drift is held one bucket
    at a time, so it does not ramp)."""
    if kind is not IncidentKind.CALIBRATION_DRIFT:
        return [
            MetricIncident(
                model_id=model_id,
                kind=kind,
                start=start,
                end=start + hours * HOUR,
                magnitude=magnitude,
            )
        ]
    return [
        MetricIncident(
            model_id=model_id,
            kind=kind,
            start=start + i * HOUR,
            end=start + (i + 1) * HOUR,
            magnitude=magnitude,
        )
        for i in range(hours)
    ]


def small_variant(
    path: Path,
    *,
    incidents: Iterable[MetricIncident] = (),
    keep_incidents: bool = True,
    profiles: dict[str, dict[str, Any]] | None = None,
    now: datetime = FIXED_NOW,
    change: Callable[[dict[str, Any]], None] | None = None,
) -> Path:
    """Write the small fleet, its history ending at ``now``, with ``incidents`` added (and its own kept or
    not), some profiles changed and any other ``change`` made to the raw document; returns the path."""
    file = shift_history(load_fleet("small").file, now)
    history = file.history
    kept = list(history.incidents) if keep_incidents else []
    updated = dict(history.profiles)
    for model_id, fields in (profiles or {}).items():
        updated[model_id] = updated[model_id].model_copy(update=fields)
    file = file.model_copy(
        update={
            "history": history.model_copy(
                update={"incidents": kept + list(incidents), "profiles": updated}
            )
        }
    )
    raw = file.model_dump(mode="json")
    if change is not None:
        change(raw)
    FleetFile.model_validate(raw)  # a broken variant fails here, not in the server
    path.write_text(FleetFile.model_validate(raw).model_dump_json(), encoding="utf-8")
    return path


def bucket(
    model_id: str,
    start: datetime,
    calibration: float = 1.0,
    ne: float = 0.8,
    weight: float = 100_000.0,
    rate: float = 0.035,
) -> IngestBucket:
    """One closed bucket with exactly these signals (for ingest)."""
    labels = weight * rate
    return IngestBucket(
        model_id=model_id,
        start=start,
        weight=weight,
        label_sum=labels,
        prediction_sum=labels * calibration,
        cross_entropy_sum=ne * binary_entropy(rate) * weight,
    )


MULTI_TASK = "ig_notifications_late-stage_mtml.v15"  # TIER2 baseline, alone of its type
TASKS = ("clicks", "comments", "follows")


def declare_tasks(raw: dict[str, Any]) -> None:
    """A ``change`` for small_variant: MULTI_TASK's type declares TASKS, so its models are judged per task."""
    raw["types"]["ig_notifications_late-stage_mtml"] = {
        "owner_team": "ig-notifications-ranking",
        "description": "Ranks Instagram notifications by the clicks, comments and follows they bring.",
        "default_tier": "TIER2",
        "runbook_url": "https://runbooks.example/ig-notifications-ranking",
        "tasks": list(TASKS),
    }


def declare_weighted_tasks(raw: dict[str, Any]) -> None:
    """As declare_tasks, with comments and follows each too light to make the model unstable alone."""
    declare_tasks(raw)
    raw["types"]["ig_notifications_late-stage_mtml"]["task_weights"] = {
        "clicks": 0.6,
        "comments": 0.3,
        "follows": 0.1,
    }


def task_bucket(
    task: str, start: datetime, calibration: float = 1.0, model_id: str = MULTI_TASK
) -> IngestBucket:
    """One closed bucket of one task of the multi-task model (each task its own volume and base rate)."""
    weight, rate = {"clicks": (100_000.0, 0.05), "comments": (50_000.0, 0.02)}.get(
        task, (20_000.0, 0.01)
    )
    return bucket(model_id, start, calibration, weight=weight, rate=rate).model_copy(
        update={"task": task}
    )
