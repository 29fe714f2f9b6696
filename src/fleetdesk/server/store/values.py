"""How values are kept in the store's columns, the same for every store: times, bucket health codes, JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

import numpy as np

from fleetdesk.domain.live import LiveState
from fleetdesk.domain.registry import LaunchPhase
from fleetdesk.domain.stability import Health, HealthBands, binary_entropy

DAY_SECONDS = 86_400

# Bucket health as stored (a small int keeps the bucket table and its scans small).
STABLE, UNSTABLE, NO_DATA = 0, 1, 2
HEALTH_BY_CODE = {STABLE: Health.STABLE, UNSTABLE: Health.UNSTABLE, NO_DATA: Health.NO_DATA}
CODE_BY_HEALTH = {health: code for code, health in HEALTH_BY_CODE.items()}


def iso(moment: datetime) -> str:
    """Fixed-width ISO text, so string order is time order."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text)


def epoch(moment: datetime) -> int:
    return int(moment.timestamp())


def from_epoch(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def bucket_health(
    bands: HealthBands,
    weight: float,
    label_sum: float,
    prediction_sum: float,
    cross_entropy_sum: float,
) -> int:
    """HealthBands.health on raw sums without building a model (seeding scores ~10⁶ buckets).

    Same arithmetic as fleetdesk.domain.stability; tests check they agree bucket for bucket.
    """
    if weight <= 0.0 or weight < bands.min_events:
        return NO_DATA
    rate = label_sum / weight
    if not 0.0 < rate < 1.0:
        return NO_DATA
    calibration = prediction_sum / label_sum
    ne = (cross_entropy_sum / weight) / binary_entropy(rate)
    if not (math.isfinite(calibration) and math.isfinite(ne)):
        return NO_DATA  # a ratio over a vanishing sum says nothing (as in StabilitySums)
    inside = bands.calibration_low <= calibration <= bands.calibration_high and ne <= bands.ne_max
    return STABLE if inside else UNSTABLE


class ColumnBands(NamedTuple):
    """HealthBands per bucket, as columns beside the buckets' sums."""

    calibration_low: np.ndarray
    calibration_high: np.ndarray
    ne_max: np.ndarray
    min_events: np.ndarray


def bucket_healths(
    bands: ColumnBands,
    weight: np.ndarray,
    label_sum: np.ndarray,
    prediction_sum: np.ndarray,
    cross_entropy_sum: np.ndarray,
) -> np.ndarray:
    """bucket_health over columns of buckets (a seed scores tens of millions), bucket for bucket the same."""
    with np.errstate(
        all="ignore"
    ):  # the ratios of empty buckets: judged no data below, as bucket_health does
        rate = label_sum / weight
        judged = (weight > 0.0) & (weight >= bands.min_events) & (rate > 0.0) & (rate < 1.0)
        calibration = prediction_sum / label_sum
        ne = (cross_entropy_sum / weight) / -(
            rate * np.log(rate) + (1.0 - rate) * np.log(1.0 - rate)
        )
    # numpy's log may differ from math.log in the last bit on some CPUs: where that could decide the band
    # (or the value is not finite), the NE is taken again with math.log, as bucket_health takes it.
    close = judged & ~(np.abs(ne - bands.ne_max) > 1e-9 * bands.ne_max)
    for row in np.flatnonzero(close).tolist():
        ne[row] = (cross_entropy_sum[row] / weight[row]) / binary_entropy(rate[row])
    judged &= np.isfinite(calibration) & np.isfinite(ne)
    inside = (
        (bands.calibration_low <= calibration)
        & (calibration <= bands.calibration_high)
        & (ne <= bands.ne_max)
    )
    return np.where(judged, np.where(inside, STABLE, UNSTABLE), NO_DATA)


def json_records(names: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """Rows as a JSON array of objects keyed by these names: many rows bound as one value, for PostgreSQL's
    json_to_recordset (a statement for them all). JSON has no infinities: those go as the text PostgreSQL
    reads them from ("Infinity", as a burn rate over a spent budget can be)."""
    return json.dumps(
        [
            {name: _json_value(value) for name, value in zip(names, row, strict=True)}
            for row in rows
        ],
        allow_nan=False,
    )


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def live_state(row: Any) -> LiveState:
    """The live state columns of a ``models`` row."""
    return LiveState(
        serving_model_id=row["serving_model_id"],
        traffic_share=row["traffic_share"],
        launch_phase=LaunchPhase(row["launch_phase"]),
        launch_halted=bool(row["launch_halted"]),
        experiment_ended=bool(row["experiment_ended"]),
    )


def dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
