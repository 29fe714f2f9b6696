"""Benchmark: export a handoff snapshot from the large fleet and reopen it.

Run: .venv/bin/python -m pytest tests/bench/bench_snapshot.py -q -s -p no:cacheprovider

Export is measured step by step as ``fleetdesk snapshot export`` runs it:
capture through the client (every window, the whole fleet table), the
redaction pass, the headless screenshot of the read-only console, and the
atomic write. Reopening is measured against ``json.loads`` of the same bytes
(the same-run reference): the budget is the ratio, plus absolute ceilings that
only catch an order-of-magnitude regression.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from fleetdesk.client import FleetdeskClient
from fleetdesk.server.embedded import start_embedded
from fleetdesk.snapshot.console import render_svg
from fleetdesk.snapshot.export import capture, seal, write_bundle
from fleetdesk.snapshot.redact import Redactor
from fleetdesk.snapshot.reopen import parse_snapshot
from fleetdesk.wire import Window

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
ROUNDS = 3
REOPEN_RATIO_BUDGET = 25.0
EXPORT_CEILING_S = 30.0
REOPEN_CEILING_S = 5.0


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    result = action()
    return time.perf_counter() - began, result


def test_large_fleet_export_and_reopen(tmp_path: Path) -> None:
    with start_embedded("large", tmp_path / "large.sqlite", now=NOW) as server:
        model_id = next(iter(sorted(server.backend.registry.models)))
        token = server.viewer_token

        async def fetch():  # type: ignore[no-untyped-def]
            async with FleetdeskClient(server.url, SecretStr(token)) as client:
                return await capture(client, server.url, model_id, windows=list(Window))

        redactor = Redactor([token])
        capture_s, snapshot = timed(lambda: asyncio.run(fetch()))
        seal_s, sealed = timed(lambda: seal(snapshot, redactor))
        render_s, (svg, _) = timed(lambda: render_svg(sealed))
        write_s, bundle = timed(lambda: write_bundle(sealed.model_copy(update={"screen_svg": svg}), redactor,
                                                     tmp_path / "out"))
    data = bundle.json.read_bytes()
    best: dict[str, float] = {}
    for _ in range(ROUNDS):  # interleaved: the reference next to the subject
        for name, action in (("json.loads", lambda: json.loads(data)), ("reopen", lambda: parse_snapshot(data))):
            seconds, _ = timed(action)
            best[name] = min(best.get(name, float("inf")), seconds)
    export_s = capture_s + seal_s + render_s + write_s
    ratio = best["reopen"] / best["json.loads"]
    sizes = {path.suffix: path.stat().st_size for path in bundle.paths}
    print()
    print(f"snapshot of {model_id} on the large fleet ({len(snapshot.models)} models, all 5 windows)")
    print(f"  capture through the client {capture_s * 1e3:8.1f} ms")
    print(f"  redaction pass             {seal_s * 1e3:8.1f} ms")
    print(f"  headless screenshot        {render_s * 1e3:8.1f} ms")
    print(f"  atomic write (3 files)     {write_s * 1e3:8.1f} ms")
    print(f"  export total               {export_s * 1e3:8.1f} ms")
    print(f"  sizes: json {sizes['.json'] / 1e6:.2f} MB, md {sizes['.md'] / 1e3:.1f} kB,"
          f" svg {sizes.get('.svg', 0) / 1e3:.1f} kB")
    print(f"  json.loads reference       {best['json.loads'] * 1e3:8.1f} ms")
    print(f"  reopen (parse + validate)  {best['reopen'] * 1e3:8.1f} ms  ({ratio:.1f}x json.loads, best of {ROUNDS})")
    assert svg is not None and len(snapshot.models) >= 1000
    assert ratio < REOPEN_RATIO_BUDGET, f"reopening is {ratio:.1f}x json.loads"
    assert export_s < EXPORT_CEILING_S and best["reopen"] < REOPEN_CEILING_S
