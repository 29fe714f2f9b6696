"""The replay plan: the same scenario and seed always give the same buckets, and only injected models page."""

from __future__ import annotations

import pytest

from fleetdesk.domain.stability import Health
from fleetdesk.drills.replay import drill_fleet, plan_replay
from fleetdesk.drills.scenario import list_scenarios, load_scenario

SCENARIOS = [name for name, _ in list_scenarios()]


def _plan(name: str, seed: int | None = None):  # type: ignore[no-untyped-def]
    scenario, path = load_scenario(name)
    if seed is not None:
        scenario = scenario.model_copy(update={"seed": seed})
    fleet = drill_fleet(scenario, str(path))
    return scenario, fleet, plan_replay(scenario, fleet)


@pytest.mark.parametrize("name", SCENARIOS)
def test_same_scenario_and_seed_give_the_same_buckets(name: str) -> None:
    _, _, first = _plan(name)
    _, _, second = _plan(name)
    assert first.ticks == second.ticks
    assert first.incidents == second.incidents
    _, _, other = _plan(name, seed=first_seed_plus_one(name))
    assert [t.buckets for t in other.ticks] != [t.buckets for t in first.ticks]


def first_seed_plus_one(name: str) -> int:
    return load_scenario(name)[0].seed + 1


@pytest.mark.parametrize("name", SCENARIOS)
def test_only_injected_models_go_unstable_and_they_do_by_the_expected_time(name: str) -> None:
    scenario, fleet, plan = _plan(name)
    injected = {injection.model_id for injection in scenario.injections}
    first_unstable: dict[str, int] = {}
    for tick in plan.ticks:
        assert [b.start for b in tick.buckets] == [tick.start] * len(tick.buckets)
        for bucket in tick.buckets:
            if fleet.bands_for(bucket.model_id).health(bucket) is Health.UNSTABLE:
                first_unstable.setdefault(bucket.model_id, tick.index)
    assert set(first_unstable) <= injected, set(first_unstable) - injected
    for expected in scenario.incidents:
        closes_after = (first_unstable[expected.model_id] + 1) * plan.bucket
        assert closes_after <= expected.by, (expected.model_id, closes_after)


def test_the_drill_starts_where_the_shifted_history_ends_without_its_running_incidents() -> None:
    scenario, fleet, plan = _plan("launch-ne-regression")
    history = fleet.file.history
    assert history.end == scenario.start == plan.start
    assert all(i.end is not None and i.end <= history.end for i in history.incidents)
    assert len(plan.ticks) == scenario.length / plan.bucket
    assert {b.model_id for b in plan.ticks[0].buckets} == set(fleet.registry.models)


def test_a_feed_stop_leaves_gaps_and_a_held_drift_holds() -> None:
    from datetime import timedelta

    from fleetdesk.domain.fleet import IncidentKind
    from fleetdesk.drills.scenario import Injection

    scenario, path = load_scenario("stale-feed")
    stopped = "ig_reels_late-stage_dhen.x4-int8"
    stop = Injection(model_id=stopped, kind=IncidentKind.FEED_STOP, after=timedelta(hours=3))
    scenario = scenario.model_copy(update={"injections": [*scenario.injections, stop]})
    plan = plan_replay(scenario, drill_fleet(scenario, str(path)))
    present = [any(b.model_id == stopped for b in tick.buckets) for tick in plan.ticks]
    assert present[:3] == [True, True, True] and not any(present[3:])
    _, fleet, plan = _plan("experiment-calibration-drift")
    drifting = "ig_feed_late-stage_mtml.x2-long-history"
    calibration = [
        next(b for b in t.buckets if b.model_id == drifting).calibration for t in plan.ticks
    ]
    assert calibration[0] < 1.05 and all(c > 1.2 for c in calibration[10:])
