"""A small client for Prometheus' HTTP query API (/api/v1/query, /api/v1/query_range).

Every way a query can fail becomes one of two errors that are both the
server's ``MetricsSourceError`` and a ``Problem`` (RFC 9457 details): ``PrometheusUnreachable`` (no answer in time: connection refused,
timeout, a proxy's 502/503/504) and ``PrometheusQueryError`` (Prometheus
answered and refused or failed the query, with its own errorType and error).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fleetdesk.domain.text import sanitize
from fleetdesk.server.integrations.answers import AnswerTooLarge, post_bounded
from fleetdesk.server.integrations.urls import public_url
from fleetdesk.server.metrics_source import MetricsSourceError
from fleetdesk.server.problems import Problem
from fleetdesk.wire import ProblemType


class PrometheusTimeouts(BaseModel):
    """Seconds; every limit explicit. ``query`` is also sent as Prometheus' own query timeout."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    connect: float = Field(default=2.0, gt=0.0)
    query: float = Field(
        default=10.0, gt=0.0, description="Longest a single query may take, server side too"
    )

    def for_httpx(self) -> httpx.Timeout:
        # Reading waits a little longer than Prometheus' own timeout so its
        # "query timed out" answer arrives as a query error, not as silence.
        return httpx.Timeout(
            connect=self.connect, read=self.query + 2.0, write=self.connect, pool=self.connect
        )


class PrometheusError(MetricsSourceError, Problem):
    """A failed Prometheus call; ``details`` is the problem the API answers with."""

    def __init__(self, status: int, type_: ProblemType, title: str, detail: str) -> None:
        Problem.__init__(self, status, type_, sanitize(detail), title=title)


class PrometheusUnreachable(PrometheusError):
    """Prometheus did not answer (down, refused, timed out, or a proxy said so)."""


class PrometheusQueryError(PrometheusError):
    """Prometheus answered, but with an error for this query."""


class Sample(BaseModel):
    model_config = ConfigDict(frozen=True)

    at: datetime
    value: float


class Series(BaseModel):
    """One result series: its labels and its samples, oldest first."""

    model_config = ConfigDict(frozen=True)

    labels: dict[str, str]
    samples: list[Sample]


class _Result(BaseModel):
    metric: dict[str, str]
    values: list[tuple[float, str]] | None = None
    value: tuple[float, str] | None = None


class _Data(BaseModel):
    resultType: Literal["matrix", "vector", "scalar", "string"]  # noqa: N815 (Prometheus' name)
    result: Any


class _Response(BaseModel):
    status: Literal["success", "error"]
    data: _Data | None = None
    errorType: str | None = None  # noqa: N815
    error: str | None = None
    warnings: list[str] = Field(default_factory=list)


class QueryResult(BaseModel):
    """The series of a query, and the warnings Prometheus attached (partial answers)."""

    model_config = ConfigDict(frozen=True)

    series: list[Series]
    warnings: list[str] = Field(default_factory=list)


def _unreachable(base_url: str, detail: str) -> PrometheusUnreachable:
    return PrometheusUnreachable(
        503,
        ProblemType.UNAVAILABLE,
        "Prometheus unreachable",
        f"no answer from Prometheus at {public_url(base_url)}: {detail}",
    )


def _query_error(status: int, error_type: str, error: str) -> PrometheusQueryError:
    return PrometheusQueryError(
        502,
        ProblemType.METRICS_SOURCE,
        "Prometheus query failed",
        f"Prometheus answered HTTP {status} ({error_type}): {error}",
    )


class PrometheusApi:
    """Reads Prometheus' query API; one instance per base URL (thread-safe), closed with ``close``."""

    def __init__(
        self,
        base_url: str,
        timeouts: PrometheusTimeouts | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeouts = timeouts or PrometheusTimeouts()
        self._http = httpx.Client(
            base_url=self.base_url, timeout=self.timeouts.for_httpx(), transport=transport
        )

    def close(self) -> None:
        self._http.close()

    def query(self, expr: str, at: datetime) -> QueryResult:
        """An instant query evaluated at ``at``."""
        return self._call("/api/v1/query", {"query": expr, "time": _timestamp(at)})

    def query_range(
        self, expr: str, start: datetime, end: datetime, step: timedelta
    ) -> QueryResult:
        """A range query evaluated at start, start+step, … up to end (inclusive)."""
        return self._call(
            "/api/v1/query_range",
            {
                "query": expr,
                "start": _timestamp(start),
                "end": _timestamp(end),
                "step": f"{step.total_seconds():g}",
            },
        )

    def _call(self, path: str, params: dict[str, str]) -> QueryResult:
        params = {**params, "timeout": f"{self.timeouts.query:g}s"}
        try:
            response = post_bounded(self._http, path, data=params)
        except AnswerTooLarge as error:
            raise PrometheusQueryError(
                502,
                ProblemType.METRICS_SOURCE,
                "Prometheus query failed",
                f"the metrics source at {public_url(self.base_url)} {error}; is it Prometheus?",
            ) from None
        except httpx.TimeoutException:
            raise _unreachable(
                self.base_url, f"timed out (limit {self.timeouts.query:g}s)"
            ) from None
        except httpx.ConnectError:
            raise _unreachable(self.base_url, "connection refused or host unreachable") from None
        except httpx.TransportError as error:
            raise _unreachable(self.base_url, f"network error ({type(error).__name__})") from None
        if response.status_code in (502, 503, 504) and not _is_prometheus_error(response):
            raise _unreachable(self.base_url, f"HTTP {response.status_code}")
        try:
            body = _Response.model_validate_json(response.content)
        except ValidationError:
            raise _query_error(
                response.status_code, "bad_response", "not a Prometheus API answer"
            ) from None
        if body.status == "error" or body.data is None:
            raise _query_error(
                response.status_code, body.errorType or "unknown", body.error or "no error text"
            )
        return QueryResult(series=_series(body.data), warnings=[sanitize(w) for w in body.warnings])


def _is_prometheus_error(response: httpx.Response) -> bool:
    return response.headers.get("content-type", "").startswith("application/json")


def _series(data: _Data) -> list[Series]:
    if data.resultType not in ("matrix", "vector"):
        raise _query_error(
            200, "bad_response", f"expected a matrix or vector, got a {data.resultType}"
        )
    found = []
    for raw in data.result:
        item = _Result.model_validate(raw)
        pairs = (
            item.values
            if item.values is not None
            else ([item.value] if item.value is not None else [])
        )
        # Values come as strings, "NaN" and "+Inf" included; only finite ones are data.
        samples = [Sample(at=datetime.fromtimestamp(t, UTC), value=float(v)) for t, v in pairs]
        found.append(
            Series(labels=item.metric, samples=[s for s in samples if math.isfinite(s.value)])
        )
    return found


def _timestamp(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("Prometheus times must be timezone-aware")
    return f"{moment.timestamp():.3f}"
