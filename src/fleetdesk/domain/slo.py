"""Timeslice SLOs, error budgets and multi-window burn-rate alerts.

Each slice (one stability bucket) is good (stable), bad (unstable) or no data.
No-data slices count for neither side: the objective is the share of
*evaluated* slices that must be good. A window shorter than one slice is
evaluated over the latest closed slice, so short alert windows stay meaningful
with coarse slices.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fleetdesk.domain.bounds import FINITE, Moment, Span
from fleetdesk.domain.stability import Health


class Severity(StrEnum):
    PAGE = "page"
    TICKET = "ticket"


class BurnRateRule(BaseModel):
    """Fires when the burn rate over both windows is at or above the threshold."""

    model_config = ConfigDict(frozen=True, **FINITE)

    name: str
    severity: Severity
    long_window: Span
    short_window: Span
    threshold: float = Field(gt=0.0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _windows_ordered(self) -> BurnRateRule:
        if not timedelta(0) < self.short_window <= self.long_window:
            raise ValueError("windows must satisfy 0 < short_window <= long_window")
        return self


DEFAULT_RULES: tuple[BurnRateRule, ...] = (
    BurnRateRule(
        name="page-fast",
        severity=Severity.PAGE,
        long_window=timedelta(hours=1),
        short_window=timedelta(minutes=5),
        threshold=14.4,
    ),
    BurnRateRule(
        name="page-slow",
        severity=Severity.PAGE,
        long_window=timedelta(hours=6),
        short_window=timedelta(minutes=30),
        threshold=6.0,
    ),
    BurnRateRule(
        name="ticket",
        severity=Severity.TICKET,
        long_window=timedelta(days=3),
        short_window=timedelta(hours=6),
        threshold=1.0,
    ),
)


class SloPolicy(BaseModel):
    """Objective over a rolling window of fixed-length slices, plus alert rules."""

    model_config = ConfigDict(frozen=True, **FINITE)

    # Six nines at most: the budget is 1 - objective, and burn rates divide by it.
    objective: float = Field(default=0.99, gt=0.0, le=0.999999)
    window: Span = timedelta(days=28)
    slice: Span = timedelta(hours=1)
    rules: tuple[BurnRateRule, ...] = DEFAULT_RULES

    @model_validator(mode="after")
    def _consistent(self) -> SloPolicy:
        if self.slice <= timedelta(0):
            raise ValueError("slice must be positive")
        if self.window < self.slice:
            raise ValueError("window must hold at least one slice")
        names = [rule.name for rule in self.rules]
        if len(set(names)) != len(names):
            # Alerts are keyed by rule name downstream (incidents, rule files).
            raise ValueError(f"rule names must be unique: {names}")
        return self


class SliceHealth(BaseModel):
    model_config = ConfigDict(frozen=True, **FINITE)

    start: Moment
    health: Health


class SliceCounts(BaseModel):
    """Good and bad slice counts over some window."""

    model_config = ConfigDict(frozen=True, **FINITE)

    good: int = 0
    bad: int = 0
    no_data: int = 0

    @property
    def evaluated(self) -> int:
        return self.good + self.bad


class BurnRate(BaseModel):
    model_config = ConfigDict(frozen=True, **FINITE)

    window: Span
    rate: float | None = Field(description="None when the window holds no evaluated slice")


class ActiveAlert(BaseModel):
    model_config = ConfigDict(frozen=True, **FINITE)

    rule: str
    severity: Severity
    long_burn_rate: float
    short_burn_rate: float
    threshold: float


class SloStatus(BaseModel):
    """Where a model stands against its SLO at one moment."""

    model_config = ConfigDict(frozen=True, **FINITE)

    objective: float
    window: Span
    evaluated_at: Moment
    counts: SliceCounts
    budget_total: float = Field(description="Bad slices the objective allows in the window")
    budget_remaining: float | None = Field(
        description="Share of the error budget left (negative when overspent); None with no data"
    )
    burn_rates: list[BurnRate]
    alerts: list[ActiveAlert]


def burn_rate(counts: SliceCounts, objective: float) -> float | None:
    """Observed bad share divided by the allowed bad share (1.0 spends it exactly)."""
    if counts.evaluated == 0:
        return None
    return (counts.bad / counts.evaluated) / (1.0 - objective)


def count_slices(
    slices: Iterable[SliceHealth], since: datetime, until: datetime, slice_length: timedelta
) -> SliceCounts:
    """Count slices that closed in (since, until]."""
    good = bad = no_data = 0
    for item in slices:
        end = item.start + slice_length
        if since < end <= until:
            if item.health is Health.STABLE:
                good += 1
            elif item.health is Health.UNSTABLE:
                bad += 1
            else:
                no_data += 1
    return SliceCounts(good=good, bad=bad, no_data=no_data)


def evaluate(slices: Sequence[SliceHealth], now: datetime, policy: SloPolicy) -> SloStatus:
    """Budget, burn rates per alert window and firing alerts at ``now``."""

    def counts_over(window: timedelta) -> SliceCounts:
        return count_slices(slices, now - max(window, policy.slice), now, policy.slice)

    windows = sorted({w for rule in policy.rules for w in (rule.long_window, rule.short_window)})
    rates = {window: burn_rate(counts_over(window), policy.objective) for window in windows}
    return status_from_counts(counts_over(policy.window), rates, now, policy)


def status_from_counts(
    counts: SliceCounts,
    rates: dict[timedelta, float | None],
    now: datetime,
    policy: SloPolicy,
) -> SloStatus:
    """Assemble an SloStatus from precomputed counts (the server's fast path)."""
    budget_total = (1.0 - policy.objective) * counts.evaluated
    remaining = None if counts.evaluated == 0 else 1.0 - counts.bad / budget_total
    alerts = []
    for rule in policy.rules:
        long_rate, short_rate = rates.get(rule.long_window), rates.get(rule.short_window)
        if (
            long_rate is not None
            and short_rate is not None
            and min(long_rate, short_rate) >= rule.threshold
        ):
            alerts.append(
                ActiveAlert(
                    rule=rule.name,
                    severity=rule.severity,
                    long_burn_rate=long_rate,
                    short_burn_rate=short_rate,
                    threshold=rule.threshold,
                )
            )
    return SloStatus(
        objective=policy.objective,
        window=policy.window,
        evaluated_at=now,
        counts=counts,
        budget_total=budget_total,
        budget_remaining=remaining,
        burn_rates=[BurnRate(window=w, rate=r) for w, r in sorted(rates.items())],
        alerts=alerts,
    )
