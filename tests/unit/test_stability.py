"""Stability math: additive sums, calibration, NE, no-data and health bands."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from fleetdesk.domain.stability import (
    EPSILON,
    Health,
    HealthBands,
    StabilityBucket,
    StabilitySums,
    binary_entropy,
    log_loss,
    merge,
)

BANDS = HealthBands(calibration_low=0.9, calibration_high=1.1, ne_max=0.95)
REL = 1e-9

# Subnormal sums would underflow the rate to 0: not a bucket anyone can produce.
amount = st.floats(
    min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False, allow_subnormal=False
)
probability = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
weight = st.floats(min_value=0.0, max_value=100.0, allow_nan=False)
event = st.tuples(probability, st.sampled_from([0.0, 1.0]), weight)


@st.composite
def sums(draw: st.DrawFn) -> StabilitySums:
    return StabilitySums(
        weight=draw(amount),
        label_sum=draw(amount),
        prediction_sum=draw(amount),
        cross_entropy_sum=draw(amount),
    )


def fields(value: StabilitySums) -> tuple[float, float, float, float]:
    return (value.weight, value.label_sum, value.prediction_sum, value.cross_entropy_sum)


def assert_close(a: StabilitySums, b: StabilitySums) -> None:
    for x, y in zip(fields(a), fields(b)):
        assert math.isclose(x, y, rel_tol=REL, abs_tol=1e-6), (fields(a), fields(b))


# --- merging -----------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(sums(), sums(), sums())
def test_addition_is_associative(a: StabilitySums, b: StabilitySums, c: StabilitySums) -> None:
    assert_close((a + b) + c, a + (b + c))


@settings(max_examples=200, deadline=None)
@given(st.lists(sums(), max_size=30), st.randoms(use_true_random=False))
def test_merge_is_order_independent(items: list[StabilitySums], rng: random.Random) -> None:
    shuffled = list(items)
    rng.shuffle(shuffled)
    # Exactly equal, not just close: merge sums each field with correct rounding.
    assert merge(shuffled) == merge(items)


@settings(max_examples=200, deadline=None)
@given(st.lists(sums(), max_size=30), st.integers(min_value=0, max_value=30))
def test_merging_merged_windows_equals_merging_all(items: list[StabilitySums], cut: int) -> None:
    assert_close(merge([merge(items[:cut]), merge(items[cut:])]), merge(items))


def test_merge_of_nothing_is_empty_and_has_no_data() -> None:
    assert merge([]) == StabilitySums()
    assert not merge([]).has_data


def test_merge_accepts_buckets_and_drops_their_start() -> None:
    start = datetime(2026, 12, 1, tzinfo=UTC)
    buckets = [
        StabilityBucket(
            start=start, weight=10, label_sum=1, prediction_sum=1.2, cross_entropy_sum=3.0
        ),
        StabilityBucket(
            start=start, weight=30, label_sum=2, prediction_sum=1.8, cross_entropy_sum=7.0
        ),
    ]
    merged = merge(buckets)
    assert type(merged) is StabilitySums
    assert fields(merged) == (40, 3, 3.0, 10.0)
    # Ratios come from the sums (3.0 / 3), never from averaging 1.2 and 0.9.
    assert merged.calibration == 1.0


# --- raw events vs buckets -----------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(event, max_size=60), st.randoms(use_true_random=False))
def test_recomputing_from_raw_events_equals_the_bucket_path(
    events: list[tuple[float, float, float]], rng: random.Random
) -> None:
    buckets: list[list[tuple[float, float, float]]] = [[] for _ in range(rng.randint(1, 8))]
    for item in events:
        rng.choice(buckets).append(item)
    bucketed = merge(StabilitySums.from_events(bucket) for bucket in buckets)
    direct = StabilitySums.from_events(events)
    assert_close(bucketed, direct)
    # Both paths agree on "no data" unless the rate sits within rounding of 0 or 1.
    rate_is_borderline = math.isclose(direct.label_sum, direct.weight) or math.isclose(
        direct.label_sum, 0, abs_tol=1e-9
    )
    if not rate_is_borderline:
        assert bucketed.has_data == direct.has_data
    if direct.has_data and bucketed.has_data:
        assert math.isclose(bucketed.calibration, direct.calibration, rel_tol=1e-7)  # type: ignore[arg-type]
        # NE divides by the entropy of the rate, which near 0 or 1 turns the sums' rounding (summed in another
        # order, ~1e-14 relative) into an error of the rate's distance from the edge: rate 1 - 6e-11 put the
        # two paths 3.4e-6 apart (a CI run). The tolerance grows with that conditioning.
        rate = direct.label_sum / direct.weight
        edge = min(rate, 1.0 - rate)
        assert math.isclose(
            bucketed.normalized_entropy,  # type: ignore[arg-type]
            direct.normalized_entropy,  # type: ignore[arg-type]
            rel_tol=1e-7 + 1e-13 / edge,
        )


def test_from_events_by_hand() -> None:
    # Three events (prediction, label, weight):
    #   (0.2, 1, 1): loss -ln 0.2;  (0.2, 0, 1): loss -ln 0.8;  (0.5, 0, 2): loss -ln 0.5 each.
    result = StabilitySums.from_events([(0.2, 1.0, 1.0), (0.2, 0.0, 1.0), (0.5, 0.0, 2.0)])
    assert result.weight == 4.0
    assert result.label_sum == 1.0
    assert math.isclose(result.prediction_sum, 0.2 + 0.2 + 2 * 0.5)
    expected_loss = -math.log(0.2) - math.log(0.8) - 2 * math.log(0.5)
    assert math.isclose(result.cross_entropy_sum, expected_loss)
    # p̄ = 1/4; calibration = 1.4 / 1; NE = (loss / 4) / H(1/4).
    assert math.isclose(result.calibration, 1.4)  # type: ignore[arg-type]
    h = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    assert math.isclose(result.normalized_entropy, (expected_loss / 4) / h)  # type: ignore[arg-type]


# --- the two reference points ---------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=1, max_value=500),
    st.integers(min_value=1, max_value=500),
    st.floats(min_value=0.01, max_value=1000.0),
)
def test_ne_of_the_constant_background_rate_predictor_is_one(
    positives: int, negatives: int, w: float
) -> None:
    rate = positives / (positives + negatives)
    events = [(rate, 1.0, w)] * positives + [(rate, 0.0, w)] * negatives
    result = StabilitySums.from_events(events)
    assert math.isclose(result.normalized_entropy, 1.0, rel_tol=1e-9)  # type: ignore[arg-type]
    assert math.isclose(result.calibration, 1.0, rel_tol=1e-9)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(min_value=0.001, max_value=0.999), weight), min_size=1, max_size=40
    )
)
def test_calibration_of_exactly_calibrated_data_is_one(
    predictions: list[tuple[float, float]],
) -> None:
    # For a prediction p on weight w, a positive of weight w·p and a negative of
    # weight w·(1-p): Σ predictions = w·p·p + w·(1-p)·p = w·p = Σ labels.
    events = []
    for p, w in predictions:
        events += [(p, 1.0, w * p), (p, 0.0, w * (1 - p))]
    result = StabilitySums.from_events(events)
    assume(result.has_data)
    assert math.isclose(result.calibration, 1.0, rel_tol=1e-9)  # type: ignore[arg-type]


def test_a_perfect_predictor_has_ne_near_zero_and_a_wrong_one_far_above_one() -> None:
    perfect = StabilitySums.from_events([(1.0, 1.0, 1.0), (0.0, 0.0, 1.0)])
    inverted = StabilitySums.from_events([(0.0, 1.0, 1.0), (1.0, 0.0, 1.0)])
    assert perfect.normalized_entropy < 1e-6  # type: ignore[operator]
    assert inverted.normalized_entropy > 20  # type: ignore[operator]


# --- no data ---------------------------------------------------------------------


NO_DATA_CASES = {
    "no events": [],
    "zero weight": [(0.3, 1.0, 0.0), (0.3, 0.0, 0.0)],
    "no positives": [(0.3, 0.0, 1.0)] * 5,
    "all positives": [(0.9, 1.0, 1.0)] * 5,
}


@pytest.mark.parametrize("events", NO_DATA_CASES.values(), ids=NO_DATA_CASES.keys())
def test_no_data_is_never_stable_or_unstable(events: list[tuple[float, float, float]]) -> None:
    result = StabilitySums.from_events(events)
    assert not result.has_data
    assert result.calibration is None
    assert result.normalized_entropy is None
    # Bands that would accept anything, and bands that would reject anything.
    assert (
        HealthBands(calibration_low=1e-9, calibration_high=1e9, ne_max=1e9).health(result)
        is Health.NO_DATA
    )
    assert (
        HealthBands(calibration_low=1.0, calibration_high=1.0 + 1e-12, ne_max=1e-12).health(result)
        is Health.NO_DATA
    )


@settings(max_examples=200, deadline=None)
@given(sums())
def test_health_is_no_data_exactly_when_the_rate_is_undefined_or_a_ratio_overflows(
    value: StabilitySums,
) -> None:
    health = BANDS.health(value)
    rate_defined = value.weight > 0 and 0 < value.label_sum < value.weight
    meaningful = (
        rate_defined
        and math.isfinite(value.prediction_sum / value.label_sum)
        and math.isfinite(
            (value.cross_entropy_sum / value.weight)
            / binary_entropy(value.label_sum / value.weight)
        )
    )
    assert (health is Health.NO_DATA) == (not meaningful)


# --- bands -------------------------------------------------------------------------


def sums_with(calibration: float, ne: float) -> StabilitySums:
    # weight 100, 10 positives: p̄ = 0.1; NE = (CE / 100) / H(0.1).
    return StabilitySums(
        weight=100.0,
        label_sum=10.0,
        prediction_sum=10.0 * calibration,
        cross_entropy_sum=ne * binary_entropy(0.1) * 100.0,
    )


@pytest.mark.parametrize(
    ("calibration", "ne", "health"),
    [
        (1.0, 0.8, Health.STABLE),
        (0.9, 0.8, Health.STABLE),  # lower calibration edge is inside
        (1.1, 0.8, Health.STABLE),  # upper calibration edge is inside
        (0.9 - 1e-6, 0.8, Health.UNSTABLE),
        (1.1 + 1e-6, 0.8, Health.UNSTABLE),
        (1.0, 0.95 - 1e-9, Health.STABLE),
        (1.0, 0.95 + 1e-6, Health.UNSTABLE),
        (0.0, 0.8, Health.UNSTABLE),  # predictions all zero
        (1.5, 1.5, Health.UNSTABLE),
    ],
)
def test_bands_edges(calibration: float, ne: float, health: Health) -> None:
    assert BANDS.health(sums_with(calibration, ne)) is health


def test_ne_exactly_at_the_maximum_is_stable() -> None:
    value = sums_with(1.0, 0.95)
    bands = HealthBands(calibration_low=0.9, calibration_high=1.1, ne_max=value.normalized_entropy)  # type: ignore[arg-type]
    assert bands.health(value) is Health.STABLE


@pytest.mark.parametrize(
    "bad",
    [
        {"calibration_low": 1.1, "calibration_high": 0.9, "ne_max": 1.0},
        {"calibration_low": 1.0, "calibration_high": 1.0, "ne_max": 1.0},
        {"calibration_low": 0.0, "calibration_high": 1.1, "ne_max": 1.0},
        {"calibration_low": 0.9, "calibration_high": 1.1, "ne_max": 0.0},
        {"calibration_low": 0.9, "calibration_high": float("inf"), "ne_max": 1.0},
        {"calibration_low": 0.9, "calibration_high": 1.1, "ne_max": float("nan")},
    ],
)
def test_bands_reject_nonsense(bad: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        HealthBands(**bad)


# --- guarding the sums ---------------------------------------------------------------


@pytest.mark.parametrize("field", ["weight", "label_sum", "prediction_sum", "cross_entropy_sum"])
@pytest.mark.parametrize("value", [-1.0, float("nan"), float("inf")])
def test_sums_reject_negative_and_non_finite_values(field: str, value: float) -> None:
    with pytest.raises(ValidationError):
        StabilitySums(**{field: value})


# --- the loss ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prediction", "label", "expected"),
    [
        (0.0, 1.0, -math.log(EPSILON)),  # clipped up to ε
        (1.0, 0.0, -math.log(EPSILON)),  # clipped down to 1-ε
        (-0.5, 1.0, -math.log(EPSILON)),
        (1.5, 0.0, -math.log(EPSILON)),
        (0.0, 0.0, -math.log(1 - EPSILON)),
        (1.0, 1.0, -math.log(1 - EPSILON)),
        (0.5, 1.0, math.log(2)),
        (0.25, 0.0, -math.log(0.75)),
    ],
)
def test_log_loss_clips_predictions(prediction: float, label: float, expected: float) -> None:
    loss = log_loss(prediction, label)
    assert math.isfinite(loss)
    assert math.isclose(loss, expected, rel_tol=1e-9)


def test_events_predicting_exactly_zero_and_one_give_finite_sums() -> None:
    result = StabilitySums.from_events(
        [(0.0, 1.0, 1.0), (1.0, 0.0, 1.0), (0.5, 1.0, 1.0), (0.5, 0.0, 1.0)]
    )
    assert math.isfinite(result.cross_entropy_sum)
    assert math.isfinite(result.normalized_entropy)  # type: ignore[arg-type]


def test_binary_entropy_reference_values() -> None:
    assert math.isclose(binary_entropy(0.5), math.log(2))
    assert math.isclose(binary_entropy(0.1), binary_entropy(0.9))
    assert math.isclose(binary_entropy(0.1), -(0.1 * math.log(0.1) + 0.9 * math.log(0.9)))
