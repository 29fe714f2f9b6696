"""Benchmark: playbook actions through the real client at 50 concurrent consoles, and what the client costs.

Run: .venv/bin/python -m pytest tests/bench/bench_client.py -q -s -p no:cacheprovider

tests/bench/bench_server.py measures the server with bare httpx. This one
measures what a console sees: fifty FleetdeskClients (one connection pool
each) sending notes back to back through ``perform(intent)`` — key per intent,
deadline, retry policy, response validation into the wire models — against a
real ``fleetdesk serve`` process on loopback (its own process, so the load
generator does not share the server's GIL). The same note load sent with bare
httpx at the same concurrency is the same-run reference, rounds interleaved,
and the budget is the client's p50 as a ratio to it (≤ 1.5). The load is a
closed loop (each console sends its next note the instant the previous returns),
so the server is saturated and latencies are queueing; the ratio is what counts.
Correctness is strict: every acknowledged action is in the audit log exactly once.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from fleetdesk.client import ActionIntent, ClientTimeouts, FleetdeskClient, PageRequest
from fleetdesk.wire import ActionKind
from serve_process import ServeProcess, admin_token

CLIENTS = 50
ACTIONS_PER_CLIENT = 10
ROUNDS = 2
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
TIMEOUTS = ClientTimeouts(connect=10, read=60, write=60, pool=60, deadline=120)
OVERHEAD_RATIO_BUDGET = (
    1.5  # client p50 vs bare httpx p50 for the same actions at the same concurrency
)

Send = Callable[[int, int], Awaitable[object]]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def load(senders: list[Send]) -> tuple[list[float], float]:
    """Latency of every call and the wall time, each sender calling ACTIONS_PER_CLIENT times, all at once."""
    latencies: list[float] = []
    go = asyncio.Event()

    async def run(index: int, send: Send) -> None:
        await go.wait()
        for round_ in range(ACTIONS_PER_CLIENT):
            began = time.perf_counter()
            await send(index, round_)
            latencies.append(time.perf_counter() - began)

    tasks = [asyncio.create_task(run(i, send)) for i, send in enumerate(senders)]
    await asyncio.sleep(0)
    began = time.perf_counter()
    go.set()
    await asyncio.gather(*tasks)
    return latencies, time.perf_counter() - began


async def through_client(url: str, token: str, models: list[str]) -> tuple[list[float], float]:
    clients = [FleetdeskClient(url, SecretStr(token), timeouts=TIMEOUTS) for _ in range(CLIENTS)]
    for client in clients:
        await client.__aenter__()
        await client.me()  # connected before the clock starts, like a console that is already open
    try:

        def sender(client: FleetdeskClient) -> Send:
            async def send(index: int, round_: int) -> object:
                model_id = models[(index + round_) % len(models)]
                return await client.perform(
                    ActionIntent.of(ActionKind.NOTE, model_id, text=f"client {index}/{round_}")
                )

            return send

        return await load([sender(client) for client in clients])
    finally:
        for client in clients:
            await client.__aexit__(None, None, None)


async def through_httpx(url: str, token: str, models: list[str]) -> tuple[list[float], float]:
    headers = {"Authorization": f"Bearer {token}"}
    clients = [httpx.AsyncClient(base_url=url, headers=headers, timeout=60) for _ in range(CLIENTS)]
    for client in clients:
        (await client.get("/v1/me")).raise_for_status()
    try:

        def sender(client: httpx.AsyncClient) -> Send:
            async def send(index: int, round_: int) -> object:
                model_id = models[(index + round_) % len(models)]
                response = await client.post(
                    f"/v1/models/{model_id}/actions/note",
                    json={"text": f"httpx {index}/{round_}"},
                    headers={"Idempotency-Key": uuid.uuid4().hex},
                )
                return response.raise_for_status()

            return send

        return await load([sender(client) for client in clients])
    finally:
        for client in clients:
            await client.aclose()


@pytest.mark.timeout(900)
def test_client_overhead_at_50_clients(tmp_path: Path, figures: Any) -> None:
    db = tmp_path / "bench.sqlite"
    token = admin_token(db, "bench")
    server = ServeProcess(db, 0, "--fleet", "small").start()
    url = server.url
    try:

        async def measure() -> None:
            async with FleetdeskClient(url, SecretStr(token), timeouts=TIMEOUTS) as admin:
                models = [
                    m.id for m in (await admin.list_models(page=PageRequest(limit=1000))).items
                ]
                client_runs: list[tuple[list[float], float]] = []
                httpx_runs: list[tuple[list[float], float]] = []
                for _ in range(ROUNDS):  # interleaved, so both see the same machine load
                    httpx_runs.append(await through_httpx(url, token, models))
                    client_runs.append(await through_client(url, token, models))
                audited = (await admin.audit(page=PageRequest(limit=1))).total

            client_ms = [v * 1000 for run, _ in client_runs for v in run]
            httpx_ms = [v * 1000 for run, _ in httpx_runs for v in run]
            assert audited == len(client_ms) + len(httpx_ms)  # every acknowledged action, once
            load = f"50 clients closed loop, {ACTIONS_PER_CLIENT} notes × {ROUNDS} rounds"
            figures.record(
                f"client action p50 ({load})",
                statistics.median(client_ms),
                "ms",
                budget=OVERHEAD_RATIO_BUDGET,
                budget_on_ratio=True,
                reference=statistics.median(httpx_ms),
                reference_name="bare httpx p50",
            )
            figures.record(
                f"client action p99 ({load})",
                percentile(client_ms, 0.99),
                "ms",
                reference=percentile(httpx_ms, 0.99),
                reference_name="bare httpx p99",
            )
            figures.record(
                f"client throughput ({load})",
                len(client_ms) / sum(wall for _, wall in client_runs),
                "actions/s",
                reference=len(httpx_ms) / sum(wall for _, wall in httpx_runs),
                reference_name="bare httpx",
            )

        asyncio.run(measure())
    finally:
        server.stop()
