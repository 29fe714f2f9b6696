"""Console test helpers: the real app against the real embedded server (the ``server`` fixture)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from pydantic import SecretStr
from textual.pilot import Pilot

from fleetdesk.console.app import Backend, FleetdeskApp
from fleetdesk.drills.scoring import ResponseResult, Scorecard, TakenAction
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.settings.console import ConsoleSettings

DEADLINE = 15.0

TIER2_EXPERIMENT = "ig_feed_late-stage_mtml.x1-watch-time"
"""TIER2, experiment in scale-up with a baseline and an open incident: every action applies."""
TIER1_EXPERIMENT = "ig_reels_late-stage_dhen.x4-int8"
"""TIER1 experiment with a baseline: strict confirmation."""
TIER0_BASELINE = "fb_feed_late-stage_dhen.v52"
"""TIER0 baseline with no baseline of its own, on an open incident."""


def make_app(server: EmbeddedServer, token: str = "oncall", **settings) -> FleetdeskApp:
    return FleetdeskApp(
        Backend(server.url, SecretStr(server.tokens[token])), ConsoleSettings(**settings)
    )


async def wait_for(
    pilot: Pilot, condition: Callable[[], object], what: str, deadline: float = DEADLINE
) -> None:
    """Let the app run until ``condition()`` is true; fail naming ``what`` after the deadline."""
    give_up = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > give_up:
            raise AssertionError(
                f"timed out waiting for {what}; screen now:\n{screen_text(pilot.app)}"
            )
        await pilot.pause(0.02)
    await pilot.pause()


def screen_text(app: FleetdeskApp) -> str:
    """What the current screen shows now, as plain text lines."""
    compositor = app.screen._compositor  # noqa: SLF001 - the only read-only way to the composed cells
    chops = compositor._render_chops(compositor.size.region, lambda y: True)  # noqa: SLF001
    return "\n".join("".join(strip.text for strip in chop.values()) for chop in chops)


HOSTILE_ID = "ig_feed_x.a|b [click](http://evil.example) `tick`"
"""A model id that is Markdown: a table cell break, a link, a code span."""


def sample_scorecard() -> Scorecard:
    """A passed drill's scorecard whose data holds Markdown: a pipe, a link, backticks, a heading."""
    taken = TakenAction(
        audit_id=1, action="end-experiment", model_id=HOSTILE_ID, actor="oncall", seconds=12.5
    )
    return Scorecard(
        scenario="experiment-calibration-drift",
        title="Experiment | calibration [drift]",
        story="# not a heading\n- not a list",
        fleet="small",
        seed=6,
        speed=1.0,
        started_at=datetime(2026, 11, 30, 2, tzinfo=UTC),
        duration=40.0,
        first_page=3.0,
        time_to_acknowledge=5.0,
        acknowledge_within=60,
        time_to_first_mitigation=12.5,
        responses=[
            ResponseResult(
                id="end-experiment",
                description="end it",
                expected=[f"end-experiment {HOSTILE_ID}"],
                within=120,
                met=True,
                by=taken,
            )
        ],
        wrong=[],
        ungraded=[],
        incidents=[],
        keystrokes=4,
        keystrokes_to_mitigation=4,
        passed=True,
        reasons=[],
    )
