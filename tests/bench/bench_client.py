"""Benchmark: playbook actions through the real client, 50 concurrent consoles on loopback.

Run: .venv/bin/python -m pytest tests/bench/bench_client.py -q -s -p no:cacheprovider

Fifty clients (one connection pool each, like fifty consoles) each send notes
and escalation previews back to back against the embedded server on the small
fleet; every action is a real write (audit record, timeline entry, event, key
claim) through one SQLite writer. Reported: throughput, p50/p90/p99/max
latency per action, and the same for a read (``GET /v1/info``) at the same
concurrency as a same-run reference. The server runs in this process (its own
thread and loop), so client and server share the GIL: the figures are a floor
for a real deployment. Budgets are generous ceilings and a ratio to the read
reference, so a busy 2-core box does not fail them; correctness is strict:
every acknowledged action is in the audit log exactly once.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

from pydantic import SecretStr

from fleetdesk.client import ActionIntent, ClientTimeouts, FleetdeskClient, RetryPolicy
from fleetdesk.server.embedded import start_embedded
from fleetdesk.wire import ActionKind

CLIENTS = 50
ACTIONS_PER_CLIENT = 20
READS_PER_CLIENT = 20
P99_CEILING_S = 5.0
P99_RATIO_BUDGET = 20.0  # an action's p99 vs a read's p99 at the same concurrency
MIN_THROUGHPUT = 20.0  # actions per second
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
TIMEOUTS = ClientTimeouts(connect=5, read=30, write=30, pool=30, deadline=60)


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def run_clients(url: str, token: str, work: Callable[[FleetdeskClient, int, int], Awaitable[object]],
                      per_client: int) -> tuple[float, list[float], list[object]]:
    """Wall time, per-call latencies and results of CLIENTS clients each calling ``work`` per_client times."""
    latencies: list[float] = []
    results: list[object] = []
    start = asyncio.Event()

    async def one(number: int) -> None:
        async with FleetdeskClient(url, SecretStr(token), timeouts=TIMEOUTS, retry=RetryPolicy(attempts=1)) as client:
            await client.info()  # connect before the clock starts
            await start.wait()
            for step in range(per_client):
                began = time.perf_counter()
                results.append(await work(client, number, step))
                latencies.append(time.perf_counter() - began)

    tasks = [asyncio.create_task(one(n)) for n in range(CLIENTS)]
    await asyncio.sleep(0)
    began = time.perf_counter()
    start.set()
    await asyncio.gather(*tasks)
    return time.perf_counter() - began, latencies, results


def report(name: str, wall: float, latencies: list[float]) -> None:
    print(
        f"{name:<8} {len(latencies):>5} calls  {len(latencies) / wall:>7.1f}/s  "
        f"p50 {statistics.median(latencies) * 1000:>7.1f} ms  p90 {percentile(latencies, 0.90) * 1000:>7.1f} ms  "
        f"p99 {percentile(latencies, 0.99) * 1000:>7.1f} ms  max {max(latencies) * 1000:>7.1f} ms"
    )


def test_action_throughput_and_p99_at_50_concurrent_clients(tmp_path: Path) -> None:
    with start_embedded("small", tmp_path / "bench.sqlite", now=NOW) as server:
        model_ids = sorted(server.backend.registry.models)

        async def act(client: FleetdeskClient, number: int, step: int) -> object:
            model_id = model_ids[(number + step) % len(model_ids)]
            if step % 4 == 3:  # a preview: planned in a read transaction, no key claimed
                return await client.perform(ActionIntent.escalate(model_id, reason="bench").as_dry_run())
            return await client.perform(ActionIntent.note(model_id, f"bench {number}/{step}"))

        async def read(client: FleetdeskClient, number: int, step: int) -> object:
            return await client.info()

        async def measure() -> None:
            read_wall, read_latencies, _ = await run_clients(server.url, server.oncall_token, read, READS_PER_CLIENT)
            wall, latencies, results = await run_clients(server.url, server.oncall_token, act, ACTIONS_PER_CLIENT)
            print()
            print(f"{CLIENTS} concurrent clients on loopback, small fleet, embedded server")
            report("read", read_wall, read_latencies)
            report("action", wall, latencies)
            notes = [r for r in results if not r.dry_run]  # type: ignore[attr-defined]
            async with FleetdeskClient(server.url, SecretStr(server.admin_token), timeouts=TIMEOUTS) as admin:
                audit = await admin.audit(action=ActionKind.NOTE)
            assert audit.total == len(notes)
            assert len({r.audit_id for r in notes}) == len(notes)  # type: ignore[attr-defined]
            p99, read_p99 = percentile(latencies, 0.99), percentile(read_latencies, 0.99)
            print(f"action p99 / read p99 = {p99 / read_p99:.1f} (budget {P99_RATIO_BUDGET:g})")
            assert p99 < P99_CEILING_S
            assert p99 / read_p99 < P99_RATIO_BUDGET
            assert len(latencies) / wall > MIN_THROUGHPUT

        asyncio.run(measure())
