"""Synthetic buckets: deterministic, on target, and incidents show in the math."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetdesk.domain.fleet import IncidentKind, MetricHistory, MetricIncident, MetricProfile
from fleetdesk.domain.stability import Health, HealthBands, merge
from fleetdesk.domain.synthetic import Timeline, bucket_from_row, materialise, synthesize

END = datetime(2026, 11, 30, tzinfo=UTC)
START = END - timedelta(days=7)
HOUR = timedelta(hours=1)
PROFILE = MetricProfile(
    events_per_bucket=50_000,
    base_rate=0.04,
    calibration=1.01,
    normalized_entropy=0.83,
    noise=0.02,
    seed=7,
)
BANDS = HealthBands(calibration_low=0.9, calibration_high=1.1, ne_max=0.95)


def buckets(
    profile: MetricProfile = PROFILE,
    incidents: tuple[MetricIncident, ...] = (),
    model_id: str = "m1",
):
    return list(synthesize(model_id, profile, list(incidents), START, END, HOUR))


def incident(
    kind: IncidentKind, start: datetime, end: datetime | None, magnitude: float = 1.0
) -> MetricIncident:
    return MetricIncident(model_id="m1", kind=kind, start=start, end=end, magnitude=magnitude)


def test_one_bucket_per_closed_hour_in_order() -> None:
    result = buckets()
    assert len(result) == 7 * 24
    assert [b.start for b in result] == [START + i * HOUR for i in range(7 * 24)]


def test_same_seed_and_id_give_identical_buckets() -> None:
    assert buckets() == buckets()


def test_different_seed_or_model_id_gives_different_noise() -> None:
    reseeded = buckets(PROFILE.model_copy(update={"seed": 8}))
    other_model = buckets(model_id="m2")
    assert all(a.weight != b.weight for a, b in zip(buckets(), reseeded))
    assert all(a.weight != b.weight for a, b in zip(buckets(), other_model))


def test_any_bucket_regenerates_on_its_own() -> None:
    """A shorter window from the same start reproduces the same leading buckets exactly."""
    full = buckets()
    first_day = list(synthesize("m1", PROFILE, [], START, START + timedelta(days=1), HOUR))
    assert first_day == full[:24]


def test_buckets_hit_the_profile_targets_within_the_noise() -> None:
    result = buckets()
    for bucket in result:
        assert bucket.calibration == pytest.approx(PROFILE.calibration, rel=4 * PROFILE.noise)
        assert bucket.normalized_entropy == pytest.approx(
            PROFILE.normalized_entropy, rel=4 * PROFILE.noise
        )
        assert BANDS.health(bucket) is Health.STABLE
    window = merge(result)
    assert window.calibration == pytest.approx(PROFILE.calibration, rel=0.005)
    assert window.normalized_entropy == pytest.approx(PROFILE.normalized_entropy, rel=0.01)
    assert window.background_rate == pytest.approx(PROFILE.base_rate, rel=0.01)


def test_noise_varies_buckets_and_traffic_follows_the_day() -> None:
    result = buckets()
    assert len({round(b.calibration, 6) for b in result}) > 100
    by_hour = {b.start.hour: b.weight for b in result[:24]}
    assert by_hour[15] > 1.4 * by_hour[3]  # afternoon peak, night trough


def test_calibration_drift_ramps_out_of_band() -> None:
    drift_start = END - timedelta(hours=10)
    result = buckets(
        incidents=[incident(IncidentKind.CALIBRATION_DRIFT, drift_start, None, magnitude=1.4)]
    )
    before = [b for b in result if b.start < drift_start]
    during = [b for b in result if b.start >= drift_start]
    assert all(BANDS.health(b) is Health.STABLE for b in before)
    calibrations = [b.calibration for b in during]
    assert calibrations[-1] == pytest.approx(PROFILE.calibration * 1.4, rel=0.08)
    assert calibrations[0] < 1.1 < calibrations[-1]
    assert BANDS.health(during[-1]) is Health.UNSTABLE


def test_incident_effects_end_with_the_incident() -> None:
    span = (START + timedelta(days=2), START + timedelta(days=2, hours=6))
    result = buckets(incidents=[incident(IncidentKind.NE_REGRESSION, *span, magnitude=1.3)])
    inside = [b for b in result if span[0] <= b.start < span[1]]
    outside = [b for b in result if not span[0] <= b.start < span[1]]
    assert len(inside) == 6
    assert all(b.normalized_entropy == pytest.approx(0.83 * 1.3, rel=0.08) for b in inside)
    assert all(BANDS.health(b) is Health.UNSTABLE for b in inside)
    assert all(BANDS.health(b) is Health.STABLE for b in outside)


def test_feed_stop_leaves_no_buckets_in_its_span() -> None:
    stop = END - timedelta(hours=3)
    result = buckets(incidents=[incident(IncidentKind.FEED_STOP, stop, None)])
    assert len(result) == 7 * 24 - 3
    assert result[-1].start == stop - HOUR


def test_traffic_shift_multiplies_volume_not_ratios() -> None:
    span = (START + timedelta(days=1), START + timedelta(days=2))
    plain = buckets()
    shifted = buckets(incidents=[incident(IncidentKind.TRAFFIC_SHIFT, *span, magnitude=0.25)])
    for a, b in zip(plain, shifted):
        if span[0] <= a.start < span[1]:
            assert b.weight == pytest.approx(a.weight * 0.25)
            assert b.calibration == pytest.approx(a.calibration)
        else:
            assert b == a


def test_other_models_incidents_are_ignored() -> None:
    foreign = MetricIncident(model_id="m2", kind=IncidentKind.FEED_STOP, start=START, end=END)
    assert buckets(incidents=[foreign]) == buckets()


def test_materialise_matches_per_model_synthesis() -> None:
    history = MetricHistory(
        start=START,
        end=END,
        profiles={"m1": PROFILE, "m2": PROFILE.model_copy(update={"base_rate": 0.2})},
        incidents=[
            incident(IncidentKind.CALIBRATION_DRIFT, END - timedelta(hours=5), None, magnitude=0.7)
        ],
    )
    rows = dict(materialise(history))
    assert set(rows) == {"m1", "m2"}
    for model_id, profile in history.profiles.items():
        expected = list(synthesize(model_id, profile, history.incidents, START, END, HOUR))
        assert [bucket_from_row(row) for row in rows[model_id]] == expected


def test_timeline_counts_only_closed_buckets() -> None:
    assert len(Timeline(START, START + timedelta(hours=2, minutes=30), HOUR)) == 2
    assert len(Timeline(START, START, HOUR)) == 0


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**31),
    model_id=st.text(min_size=1, max_size=20),
    noise=st.floats(min_value=0.0, max_value=0.3),
    base_rate=st.floats(min_value=0.001, max_value=0.9),
    cut=st.integers(min_value=0, max_value=48),
)
def test_any_profile_regenerates_identically_and_stays_valid(
    seed: int, model_id: str, noise: float, base_rate: float, cut: int
) -> None:
    profile = PROFILE.model_copy(update={"seed": seed, "noise": noise, "base_rate": base_rate})
    end = START + timedelta(hours=48)
    full = list(synthesize(model_id, profile, [], START, end, HOUR))
    assert full == list(synthesize(model_id, profile, [], START, end, HOUR))
    assert full[:cut] == list(synthesize(model_id, profile, [], START, START + cut * HOUR, HOUR))
    for bucket in full:
        assert bucket.has_data
        assert bucket.calibration == pytest.approx(profile.calibration, rel=2 * noise + 1e-9)


def _one_bucket_at_a_time(model_id, profile, incidents, timeline):  # noqa: ANN001, ANN202
    """The recipe as written for one bucket at a time (the code before the batch one): the oracle."""
    import math

    from fleetdesk.domain.synthetic import _incident_effects, stream_key

    mask, golden = (1 << 64) - 1, 0x9E3779B97F4A7C15
    effects, stopped = _incident_effects(incidents, timeline)
    scale = 2.0 * math.sqrt(3.0) / 65536.0 * profile.noise
    state = (stream_key(model_id, profile) + golden * (timeline.first_index + 1)) & mask
    rows = []
    for index, start in enumerate(timeline.starts):
        bits = state
        state = (state + golden) & mask
        if index in stopped:
            continue
        bits = ((bits ^ (bits >> 30)) * 0xBF58476D1CE4E5B9) & mask
        bits = ((bits ^ (bits >> 27)) * 0x94D049BB133111EB) & mask
        bits ^= bits >> 31
        weight_factor, calibration, ne = (
            timeline.seasonality[index],
            profile.calibration,
            profile.normalized_entropy,
        )
        if index in effects:
            weight_factor *= effects[index].weight
            calibration *= effects[index].calibration
            ne *= effects[index].ne
        weight = (
            profile.events_per_bucket * weight_factor * (1.0 + ((bits & 0xFFFF) - 32767.5) * scale)
        )
        weight = weight if weight > 0.0 else 0.0
        rate = profile.base_rate * (1.0 + (((bits >> 16) & 0xFFFF) - 32767.5) * scale)
        rate = 1e-9 if rate < 1e-9 else 0.999 if rate > 0.999 else rate
        label_sum = weight * rate
        prediction = label_sum * calibration * (1.0 + (((bits >> 32) & 0xFFFF) - 32767.5) * scale)
        entropy = -(rate * math.log(rate) + (1.0 - rate) * math.log(1.0 - rate))
        cross_entropy = weight * entropy * ne * (1.0 + ((bits >> 48) - 32767.5) * scale)
        prediction = prediction if prediction > 0.0 else 0.0  # -0.0 too
        cross_entropy = cross_entropy if cross_entropy > 0.0 else 0.0
        rows.append((start, weight, label_sum, prediction, cross_entropy))
    return rows


_KINDS = st.sampled_from(list(IncidentKind))


@settings(max_examples=60, deadline=None)
@given(
    profiles=st.lists(
        st.tuples(
            st.text(min_size=1, max_size=12),
            st.integers(min_value=0, max_value=2**31),
            st.floats(min_value=0.0, max_value=0.9),
            st.floats(min_value=1e-12, max_value=0.9999),
            st.floats(min_value=0.0, max_value=1e9),
        ),
        min_size=1,
        max_size=4,
        unique_by=lambda profile: profile[0],
    ),
    incidents=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=3),
            _KINDS,
            st.integers(min_value=-5, max_value=60),
            st.one_of(st.none(), st.integers(min_value=1, max_value=30)),
            st.floats(min_value=1e-3, max_value=1e3),
        ),
        max_size=6,
    ),
    hours=st.integers(min_value=0, max_value=60),
    continued=st.booleans(),
)
def test_a_batch_of_models_is_bit_for_bit_the_bucket_by_bucket_recipe(
    profiles, incidents, hours: int, continued: bool
) -> None:  # noqa: ANN001
    """Seeding computes many models' buckets at once in numpy: every value must be the one the recipe gives
    a bucket at a time, to the last bit (the seeded store and the console's charts show the same history),
    for any noise, rate, volume and incidents (open-ended, overlapping, feed stops), and for continued
    timelines."""
    import struct

    from fleetdesk.domain.synthetic import synthesize_columns

    timeline = Timeline(START, START + hours * HOUR, HOUR)
    if continued:
        timeline = timeline.after(START + (hours + 20) * HOUR)
    series = []
    for number, (model_id, seed, noise, base_rate, events) in enumerate(profiles):
        profile = PROFILE.model_copy(
            update={
                "seed": seed,
                "noise": noise,
                "base_rate": base_rate,
                "events_per_bucket": events,
            }
        )
        own = [
            MetricIncident(
                model_id=model_id,
                kind=kind,
                start=START + first * HOUR,
                end=None if length is None else START + (first + length) * HOUR,
                magnitude=1.0 if kind is IncidentKind.FEED_STOP else magnitude,
            )
            for owner, kind, first, length, magnitude in incidents
            if owner == number
        ]
        series.append((model_id, profile, own))
    columns = synthesize_columns(series, timeline)
    for number, (model_id, profile, own) in enumerate(series):
        rows = slice(columns.bounds[number], columns.bounds[number + 1])
        got = [
            (timeline.starts[position], *sums)
            for position, *sums in zip(
                columns.position[rows].tolist(),
                columns.weight[rows].tolist(),
                columns.label_sum[rows].tolist(),
                columns.prediction_sum[rows].tolist(),
                columns.cross_entropy_sum[rows].tolist(),
                strict=True,
            )
        ]
        expected = _one_bucket_at_a_time(model_id, profile, own, timeline)
        assert [row[0] for row in got] == [row[0] for row in expected]
        for ours, theirs in zip(got, expected, strict=True):
            assert [struct.pack("<d", value) for value in ours[1:]] == [
                struct.pack("<d", value) for value in theirs[1:]
            ]
