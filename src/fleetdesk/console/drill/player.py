"""Playing a key script against the drill console under Textual's Pilot, for CI and graded drills."""

from __future__ import annotations

import asyncio
import contextlib
import unicodedata

from textual import events
from textual.keys import KEY_NAME_REPLACEMENTS, REPLACED_KEYS, key_to_character
from textual.message_pump import MessagePump
from textual.worker import Worker

from fleetdesk.console.drill.app import DrillApp
from fleetdesk.console.screens.action_keys import WORKER_GROUPS
from fleetdesk.drills.scoring import Scorecard
from fleetdesk.drills.script import KeyScript

GRACE_SECONDS = 3.0
"""After the last key the drill runs on this long (unless complete sooner), so the last action lands."""
HEADLESS_SIZE = (120, 40)
START_TIMEOUT = 30.0
SETTLE_TIMEOUT = 30.0
KEY_ENABLE_TIMEOUT = 15.0
ENDLESS_WORKER_GROUPS = frozenset({"live", "drill"})
"""Workers that run for the app's whole life (the console's live feed, the drill's end watch)."""


async def play(
    app: DrillApp,
    script: KeyScript,
    *,
    grace: float = GRACE_SECONDS,
    size: tuple[int, int] = HEADLESS_SIZE,
) -> Scorecard:
    """Run the drill with ``script`` at the keys and return its scorecard (also saved when the app saves)."""
    async with app.run_test(size=size):
        run = app.drill
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
            elif step.origin == "previous":
                due = run.elapsed() + step.at
            else:
                due = step.at
            if due > limit:
                break
            delay = due - run.elapsed()
            if delay > 0:
                await asyncio.sleep(delay)
            if step.keys is not None:
                for key in step.presses():  # key names
                    await until_key_enabled(app, key)
                    await press(app, key)
            else:
                # Typed text goes to one input: deliver it all, then wait once.
                await press(app, *map(key_for_character, step.presses()))
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(min(grace, limit - run.elapsed()), 0.0)):
                await run.complete.wait()
        return await app.conclude()


async def press(app: DrillApp, *keys: str) -> None:
    """Deliver keys as the terminal would, then wait until the app is ready for the next one.

    Ready means: the app and its screen have handled the key; the work the
    key started (fetching a model's view before it opens) has finished once;
    when another screen opened, the work it started has too; and a playbook
    action in flight (the console's dry-run and action workers) has finished
    and been shown, as an engineer waits for the model or the dialog before
    pressing the next key. Pilot.press instead waits for the whole process to
    go idle, which never happens while the replay keeps it busy.
    """
    workers_before, screen_before = set(app.workers), app.screen
    for key in keys:
        app.post_message(events.Key(key, key_to_character(REPLACED_KEYS.get(key, key))))
    async with asyncio.timeout(SETTLE_TIMEOUT):
        await _settled(app)
        await _started_work_done(app, workers_before)
        await _settled(app)
        if app.screen is not screen_before:
            while not app.screen.is_mounted:
                await _settled(app)
            await _settled(app)  # its on_mount has run, so the work it starts exists
            await _started_work_done(app, workers_before)
        while True:
            await _settled(app)
            busy = [
                worker
                for worker in app.workers
                if worker.group.startswith(WORKER_GROUPS) and not worker.is_finished
            ]
            if not busy:
                return
            await asyncio.gather(*(worker.wait() for worker in busy), return_exceptions=True)


async def _started_work_done(app: DrillApp, workers_before: set[Worker]) -> None:
    started = [
        w for w in app.workers if w not in workers_before and w.group not in ENDLESS_WORKER_GROUPS
    ]
    await asyncio.gather(*(worker.wait() for worker in started), return_exceptions=True)


async def until_key_enabled(app: DrillApp, key: str) -> None:
    """Wait (up to KEY_ENABLE_TIMEOUT) while the screen shows ``key`` disabled, e.g. "still loading".

    An engineer waits for the model to load before pressing ``a``; a key
    still disabled after that is pressed anyway and does nothing, as it would.
    """
    screen = app.screen
    changed = asyncio.Event()

    def disabled() -> bool:
        active = screen.active_bindings.get(key)
        return active is not None and not active.enabled

    screen.bindings_updated_signal.subscribe(app, lambda _: changed.set())
    try:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(KEY_ENABLE_TIMEOUT):
                while disabled() and app.screen is screen:
                    changed.clear()
                    await changed.wait()
    finally:
        screen.bindings_updated_signal.unsubscribe(app)


async def _settled(app: DrillApp) -> None:
    await _drained(app)
    await _drained(app.screen, *app.screen.walk_children())


async def _drained(*nodes: MessagePump) -> None:
    """Until every node has processed the messages it had when this was called."""
    pending = [node for node in nodes if node.is_running]
    done = asyncio.Event()
    left = len(pending)

    def one_done() -> None:
        nonlocal left
        left -= 1
        if left == 0:
            done.set()

    scheduled = sum(1 for node in pending if node.call_later(one_done))
    left -= len(pending) - scheduled
    if left > 0:
        await done.wait()


def key_for_character(character: str) -> str:
    """Textual's key name for a typed character ("a", "minus", "full_stop", "space")."""
    if character.isalnum():
        return character
    try:
        name = unicodedata.name(character).lower().replace("-", "_").replace(" ", "_")
    except ValueError:
        return character
    return KEY_NAME_REPLACEMENTS.get(name, name)
