"""The ranges every number and time is checked against where it enters fleetdesk.

Inside them everything derived stays finite: a ratio of two sums, a window's
total, a chart's scale, a time plus a window. Outside them a value is not a
measurement but a mistake or an attack, and is refused where it enters
(metric ingestion, the clock, fleet and scenario files, snapshots, settings)
with the field named, instead of crashing a reader later.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import AwareDatetime, BeforeValidator, ConfigDict, Field

FINITE = ConfigDict(allow_inf_nan=False)
"""Model config for every model with floats: inf and NaN are refused (pydantic accepts them by default)."""

MAX_BUCKET_SUM = 1e18
"""Largest sum one bucket may carry: 10^18 events in a bucket is ~3·10^14 a second for an hour."""

MAX_SIGNAL = 1e15
"""Largest calibration or NE one bucket may give. A broken model's real bucket stays far below; a ratio over
a sum that is a rounding error (a subnormal label sum) is far above, and would be infinite a step later."""

MAX_TOTAL = 1e300
"""Largest running total of a model's sums (its /metrics counters): a batch that would pass it is refused
before the counter overflows to infinity (float64 ends at ~1.8e308)."""

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(2200, 1, 1, tzinfo=UTC)
"""Times are inside [EARLIEST, LATEST): far from datetime's year 1 and 9999, so a window or a page can be added
to any of them, and an offset converted to UTC, without leaving the calendar."""

LONGEST = timedelta(days=400)
"""Longest duration anything spans (an SLO window is 28 days, a fleet's history about a month)."""

# RFC 3339 date-time, the OpenAPI "date-time" format: what the schema promises, so nothing looser is taken
# (pydantic alone also reads numbers, and numeric text, as Unix timestamps).
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)")


def _rfc3339_only(value: Any) -> Any:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not _RFC3339.fullmatch(value):
        raise ValueError("expected an RFC 3339 date-time with an offset, e.g. 2026-11-30T12:00:00Z")
    return value


Moment = Annotated[AwareDatetime, Field(ge=EARLIEST, lt=LATEST)]
"""A timezone-aware time inside [EARLIEST, LATEST). pydantic-core compares the instants itself (a 28-day chart
holds 1,344 of them), offsets included: 2199-12-31T23:00-05:00 is past LATEST."""

MomentText = Annotated[Moment, BeforeValidator(_rfc3339_only)]
"""A Moment as a client or a file sends it: RFC 3339 text (or a datetime), never a number read as a Unix time."""

Span = Annotated[timedelta, Field(ge=-LONGEST, le=LONGEST)]
"""A duration no longer than LONGEST either way."""

MAX_ID = 256
IdText = Annotated[str, Field(min_length=1, max_length=MAX_ID)]
"""A model id (or any registry id) where a client names one in a body: as long as a registry id may be, so an
unknown one echoed in an answer or a log line stays short (paths and queries are bounded the same)."""

BucketSum = Annotated[float, Field(ge=0.0, le=MAX_BUCKET_SUM)]
"""One of a bucket's additive sums."""


def signal_problem(name: str, value: float | None) -> str | None:
    """Why a bucket's derived ``name`` (calibration or NE) is out of range, or None when it is fine."""
    if value is None or value <= MAX_SIGNAL:  # inf and NaN compare False, so they fall through
        return None
    return f"{name} would be {value:g} (over {MAX_SIGNAL:g}): the sums it divides by are too small to mean anything"
