"""Benchmark: the real server on loopback — fleet-summary latency and action throughput/p99 at 50 clients.

Run: .venv/bin/python -m pytest tests/bench/bench_server.py -q -s -p no:cacheprovider
     (FLEETDESK_BENCH_10K=1 adds a generated 10,000-model fleet: seeding it takes a few minutes)

Every figure is printed next to a reference measured in the same run against the
same server, interleaved so both see the same machine load: ``/healthz`` (the
cheapest route: HTTP + routing + threadpool hop) for the reads, and /healthz at
the same concurrency for the actions. Budgets are ratios to those references
plus absolute ceilings generous enough to flag only an order-of-magnitude
regression on a busy 2-core box.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from fleetdesk.server.auth import create_token
from fleetdesk.server.embedded import EmbeddedServer, start_embedded
from fleetdesk.server.store import Store
from fleetdesk.wire import AccessRole

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SUMMARY_ROUNDS = 60
SUMMARY_P50_CEILING_S = 0.5  # issue 9 target on an idle box: <= 100 ms at 10,000 models
SUMMARY_RATIO_BUDGET = 60.0  # summary p50 vs /healthz p50
CLIENTS = 50
ACTIONS_PER_CLIENT = 10
ACTION_P99_CEILING_S = 20.0  # loaded 2-core CI box; idle laptops see well under 1 s
THROUGHPUT_FLOOR_PER_S = 5.0
ACTION_RATIO_BUDGET = 40.0  # action p50 vs /healthz p50 at the same concurrency


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def _summary_latency(server: EmbeddedServer, label: str) -> None:
    headers = {"Authorization": f"Bearer {server.viewer_token}"}
    summary: list[float] = []
    health: list[float] = []
    with httpx.Client(base_url=server.url, headers=headers, timeout=30) as client:
        client.get("/v1/fleet/summary").raise_for_status()  # warm caches
        for _ in range(SUMMARY_ROUNDS):
            for path, sink in (("/healthz", health), ("/v1/fleet/summary", summary)):
                began = time.perf_counter()
                client.get(path).raise_for_status()
                sink.append(time.perf_counter() - began)
        models = client.get("/v1/fleet/summary").json()["total_models"]
    p50, p99, ref = statistics.median(summary), _percentile(summary, 0.99), statistics.median(health)
    print(f"\n[{label}] fleet summary over {models} models: p50 {_ms(p50)}  p99 {_ms(p99)}"
          f"  | /healthz p50 {_ms(ref)}  ratio {p50 / ref:5.1f}x (budget {SUMMARY_RATIO_BUDGET}x)")
    assert p50 <= SUMMARY_P50_CEILING_S
    assert p50 / ref <= SUMMARY_RATIO_BUDGET


def _slo_refresh(server: EmbeddedServer, label: str) -> None:
    """Full recount, then the hourly path: a slot closes and the window counts advance."""
    backend = server.backend
    began = time.perf_counter()
    backend.refresh_if_due(force=True)
    full = time.perf_counter() - began
    backend.clock.set(backend.clock.now() + timedelta(hours=1))
    began = time.perf_counter()
    assert backend.refresh_if_due()
    hourly = time.perf_counter() - began
    print(f"[{label}] SLO state for all models: full recount {full:.2f} s, hourly slot close {hourly:.2f} s")


def _started(fleet: str, tmp_path: Path) -> tuple[EmbeddedServer, float]:
    began = time.perf_counter()
    server = start_embedded(fleet, tmp_path / "bench.sqlite", now=NOW)
    return server, time.perf_counter() - began


@pytest.mark.timeout(900)
def test_fleet_summary_latency_large(tmp_path: Path) -> None:
    server, seconds = _started("large", tmp_path)
    try:
        buckets = server.backend.store.connection().execute("SELECT count(*) FROM buckets").fetchone()[0]
        print(f"\n[large] seed + start: {seconds:.1f} s for {len(server.backend.registry)} models, {buckets} buckets")
        _slo_refresh(server, "large")
        _summary_latency(server, "large")
    finally:
        server.stop()


@pytest.mark.timeout(3600)
@pytest.mark.skipif(not os.environ.get("FLEETDESK_BENCH_10K"), reason="set FLEETDESK_BENCH_10K=1 (slow to seed)")
def test_fleet_summary_latency_10k(tmp_path: Path) -> None:
    from fleetdesk.fleetgen import generate_fleet

    path = tmp_path / "fleet10k.json"
    path.write_text(generate_fleet(10_000, seed=7, name="bench10k").model_dump_json(), encoding="utf-8")
    server, seconds = _started(str(path), tmp_path)
    try:
        buckets = server.backend.store.connection().execute("SELECT count(*) FROM buckets").fetchone()[0]
        print(f"\n[10k] seed + start: {seconds:.1f} s for {len(server.backend.registry)} models, {buckets} buckets")
        _slo_refresh(server, "10k")
        _summary_latency(server, "10k")
    finally:
        server.stop()


async def _hammer(url: str, token: str, build: Callable[[int, int], tuple[str, str, dict]]) -> tuple[list[float], float]:
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=CLIENTS, max_keepalive_connections=CLIENTS)

    async def client_loop(client: httpx.AsyncClient, index: int) -> None:
        for round_ in range(ACTIONS_PER_CLIENT):
            method, path, kwargs = build(index, round_)
            began = time.perf_counter()
            response = await client.request(method, path, **kwargs)
            latencies.append(time.perf_counter() - began)
            assert response.status_code == 200, response.text

    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {token}"}, limits=limits,
                                 timeout=60) as client:
        began = time.perf_counter()
        await asyncio.gather(*(client_loop(client, i) for i in range(CLIENTS)))
        return latencies, time.perf_counter() - began


def test_action_throughput_and_p99_at_50_clients(tmp_path: Path) -> None:
    """Against a real `fleetdesk serve` process, so the load generator does not share the server's GIL."""
    db = tmp_path / "bench.sqlite"
    store = Store(db)
    store.migrate()
    token = create_token(store, "bench", AccessRole.ADMIN, [])
    store.close()
    process = subprocess.Popen(
        [sys.executable, "-m", "fleetdesk.cli", "serve", "--db", str(db), "--port", "0", "--now", NOW.isoformat()],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert "fleetdesk serving" in first, first
        url = first.split(" on ")[-1].strip()
        models = [m["id"] for m in httpx.get(f"{url}/v1/models", params={"limit": 1000},
                                             headers={"Authorization": f"Bearer {token}"}).json()["items"]]

        def note(index: int, round_: int) -> tuple[str, str, dict]:
            return ("POST", f"/v1/models/{models[(index + round_) % len(models)]}/actions/note",
                    {"json": {"text": f"bench {index}/{round_}"}, "headers": {"Idempotency-Key": uuid.uuid4().hex}})

        def healthz(index: int, round_: int) -> tuple[str, str, dict]:
            return "GET", "/healthz", {}

        reference, _ = asyncio.run(_hammer(url, token, healthz))
        latencies, elapsed = asyncio.run(_hammer(url, token, note))
        count = len(latencies)
        throughput = count / elapsed
        p50, p99, ref = statistics.median(latencies), _percentile(latencies, 0.99), statistics.median(reference)
        audited = httpx.get(f"{url}/v1/audit", headers={"Authorization": f"Bearer {token}"}).json()["total"]
        print(f"\n[actions] {CLIENTS} clients x {ACTIONS_PER_CLIENT}: {throughput:6.1f} actions/s"
              f"  p50 {_ms(p50)}  p99 {_ms(p99)}  | /healthz p50 at {CLIENTS} clients {_ms(ref)}"
              f"  ratio {p50 / ref:5.1f}x (budget {ACTION_RATIO_BUDGET}x)")
        assert audited == count  # every acknowledged action durable, once
        assert throughput >= THROUGHPUT_FLOOR_PER_S
        assert p99 <= ACTION_P99_CEILING_S
        assert p50 / ref <= ACTION_RATIO_BUDGET
    finally:
        process.terminate()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()
