"""A real Prometheus scrapes the reference server; a second server reading Prometheus shows the same buckets."""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import SecretStr

from fleet_variants import MULTI_TASK, TASKS, declare_tasks
from fleetdesk.client import FleetdeskClient, FleetdeskError, RetryPolicy
from fleetdesk.domain.stability import StabilitySums
from fleetdesk.server.embedded import EmbeddedServer, start_embedded
from fleetdesk.server.integrations.prometheus_api import (
    PrometheusApi,
    PrometheusTimeouts,
    PrometheusUnreachable,
)
from fleetdesk.server.integrations.prometheus_source import PrometheusMetricsSource
from fleetdesk.settings import locations
from fleetdesk.wire import IngestBucket, StabilitySeries, Window
from ports import free_port

from .processes import Daemon, prometheus, wait_until

pytestmark = pytest.mark.integration

BUCKET = timedelta(seconds=4)
"""Short buckets so the test sees several close; a 0.5 s scrape interval fits several scrapes in each."""
SCRAPE_MARGIN = timedelta(seconds=1.5)
"""An ingest must finish this long before its bucket ends, so a scrape surely sees it inside the bucket."""
MODEL = "ig_stories_tray_mtml.v30"
DEADLINE = 30.0


def short_bucket_fleet(directory: Path) -> Path:
    """The small fleet with 4-second buckets (and slices) and two minutes of history; MULTI_TASK's type
    declares its tasks."""
    raw = json.loads((locations.fleets_dir() / "small.json").read_text())
    raw["types"] = {}
    declare_tasks(raw)
    end = datetime.fromisoformat(raw["history"]["end"])
    raw["history"]["bucket"] = BUCKET.total_seconds()
    raw["history"]["start"] = (end - 30 * BUCKET).isoformat()
    raw["history"]["incidents"] = []
    raw["slo"]["slice"] = BUCKET.total_seconds()
    path = directory / "short-buckets.json"
    path.write_text(json.dumps(raw))
    return path


def traffic(step: int) -> StabilitySums:
    """A different, well-defined bucket each step (calibration drifts upwards)."""
    scale = 1.0 + 0.15 * step
    events = [
        (min(0.3 * scale, 0.95), 1.0, 1.0),
        (0.1 * scale, 0.0, 1.0),
        (0.1 * scale, 0.0, 1.0),
        (0.2 * scale, 0.0, 2.0),
        (0.05, 1.0, 0.5),
    ] * (40 + step)
    return StabilitySums.from_events(events)


async def until(moment: datetime) -> None:
    """Wait for a wall-clock instant (bucket boundaries are wall-clock conditions)."""
    await asyncio.sleep(max((moment - datetime.now(UTC)).total_seconds(), 0.0))


def next_boundary(after: datetime) -> datetime:
    epoch = after.timestamp()
    step = BUCKET.total_seconds()
    return datetime.fromtimestamp((math.floor(epoch / step) + 1) * step, UTC)


@pytest.fixture
def fleet_file(tmp_path: Path) -> Path:
    return short_bucket_fleet(tmp_path)


@pytest.fixture
def reference(fleet_file: Path, tmp_path: Path) -> Iterator[EmbeddedServer]:
    """The server that stores ingested buckets and exports them on /metrics."""
    server = start_embedded(str(fleet_file), tmp_path / "reference.sqlite")
    yield server
    server.stop()


@pytest.fixture
def scraper(reference: EmbeddedServer, tmp_path: Path) -> Iterator[Daemon]:
    directory = tmp_path / "prometheus"
    directory.mkdir()
    daemon = prometheus(directory, [reference.url.removeprefix("http://")])
    daemon.start()
    yield daemon
    daemon.stop()


@pytest.fixture
def reader(fleet_file: Path, tmp_path: Path, scraper: Daemon) -> Iterator[EmbeddedServer]:
    """A second server whose stability series come from Prometheus (lag: one bucket, as for a scraped server)."""
    server = start_embedded(str(fleet_file), tmp_path / "reader.sqlite")
    # An hour of 4 s buckets asked in pieces of 300 boundaries: the pieces must stitch without a hole.
    source = PrometheusMetricsSource(
        scraper.url, BUCKET, lag=BUCKET, timeouts=PrometheusTimeouts(query=5.0), max_points=300
    )
    server.backend.metrics = source
    yield server
    source.close()
    server.stop()


def client(server: EmbeddedServer, token: str) -> FleetdeskClient:
    return FleetdeskClient(server.url, SecretStr(token), retry=RetryPolicy(attempts=1))


def scraped_since(prometheus_url: str, since: datetime, model_id: str = MODEL) -> bool:
    """Prometheus holds a sample of the model's counters taken after ``since``."""
    api = PrometheusApi(prometheus_url)
    try:
        result = api.query(
            f'timestamp(fleetdesk_stability_events_total{{model_id="{model_id}"}})',
            datetime.now(UTC),
        )
    finally:
        api.close()
    return any(
        sample.value > since.timestamp() for series in result.series for sample in series.samples
    )


async def test_prometheus_source_shows_the_local_store_values_for_the_same_buckets(
    reference: EmbeddedServer, reader: EmbeddedServer, scraper: Daemon
) -> None:
    ingested: dict[datetime, StabilitySums] = {}
    # The first bucket needs a sample at its start boundary, before anything was ingested.
    wait_until(
        lambda: scraped_since(scraper.url, datetime.fromtimestamp(0, UTC)),
        DEADLINE,
        "a first scrape",
    )
    async with client(reference, reference.admin_token) as admin:
        boundary = next_boundary(datetime.now(UTC))
        for step in range(3):
            # Just after a boundary the bucket before it has closed: ingest it now, as a
            # metrics pipeline would; Prometheus sees the counters grow during this bucket.
            await until(boundary + timedelta(seconds=0.3))
            sums = traffic(step)
            start = boundary - BUCKET
            await admin.ingest([IngestBucket(model_id=MODEL, start=start, **sums.model_dump())])
            taken = (datetime.now(UTC) - boundary).total_seconds()
            assert taken < (BUCKET - SCRAPE_MARGIN).total_seconds(), (
                f"the ingest finished {taken:.1f}s into the bucket: too late to be surely scraped inside it"
            )
            ingested[start] = sums
            boundary += BUCKET

    async with client(reader, reader.viewer_token) as viewer:

        async def all_three() -> StabilitySeries | None:
            series = await viewer.stability(MODEL, Window.H1)
            return series if {p.start for p in series.points} >= set(ingested) else None

        end = time.monotonic() + DEADLINE
        from_prometheus = await all_three()
        while from_prometheus is None:
            assert time.monotonic() < end, "Prometheus never showed the three ingested buckets"
            await asyncio.sleep(0.2)
            from_prometheus = await all_three()

    async with client(reference, reference.viewer_token) as viewer:
        from_store = await viewer.stability(MODEL, Window.H1)

    source = reader.backend.metrics
    assert isinstance(source, PrometheusMetricsSource)
    assert source.probe() == len(reference.backend.registry), (
        "the instant query counts every exported model"
    )
    assert from_store.bucket == from_prometheus.bucket == BUCKET
    store_points = {p.start: p for p in from_store.points}
    prometheus_points = {p.start: p for p in from_prometheus.points}
    assert set(prometheus_points) == set(ingested), (
        "Prometheus must not invent buckets where counters did not grow"
    )
    for start, sums in ingested.items():
        local, remote = store_points[start], prometheus_points[start]
        assert local.calibration == pytest.approx(sums.calibration, rel=1e-12)
        assert remote.calibration == pytest.approx(local.calibration, rel=1e-9)
        assert remote.normalized_entropy == pytest.approx(local.normalized_entropy, rel=1e-9)
        assert remote.weight == pytest.approx(local.weight, rel=1e-9)
        assert remote.health == local.health


async def test_prometheus_source_reads_each_task_and_the_model_as_their_sum(
    reference: EmbeddedServer, reader: EmbeddedServer, scraper: Daemon
) -> None:
    wait_until(
        lambda: scraped_since(scraper.url, datetime.fromtimestamp(0, UTC), MULTI_TASK),
        DEADLINE,
        "a first scrape",
    )
    ingested: dict[str, StabilitySums] = {}
    async with client(reference, reference.admin_token) as admin:
        boundary = next_boundary(datetime.now(UTC))
        await until(boundary + timedelta(seconds=0.3))
        start = boundary - BUCKET
        ingested = {task: traffic(step) for step, task in enumerate(TASKS)}
        await admin.ingest(
            [
                IngestBucket(model_id=MULTI_TASK, start=start, task=task, **sums.model_dump())
                for task, sums in ingested.items()
            ]
        )
        assert (datetime.now(UTC) - boundary) < BUCKET - SCRAPE_MARGIN

    async with client(reader, reader.viewer_token) as viewer:

        async def scraped(task: str | None) -> StabilitySeries | None:
            series = await viewer.stability(MULTI_TASK, Window.H1, task=task)
            return series if start in {p.start for p in series.points} else None

        end = time.monotonic() + DEADLINE
        while (whole := await scraped(None)) is None:
            assert time.monotonic() < end, "Prometheus never showed the ingested bucket"
            await asyncio.sleep(0.2)
        per_task = {task: await scraped(task) for task in TASKS}

    for task, sums in ingested.items():
        series = per_task[task]
        assert series is not None and series.task == task
        (point,) = [p for p in series.points if p.start == start]
        assert point.calibration == pytest.approx(sums.calibration, rel=1e-9)
        assert point.normalized_entropy == pytest.approx(sums.normalized_entropy, rel=1e-9)
    (point,) = [p for p in whole.points if p.start == start]
    total = ingested["clicks"] + ingested["comments"] + ingested["follows"]
    assert point.weight == pytest.approx(total.weight, rel=1e-9)
    assert point.calibration == pytest.approx(total.calibration, rel=1e-9)


async def test_prometheus_down_and_prometheus_errors_are_problem_details(
    reader: EmbeddedServer, scraper: Daemon
) -> None:
    down = PrometheusMetricsSource(
        f"http://127.0.0.1:{free_port()}",
        BUCKET,
        lag=BUCKET,
        timeouts=PrometheusTimeouts(connect=1.0, query=2.0),
    )
    refused = PrometheusMetricsSource(scraper.url, BUCKET, lag=BUCKET, selector='job=~"("')
    try:
        with pytest.raises(PrometheusUnreachable):
            down.probe()
        async with client(reader, reader.viewer_token) as viewer:
            reader.backend.metrics = down
            with pytest.raises(FleetdeskError) as unreachable:
                await viewer.stability(MODEL, Window.H1)
            assert unreachable.value.status == 503
            assert unreachable.value.problem.title == "Prometheus unreachable"
            assert "connection refused" in unreachable.value.problem.detail

            reader.backend.metrics = refused
            with pytest.raises(FleetdeskError) as query_error:
                await viewer.stability(MODEL, Window.H1)
            assert query_error.value.status == 502
            assert query_error.value.problem.title == "Prometheus query failed"
            assert query_error.value.problem.type == "urn:fleetdesk:problem:metrics-source"
            assert "bad_data" in query_error.value.problem.detail
    finally:
        down.close()
        refused.close()
