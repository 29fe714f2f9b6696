"""Stability buckets read from Prometheus instead of the local store.

Prometheus holds the per-model counters of the additive sums (events, label
sum, prediction sum, cross-entropy sum). A bucket's sums are each counter's
growth between the bucket's two boundaries, read as the raw counter values at
those instants (one range query per counter, step = bucket length) and
differenced here, per series: exact (no ``increase()`` extrapolation, no
increment lost between two range windows), safe across counter resets (a
drop means the counter restarted from zero, as Prometheus assumes), and
summed over every series of the model (several exporters or jobs).

``lag`` shifts the boundaries: the sums of the bucket [s, s+L) are read over
[s+lag, s+L+lag). A service exporting live counters has lag 0; a fleetdesk
server that exports buckets as they are ingested, after they close, shows
bucket [s, s+L) during the next one: lag = L.

A bucket is returned only when all four counters have a value at both of its
boundaries; anything less (a scrape gap, a series that started mid-window, a
counter missing) is absent, which the server shows as no data, never healthy.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from fleetdesk.domain.stability import StabilityBucket
from fleetdesk.domain.text import sanitize
from fleetdesk.server.integrations.prometheus_api import PrometheusApi, PrometheusTimeouts, Series
from fleetdesk.server.integrations.prometheus_rules import COUNTERS
from fleetdesk.server.metrics_source import MetricsSource, valid_buckets
from fleetdesk.server.prom import label_value

log = logging.getLogger("fleetdesk.server.integrations")

MAX_POINTS = 10_000
"""Boundaries per range query, below Prometheus' limit of 11,000 points per series."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_FIELDS = {
    "events": "weight",
    "label_sum": "label_sum",
    "prediction_sum": "prediction_sum",
    "cross_entropy_sum": "cross_entropy_sum",
}


def _label_value(text: str) -> str:
    """A PromQL string literal for a label value (escapes quotes and backslashes)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def counter_growth(series_list: list[Series], boundaries: list[datetime]) -> dict[datetime, float]:
    """Growth of the summed counters over each [boundaries[i], boundaries[i+1]], only where every series has both ends.

    Resets are handled per series: a value below the previous one means the
    counter restarted from zero, so the growth is the new value.
    """
    growth: dict[datetime, float] = {}
    per_series = [{sample.at: sample.value for sample in series.samples} for series in series_list]
    for begin, end in zip(boundaries, boundaries[1:], strict=False):
        total = 0.0
        for values in per_series:
            if begin not in values or end not in values:
                break
            before, after = values[begin], values[end]
            total += after - before if after >= before else after
        else:
            if per_series:
                growth[begin] = total
    return growth


class PrometheusMetricsSource(MetricsSource):
    """Reads stability buckets from Prometheus' HTTP API (see the module docstring)."""

    name = "prometheus"

    def __init__(
        self,
        url: str,
        bucket: timedelta,
        lag: timedelta = timedelta(0),
        timeouts: PrometheusTimeouts | None = None,
        selector: str = "",
        max_points: int = MAX_POINTS,
    ) -> None:
        if bucket <= timedelta(0):
            raise ValueError("bucket must be positive")
        if not 2 <= max_points <= 11_000:
            raise ValueError("max_points must be between 2 and Prometheus' limit of 11,000")
        self.api = PrometheusApi(url, timeouts)
        self.max_points = max_points
        self.bucket = bucket
        self.lag = lag
        self.selector = selector
        """Extra label matchers for every query, e.g. 'job="fleetdesk"' to pick one scrape job."""

    def close(self) -> None:
        self.api.close()

    def probe(self) -> int:
        """How many models Prometheus has stability counters for now (an instant query); raises PrometheusError."""
        selector = f"{{{self.selector}}}" if self.selector else ""
        result = self.api.query(
            f"count(count by (model_id) ({COUNTERS['events']}{selector}))", datetime.now(UTC)
        )
        return int(sum(sample.value for series in result.series for sample in series.samples))

    def buckets(
        self, model_id: str, start: datetime, end: datetime, task: str | None = None
    ) -> list[StabilityBucket]:
        """Closed buckets with start in [start, end), oldest first; gaps absent (no data). With a task, that
        task's series; without, every series of the model summed (a multi-task model's tasks included)."""
        first = _align_up(start, self.bucket)
        # A bucket is complete in Prometheus only once its lagged end has passed;
        # reading it earlier would pass growth-so-far off as a whole bucket.
        end = min(end, datetime.now(UTC) - self.bucket - self.lag + timedelta(microseconds=1))
        starts: list[datetime] = []
        moment = first
        while moment < end:
            starts.append(moment)
            moment += self.bucket
        if not starts:
            return []
        boundaries = [moment + self.lag for moment in (*starts, starts[-1] + self.bucket)]
        matchers = (
            f"model_id={_label_value(label_value(model_id))}"
            + (f", task={_label_value(task)}" if task is not None else "")
            + (f", {self.selector}" if self.selector else "")
        )
        growth: dict[str, dict[datetime, float]] = {name: {} for name in COUNTERS}
        # Prometheus refuses range queries of more than 11,000 points: ask in
        # pieces that share their edge boundary, so no bucket falls between two.
        for first_index in range(0, len(boundaries) - 1, self.max_points - 1):
            piece = boundaries[first_index : first_index + self.max_points]
            for sum_name, counter in COUNTERS.items():
                result = self.api.query_range(
                    f"{counter}{{{matchers}}}", piece[0], piece[-1], self.bucket
                )
                for warning in result.warnings:
                    log.warning(
                        "Prometheus warned about %s for %s (the answer may be partial): %s",
                        counter,
                        sanitize(model_id),
                        warning,
                    )
                for moment, value in counter_growth(result.series, piece).items():
                    growth[sum_name][moment - self.lag] = value
        candidates = []
        for bucket_start in starts:
            values = {
                name: grown
                for name in COUNTERS
                if (grown := growth[name].get(bucket_start)) is not None
            }
            # A bucket with no events is no data, like a missing one: leave it out.
            if len(values) < len(COUNTERS) or not values["events"]:
                continue
            candidates.append(
                {
                    "start": bucket_start,
                    **{_FIELDS[name]: max(grown, 0.0) for name, grown in values.items()},
                }
            )
        # Prometheus answers NaN and +Inf as readily as numbers: those buckets are left out too.
        return valid_buckets(self.name, model_id, candidates)


def _align_up(moment: datetime, bucket: timedelta) -> datetime:
    offset = (moment - _EPOCH) % bucket
    return moment if offset == timedelta(0) else moment + (bucket - offset)
