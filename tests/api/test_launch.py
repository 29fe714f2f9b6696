"""Launch phases through the registry API, against the real server on each store: one phase forward at a time
(a skip is refused naming the gate it skips), halt and resume in scale-up only, the traffic ramp recorded with
when and who and read back as the model's history, each move audited and streamed."""

from __future__ import annotations

from datetime import timedelta

import pytest

from fleetdesk.client import (
    ActionIntent,
    ConnectionUpdate,
    FleetdeskClient,
    RegistryIntent,
    RuleViolation,
)
from fleetdesk.domain.playbook import ActionKind
from fleetdesk.domain.registry import LaunchPhase
from fleetdesk.wire import RegistryEventData

from .conftest import EXPERIMENT, EXPERIMENT_BASELINE, QUIET_EXPERIMENT, SERVER_NOW, Connect
from .test_events import QUICK, next_update
from .test_registry import LONG_HISTORY, registry_event

PHASE = ("launch_phase",)


async def move(client: FleetdeskClient, model_id: str, phase: LaunchPhase, reason: str) -> int:
    """Move one model to ``phase`` through the generic update; the registry version it made."""
    record = await client.registry_model(model_id)
    result = await client.change_registry(
        RegistryIntent.update(record.model_copy(update={"launch_phase": phase}), reason)
    )
    assert result.version is not None
    return result.version


async def refusal(client: FleetdeskClient, intent: RegistryIntent) -> dict[tuple[str, ...], str]:
    """The refused change's violations by location."""
    with pytest.raises(RuleViolation) as refused:
        await client.change_registry(intent)
    problem = refused.value.problem
    assert problem is not None and problem.status == 422
    return {tuple(e.loc): e.message for e in problem.errors or []}


async def test_a_launch_moves_one_phase_at_a_time_and_its_ramp_is_its_history(
    connect: Connect,
) -> None:
    admin = await connect("admin")
    assert (await admin.model(LONG_HISTORY)).launch_since is None  # in estimation since seeding
    await move(admin, LONG_HISTORY, LaunchPhase.APPROVAL, "estimate reviewed")
    await move(admin, LONG_HISTORY, LaunchPhase.PREPARATION, "approved by the Feed review")
    later = SERVER_NOW + timedelta(hours=2)
    await admin.set_clock(later)
    await move(admin, LONG_HISTORY, LaunchPhase.SCALE_UP, "serving capacity ready")
    await admin.set_clock(later + timedelta(hours=1))
    baseline = await admin.registry_model(EXPERIMENT_BASELINE)
    experiment = await admin.registry_model(LONG_HISTORY)
    await admin.change_registry(
        RegistryIntent.apply(
            [
                baseline.model_copy(update={"traffic_share": baseline.traffic_share - 0.03}),
                experiment.model_copy(update={"traffic_share": experiment.traffic_share + 0.03}),
            ],
            "ramp to 5%",
        )
    )

    detail = await admin.model(LONG_HISTORY)
    assert detail.live.launch_phase is LaunchPhase.SCALE_UP and detail.live.traffic_share == 0.05
    assert detail.launch_since == later  # the ramp within scale-up does not restart its clock
    history = await admin.model_history(LONG_HISTORY)
    steps = [
        (v.version, v.reason, v.actor, [(f.field, f.before, f.after) for f in v.change.fields])
        for v in history.versions
    ]
    assert steps[:4] == [
        (4, "ramp to 5%", "admin", [("traffic_share", 0.02, 0.05)]),
        (3, "serving capacity ready", "admin", [("launch_phase", "preparation", "scale-up")]),
        (2, "approved by the Feed review", "admin", [("launch_phase", "approval", "preparation")]),
        (1, "estimate reviewed", "admin", [("launch_phase", "estimation", "approval")]),
    ]
    assert history.versions[0].at == later + timedelta(hours=1)
    audit = await admin.audit(model_id=LONG_HISTORY)
    assert [r.action for r in audit.items] == ["registry.update"] * 4
    moved = next(r for r in audit.items if r.reason == "serving capacity ready")
    assert moved.detail["before"]["launch_phase"] == "preparation"
    assert moved.detail["after"]["launch_phase"] == "scale-up"


async def test_a_skipped_phase_is_refused_naming_the_gate(connect: Connect) -> None:
    admin = await connect("admin")
    experiment = await admin.registry_model(LONG_HISTORY)
    skip = experiment.model_copy(update={"launch_phase": LaunchPhase.SCALE_UP})
    errors = await refusal(admin, RegistryIntent.update(skip, "straight to scale-up"))
    assert errors[("models", LONG_HISTORY, *PHASE)] == (
        "estimation → scale-up skips approval, preparation: a launch moves forward one phase at a time"
    )
    # An apply lists the skip beside every other violation, and changes nothing.
    finalizing = await admin.registry_model(QUIET_EXPERIMENT)
    back = finalizing.model_copy(update={"launch_phase": LaunchPhase.SCALE_UP})
    errors = await refusal(admin, RegistryIntent.apply([skip, back], "sync"))
    assert "skips approval, preparation" in errors[("models", LONG_HISTORY, *PHASE)]
    assert "finalization → scale-up goes back" in errors[("models", QUIET_EXPERIMENT, *PHASE)]
    assert (await admin.registry()).version == 0


async def test_halt_and_resume_only_during_scale_up_and_a_halt_freezes_the_launch(
    connect: Connect,
) -> None:
    oncall = await connect("oncall")
    admin = await connect("admin")

    def act(kind: ActionKind, model_id: str, reason: str) -> ActionIntent:
        return ActionIntent.of(kind, model_id, expected_serving_model_id=model_id, reason=reason)

    with pytest.raises(RuleViolation, match="launch is not halted"):
        await oncall.perform(act(ActionKind.RESUME_LAUNCH, EXPERIMENT, "nothing to resume"))
    with pytest.raises(RuleViolation, match="launch phase is finalization, not scale-up"):
        await oncall.perform(act(ActionKind.HALT_LAUNCH, QUIET_EXPERIMENT, "too late to halt"))
    await oncall.perform(act(ActionKind.HALT_LAUNCH, EXPERIMENT, "calibration drifting"))

    record = await admin.registry_model(EXPERIMENT)
    onward = record.model_copy(update={"launch_phase": LaunchPhase.FINALIZATION})
    errors = await refusal(admin, RegistryIntent.update(onward, "finish it anyway"))
    assert errors[("models", EXPERIMENT, *PHASE)] == (
        "the launch is halted in scale-up: resume it before its phase changes"
    )
    options = {o.kind: o for o in (await oncall.model(EXPERIMENT)).actions}
    assert options[ActionKind.RESUME_LAUNCH].available
    assert not options[ActionKind.HALT_LAUNCH].available

    result = await oncall.perform(act(ActionKind.RESUME_LAUNCH, EXPERIMENT, "drift explained"))
    assert not result.changes[0].after.launch_halted
    assert not (await oncall.model(EXPERIMENT)).live.launch_halted
    await admin.change_registry(RegistryIntent.update(onward, "ramp done"))
    assert (await admin.model(EXPERIMENT)).live.launch_phase is LaunchPhase.FINALIZATION
    actions = [r.action for r in (await admin.audit(model_id=EXPERIMENT)).items]
    assert "resume-launch" in actions and "halt-launch" in actions


async def test_a_phase_change_is_streamed_as_a_registry_event(connect: Connect) -> None:
    watcher = await connect("viewer", stream=QUICK)
    admin = await connect("admin")
    feed = watcher.events()
    try:
        await next_update(feed, ConnectionUpdate)
        version = await move(admin, LONG_HISTORY, LaunchPhase.APPROVAL, "estimate reviewed")
        update = await registry_event(feed)
    finally:
        await feed.aclose()
    data = update.data
    assert isinstance(data, RegistryEventData) and data.version == version
    assert update.event.model_id == LONG_HISTORY and data.reason == "estimate reviewed"
    assert [(f.field, f.after) for f in data.change.fields] == [("launch_phase", "approval")]
