"""Benchmark: load and validate the large fleet, then materialise all its metric buckets.

Run: .venv/bin/python -m pytest tests/bench/bench_fleet_load.py -q -s -p no:cacheprovider

Figures are printed next to a reference measured in the same run on the same
machine (``json.loads`` of the same file), so the ratios mean something on a
busy 2-core box as well as on a fast laptop. The budgets are generous: they
catch an order-of-magnitude regression, not noise.
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable
from typing import TypeVar

from fleetdesk import locations
from fleetdesk.fleets import load_fleet

T = TypeVar("T")
ROUNDS = 3
LOAD_BUDGET_S = 2.0  # load + full validation of 1,200 models
ROWS_BUDGET_S = 4.0  # every bucket of every model as plain rows (the server's bulk-load path)
LOAD_RATIO_BUDGET = 60.0  # load+validate vs json.loads of the same file


def best_of(rounds: int, action: Callable[[], T]) -> tuple[float, T]:
    """Fastest wall time of ``rounds`` runs (least disturbed by other work on the box)."""
    best, result = float("inf"), None
    for _ in range(rounds):
        gc.collect()
        began = time.perf_counter()
        result = action()
        best = min(best, time.perf_counter() - began)
    return best, result  # type: ignore[return-value]


def test_large_fleet_load_and_materialise() -> None:
    path = locations.fleets_dir() / "large.json"
    text = path.read_text(encoding="utf-8")

    reference_s, _ = best_of(ROUNDS, lambda: json.loads(text))
    load_s, fleet = best_of(ROUNDS, lambda: load_fleet("large"))
    models = len(fleet.registry)

    def materialise_rows() -> int:
        return sum(len(rows) for _, rows in fleet.all_rows())

    rows_s, buckets = best_of(ROUNDS, materialise_rows)
    one_model = next(iter(fleet.registry.models))
    validated_s, validated = best_of(ROUNDS, lambda: len(list(fleet.buckets(one_model))))

    print()
    print(f"large fleet: {models} models, {len(fleet.timeline)} hourly buckets each, {len(text) / 1e6:.2f} MB file")
    print(f"  json.loads reference      {reference_s * 1e3:8.1f} ms")
    print(f"  load + validate           {load_s * 1e3:8.1f} ms  ({load_s / reference_s:.1f}x json.loads)")
    print(f"  materialise all rows      {rows_s * 1e3:8.1f} ms  ({buckets:,} buckets, {buckets / rows_s:,.0f} buckets/s)")
    print(
        f"  as validated buckets      {validated_s * 1e3:8.1f} ms  for one model ({validated} buckets,"
        f" {validated / validated_s:,.0f} buckets/s)"
    )
    print(f"  load + all rows           {(load_s + rows_s) * 1e3:8.1f} ms")

    assert models >= 1000 and buckets >= models * 28 * 24
    assert load_s < LOAD_BUDGET_S, f"load + validate took {load_s:.2f}s (budget {LOAD_BUDGET_S}s)"
    assert rows_s < ROWS_BUDGET_S, f"materialising took {rows_s:.2f}s (budget {ROWS_BUDGET_S}s)"
    assert load_s / reference_s < LOAD_RATIO_BUDGET
