"""Benchmark: registry changes on the large fleet (1,200 models) through the real client and server.

Run: .venv/bin/python -m pytest tests/bench/bench_registry.py -q -s -p no:cacheprovider

What a team's cron sync costs: the whole fleet file applied when nothing changed (every record sent, parsed
and compared), the same with one model changed (the whole registry re-validated, the model re-judged, audited,
versioned and streamed), and one PUT. Each is the median of five, the reference is reading the registry back
(GET /v1/registry, the same records the other way). Budgets are generous: a sync must never hold up the server.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from fleetdesk.client import ClientTimeouts, FleetdeskClient, RegistryIntent
from fleetdesk.fleets import parse_registry_file
from fleetdesk.server.embedded import start_embedded
from fleetdesk.settings import locations

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
REPEATS = 5
TIMEOUTS = ClientTimeouts(connect=10, read=60, write=60, pool=60, deadline=120)
APPLY_BUDGET_MS = 1000.0
PUT_BUDGET_MS = 500.0


async def median_ms(call: Callable[[int], Awaitable[Any]]) -> float:
    took = []
    for n in range(REPEATS):
        started = time.perf_counter()
        await call(n)
        took.append((time.perf_counter() - started) * 1000)
    return statistics.median(took)


def test_registry_apply_of_the_large_fleet(tmp_path: Path, figures) -> None:  # noqa: ANN001
    file = parse_registry_file((locations.fleets_dir() / "large.json").read_text(), "large")
    models = file.models
    with start_embedded("large", tmp_path / "db.sqlite", now=NOW) as server:

        async def measure() -> dict[str, float]:
            async with FleetdeskClient(
                server.url, SecretStr(server.admin_token), timeouts=TIMEOUTS
            ) as client:

                async def nothing(n: int) -> None:
                    result = await client.change_registry(RegistryIntent.apply(models, "sync"))
                    assert result.changes == []

                async def one(n: int) -> None:
                    changed = list(models)
                    changed[5] = changed[5].model_copy(update={"purpose": f"Purpose {n}."})
                    result = await client.change_registry(RegistryIntent.apply(changed, "sync"))
                    assert len(result.changes) == 1

                async def put(n: int) -> None:
                    record = models[7].model_copy(update={"purpose": f"Put {n}."})
                    await client.change_registry(RegistryIntent.update(record, "one"))

                async def read(n: int) -> None:
                    await client.registry()

                await nothing(0)  # warm: the first call builds the validators
                return {
                    "read": await median_ms(read),
                    "nothing": await median_ms(nothing),
                    "one": await median_ms(one),
                    "put": await median_ms(put),
                }

        took = asyncio.run(measure())
    reference = {"reference": took["read"], "reference_name": "GET /v1/registry"}
    figures.record(
        f"registry apply, {len(models):,} models, nothing changed",
        took["nothing"],
        "ms",
        budget=APPLY_BUDGET_MS,
        **reference,
    )
    figures.record(
        f"registry apply, {len(models):,} models, one changed",
        took["one"],
        "ms",
        budget=APPLY_BUDGET_MS,
        **reference,
    )
    figures.record(
        "registry PUT of one model", took["put"], "ms", budget=PUT_BUDGET_MS, **reference
    )
