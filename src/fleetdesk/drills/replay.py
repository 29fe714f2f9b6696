"""Time-compressed, deterministic replay of a scenario into a backend.

The drill starts where the fleet's metric history ends. Every model of the
fleet gets one bucket per tick, drawn by ``domain.synthetic`` from its steady
profile plus the scenario's injections; the noise stream is keyed by the
model's own seed mixed with the scenario's seed, so a scenario and seed always
give the same buckets and the replay never repeats the history's noise.

A tick is one bucket of scenario time, sent every ``1/speed`` wall seconds:
the backend's frozen clock is moved to the bucket's end, then the bucket is
posted, exactly as a live feed closes a bucket and reports it.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from fleetdesk.domain.fleet import MetricIncident, MetricProfile
from fleetdesk.domain.synthetic import Timeline, incidents_by_model, synthesize_rows
from fleetdesk.domain.tasks import split_synthetic
from fleetdesk.drills.scenario import Scenario, check_against_fleet
from fleetdesk.fleets import Fleet, build_fleet, load_fleet
from fleetdesk.wire import IngestBucket

SUM_FIELDS = ("weight", "label_sum", "prediction_sum", "cross_entropy_sum")

DEFAULT_SPEED = 1.0
"""Buckets per wall second."""


@dataclass(frozen=True, slots=True)
class Tick:
    """One bucket of scenario time: every model's bucket that closes at ``end``."""

    index: int
    start: datetime
    end: datetime
    buckets: tuple[IngestBucket, ...]


@dataclass(frozen=True, slots=True)
class ReplayPlan:
    """Everything a replay sends, computed before the drill starts."""

    start: datetime
    bucket: timedelta
    incidents: tuple[MetricIncident, ...]
    ticks: tuple[Tick, ...]

    @property
    def end(self) -> datetime:
        return self.start + len(self.ticks) * self.bucket


def drill_seed(profile: MetricProfile, scenario_seed: int) -> int:
    """The noise seed of one model in a drill: stable across processes, distinct from its history's."""
    digest = hashlib.blake2b(
        f"drill:{scenario_seed}:{profile.seed}".encode(), digest_size=8
    ).digest()
    return int.from_bytes(digest, "big") >> 1


def drill_fleet(scenario: Scenario, source: str, fleet_override: str | None = None) -> Fleet:
    """The fleet as the drill sees it, after checking the scenario against it (ScenarioError otherwise).

    Its history is moved to end at the scenario's start, and the history's
    incidents still going at that moment are dropped: the drill's pages are
    the scenario's own, not a fixture story left running. What the scenario
    says began before the drill (a negative ``after``) is added to the history
    instead, up to the drill's start, so it is there when the backend seeds.
    """
    fleet = load_fleet(fleet_override or scenario.fleet, end_at=scenario.start)
    check_against_fleet(
        scenario,
        fleet.registry,
        fleet.file.history.bucket,
        source,
        pipeline_teams=[p.team for p in fleet.file.pipelines.values()],
    )
    history = fleet.file.history
    finished = [i for i in history.incidents if i.end is not None and i.end <= history.end]
    before, _ = split_at(scenario_incidents(scenario, history.end, history.bucket), history.end)
    if len(finished) == len(history.incidents) and not before:
        return fleet
    file = fleet.file.model_copy(
        update={"history": history.model_copy(update={"incidents": finished + before})}
    )
    return build_fleet(file, fleet.source)


def scenario_incidents(
    scenario: Scenario, start: datetime, bucket: timedelta
) -> list[MetricIncident]:
    """Every injection of the scenario as domain incidents, for a drill starting at ``start``."""
    timeline = Timeline(start, start + scenario.length, bucket)
    end = timeline.start + len(timeline) * bucket
    return [i for injection in scenario.injections for i in injection.incidents(start, end, bucket)]


def split_at(
    incidents: list[MetricIncident], moment: datetime
) -> tuple[list[MetricIncident], list[MetricIncident]]:
    """The parts of ``incidents`` before ``moment`` (the history) and from it on (the replay).

    Only shifts that hold one level are cut in two (a drift that began before the drill has ramped by
    then: see Injection)."""
    before, after = [], []
    for incident in incidents:
        end = incident.end
        if end is not None and end <= moment:
            before.append(incident)
        elif incident.start >= moment:
            after.append(incident)
        else:
            before.append(incident.model_copy(update={"end": moment}))
            after.append(incident.model_copy(update={"start": moment}))
    return before, after


def write_fleet(fleet: Fleet, path: Path) -> Path:
    """Save the drill's fleet for the backend to seed from."""
    path.write_text(fleet.file.model_dump_json(), encoding="utf-8")
    return path


def plan_replay(scenario: Scenario, fleet: Fleet) -> ReplayPlan:
    """Every bucket of the drill, deterministic for the scenario (and its seed) and the fleet."""
    history = fleet.file.history
    start, bucket = history.end, history.bucket
    timeline = Timeline(start, start + scenario.length, bucket)
    incidents = tuple(split_at(scenario_incidents(scenario, start, bucket), start)[1])
    grouped = incidents_by_model(incidents)
    per_tick: list[list[IngestBucket]] = [[] for _ in range(len(timeline))]
    for model_id in sorted(fleet.registry.models):
        profile = history.profiles[model_id]
        profile = profile.model_copy(update={"seed": drill_seed(profile, scenario.seed)})
        record = fleet.file.types.get(fleet.registry.models[model_id].type)
        tasks = record.tasks if record is not None else ()
        for row in synthesize_rows(model_id, profile, grouped.get(model_id, ()), timeline):
            index = (row.start - start) // bucket
            sums = (row.weight, row.label_sum, row.prediction_sum, row.cross_entropy_sum)
            # A multi-task model's bucket goes with every task, as its seeded history was split.
            for task, part in split_synthetic(tasks, sums) if tasks else [(None, sums)]:
                per_tick[index].append(
                    IngestBucket(
                        model_id=model_id,
                        start=row.start,
                        task=task,
                        **dict(zip(SUM_FIELDS, part)),
                    )
                )
    ticks = tuple(
        Tick(
            index=i, start=timeline.starts[i], end=timeline.starts[i] + bucket, buckets=tuple(found)
        )
        for i, found in enumerate(per_tick)
    )
    return ReplayPlan(start=start, bucket=bucket, incidents=incidents, ticks=ticks)


SendTick = Callable[[Tick], Awaitable[None]]


async def replay(
    plan: ReplayPlan, send: SendTick, speed: float = DEFAULT_SPEED, *, began: float | None = None
) -> None:
    """Send each tick when its bucket closes on the compressed clock (tick i at (i+1)/speed s).

    Ticks go out one at a time, in order, each after the last one was
    accepted: the backend judges every bucket as it closes, so the same
    scenario and seed open the same incidents at the same scenario times on
    any machine. A backend slower than ``speed`` slows the drill's clock
    instead (``speed`` is a most). ``began`` is the event loop time the drill
    started (now when not given).
    """
    if speed <= 0:
        raise ValueError("speed must be positive")
    loop = asyncio.get_running_loop()
    if began is None:
        began = loop.time()
    for tick in plan.ticks:
        delay = began + (tick.index + 1) / speed - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        await send(tick)
