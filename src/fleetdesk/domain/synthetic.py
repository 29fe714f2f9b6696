"""Deterministic synthetic metric buckets from a fleet file's recipe.

Each bucket is drawn independently: its noise comes from a counter-based
generator (the splitmix64 output for position ``bucket index`` of a stream
keyed by the profile's seed and the model id), so any single bucket can be
regenerated on its own and always comes out identical, in any process. A
seeded ``random.Random`` per bucket would give the same guarantee but costs
about 5 µs to seed, which alone would take a 1,000-model fleet past 3 s.

The sums are built backwards from the signals we want to see: the label sum
from the base rate, the prediction sum from the target calibration, the
cross-entropy sum from the target NE times the entropy of the bucket's own
background rate. So a bucket's calibration and NE equal the profile's values
times (1 + relative noise), and incidents act on those targets directly.

One caveat to "any bucket on its own": a calibration drift ramps linearly over
its span, and an open-ended drift (no ``end``) spans to the end of the window
being generated, so its ramp depends on that window. Give a drift an ``end``
when buckets must not depend on the window.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

import numpy as np

from fleetdesk.domain.fleet import IncidentKind, MetricHistory, MetricIncident, MetricProfile
from fleetdesk.domain.stability import StabilityBucket

_GOLDEN_U64 = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_U16 = np.uint64(0xFFFF)
_U27, _U30, _U31 = np.uint64(27), np.uint64(30), np.uint64(31)
# A 16-bit uniform scaled to [-√3, √3) has standard deviation 1, so
# ``profile.noise`` is the standard deviation of the relative noise.
_UNIT_NOISE = 2.0 * math.sqrt(3.0) / 65536.0
_NOISE_CENTRE = 32767.5
# Traffic swings ±30% over the day, peaking mid-afternoon UTC.
_DAILY_SWING = 0.3
_PEAK_HOUR = 15.0
_MIN_RATE = 1e-9
_MAX_RATE = 0.999
MAX_EFFECT = 1e3
"""Overlapping incidents multiply; their combined effect on a bucket is held to [1/MAX_EFFECT, MAX_EFFECT],
as one incident's magnitude is (fleetdesk.domain.fleet.MAX_MAGNITUDE), so no pile-up leaves a bucket's bounds."""


class BucketRow(NamedTuple):
    """One bucket's sums as a plain tuple: the bulk-loading fast path (no validation)."""

    start: datetime
    weight: float
    label_sum: float
    prediction_sum: float
    cross_entropy_sum: float


# The generated BucketRow(...) constructor is a Python-level function; building
# the tuple directly halves the cost of making rows.
_new_row = tuple.__new__


class Timeline:
    """The closed buckets of a history window, with their traffic seasonality.

    A timeline can continue another (``Timeline.after``): its buckets then draw the noise the longer
    history would have drawn at those positions, and open-ended drifts stay at the full magnitude they
    reached at the first window's end, so the continuation reads as the same history, only longer.
    """

    def __init__(
        self,
        start: datetime,
        end: datetime,
        bucket: timedelta,
        *,
        first_index: int = 0,
        open_end: datetime | None = None,
    ) -> None:
        if bucket <= timedelta(0):
            raise ValueError("bucket must be positive")
        self.start = start
        self.end = end
        self.bucket = bucket
        self.first_index = first_index
        """Position of the first bucket in the noise stream (0 unless this continues another timeline)."""
        self.open_end = open_end or end
        """Where an open-ended drift's ramp ends."""
        count = max((end - start) // bucket, 0)
        self.starts: list[datetime] = [start + i * bucket for i in range(count)]
        self.seasonality: list[float] = [_daily_factor(t + bucket / 2) for t in self.starts]

    def __len__(self) -> int:
        return len(self.starts)

    def after(self, end: datetime) -> Timeline:
        """The buckets from this timeline's end up to ``end``, continuing it."""
        return Timeline(
            self.start + len(self.starts) * self.bucket,
            end,
            self.bucket,
            first_index=self.first_index + len(self.starts),
            open_end=self.open_end,
        )

    def index_at_or_after(self, moment: datetime) -> int:
        """Index of the first bucket starting at or after ``moment`` (clamped to the timeline)."""
        index = -((self.start - moment) // self.bucket)  # ceiling division on timedeltas
        return min(max(index, 0), len(self.starts))


def _daily_factor(moment: datetime) -> float:
    hour = moment.hour + moment.minute / 60.0
    return 1.0 + _DAILY_SWING * math.cos(2.0 * math.pi * (hour - _PEAK_HOUR) / 24.0)


def stream_key(model_id: str, profile: MetricProfile) -> int:
    """The 64-bit noise stream key of one model: stable across processes (unlike hash())."""
    digest = hashlib.blake2b(f"{profile.seed}:{model_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class _Effect:
    """Incident multipliers for one bucket (feed stops are a separate set)."""

    __slots__ = ("calibration", "ne", "weight")

    def __init__(self) -> None:
        self.calibration = 1.0
        self.ne = 1.0
        self.weight = 1.0


def _incident_effects(
    incidents: Iterable[MetricIncident], timeline: Timeline
) -> tuple[dict[int, _Effect], set[int]]:
    """Per-bucket multipliers and the stopped bucket indexes of one model's incidents."""
    effects: dict[int, _Effect] = defaultdict(_Effect)
    stopped: set[int] = set()
    for incident in incidents:
        end = incident.end if incident.end is not None else timeline.end
        first = timeline.index_at_or_after(incident.start)
        last = timeline.index_at_or_after(end)
        if incident.kind is IncidentKind.FEED_STOP:
            stopped.update(range(first, last))
            continue
        span = (incident.end if incident.end is not None else timeline.open_end) - incident.start
        for index in range(first, last):
            effect = effects[index]
            if incident.kind is IncidentKind.CALIBRATION_DRIFT:
                # Linear ramp: the full magnitude is reached by the bucket that closes at the end.
                done = (
                    min((timeline.starts[index] + timeline.bucket - incident.start) / span, 1.0)
                    if span > timedelta(0)
                    else 1.0
                )
                effect.calibration *= 1.0 + (incident.magnitude - 1.0) * done
            elif incident.kind is IncidentKind.NE_REGRESSION:
                effect.ne *= incident.magnitude
            elif incident.kind is IncidentKind.TRAFFIC_SHIFT:
                effect.weight *= incident.magnitude
    for effect in effects.values():
        effect.calibration = _held(effect.calibration)
        effect.ne = _held(effect.ne)
        effect.weight = _held(effect.weight)
    return effects, stopped


def _held(factor: float) -> float:
    return min(max(factor, 1.0 / MAX_EFFECT), MAX_EFFECT)


class SeriesColumns(NamedTuple):
    """Several models' buckets over one timeline as columns, model after model (feed stops leave gaps)."""

    bounds: np.ndarray
    """Model i's rows are [bounds[i], bounds[i + 1])."""
    position: np.ndarray
    """Each row's bucket position in the timeline (its start is ``timeline.starts[position]``)."""
    weight: np.ndarray
    label_sum: np.ndarray
    prediction_sum: np.ndarray
    cross_entropy_sum: np.ndarray


Series = tuple[str, MetricProfile, Iterable[MetricIncident]]
"""One model's recipe: its id, its profile and its own incidents."""


def synthesize_columns(series: Sequence[Series], timeline: Timeline) -> SeriesColumns:
    """Every bucket of several models over ``timeline``, computed a whole batch of models at a time.

    Seeding draws tens of millions of buckets: per bucket in Python that was most of a 50,000-model seed.
    The arithmetic is the per-bucket recipe's, step for step in the same order, so every value is the one a
    bucket-by-bucket loop computes; the logarithms are math.log's (numpy's own vectorised log differs from it
    in the last bit on some CPUs, and the values must not depend on the machine).
    """
    count, models = len(timeline), len(series)
    positions = np.arange(
        timeline.first_index + 1, timeline.first_index + 1 + count, dtype=np.uint64
    )
    keys = np.array([stream_key(model_id, profile) for model_id, profile, _ in series], np.uint64)
    # splitmix64: bucket i's bits are the stream's i-th output (uint64 arithmetic wraps, as the mask did).
    bits = keys[:, None] + _GOLDEN_U64 * positions[None, :]
    bits = (bits ^ (bits >> _U30)) * _MIX1
    bits = (bits ^ (bits >> _U27)) * _MIX2
    bits ^= bits >> _U31
    weight_factor = np.tile(np.asarray(timeline.seasonality, np.float64), (models, 1))
    target_calibration = np.empty((models, count))
    target_ne = np.empty((models, count))
    keep = np.ones((models, count), bool)
    for row, (_, profile, incidents) in enumerate(series):
        target_calibration[row] = profile.calibration
        target_ne[row] = profile.normalized_entropy
        effects, stopped = _incident_effects(incidents, timeline)
        for index, effect in effects.items():
            weight_factor[row, index] *= effect.weight
            target_calibration[row, index] *= effect.calibration
            target_ne[row, index] *= effect.ne
        keep[row, list(stopped)] = False
    profiles = [profile for _, profile, _ in series]
    scale = np.array([[_UNIT_NOISE * profile.noise] for profile in profiles])
    events = np.array([[profile.events_per_bucket] for profile in profiles], np.float64)
    base_rate = np.array([[profile.base_rate] for profile in profiles])

    def noise(shift: int) -> np.ndarray:
        uniform = ((bits >> np.uint64(shift)) & _U16).astype(np.float64)
        factor: np.ndarray = 1.0 + (uniform - _NOISE_CENTRE) * scale
        return factor

    # Noise above ~0.5 could flip a sum's sign: sums are clamped at zero (NaN too, as the conditionals did).
    weight = events * weight_factor * noise(0)
    weight = np.where(weight > 0.0, weight, 0.0)
    rate = base_rate * noise(16)
    rate = np.where(rate < _MIN_RATE, _MIN_RATE, np.where(rate > _MAX_RATE, _MAX_RATE, rate))
    label_sum = weight * rate
    prediction_sum = label_sum * target_calibration * noise(32)
    ne_noise = noise(48)
    rate, weight, label_sum = rate[keep], weight[keep], label_sum[keep]
    entropy = -(rate * _logs(rate) + (1.0 - rate) * _logs(1.0 - rate))
    cross_entropy_sum = weight * entropy * target_ne[keep] * ne_noise[keep]
    prediction_sum = prediction_sum[keep]
    bounds = np.zeros(models + 1, np.int64)
    np.cumsum(keep.sum(axis=1), out=bounds[1:])
    return SeriesColumns(
        bounds,
        np.nonzero(keep)[1],
        weight,
        label_sum,
        np.where(prediction_sum > 0.0, prediction_sum, 0.0),
        np.where(cross_entropy_sum > 0.0, cross_entropy_sum, 0.0),
    )


def _logs(values: np.ndarray) -> np.ndarray:
    return np.fromiter(map(math.log, values.tolist()), np.float64, len(values))


def synthesize_rows(
    model_id: str,
    profile: MetricProfile,
    incidents: Iterable[MetricIncident],
    timeline: Timeline,
) -> list[BucketRow]:
    """Every bucket of one model over ``timeline`` as plain rows (feed stops leave gaps)."""
    columns = synthesize_columns([(model_id, profile, incidents)], timeline)
    starts = timeline.starts
    return [
        _new_row(BucketRow, (starts[index], *sums))
        for index, *sums in zip(
            columns.position.tolist(),
            columns.weight.tolist(),
            columns.label_sum.tolist(),
            columns.prediction_sum.tolist(),
            columns.cross_entropy_sum.tolist(),
            strict=True,
        )
    ]


def synthesize(
    model_id: str,
    profile: MetricProfile,
    incidents: Iterable[MetricIncident],
    start: datetime,
    end: datetime,
    bucket: timedelta,
) -> Iterator[StabilityBucket]:
    """The closed buckets of one model in [start, end), deterministic for its seed and id."""
    own = [incident for incident in incidents if incident.model_id == model_id]
    for row in synthesize_rows(model_id, profile, own, Timeline(start, end, bucket)):
        yield bucket_from_row(row)


def bucket_from_row(row: BucketRow) -> StabilityBucket:
    return StabilityBucket(**row._asdict())


def incidents_by_model(incidents: Sequence[MetricIncident]) -> dict[str, list[MetricIncident]]:
    grouped: dict[str, list[MetricIncident]] = defaultdict(list)
    for incident in incidents:
        grouped[incident.model_id].append(incident)
    return grouped


def materialise(history: MetricHistory) -> Iterator[tuple[str, list[BucketRow]]]:
    """Every model's rows for a whole history (one shared timeline; the bulk-load fast path)."""
    timeline = Timeline(history.start, history.end, history.bucket)
    grouped = incidents_by_model(history.incidents)
    for model_id, profile in history.profiles.items():
        yield model_id, synthesize_rows(model_id, profile, grouped.get(model_id, ()), timeline)
