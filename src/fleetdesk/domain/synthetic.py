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

from fleetdesk.domain.fleet import IncidentKind, MetricHistory, MetricIncident, MetricProfile
from fleetdesk.domain.stability import StabilityBucket

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
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
# the tuple directly halves the cost in the hot loop.
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


def synthesize_rows(
    model_id: str,
    profile: MetricProfile,
    incidents: Iterable[MetricIncident],
    timeline: Timeline,
) -> list[BucketRow]:
    """Every bucket of one model over ``timeline`` as plain rows (feed stops leave gaps)."""
    effects, stopped = _incident_effects(incidents, timeline)
    key = stream_key(model_id, profile)
    scale = _UNIT_NOISE * profile.noise
    centre = _NOISE_CENTRE
    events = profile.events_per_bucket
    base_rate = profile.base_rate
    calibration = profile.calibration
    ne = profile.normalized_entropy
    log = math.log
    mask = _MASK64
    rows: list[BucketRow] = []
    append = rows.append
    # The hot loop of fleet loading (~700k iterations for 1,000 models): splitmix64
    # (bucket i's bits are the stream's i-th output) is inlined and clamps are
    # conditionals, because calls dominate its cost.
    state = (key + _GOLDEN * (timeline.first_index + 1)) & mask
    for index, start in enumerate(timeline.starts):
        bits = state
        state = (state + _GOLDEN) & mask
        if index in stopped:
            continue
        bits = ((bits ^ (bits >> 30)) * 0xBF58476D1CE4E5B9) & mask
        bits = ((bits ^ (bits >> 27)) * 0x94D049BB133111EB) & mask
        bits ^= bits >> 31
        weight_factor = timeline.seasonality[index]
        target_calibration = calibration
        target_ne = ne
        if index in effects:
            effect = effects[index]
            weight_factor *= effect.weight
            target_calibration *= effect.calibration
            target_ne *= effect.ne
        # Noise above ~0.5 could flip a sum's sign: sums are clamped at zero.
        weight = events * weight_factor * (1.0 + ((bits & 0xFFFF) - centre) * scale)
        weight = weight if weight > 0.0 else 0.0
        rate = base_rate * (1.0 + (((bits >> 16) & 0xFFFF) - centre) * scale)
        rate = _MIN_RATE if rate < _MIN_RATE else _MAX_RATE if rate > _MAX_RATE else rate
        label_sum = weight * rate
        prediction_sum = (
            label_sum * target_calibration * (1.0 + (((bits >> 32) & 0xFFFF) - centre) * scale)
        )
        entropy = -(rate * log(rate) + (1.0 - rate) * log(1.0 - rate))
        cross_entropy_sum = weight * entropy * target_ne * (1.0 + ((bits >> 48) - centre) * scale)
        append(
            _new_row(
                BucketRow,
                (
                    start,
                    weight,
                    label_sum,
                    prediction_sum if prediction_sum > 0.0 else 0.0,
                    cross_entropy_sum if cross_entropy_sum > 0.0 else 0.0,
                ),
            )
        )
    return rows


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
