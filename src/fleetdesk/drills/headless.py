"""Playing a key script against the drill console under Textual's Pilot, for CI and graded drills."""

from __future__ import annotations

import asyncio
import contextlib

from fleetdesk.drills.console import DrillApp
from fleetdesk.drills.script import KeyScript
from fleetdesk.drills.scoring import Scorecard

GRACE_SECONDS = 3.0
"""After the last key the drill runs on this long (unless complete sooner), so the last action lands."""
HEADLESS_SIZE = (120, 40)
START_TIMEOUT = 30.0


async def play(app: DrillApp, script: KeyScript, *, grace: float = GRACE_SECONDS,
               size: tuple[int, int] = HEADLESS_SIZE) -> Scorecard:
    """Run the drill with ``script`` at the keys and return its scorecard (also saved when the app saves)."""
    async with app.run_test(size=size) as pilot:
        run = app.run
        async with asyncio.timeout(START_TIMEOUT):
            await run.started.wait()
        limit = run.scenario.grading.time_limit
        for step in script.root:
            if step.origin == "page":
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(limit - run.elapsed(), 0.0)):
                        await run.paged.wait()
                if run.paged_at is None:
                    break  # never paged: nothing to respond to; the scorecard says so
                due = run.paged_at + step.at
            else:
                due = step.at
            if due > limit:
                break
            delay = due - run.elapsed()
            if delay > 0:
                await asyncio.sleep(delay)
            await pilot.press(*step.presses())
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(min(grace, limit - run.elapsed()), 0.0)):
                await run.complete.wait()
        return await app.conclude()
