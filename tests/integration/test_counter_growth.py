"""Bucket sums from raw counter samples: gaps are no data, resets restart from zero, exporters add up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fleetdesk.server.integrations.prometheus_api import Sample, Series
from fleetdesk.server.integrations.prometheus_source import counter_growth

T0 = datetime(2026, 12, 1, tzinfo=UTC)
STEP = timedelta(hours=1)
BOUNDARIES = [T0 + i * STEP for i in range(5)]


def series(instance: str, values: dict[int, float]) -> Series:
    return Series(
        labels={"instance": instance},
        samples=[Sample(at=T0 + i * STEP, value=v) for i, v in sorted(values.items())],
    )


def test_growth_per_bucket_from_boundary_values() -> None:
    growth = counter_growth([series("a", {0: 10, 1: 15, 2: 15, 3: 40, 4: 41})], BOUNDARIES)
    assert growth == {BOUNDARIES[0]: 5, BOUNDARIES[1]: 0, BOUNDARIES[2]: 25, BOUNDARIES[3]: 1}


def test_a_missing_boundary_sample_is_a_gap_not_zero() -> None:
    growth = counter_growth([series("a", {0: 10, 1: 15, 3: 40, 4: 41})], BOUNDARIES)
    assert BOUNDARIES[1] not in growth and BOUNDARIES[2] not in growth
    assert growth == {BOUNDARIES[0]: 5, BOUNDARIES[3]: 1}


def test_a_counter_reset_counts_from_zero() -> None:
    growth = counter_growth([series("a", {0: 100, 1: 7})], BOUNDARIES[:2])
    assert growth == {BOUNDARIES[0]: 7}


def test_series_of_several_exporters_add_up_and_all_must_be_present() -> None:
    growth = counter_growth(
        [series("a", {0: 1, 1: 3, 2: 6}), series("b", {0: 10, 1: 20})], BOUNDARIES[:3]
    )
    assert growth == {BOUNDARIES[0]: 12}, "the second bucket lacks exporter b's end sample: no data"


def test_no_series_is_no_data() -> None:
    assert counter_growth([], BOUNDARIES) == {}
