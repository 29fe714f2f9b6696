"""Benchmark: load and validate the large fleet, then materialise all its metric buckets.

Each figure is printed next to a reference measured in the same run, rounds
interleaved so both see the same machine load: ``json.loads`` of the same
file for loading, and building the same number of 5-field rows of random
floats for materialising. The budgets are ratios against those references
(stable on a busy 2-core box or a fast laptop).
"""

from __future__ import annotations

import gc
import json
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from fleetdesk.fleets import load_fleet
from fleetdesk.settings import locations

ROUNDS = 3
LOAD_RATIO_BUDGET = 40.0  # load + full validation vs json.loads of the same file
ROWS_RATIO_BUDGET = 12.0  # every bucket of every model vs the same count of trivial random rows


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    began = time.perf_counter()
    result = action()
    return time.perf_counter() - began, result


def test_large_fleet_load_and_materialise(figures) -> None:  # type: ignore[no-untyped-def]
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

    models = len(fleet.registry)
    assert models >= 1000 and buckets >= models * 28 * 24
    figures.record(
        f"load + validate the large fleet ({models:,} models)",
        best["load"] * 1e3,
        "ms",
        budget=LOAD_RATIO_BUDGET,
        reference=best["json.loads"] * 1e3,
        reference_name="json.loads",
        budget_on_ratio=True,
    )
    figures.record(
        f"materialise its {buckets:,} hourly buckets",
        best["rows"] * 1e3,
        "ms",
        budget=ROWS_RATIO_BUDGET,
        reference=best["trivial rows"] * 1e3,
        reference_name="trivial rows",
        budget_on_ratio=True,
    )
    figures.record("  as validated buckets, one model", validated_s * 1e3, "ms")
    assert validated > 0
