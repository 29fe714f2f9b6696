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
