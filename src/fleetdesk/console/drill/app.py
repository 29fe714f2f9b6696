"""The console with a drill running under it: every key counted, the scorecard shown at the end."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual import events, work

from fleetdesk.console.app import Backend, FleetdeskApp
from fleetdesk.console.drill.scorecard import ScorecardScreen
from fleetdesk.domain.text import sanitize
from fleetdesk.drills.scoring import Scorecard
from fleetdesk.drills.session import DrillRun, save_scorecard
from fleetdesk.settings.console import ConsoleSettings


class DrillApp(FleetdeskApp):
    """FleetdeskApp plus a drill: it starts the replay on mount and ends with the scorecard.

    With ``conclude_by_itself`` (an engineer at the keys) the drill ends when the
    ack and every expected response have happened or the time limit passed; a
    headless player calls ``conclude`` itself when its script is done.
    """

    def __init__(
        self,
        backend: Backend,
        drill: DrillRun,
        *,
        out_dir: Path | None,
        settings: ConsoleSettings | None = None,
        conclude_by_itself: bool = True,
    ) -> None:
        super().__init__(backend, settings)
        self.drill = drill
        self.out_dir = out_dir
        self.conclude_by_itself = conclude_by_itself
        self.scorecard: Scorecard | None = None
        self.saved: list[Path] = []
        self._concluding = asyncio.Lock()

    async def on_mount(self) -> None:
        await super().on_mount()
        await self.drill.start()
        if self.conclude_by_itself:
            self.notify(
                f"{sanitize(self.drill.scenario.title)}: metrics replay at {self.drill.speed:g} bucket(s) per second. "
                "Respond to the page as on call; the drill ends when you have, or with q.",
                title="Drill started",
                timeout=15,
                markup=False,
            )
            self.end_when_done()

    async def on_event(self, event: events.Event) -> None:
        # Count keys as the terminal (or Pilot) delivers them, before any widget can consume them.
        if (
            isinstance(event, events.Key)
            and not event.is_forwarded
            and not self.typed_again(event)
            and self.scorecard is None
        ):
            self.drill.record_key(event.key)
        await super().on_event(event)

    async def on_unmount(self) -> None:
        await self.drill.close()
        await super().on_unmount()

    def action_request_quit(self) -> None:
        """While the drill runs, quitting ends the drill early and shows its scorecard first."""
        if self.scorecard is not None or not self.conclude_by_itself:
            super().action_request_quit()
            return
        from fleetdesk.console.screens.quit import QuitScreen

        def end_if(yes: bool | None) -> None:
            if yes:
                self.drill.end_early()

        self.push_screen(QuitScreen(), end_if)

    async def conclude(self) -> Scorecard:
        """Stop the replay, grade the drill and save the scorecard (once)."""
        async with self._concluding:
            if self.scorecard is None:
                self.scorecard = await self.drill.scorecard()
                if self.out_dir is not None:
                    self.saved = list(save_scorecard(self.scorecard, self.out_dir))
            return self.scorecard

    @work(exclusive=True, group="drill", exit_on_error=False)
    async def end_when_done(self) -> None:
        waiting = asyncio.create_task(self.drill.wait())
        settling = asyncio.create_task(self.drill.settling.wait())
        done, _ = await asyncio.wait([waiting, settling], return_when=asyncio.FIRST_COMPLETED)
        if settling in done and not waiting.done():
            # Not the end yet: a second escalation, or any other change after the right one, still counts.
            self.notify(
                f"Every expected response is in. The drill runs on {self.drill.scenario.grading.settle:g} s"
                " more (q ends it now): what you do until then is graded too.",
                title="Drill nearly done",
                timeout=10,
                markup=False,
            )
        await waiting
        settling.cancel()
        card = await self.conclude()
        self.push_screen(ScorecardScreen(card, self.saved), lambda _: self.exit())
