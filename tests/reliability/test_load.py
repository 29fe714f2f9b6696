"""50 real clients at once, for a bounded time, mixing reads and conflicting actions against one loopback server.

No error but the expected 409s (stale state, already acknowledged), and every acknowledged action is in the
audit log exactly once. Throughput and latency budgets live in tests/bench/bench_client.py, not here.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter
from pathlib import Path

from pydantic import SecretStr

from fleetdesk.client import (
    ActionIntent,
    AlreadyAcknowledged,
    ClientTimeouts,
    FleetdeskClient,
    PageRequest,
    RetryPolicy,
    StaleState,
)
from fleetdesk.wire import ActionKind
from ports import free_port
from serve_process import ServeProcess, admin_token

CLIENTS = 50
SECONDS = 5.0
MIN_CALLS_PER_CLIENT = 4
MAX_CALLS_PER_CLIENT = 60
EXPERIMENTS = ["ig_feed_late-stage_mtml.x1-watch-time", "ig_reels_late-stage_dhen.x4-int8"]
PAGING = [
    "ig_feed_late-stage_mtml.x1-watch-time",
    "fb_cross-surface_late-stage_transformer.fm-v4",
    "fb_feed_late-stage_dhen.v52",
]
ANY = [*EXPERIMENTS, *PAGING, "ig_feed_late-stage_mtml.v41", "ig_tagging_late-stage_dlrm.v6"]
EXPECTED = (StaleState, AlreadyAcknowledged)


def _intent(rng: random.Random, n: int) -> ActionIntent:
    choice = rng.randrange(4)
    if choice == 0:
        model = rng.choice(
            EXPERIMENTS
        )  # every client believes the experiment still serves: one wins
        kind = rng.choice([ActionKind.ROLLBACK, ActionKind.END_EXPERIMENT])
        return ActionIntent.of(kind, model, expected_serving_model_id=model, reason=f"load {n}")
    if choice == 1:
        return ActionIntent.of(ActionKind.ACK, rng.choice(PAGING), reason=f"load {n}")
    if choice == 2:
        return ActionIntent.of(ActionKind.ESCALATE, rng.choice(PAGING), reason=f"load {n}")
    return ActionIntent.of(ActionKind.NOTE, rng.choice(ANY), text=f"load {n}")


async def test_fifty_clients_mixed_reads_and_actions(tmp_path: Path) -> None:
    # A server process of its own, so the 50 clients do not share its interpreter lock.
    db = tmp_path / "fleetdesk.sqlite"
    token = SecretStr(admin_token(db))
    server = ServeProcess(db, free_port(), "--fleet", "small").start()
    try:
        await _load(server.url, token)
    finally:
        server.stop()


async def _load(url: str, token: SecretStr) -> None:
    acknowledged: list[int] = []  # audit ids of applied actions
    outcomes: Counter[str] = Counter()
    unexpected: list[str] = []

    async def client_loop(client: FleetdeskClient, seed: int, stop_at: float) -> None:
        rng = random.Random(seed)
        for n in range(MAX_CALLS_PER_CLIENT):
            # Every client does some work however loaded the box is; then the clock decides.
            if n >= MIN_CALLS_PER_CLIENT and time.monotonic() > stop_at:
                return
            try:
                if rng.random() < 0.5:
                    read = rng.randrange(4)
                    if read == 0:
                        await client.fleet_summary()
                    elif read == 1:
                        await client.list_models(page=PageRequest(limit=25))
                    elif read == 2:
                        await client.model(rng.choice(ANY))
                    else:
                        await client.event_log(limit=50)
                    outcomes["read"] += 1
                else:
                    result = await client.perform(_intent(rng, seed * 1000 + n))
                    assert result.audit_id is not None
                    acknowledged.append(result.audit_id)
                    outcomes["applied"] += 1
            except EXPECTED as error:
                outcomes[type(error).__name__] += 1
            except Exception as error:  # noqa: BLE001 - every other failure is a finding
                unexpected.append(f"{type(error).__name__}: {error}")

    async with contextlib.AsyncExitStack() as stack:
        # Opened first: building 50 HTTP clients takes seconds of CPU on a loaded box, none of it the server's.
        clients = [
            await stack.enter_async_context(
                FleetdeskClient(
                    url,
                    token,
                    timeouts=ClientTimeouts(connect=5, read=20, write=20, pool=5, deadline=30),
                    retry=RetryPolicy(attempts=1),
                )
            )
            for _ in range(CLIENTS)
        ]
        started = time.monotonic()
        await asyncio.gather(
            *(client_loop(client, seed, started + SECONDS) for seed, client in enumerate(clients))
        )
    elapsed = time.monotonic() - started
    print(f"{CLIENTS} clients, {elapsed:.1f}s: {dict(outcomes)}")
    assert not unexpected, unexpected[:10]
    assert sum(outcomes.values()) >= CLIENTS * MIN_CALLS_PER_CLIENT, outcomes
    assert outcomes["read"] >= CLIENTS and outcomes["applied"] >= CLIENTS // 2, outcomes
    assert outcomes["StaleState"] >= 1, (
        "conflicting rollbacks never met: the test did not exercise conflicts"
    )

    async with FleetdeskClient(url, token) as admin:
        records = []
        while True:
            page = await admin.audit(page=PageRequest(offset=len(records), limit=1000))
            records.extend(page.items)
            if len(records) >= page.total or not page.items:
                break
    ids = Counter(record.id for record in records)
    assert sorted(ids) == sorted(acknowledged), (
        "an acknowledged action is missing from the audit log, or extra"
    )
    assert sum(
        1 for r in records if r.action in ("rollback", "end-experiment", "end_experiment")
    ) == len(EXPERIMENTS)
