"""Timeslice SLO math on worked examples; every expected number is derived by hand here."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from fleetdesk.domain.slo import (
    DEFAULT_RULES,
    BurnRateRule,
    Severity,
    SliceCounts,
    SliceHealth,
    SloPolicy,
    burn_rate,
    count_slices,
    evaluate,
    status_from_counts,
)
from fleetdesk.domain.stability import Health

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
FIVE_MINUTES = timedelta(minutes=5)
GOOD, BAD, NONE = Health.STABLE, Health.UNSTABLE, Health.NO_DATA


def history(
    healths: list[Health], slice_length: timedelta, now: datetime = NOW
) -> list[SliceHealth]:
    """Slices oldest first, the last one closing exactly at ``now``."""
    first = now - len(healths) * slice_length
    return [SliceHealth(start=first + i * slice_length, health=h) for i, h in enumerate(healths)]


def rates(status) -> dict[timedelta, float | None]:  # noqa: ANN001
    return {item.window: item.rate for item in status.burn_rates}


def fired(status) -> list[str]:  # noqa: ANN001
    return [alert.rule for alert in status.alerts]


# --- 28 days of hourly slices (the default policy) -----------------------------------


def test_budget_over_28_days_of_hourly_slices() -> None:
    # 28 d × 24 h = 672 slices; 3 bad ones, 10 days ago, all else good.
    healths = [GOOD] * 672
    for i in (400, 401, 402):
        healths[i] = BAD
    status = evaluate(history(healths, HOUR), NOW, SloPolicy())
    assert status.counts == SliceCounts(good=669, bad=3, no_data=0)
    # Allowed bad slices: (1 - 0.99) × 672 = 6.72.
    assert math.isclose(status.budget_total, 6.72)
    # 3 of 6.72 spent: 1 - 3/6.72 = 0.553571…
    assert math.isclose(status.budget_remaining, 1 - 3 / 6.72)  # type: ignore[arg-type]
    assert math.isclose(status.budget_remaining, 0.5535714285714286)  # type: ignore[arg-type]
    # Nothing bad in the last 3 days: every burn rate is 0, nothing fires.
    assert set(rates(status).values()) == {0.0}
    assert status.alerts == []
    assert status.objective == 0.99
    assert status.window == timedelta(days=28)
    assert status.evaluated_at == NOW


def test_slices_older_than_the_window_do_not_count() -> None:
    # 700 slices: the 28 oldest (outside 672) are bad and must be ignored.
    healths = [BAD] * 28 + [GOOD] * 672
    status = evaluate(history(healths, HOUR), NOW, SloPolicy())
    assert status.counts == SliceCounts(good=672, bad=0)
    assert status.budget_remaining == 1.0


def test_overspent_budget_is_negative() -> None:
    # 10 bad of 672: 1 - 10/6.72 = -0.488095…
    healths = [BAD] * 10 + [GOOD] * 662
    status = evaluate(history(healths, HOUR), NOW, SloPolicy())
    assert math.isclose(status.budget_remaining, 1 - 10 / 6.72)  # type: ignore[arg-type]
    assert status.budget_remaining < 0  # type: ignore[operator]


def test_one_bad_latest_hour_fires_every_default_rule() -> None:
    # Hourly slices, only the latest one bad.
    status = evaluate(history([GOOD] * 671 + [BAD], HOUR), NOW, SloPolicy())
    r = rates(status)
    # 5m and 30m are shorter than a slice: both read the latest closed slice, 1 bad of 1.
    # Burn = bad share / allowed share = (1/1) / 0.01 = 100.
    assert math.isclose(r[timedelta(minutes=5)], 100)  # type: ignore[arg-type]
    assert math.isclose(r[timedelta(minutes=30)], 100)  # type: ignore[arg-type]
    assert math.isclose(r[HOUR], 100)  # type: ignore[arg-type]
    # 6h: 1 of 6 bad → (1/6) / 0.01 = 16.67.
    assert math.isclose(r[timedelta(hours=6)], 100 / 6)  # type: ignore[arg-type]
    # 3d: 1 of 72 bad → (1/72) / 0.01 = 1.389.
    assert math.isclose(r[timedelta(days=3)], 100 / 72)  # type: ignore[arg-type]
    # page-fast: min(100, 100) ≥ 14.4; page-slow: min(16.67, 100) ≥ 6; ticket: min(1.389, 16.67) ≥ 1.
    assert fired(status) == ["page-fast", "page-slow", "ticket"]
    assert [a.severity for a in status.alerts] == [Severity.PAGE, Severity.PAGE, Severity.TICKET]
    page_fast = status.alerts[0]
    assert (page_fast.long_burn_rate, page_fast.short_burn_rate, page_fast.threshold) == (
        pytest.approx(100),
        pytest.approx(100),
        14.4,
    )


def test_window_shorter_than_a_slice_reads_the_latest_closed_slice() -> None:
    # At 12:30 the 12:00-13:00 slice is still open (even if a row exists for it):
    # the 5m window reads the 11:00-12:00 slice, which is bad → (1/1) / 0.01 = 100.
    slices = history([GOOD] * 671 + [BAD], HOUR) + [SliceHealth(start=NOW, health=GOOD)]
    status = evaluate(slices, NOW + timedelta(minutes=30), SloPolicy())
    assert math.isclose(rates(status)[timedelta(minutes=5)], 100)  # type: ignore[arg-type]
    # The open slice is not counted in the 28-day window either.
    assert status.counts.evaluated == 672


# --- 5-minute slices: the alert windows resolve separately -------------------------


POLICY_5M = SloPolicy(objective=0.99, window=timedelta(days=3), slice=FIVE_MINUTES)
SLICES_3D = 3 * 24 * 12  # 864 five-minute slices in 3 days


def test_fresh_outage_pages_but_does_not_ticket() -> None:
    # The last 25 minutes (5 slices) bad, the 859 before good.
    status = evaluate(history([GOOD] * (SLICES_3D - 5) + [BAD] * 5, FIVE_MINUTES), NOW, POLICY_5M)
    r = rates(status)
    assert math.isclose(r[timedelta(minutes=5)], 100)  # 1/1 / 0.01  # type: ignore[arg-type]
    assert math.isclose(r[timedelta(minutes=30)], (5 / 6) / 0.01)  # 83.3  # type: ignore[arg-type]
    assert math.isclose(r[HOUR], (5 / 12) / 0.01)  # 41.7  # type: ignore[arg-type]
    assert math.isclose(r[timedelta(hours=6)], (5 / 72) / 0.01)  # 6.94  # type: ignore[arg-type]
    assert math.isclose(r[timedelta(days=3)], (5 / 864) / 0.01)  # 0.579  # type: ignore[arg-type]
    # page-fast: min(41.7, 100) ≥ 14.4 yes; page-slow: min(6.94, 83.3) ≥ 6 yes; ticket: 0.579 < 1 no.
    assert fired(status) == ["page-fast", "page-slow"]
    # Budget over 3 days: 0.01 × 864 = 8.64 slices; 1 - 5/8.64 = 0.4213.
    assert math.isclose(status.budget_total, 8.64)
    assert math.isclose(status.budget_remaining, 1 - 5 / 8.64)  # type: ignore[arg-type]


def test_recovered_burst_stops_paging_but_still_tickets() -> None:
    # 12 bad slices (one hour) that ended two hours ago (24 good slices since).
    healths = [GOOD] * (SLICES_3D - 36) + [BAD] * 12 + [GOOD] * 24
    status = evaluate(history(healths, FIVE_MINUTES), NOW, POLICY_5M)
    r = rates(status)
    assert r[timedelta(minutes=5)] == 0.0
    assert r[timedelta(minutes=30)] == 0.0
    assert r[HOUR] == 0.0
    assert math.isclose(r[timedelta(hours=6)], (12 / 72) / 0.01)  # 16.7  # type: ignore[arg-type]
    assert math.isclose(r[timedelta(days=3)], (12 / 864) / 0.01)  # 1.389  # type: ignore[arg-type]
    # page-fast: 0 < 14.4; page-slow: 6h is 16.7 but 30m is 0, so no; ticket: min(1.389, 16.7) ≥ 1.
    assert fired(status) == ["ticket"]


def test_no_data_slices_are_excluded_from_both_sides() -> None:
    # Last hour, oldest first: 6 no-data, 5 good, 1 bad. 1h: 1 bad of 6 evaluated.
    healths = [GOOD] * (SLICES_3D - 12) + [NONE] * 6 + [GOOD] * 5 + [BAD]
    status = evaluate(history(healths, FIVE_MINUTES), NOW, POLICY_5M)
    assert status.counts == SliceCounts(good=SLICES_3D - 7, bad=1, no_data=6)
    # (1/6) / 0.01 = 16.67 (it would be 8.33 if no-data counted as good).
    assert math.isclose(rates(status)[HOUR], 100 / 6)  # type: ignore[arg-type]
    # Budget is over evaluated slices only: 0.01 × 858 = 8.58; 1 - 1/8.58.
    assert math.isclose(status.budget_total, 8.58)
    assert math.isclose(status.budget_remaining, 1 - 1 / 8.58)  # type: ignore[arg-type]
    # page-fast: min(16.67, 5m = 100) ≥ 14.4.
    assert "page-fast" in fired(status)


def test_a_window_of_only_no_data_has_no_burn_rate_and_never_fires() -> None:
    # The bad slice is followed by a feed stop: the 5m window has nothing evaluated.
    healths = [GOOD] * (SLICES_3D - 12) + [BAD] + [GOOD] * 5 + [NONE] * 6
    status = evaluate(history(healths, FIVE_MINUTES), NOW, POLICY_5M)
    r = rates(status)
    assert r[timedelta(minutes=5)] is None
    assert r[timedelta(minutes=30)] is None
    assert math.isclose(r[HOUR], 100 / 6)  # type: ignore[arg-type]
    assert "page-fast" not in fired(status)


def test_all_no_data_has_no_budget_figure() -> None:
    status = evaluate(history([NONE] * 50, FIVE_MINUTES), NOW, POLICY_5M)
    assert status.counts == SliceCounts(no_data=50)
    assert status.budget_total == 0.0
    assert status.budget_remaining is None
    assert set(rates(status).values()) == {None}
    assert status.alerts == []


def test_no_slices_at_all() -> None:
    status = evaluate([], NOW, SloPolicy())
    assert status.counts == SliceCounts()
    assert status.budget_remaining is None
    assert status.alerts == []


def test_burn_rates_are_listed_once_per_window_shortest_first() -> None:
    status = evaluate([], NOW, SloPolicy())
    assert [b.window for b in status.burn_rates] == [
        timedelta(minutes=5),
        timedelta(minutes=30),
        timedelta(hours=1),
        timedelta(hours=6),
        timedelta(days=3),
    ]


# --- configurable rules and thresholds ---------------------------------------------


def test_custom_objective_rules_and_thresholds() -> None:
    # objective 0.75 → allowed bad share 0.25 (exact in binary, so equality is exact).
    # One rule at 2×: long 4h, short 1h, with hourly slices.
    rule = BurnRateRule(
        name="fast", severity=Severity.PAGE, long_window=4 * HOUR, short_window=HOUR, threshold=2.0
    )
    policy = SloPolicy(objective=0.75, window=timedelta(days=1), slice=HOUR, rules=(rule,))
    # Last 4 hours: good, good, bad, bad. 4h: (2/4)/0.25 = 2.0; 1h: (1/1)/0.25 = 4.0.
    status = evaluate(history([GOOD] * 20 + [GOOD, GOOD, BAD, BAD], HOUR), NOW, policy)
    assert rates(status) == {4 * HOUR: 2.0, HOUR: 4.0}
    # min(2.0, 4.0) = 2.0 ≥ 2.0: exactly at the threshold fires.
    assert fired(status) == ["fast"]
    # Budget: 0.25 × 24 = 6 slices; 2 spent → 1 - 2/6 = 2/3.
    assert status.budget_total == 6.0
    assert math.isclose(status.budget_remaining, 2 / 3)  # type: ignore[arg-type]
    # Raise the threshold just above 2: no longer fires.
    stricter = policy.model_copy(update={"rules": (rule.model_copy(update={"threshold": 2.01}),)})
    assert evaluate(history([GOOD] * 20 + [GOOD, GOOD, BAD, BAD], HOUR), NOW, stricter).alerts == []


def test_no_rules_means_no_alerts_and_no_burn_rates() -> None:
    policy = SloPolicy(rules=())
    status = evaluate(history([BAD] * 10, HOUR), NOW, policy)
    assert status.burn_rates == [] and status.alerts == []
    assert status.counts.bad == 10


def test_default_rules_are_the_documented_ones() -> None:
    assert [
        (r.name, r.severity, r.long_window, r.short_window, r.threshold) for r in DEFAULT_RULES
    ] == [
        ("page-fast", Severity.PAGE, HOUR, timedelta(minutes=5), 14.4),
        ("page-slow", Severity.PAGE, 6 * HOUR, timedelta(minutes=30), 6.0),
        ("ticket", Severity.TICKET, timedelta(days=3), 6 * HOUR, 1.0),
    ]
    assert SloPolicy().rules == DEFAULT_RULES


# --- the building blocks --------------------------------------------------------------


def test_burn_rate_by_hand() -> None:
    # 10 bad of 100 at objective 0.9: 0.1 / 0.1 = 1.0 (spending the budget exactly).
    assert math.isclose(burn_rate(SliceCounts(good=90, bad=10), 0.9), 1.0)  # type: ignore[arg-type]
    # 1 bad of 1000 at 0.999: 0.001 / 0.001 = 1.0; 0 bad: 0.
    assert math.isclose(burn_rate(SliceCounts(good=999, bad=1), 0.999), 1.0)  # type: ignore[arg-type]
    assert burn_rate(SliceCounts(good=5), 0.99) == 0.0
    # No-data slices do not dilute: 1 bad of 2 evaluated at 0.5 → 0.5 / 0.5 = 1.0.
    assert burn_rate(SliceCounts(good=1, bad=1, no_data=98), 0.5) == 1.0
    assert burn_rate(SliceCounts(no_data=3), 0.99) is None


def test_count_slices_uses_slices_that_closed_inside_the_window() -> None:
    slices = history([GOOD, BAD, NONE, GOOD], HOUR)  # close at 09:00, 10:00, 11:00, 12:00
    # (09:00, 12:00]: the slice closing at 09:00 is out, the one closing at 12:00 is in.
    assert count_slices(slices, NOW - 3 * HOUR, NOW, HOUR) == SliceCounts(good=1, bad=1, no_data=1)
    # (08:59, 11:00]: 09:00, 10:00, 11:00.
    since = NOW - 3 * HOUR - timedelta(minutes=1)
    assert count_slices(slices, since, NOW - HOUR, HOUR) == SliceCounts(good=1, bad=1, no_data=1)
    assert count_slices(slices, NOW, NOW + HOUR, HOUR) == SliceCounts()


def test_status_from_counts_matches_evaluate() -> None:
    healths = [GOOD] * 600 + [BAD] * 2 + [GOOD] * 69 + [BAD]
    slices = history(healths, HOUR)
    policy = SloPolicy()
    direct = evaluate(slices, NOW, policy)
    # The server's path: counts per window computed elsewhere, then assembled.
    windows = {w for r in policy.rules for w in (r.long_window, r.short_window)}
    precomputed = {
        w: burn_rate(count_slices(slices, NOW - max(w, HOUR), NOW, HOUR), policy.objective)
        for w in windows
    }
    counts = count_slices(slices, NOW - policy.window, NOW, HOUR)
    assert status_from_counts(counts, precomputed, NOW, policy) == direct
    # A rule whose window has no rate is skipped rather than fired.
    assert status_from_counts(counts, {}, NOW, policy).alerts == []


# --- policy validation ---------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"objective": 1.0},
        {"objective": 0.0},
        {"objective": 1.5},
        {"slice": timedelta(0)},
        {"slice": -HOUR},
        {"window": timedelta(minutes=30)},  # shorter than one slice
        {"window": timedelta(0)},
    ],
)
def test_policy_rejects_nonsense(change: dict) -> None:
    with pytest.raises(ValidationError):
        SloPolicy(**change)


@pytest.mark.parametrize(
    "change",
    [
        {"threshold": 0.0},
        {"threshold": float("nan")},
        {"short_window": timedelta(0)},
        {"short_window": 2 * HOUR},  # longer than the long window
        {"long_window": -HOUR},
    ],
)
def test_rule_rejects_nonsense(change: dict) -> None:
    values = {
        "name": "r",
        "severity": Severity.PAGE,
        "long_window": HOUR,
        "short_window": FIVE_MINUTES,
        "threshold": 1.0,
    }
    with pytest.raises(ValidationError):
        BurnRateRule(**{**values, **change})


def test_policy_rejects_two_rules_with_one_name() -> None:
    with pytest.raises(ValidationError):
        SloPolicy(rules=(DEFAULT_RULES[0], DEFAULT_RULES[0]))


def test_policy_round_trips_through_json() -> None:
    policy = SloPolicy(objective=0.995, window=timedelta(days=7), slice=FIVE_MINUTES)
    assert SloPolicy.model_validate_json(policy.model_dump_json()) == policy
