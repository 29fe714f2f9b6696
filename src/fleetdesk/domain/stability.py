"""Model stability: additive bucket sums, calibration and normalized entropy.

Buckets carry only additive sums so any window is the plain sum of its buckets;
ratios are computed after summing, never averaged. A bucket with no events, or
with a background rate of exactly 0 or 1 (no positives, or no negatives), has
no defined NE: it is *no data*, never healthy and never violating. So is a
window whose ratios overflow (a sum so small that dividing by it gives
infinity): it says nothing about the model.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from fleetdesk.domain.bounds import MAX_SIGNAL, BucketSum, Moment, signal_problem

EPSILON = 1e-7
"""Predictions are clipped to [ε, 1-ε] before taking logs."""


class Health(StrEnum):
    STABLE = "stable"
    UNSTABLE = "unstable"
    NO_DATA = "no_data"


class StabilitySums(BaseModel):
    """Additive sums over any number of events (one bucket, or many merged)."""

    # One inf or NaN would poison every window it is merged into.
    model_config = ConfigDict(frozen=True, allow_inf_nan=False)

    weight: float = Field(default=0.0, ge=0.0, description="Event count or total weight")
    label_sum: float = Field(default=0.0, ge=0.0)
    prediction_sum: float = Field(default=0.0, ge=0.0)
    cross_entropy_sum: float = Field(default=0.0, ge=0.0)

    def __add__(self, other: StabilitySums) -> StabilitySums:
        return StabilitySums(
            weight=self.weight + other.weight,
            label_sum=self.label_sum + other.label_sum,
            prediction_sum=self.prediction_sum + other.prediction_sum,
            cross_entropy_sum=self.cross_entropy_sum + other.cross_entropy_sum,
        )

    @classmethod
    def from_events(cls, events: Iterable[tuple[float, float, float]]) -> StabilitySums:
        """Sum raw (prediction, label, weight) events; labels and predictions in [0, 1]."""
        weight = label_sum = prediction_sum = cross_entropy_sum = 0.0
        for prediction, label, event_weight in events:
            weight += event_weight
            label_sum += event_weight * label
            prediction_sum += event_weight * prediction
            cross_entropy_sum += event_weight * log_loss(prediction, label)
        return cls(
            weight=weight,
            label_sum=label_sum,
            prediction_sum=prediction_sum,
            cross_entropy_sum=cross_entropy_sum,
        )

    @property
    def background_rate(self) -> float | None:
        return self.label_sum / self.weight if self.weight > 0 else None

    @property
    def has_data(self) -> bool:
        """The background rate is strictly between 0 and 1 and both ratios are finite."""
        return self._signals() is not None

    @property
    def calibration(self) -> float | None:
        """Σ predictions / Σ labels; 1.0 is ideal; None when there is no data."""
        signals = self._signals()
        return None if signals is None else signals[0]

    @property
    def normalized_entropy(self) -> float | None:
        """Mean log loss over the entropy of the background rate; lower is better."""
        signals = self._signals()
        return None if signals is None else signals[1]

    def _signals(self) -> tuple[float, float] | None:
        return signals(self.weight, self.label_sum, self.prediction_sum, self.cross_entropy_sum)


def signals(
    weight: float, label_sum: float, prediction_sum: float, cross_entropy_sum: float
) -> tuple[float, float] | None:
    """(calibration, NE) of these sums; None when they hold no data (see StabilitySums.has_data). Plain
    numbers, for the server's listing of the fleet: a StabilitySums per row was a third of building it."""
    rate = label_sum / weight if weight > 0 else None
    if rate is None or not 0.0 < rate < 1.0:
        return None
    calibration = prediction_sum / label_sum
    ne = (cross_entropy_sum / weight) / binary_entropy(rate)
    return (calibration, ne) if math.isfinite(calibration) and math.isfinite(ne) else None


class StabilityBucket(StabilitySums):
    """The sums of one model over one time bucket starting at ``start``.

    One bucket's sums are bounded and its ratios must stay finite (fleetdesk.domain.bounds), so a bucket that
    enters (ingested, read from Prometheus, reopened from a snapshot) can be charted and summed into any window.
    """

    weight: BucketSum = Field(default=0.0, description="Event count or total weight")
    label_sum: BucketSum = 0.0
    prediction_sum: BucketSum = 0.0
    cross_entropy_sum: BucketSum = 0.0
    start: Moment

    # Field order is weight, label_sum, prediction_sum, cross_entropy_sum: each ratio is checked on its last
    # operand, so the error names a field of the bucket. (Plain arithmetic, not a StabilitySums: a 28-day chart
    # validates 1,344 buckets.)
    @field_validator("prediction_sum")
    @classmethod
    def _calibration_finite(cls, value: float, info: ValidationInfo) -> float:
        labels, rate = _rate(info)
        return _checked("calibration", value / labels if rate is not None else None, value)

    @field_validator("cross_entropy_sum")
    @classmethod
    def _ne_finite(cls, value: float, info: ValidationInfo) -> float:
        _, rate = _rate(info)
        weight = info.data.get("weight", 0.0)
        return _checked(
            "NE", (value / weight) / binary_entropy(rate) if rate is not None else None, value
        )


def _rate(info: ValidationInfo) -> tuple[float, float | None]:
    """The label sum validated so far, and the background rate when it is defined (as StabilitySums.has_data)."""
    weight, labels = info.data.get("weight", 0.0), info.data.get("label_sum", 0.0)
    rate = labels / weight if weight > 0.0 else None
    return labels, rate if rate is not None and 0.0 < rate < 1.0 else None


def _checked(name: str, signal: float | None, value: float) -> float:
    problem = signal_problem(name, signal)
    if problem is not None:
        raise ValueError(problem)
    return value


def merge(sums: Iterable[StabilitySums]) -> StabilitySums:
    """Sum buckets into one window (associative and order-independent)."""
    items = list(sums)
    # fsum rounds each total exactly once, so any order of the same buckets
    # gives the identical window, bit for bit.
    return StabilitySums(
        weight=math.fsum(item.weight for item in items),
        label_sum=math.fsum(item.label_sum for item in items),
        prediction_sum=math.fsum(item.prediction_sum for item in items),
        cross_entropy_sum=math.fsum(item.cross_entropy_sum for item in items),
    )


def log_loss(prediction: float, label: float) -> float:
    """Binary cross-entropy of one event, prediction clipped by EPSILON."""
    q = min(max(prediction, EPSILON), 1.0 - EPSILON)
    return -(label * math.log(q) + (1.0 - label) * math.log(1.0 - q))


def binary_entropy(rate: float) -> float:
    """Entropy (nats) of a Bernoulli(rate) background; rate strictly in (0, 1)."""
    return -(rate * math.log(rate) + (1.0 - rate) * math.log(1.0 - rate))


class HealthBands(BaseModel):
    """Healthy ranges for one model type (there are no universal bands)."""

    model_config = ConfigDict(frozen=True, allow_inf_nan=False)

    calibration_low: float = Field(gt=0.0, le=MAX_SIGNAL)
    calibration_high: float = Field(gt=0.0, le=MAX_SIGNAL)
    ne_max: float = Field(gt=0.0, le=MAX_SIGNAL, description="NE above this is unstable")
    min_events: float = Field(
        default=0.0,
        ge=0.0,
        le=MAX_SIGNAL,
        description="A slice with fewer events is no data, not bad (from the tier's monitoring policy)",
    )

    @model_validator(mode="after")
    def _ordered(self) -> HealthBands:
        if self.calibration_low >= self.calibration_high:
            raise ValueError("calibration_low must be below calibration_high")
        return self

    def health(self, sums: StabilitySums) -> Health:
        """Stable when both signals are inside the bands; no data when undefined or too sparse."""
        if sums.weight < self.min_events:
            return Health.NO_DATA
        calibration = sums.calibration
        ne = sums.normalized_entropy
        if calibration is None or ne is None:
            return Health.NO_DATA
        inside = self.calibration_low <= calibration <= self.calibration_high and ne <= self.ne_max
        return Health.STABLE if inside else Health.UNSTABLE
