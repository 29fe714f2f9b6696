"""One drill run against a live backend: the replay, the watch on its events, and the final score.

The run owns two background tasks: the replay (clock forward, buckets in) and
a watch on the event feed that stamps every event with the wall time the drill
saw it, so the scorecard measures seconds as the engineer lived them. Scoring
reads the server's event log itself (complete, whatever the watch missed),
taking each event's wall time from the watch, or the moment of scoring for an
event the watch never saw.

The drill starts after the newest event in the log: what seeding the backend
recorded (incidents of the fleet's history) is not the drill's. The incidents
already open then are read once, so one of an expected model — a condition that
began before the drill — is the first page, at the start.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime
from pathlib import Path

from pydantic import SecretStr

from fleetdesk.client import EventUpdate, FleetdeskClient, PageRequest
from fleetdesk.drills.replay import ReplayPlan, Tick, replay
from fleetdesk.drills.scenario import Scenario
from fleetdesk.drills.scoring import Keystroke, Scorecard, SeenEvent, matches, score, to_markdown
from fleetdesk.wire import (
    ActionEventData,
    ActionKind,
    Attention,
    EventType,
    Incident,
    IncidentEventData,
    IncidentState,
    ServerEvent,
)

LOG_PAGE = 500


class DrillRun:
    """Replay a plan into a backend (with an admin token: it moves the clock and ingests) and grade the response."""

    def __init__(
        self,
        scenario: Scenario,
        name: str,
        plan: ReplayPlan,
        url: str,
        token: SecretStr | None,
        speed: float,
    ) -> None:
        self.scenario = scenario
        self.name = name
        self.plan = plan
        self.speed = speed
        self._client = FleetdeskClient(url, token)
        self._began = 0.0
        self.started_at = datetime.now(UTC)
        self.keystrokes: list[Keystroke] = []
        self._seen: dict[int, float] = {}
        self._start_event_id = 0
        self.open_at_start: list[Incident] = []
        """Incidents already open when the drill started (conditions that began before it)."""
        self.attention_at_start: dict[str, Attention] = {}
        """How the scenario's quiet models stood when the drill started."""
        self._expected = {incident.model_id for incident in scenario.incidents}
        self._responses_left = {response.id for response in scenario.responses}
        self._acknowledged = False
        self.ticks_sent = 0
        self.replay_error: BaseException | None = None
        self.paged_at: float | None = None
        self._ending = asyncio.Event()
        self.complete = asyncio.Event()
        """Set when the ack and every expected response have been seen (the drill can end)."""
        self.settling = asyncio.Event()
        """Set when ``wait`` runs on after completion (grading.settle), so later actions count too."""
        self.started = asyncio.Event()
        self.paged = asyncio.Event()
        """Set when the first incident of the drill opens."""
        self._tasks: list[asyncio.Task[None]] = []

    def elapsed(self) -> float:
        """Wall seconds since the drill started."""
        return asyncio.get_running_loop().time() - self._began

    def record_key(self, key: str) -> None:
        self.keystrokes.append(Keystroke(wall=round(self.elapsed(), 3), key=key))

    async def start(self) -> None:
        """Connect, note where the event log stands, then start the replay and the watch."""
        await self._client.__aenter__()
        self._start_event_id = await self._client.latest_event_id()
        found = []
        for state in (IncidentState.OPEN, IncidentState.ACKNOWLEDGED):
            found += (await self._client.incidents(state=state, page=PageRequest(limit=1000))).items
        self.open_at_start = found
        for quiet in self.scenario.quiet:
            self.attention_at_start[quiet.model_id] = (
                await self._client.model(quiet.model_id)
            ).attention
        self._began = asyncio.get_running_loop().time()
        self.started_at = datetime.now(UTC)
        self.started.set()
        if any(self._expected & set(incident.model_ids) for incident in found):
            self.paged_at = 0.0  # already paging when the engineer sits down
            self.paged.set()
        self._tasks = [
            asyncio.create_task(self._replay(), name="drill-replay"),
            asyncio.create_task(self._watch(), name="drill-watch"),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    async def close(self) -> None:
        await self.stop()
        await self._client.__aexit__(None, None, None)

    def end_early(self) -> None:
        """Make ``wait`` return now (the engineer ended the drill)."""
        self._ending.set()

    async def _replay(self) -> None:
        async def send(tick: Tick) -> None:
            await self._client.set_clock(
                tick.end, idempotency_key=f"drill-{self.name}-clock-{tick.index}"
            )
            if tick.buckets:
                await self._client.ingest(
                    list(tick.buckets), idempotency_key=f"drill-{self.name}-tick-{tick.index}"
                )
            self.ticks_sent = tick.index + 1

        try:
            await replay(self.plan, send, self.speed, began=self._began)
        except (
            Exception
        ) as error:  # the run goes on and the scorecard says the replay stopped early
            self.replay_error = error

    async def _watch(self) -> None:
        feed = self._client.events(last_event_id=self._start_event_id)
        try:
            async for update in feed:
                if isinstance(update, EventUpdate):
                    self._seen.setdefault(update.event.id, round(self.elapsed(), 3))
                    self._follow(update.event)
        finally:
            await feed.aclose()

    def _follow(self, event: ServerEvent) -> None:
        if (
            event.type in (EventType.INCIDENT_OPENED, EventType.INCIDENT_UPDATED)
            and self.paged_at is None
        ):
            # The page is an expected model's incident, as the scorecard counts it (not any incident at all).
            incident = IncidentEventData.model_validate(event.data).incident
            if incident.opened_at >= self.plan.start and self._expected & set(incident.model_ids):
                self.paged_at = self._seen[event.id]
                self.paged.set()
        elif event.type is EventType.ACTION:
            data = ActionEventData.model_validate(event.data)
            if data.audit.action == ActionKind.ACK:
                self._acknowledged = True
            for response in self.scenario.responses:
                if response.id in self._responses_left and any(
                    matches(m, data) for m in response.any_of
                ):
                    self._responses_left.discard(response.id)
        if self._acknowledged and not self._responses_left:
            self.complete.set()

    async def wait(self) -> None:
        """Until the drill is complete (and ``grading.settle`` seconds more), ended early, or its time limit has
        passed. Running on after completion is what lets a second escalation, or any other action after the
        right one, still count."""
        await self._until(self.complete)
        if self.complete.is_set() and not self._ending.is_set():
            self.settling.set()
            settle_end = self.elapsed() + self.scenario.grading.settle
            await self._until(None, min(settle_end, self.scenario.grading.time_limit))

    async def _until(self, done: asyncio.Event | None, deadline: float | None = None) -> None:
        remaining = (
            deadline if deadline is not None else self.scenario.grading.time_limit
        ) - self.elapsed()
        waits = [asyncio.create_task(self._ending.wait())]
        if done is not None:
            waits.append(asyncio.create_task(done.wait()))
        try:
            await asyncio.wait(
                waits, timeout=max(remaining, 0.0), return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for task in waits:
                task.cancel()

    async def scorecard(self) -> Scorecard:
        """Stop the replay and the watch, read the whole event log of the drill, and grade it."""
        duration = self.elapsed()
        await self.stop()
        events: list[SeenEvent] = []
        after = self._start_event_id
        while True:
            page = await self._client.event_log(after=after, limit=LOG_PAGE)
            for event in page.items:
                events.append(SeenEvent(event=event, wall=self._seen.get(event.id, duration)))
            if len(page.items) < LOG_PAGE:
                break
            after = page.items[-1].id
        card = score(
            self.scenario,
            self.name,
            drill_start=self.plan.start,
            started_at=self.started_at,
            speed=self.speed,
            duration=duration,
            events=events,
            keystrokes=self.keystrokes,
            open_at_start=[i for i in self.open_at_start if self._expected & set(i.model_ids)],
            attention_at_start=self.attention_at_start,
        )
        if self.replay_error is not None:
            reason = (
                f"the replay stopped early after {self.ticks_sent} bucket(s): {self.replay_error}"
            )
            card = card.model_copy(update={"passed": False, "reasons": [*card.reasons, reason]})
        return card


def save_scorecard(card: Scorecard, folder: Path) -> tuple[Path, Path]:
    """Write the scorecard as JSON and Markdown into ``folder`` (created); returns both paths."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{card.started_at:%Y%m%dT%H%M%SZ}-{card.scenario}"
    json_path, markdown_path = folder / f"{stem}.json", folder / f"{stem}.md"
    json_path.write_text(card.model_dump_json(indent=2) + "\n", encoding="utf-8")
    markdown_path.write_text(to_markdown(card), encoding="utf-8")
    return json_path, markdown_path
