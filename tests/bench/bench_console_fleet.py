"""Console start-up and the fleet view at scale, as an engineer runs it: its own process in a 120x40 pty.

Each start-up figure is compared with a bare Textual app, started in the same pty in the same run:
- start to first complete fleet paint on the large fixture fleet (1,200 models): ≤ 1.5× the bare app that
  first imports the libraries the console needs before it can paint anything true (pydantic and
  pydantic-settings for its settings and wire formats, httpx with httpcore and anyio for its client) — the
  floor of this design, none of it fleetdesk code; recorded beside it, the same figure against the bare
  app showing one label (the floor of any Textual console);
- the embedded console (``fleetdesk console --fleet NAME``, its own backend): the first words on the
  terminal (≤ 0.5 s), and the first fleet paint of the large and the small fleet, cold (the fleet's store
  seeded) and warm (the cached store copied): warm large ≤ 1.5× warm small;
- for each size in FLEETDESK_BENCH_SCALES and each store, on a generated fleet: first paint (recorded), whole
  fleet loaded (≤ 2 s at 50,000 models), filter keystroke to finished repaint (median ≤ 50 ms up to 10,000 models), and RSS with the
  fleet shown (≤ 1.5× the bare app's + 30 MB).
Seeding the servers is not counted; each size is seeded once per session.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import SecretStr
from terminal import BARE_APP, Terminal, terminal_env

from conftest import SCALES, at_scale, disk_quiet
from fleetdesk.client import FleetdeskClient, PageRequest
from fleetdesk.console.fleet_filter import matches, split
from fleetdesk.console.widgets.fleet.row import shared
from fleetdesk.fleets.generator import generate_fleet
from fleetdesk.server.embedded import EmbeddedServer, start_embedded
from fleetdesk.wire import ModelRow

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
STARTS = 7
"""Start-ups of each app per figure, alternating, so all see the same load on a shared box."""
LIBRARIES_APP = (
    "import sys\n"
    "sys.modules['httpx._main'] = None  # as fleetdesk.client does: httpx's command-line tool is not needed\n"
    "from pydantic import BaseModel, SecretStr\n"
    "import anyio._backends._asyncio, httpcore, httpx, pydantic_settings\n"
) + BARE_APP
FILTER_KEYS = "reels t0"
SCREEN_ROW = 29
"""A row surely on the first screen at 120x40: its model painted means the first screenful is."""


@dataclass(frozen=True)
class Bare:
    start_seconds: float
    rss_mb: float


def run_bare(code: str = BARE_APP) -> Bare:
    bare = Terminal([sys.executable, "-c", code], terminal_env())
    try:
        seconds = bare.wait_for(b"ready-marker")
        bare.read(0.5)
        return Bare(seconds, bare.rss_mb())
    finally:
        bare.close()


def start_console(server: EmbeddedServer) -> Terminal:
    argv = [sys.executable, "-m", "fleetdesk.cli", "console", "--server", server.url]
    return Terminal(argv, terminal_env(server.oncall_token))


def screen_marker(server: EmbeddedServer) -> bytes:
    """The variant of a model low on the first screen of the worst-first table (".x142-session-ctx-142"): the
    part of its id every row shows whole, however narrow (an id that does not fit gives up its type's end)."""

    async def fetch() -> str:
        async with FleetdeskClient(server.url, SecretStr(server.oncall_token)) as client:
            page = await client.list_models(page=PageRequest(offset=SCREEN_ROW, limit=1))
        model = page.items[0]
        return (
            model.id[len(model.type) :] if model.id.startswith(model.type + ".") else model.id[-20:]
        )

    return asyncio.run(fetch()).encode()


def filter_steps(server: EmbeddedServer, typed: str) -> list[tuple[str, bytes | None]]:
    """Each key of ``typed``, with the count line its repaint ends with when it changes what the filter shows."""

    async def fetch() -> list[ModelRow]:
        rows: list[ModelRow] = []
        async with FleetdeskClient(server.url, SecretStr(server.oncall_token)) as client:
            while True:
                page = await client.fleet_rows(page=PageRequest(offset=len(rows), limit=5000))
                rows.extend(map(shared, page.rows))
                if not page.rows or len(rows) >= page.total:
                    return rows

    rows = asyncio.run(fetch())
    steps: list[tuple[str, bytes | None]] = []
    last = len(rows)
    for end, key in enumerate(typed, start=1):
        shown = sum(matches(row, split(typed[:end])) for row in rows)
        steps.append((key, f"({shown} shown)".encode() if shown not in (last, len(rows)) else None))
        last = shown
    return steps


def keystroke_to_repaint(terminal: Terminal, key: str, marker: bytes | None) -> float | None:
    """Seconds from a key to the fleet counts saying how many models the new filter shows (drawn last);
    None for a key that does not change what is shown."""
    terminal.read(0.3)  # let the previous repaint finish
    before = len(terminal.output)
    sent = time.perf_counter()
    terminal.send(key)
    if marker is None:
        return None
    return terminal.wait_for(marker, timeout=10, since=before) - (sent - terminal.started)


@pytest.fixture(scope="module")
def large_fleet() -> Iterator[EmbeddedServer]:
    server = start_embedded("large", now=NOW)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def generated_fleet(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Callable[[str, int], EmbeddedServer]]:
    """A server on a generated fleet of the given size in the given store, seeded once. The servers stop with
    this module: left running (one per store and size) until the session's end, they were still there while
    the server bench measured action latency."""
    servers: dict[tuple[str, int], EmbeddedServer] = {}

    def serve(store: str, size: int) -> EmbeddedServer:
        if (store, size) not in servers:
            folder = tmp_path_factory.mktemp(f"fleet{size}")
            fleet = folder / "fleet.json"
            fleet.write_text(
                generate_fleet(size, seed=7, name=f"bench{size}").model_dump_json(),
                encoding="utf-8",
            )
            where: Path | str = folder / "fleetdesk.sqlite"
            if store == "postgresql":
                where = request.getfixturevalue("postgres").fresh_database()
            servers[store, size] = start_embedded(str(fleet), where, now=NOW)
            if store == "postgresql":
                request.getfixturevalue("postgres").settle()
            disk_quiet()  # the seed written out before anything is measured
        return servers[store, size]

    yield serve
    for server in servers.values():
        server.stop()


def test_start_to_first_fleet_paint_on_the_large_fleet(figures, large_fleet):
    marker = screen_marker(large_fleet)
    bare, libraries, console = [], [], []
    for _ in range(STARTS):
        bare.append(run_bare().start_seconds)
        libraries.append(run_bare(LIBRARIES_APP).start_seconds)
        terminal = start_console(large_fleet)
        try:
            console.append(terminal.wait_for(marker, timeout=60))
        finally:
            terminal.close()
    bare_ms, libraries_ms, console_ms = (
        statistics.median(times) * 1000 for times in (bare, libraries, console)
    )
    figures.record(
        "console start to first fleet paint, large fleet (1,200 models)",
        console_ms,
        "ms",
        budget=1.5,
        budget_on_ratio=True,
        reference=libraries_ms,
        reference_name="bare app + libraries",
    )
    figures.record(
        "  the same, against the bare app (no libraries)",
        console_ms,
        "ms",
        reference=bare_ms,
        reference_name="bare app",
    )
    figures.record(
        "  bare app that imports the console's libraries first (no fleetdesk code)",
        libraries_ms,
        "ms",
        reference=bare_ms,
        reference_name="bare app",
    )


EMBEDDED_MARKER = b"TIER"
"""A fleet row's tier cell: the table has painted its first rows (the header says "tier")."""


def start_embedded_console(fleet: str, cache: Path) -> Terminal:
    argv = [sys.executable, "-m", "fleetdesk.cli", "console", "--fleet", fleet]
    return Terminal(argv, {**terminal_env(), "XDG_CACHE_HOME": str(cache)})


def embedded_first_paint(fleet: str, cache: Path) -> tuple[float, float]:
    """(seconds to the first words on the terminal, seconds to the first fleet rows) of one embedded start."""
    terminal = start_embedded_console(fleet, cache)
    try:
        words = terminal.wait_for(b"fleetdesk:", timeout=30)
        return words, terminal.wait_for(EMBEDDED_MARKER, timeout=120)
    finally:
        terminal.close()


def test_embedded_start_cold_and_warm(figures, tmp_path):
    cache = tmp_path / "cache"
    cold: dict[str, float] = {}
    warm: dict[str, list[float]] = {"large": [], "small": []}
    words: list[float] = []
    for fleet in ("large", "small"):
        shutil.rmtree(cache, ignore_errors=True)  # cold: the fleet's store is seeded
        first_words, cold[fleet] = embedded_first_paint(fleet, cache)
        words.append(first_words)
    for _ in range(STARTS):  # warm, alternating: both see the same load
        for fleet in ("large", "small"):
            warm[fleet].append(embedded_first_paint(fleet, cache)[1])
    large_ms, small_ms = (statistics.median(warm[fleet]) * 1000 for fleet in ("large", "small"))
    figures.record(
        "embedded console: first words on the terminal (what it is doing, how far)",
        max(words) * 1000,
        "ms",
        budget=500,
    )
    figures.record(
        "embedded console first fleet paint, large fleet, cold (store seeded)",
        cold["large"] * 1000,
        "ms",
        reference=small_ms,
        reference_name="warm small",
    )
    figures.record(
        "embedded console first fleet paint, large fleet, warm (cached store)",
        large_ms,
        "ms",
        budget=1.5,
        budget_on_ratio=True,
        reference=small_ms,
        reference_name="warm small",
    )
    figures.record(
        "embedded console first fleet paint, small fleet, cold (store seeded)",
        cold["small"] * 1000,
        "ms",
        reference=small_ms,
        reference_name="warm small",
    )
    figures.record(
        "embedded console first fleet paint, small fleet, warm (cached store)", small_ms, "ms"
    )


@pytest.mark.parametrize("size", SCALES)
@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_fleet_view_at_scale(figures, generated_fleet, store, size):
    server = generated_fleet(store, size)
    marker = screen_marker(server)
    steps = filter_steps(server, FILTER_KEYS)
    bare = run_bare()
    terminal = start_console(server)
    try:
        first_paint = terminal.wait_for(marker, timeout=120)
        loaded = terminal.wait_for(f"{size} models".encode(), timeout=300)
        terminal.read(1.0)
        rss = terminal.rss_mb()
        terminal.send("/")
        terminal.read(0.5)
        delays = [
            delay for key, marker in steps if (delay := keystroke_to_repaint(terminal, key, marker))
        ]
    finally:
        terminal.close()
    bare_ms = bare.start_seconds * 1000
    figures.record(
        f"console start to first fleet paint, {size:,} models ({store})",
        first_paint * 1000,
        "ms",
        reference=bare_ms,
        reference_name="bare app",
    )
    figures.record(
        f"console start to whole fleet loaded, {size:,} models ({store})",
        loaded * 1000,
        "ms",
        budget=at_scale(size, None, large=2000),  # issue 19, at 50,000 models
        reference=bare_ms,
        reference_name="bare app",
    )
    figures.record(
        f"filter keystroke to repaint, median, {size:,} models ({store})",
        statistics.median(delays) * 1000,
        "ms",
        budget=at_scale(size, 50, large=50),
    )
    figures.record(
        f"console RSS with the fleet shown, {size:,} models ({store})",
        rss,
        "MB",
        budget=at_scale(size, 1.5 * bare.rss_mb + 30),
        reference=bare.rss_mb,
        reference_name="bare app",
    )
