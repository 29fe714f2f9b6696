"""Benchmark: load and validate the large fleet, then materialise all its metric buckets.

Run: .venv/bin/python -m pytest tests/bench/bench_fleet_load.py -q -s -p no:cacheprovider

Each figure is printed next to a reference measured in the same run, rounds
interleaved so both see the same machine load: ``json.loads`` of the same
file for loading, and building the same number of 5-field rows of random
floats for materialising. The budgets are ratios against those references
(stable on a busy 2-core box or a fast laptop), plus absolute ceilings
generous enough to catch only an order-of-magnitude regression.
"""

from __future__ import annotations

import gc
import json
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from fleetdesk import locations
from fleetdesk.fleets import load_fleet

ROUNDS = 3
LOAD_RATIO_BUDGET = 40.0  # load + full validation vs json.loads of the same file
ROWS_RATIO_BUDGET = 12.0  # every bucket of every model vs the same count of trivial random rows
LOAD_CEILING_S = 5.0
ROWS_CEILING_S = 15.0


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    began = time.perf_counter()
    result = action()
    return time.perf_counter() - began, result


def test_large_fleet_load_and_materialise() -> None:
    path = locations.fleets_dir() / "large.json"
    text = path.read_text(encoding="utf-8")
    fleet = load_fleet("large")
    buckets = sum(len(rows) for _, rows in fleet.all_rows())
    moment = datetime(2026, 11, 30, tzinfo=UTC)

    def trivial_rows() -> list[tuple]:
        draw = random.random
        return [(moment, draw(), draw(), draw(), draw()) for _ in range(buckets)]

    def all_rows() -> int:
        return sum(len(rows) for _, rows in fleet.all_rows())

    best: dict[str, float] = {}
    for _ in range(ROUNDS):  # interleaved: each subject next to its reference
        for name, action in (
            ("json.loads", lambda: json.loads(text)),
            ("load", lambda: load_fleet("large")),
            ("trivial rows", trivial_rows),
            ("rows", all_rows),
        ):
            seconds, _ = timed(action)
            best[name] = min(best.get(name, float("inf")), seconds)
    one_model = next(iter(fleet.registry.models))
    validated_s, validated = timed(lambda: len(list(fleet.buckets(one_model))))

    load_ratio = best["load"] / best["json.loads"]
    rows_ratio = best["rows"] / best["trivial rows"]
    models = len(fleet.registry)
    print()
    print(f"large fleet: {models} models, {len(fleet.timeline)} hourly buckets each, {len(text) / 1e6:.2f} MB file"
          f" (best of {ROUNDS})")
    print(f"  json.loads reference      {best['json.loads'] * 1e3:8.1f} ms")
    print(f"  load + validate           {best['load'] * 1e3:8.1f} ms  ({load_ratio:.1f}x json.loads)")
    print(f"  trivial rows reference    {best['trivial rows'] * 1e3:8.1f} ms")
    print(f"  materialise all rows      {best['rows'] * 1e3:8.1f} ms  ({rows_ratio:.1f}x trivial rows;"
          f" {buckets:,} buckets, {buckets / best['rows']:,.0f} buckets/s,"
          f" {best['rows'] / models * 1e3:.2f} ms per model)")
    print(f"  as validated buckets      {validated_s * 1e3:8.1f} ms  for one model ({validated} buckets,"
          f" {validated / validated_s:,.0f} buckets/s)")

    assert models >= 1000 and buckets >= models * 28 * 24
    assert load_ratio < LOAD_RATIO_BUDGET, f"load + validate is {load_ratio:.1f}x json.loads"
    assert rows_ratio < ROWS_RATIO_BUDGET, f"materialising is {rows_ratio:.1f}x trivial rows"
    assert best["load"] < LOAD_CEILING_S and best["rows"] < ROWS_CEILING_S
