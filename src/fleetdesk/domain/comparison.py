"""A model against its baseline or holdout over one window: the gap in calibration and NE, as numbers.

Both sides are summed over the same buckets first and the ratios taken after (never an average of
per-bucket ratios), so "NE +3.1% vs baseline" is the window's NE against the window's NE.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fleetdesk.domain.bounds import FINITE
from fleetdesk.domain.stability import StabilitySums, merge


class SignalGap(BaseModel):
    """How one model's signals compare with another's over the same window."""

    model_config = ConfigDict(frozen=True, defer_build=True, **FINITE)

    other_model_id: str
    relation: Literal["baseline", "holdout"]
    calibration: float | None = Field(description="The model's, over the window (None: no data)")
    other_calibration: float | None
    normalized_entropy: float | None
    other_normalized_entropy: float | None
    calibration_change: float | None = Field(description="Relative: the model's / the other's - 1")
    ne_change: float | None = Field(
        description="Relative: the model's / the other's - 1 (positive: worse)"
    )
    words: str = Field(
        description="e.g. 'NE +3.1% vs baseline, calibration -0.4%'; 'no data' when either has none"
    )


def _change(mine: float | None, theirs: float | None) -> float | None:
    if mine is None or theirs is None or theirs == 0:
        return None
    return mine / theirs - 1.0


def _percent(change: float) -> str:
    return f"{change * 100:+.1f}%"


def compare(
    model: Iterable[StabilitySums],
    other: Iterable[StabilitySums],
    other_model_id: str,
    relation: Literal["baseline", "holdout"],
) -> SignalGap:
    """The model's buckets against the other's over the same window."""
    mine, theirs = merge(model), merge(other)
    calibration_change = _change(mine.calibration, theirs.calibration)
    ne_change = _change(mine.normalized_entropy, theirs.normalized_entropy)
    if calibration_change is None or ne_change is None:
        words = f"vs {relation}: no data"
    else:
        words = (
            f"NE {_percent(ne_change)} vs {relation}, calibration {_percent(calibration_change)}"
        )
    return SignalGap(
        other_model_id=other_model_id,
        relation=relation,
        calibration=mine.calibration,
        other_calibration=theirs.calibration,
        normalized_entropy=mine.normalized_entropy,
        other_normalized_entropy=theirs.normalized_entropy,
        calibration_change=calibration_change,
        ne_change=ne_change,
        words=words,
    )
