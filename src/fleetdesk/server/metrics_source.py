"""Where stability buckets are read from: an adapter interface, and the default local store reader.

Contract for a MetricsSource (a Prometheus-backed one lives in
fleetdesk.server.integrations and implements exactly this):

- ``name`` identifies the source in /v1/info-like diagnostics.
- ``buckets(model_id, start, end, task)`` returns that model's closed buckets
  (of that task of a multi-task model; with no task, of the model as a whole,
  the sum over its tasks) with ``start <= bucket.start < end``, oldest first,
  each with additive sums only
  (ratios are computed by the caller after summing). Missing buckets are simply
  absent (a gap is "no data"). It raises ``MetricsSourceError`` with a
  plain-words reason when the source cannot answer; it must not block longer
  than a few seconds.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from fleetdesk.domain.stability import StabilityBucket
from fleetdesk.domain.text import sanitize
from fleetdesk.server.store import Store, epoch, from_epoch
from fleetdesk.server.store.buckets import series as bucket_series

log = logging.getLogger("fleetdesk.server")


class MetricsSourceError(RuntimeError):
    """The metrics source could not answer; the message says why."""


class MetricsSource(ABC):
    """Reads per-model stability buckets for charts and overlays."""

    name: str = "abstract"

    @abstractmethod
    def buckets(
        self, model_id: str, start: datetime, end: datetime, task: str | None = None
    ) -> list[StabilityBucket]:
        """Closed buckets (of one task, or of the whole model) with start in [start, end), oldest first."""


class StoreMetricsSource(MetricsSource):
    """The default: buckets ingested into (or seeded in) the local SQLite store."""

    name = "store"

    def __init__(self, store: Store) -> None:
        self._store = store

    def buckets(
        self, model_id: str, start: datetime, end: datetime, task: str | None = None
    ) -> list[StabilityBucket]:
        rows = bucket_series(self._store.connection(), model_id, task, epoch(start), epoch(end))
        return valid_buckets(
            self.name,
            model_id,
            (
                dict(
                    start=from_epoch(row[0]),
                    weight=row[1],
                    label_sum=row[2],
                    prediction_sum=row[3],
                    cross_entropy_sum=row[4],
                )
                for row in rows
            ),
        )


def valid_buckets(
    source: str, model_id: str, candidates: Iterable[dict[str, Any]]
) -> list[StabilityBucket]:
    """The candidates that are valid buckets; any other (stored before its sums were bounded, or sent by an
    outside source) is left out, as a missing bucket is, and logged, so one bad row cannot fail a whole chart."""
    buckets = []
    for fields in candidates:
        try:
            buckets.append(StabilityBucket(**fields))
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            log.warning(
                "metrics source %s: left out the bucket of %s at %s: %s: %s",
                source,
                sanitize(model_id),
                fields.get("start"),
                ".".join(map(str, first["loc"])),
                sanitize(first["msg"]),
            )
    return buckets
