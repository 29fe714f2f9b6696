"""Every playbook action through the real client: effects, audit, rules, dry runs, stale state, races."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from fleetdesk.client import (
    ActionIntent,
    AlreadyAcknowledged,
    FleetdeskClient,
    PageRequest,
    RuleViolation,
    StaleState,
)
from fleetdesk.wire import ActionKind, EscalationTarget, EventType, IncidentState

from .conftest import (
    DOWNSTREAM,
    EXPERIMENT,
    EXPERIMENT_BASELINE,
    EXPERIMENT_TEAM,
    FOUNDATION,
    NO_BASELINE,
    QUIET_EXPERIMENT,
    Connect,
)


async def world(client: FleetdeskClient, model_id: str) -> tuple[object, ...]:
    """Everything an action could change, to compare before and after."""
    detail = await client.model(model_id)
    incidents = await client.incidents()
    return (
        detail.live,
        detail.open_incident_id,
        (await client.audit()).total,
        (await client.event_log(limit=500)).last_id,
        [(i.id, i.state, i.model_ids) for i in incidents.items],
        [(n.id, n.text) for i in incidents.items for n in (await client.incident(i.id)).notes],
    )


async def test_rollback_serves_the_baseline_with_one_audit_record_timeline_entry_and_event(
    connect: Connect,
) -> None:
    client = await connect(f"oncall:{EXPERIMENT_TEAM}")
    before = await client.model(EXPERIMENT)
    intent = ActionIntent.of(
        ActionKind.ROLLBACK,
        EXPERIMENT,
        expected_serving_model_id=before.live.serving_model_id,
        reason="NE regression since 09:00",
    )
    result = await client.perform(intent)

    assert result.action is ActionKind.ROLLBACK and not result.dry_run
    assert (
        result.traffic_to == EXPERIMENT_BASELINE
        and result.traffic_moved == before.live.traffic_share
    )
    assert result.audit_id is not None and result.event_id is not None
    after = await client.model(EXPERIMENT)
    assert after.live.serving_model_id == EXPERIMENT_BASELINE and after.live.traffic_share == 0.0
    baseline = await client.model(EXPERIMENT_BASELINE)
    assert baseline.live.traffic_share > 0

    audit = await client.audit(model_id=EXPERIMENT)
    assert audit.total == 1
    record = audit.items[0]
    assert (record.actor, record.action, record.idempotency_key) == (
        f"oncall-{EXPERIMENT_TEAM}",
        "rollback",
        intent.idempotency_key,
    )
    assert record.before == before.live and record.after == after.live
    assert record.reason == "NE regression since 09:00"

    incident = await client.incident(before.open_incident_id or 0)
    assert [e.audit_id for e in incident.timeline if e.kind == "action"] == [result.audit_id]
    events = (await client.event_log()).items
    actions = [e for e in events if e.type is EventType.ACTION]
    assert [e.id for e in actions] == [result.event_id]
    assert actions[0].payload().audit.id == result.audit_id  # type: ignore[attr-defined]


async def test_end_experiment_then_again_is_stale_or_already_ended(connect: Connect) -> None:
    client = await connect("oncall")
    result = await client.perform(
        ActionIntent.of(
            ActionKind.END_EXPERIMENT,
            QUIET_EXPERIMENT,
            expected_serving_model_id=QUIET_EXPERIMENT,
            reason="int8 variant regressed",
        )
    )
    assert result.changes[0].after.experiment_ended and result.traffic_to
    with pytest.raises(StaleState) as stale:
        await client.perform(
            ActionIntent.of(
                ActionKind.END_EXPERIMENT,
                QUIET_EXPERIMENT,
                expected_serving_model_id=QUIET_EXPERIMENT,
                reason="again",
            )
        )
    assert (
        stale.value.current is not None
        and stale.value.current.serving_model_id == result.traffic_to
    )
    with pytest.raises(RuleViolation, match="already ended"):
        await client.perform(
            ActionIntent.of(
                ActionKind.END_EXPERIMENT,
                QUIET_EXPERIMENT,
                expected_serving_model_id=result.traffic_to,
                reason="again",
            )
        )
    assert (await client.audit(model_id=QUIET_EXPERIMENT)).total == 1


async def test_halt_launch_only_for_a_scale_up_and_only_once(connect: Connect) -> None:
    client = await connect("oncall")
    result = await client.perform(
        ActionIntent.of(
            ActionKind.HALT_LAUNCH,
            EXPERIMENT,
            expected_serving_model_id=EXPERIMENT,
            reason="stop the ramp",
        )
    )
    assert result.changes[0].after.launch_halted
    assert (await client.model(EXPERIMENT)).live.launch_halted
    with pytest.raises(RuleViolation, match="already halted"):
        await client.perform(
            ActionIntent.of(
                ActionKind.HALT_LAUNCH,
                EXPERIMENT,
                expected_serving_model_id=EXPERIMENT,
                reason="again",
            )
        )
    with pytest.raises(RuleViolation, match="not scale-up"):
        await client.perform(
            ActionIntent.of(
                ActionKind.HALT_LAUNCH,
                QUIET_EXPERIMENT,
                expected_serving_model_id=QUIET_EXPERIMENT,
                reason="no",
            )
        )


async def test_escalate_pages_the_owner_or_the_upstream_team(connect: Connect) -> None:
    client = await connect("oncall")
    owner = await client.perform(
        ActionIntent.of(ActionKind.ESCALATE, NO_BASELINE, reason="tagging CTR dropped")
    )
    assert [p.team for p in owner.pages] == [(await client.model(NO_BASELINE)).model.owner_team]
    assert owner.incident_id is not None  # an escalation without an incident opens one
    assert (await client.incident(owner.incident_id)).state is IncidentState.OPEN

    upstream = await client.perform(
        ActionIntent.of(
            ActionKind.ESCALATE,
            DOWNSTREAM,
            reason="the foundation model drifts",
            target=EscalationTarget.UPSTREAM,
        )
    )
    foundation_team = (await client.model(FOUNDATION)).model.owner_team
    assert [(p.team, p.target) for p in upstream.pages] == [
        (foundation_team, EscalationTarget.UPSTREAM)
    ]
    with pytest.raises(RuleViolation, match="no upstream"):
        await client.perform(
            ActionIntent.of(
                ActionKind.ESCALATE, NO_BASELINE, reason="x", target=EscalationTarget.UPSTREAM
            )
        )


async def test_ack_once_then_already_acknowledged(connect: Connect) -> None:
    client = await connect(f"oncall:{EXPERIMENT_TEAM}")
    incident_id = (await client.model(EXPERIMENT)).open_incident_id
    result = await client.perform(ActionIntent.of(ActionKind.ACK, EXPERIMENT, reason="looking"))
    assert result.incident_id == incident_id
    incident = await client.incident(incident_id or 0)
    assert (
        incident.state is IncidentState.ACKNOWLEDGED
        and incident.acknowledged_by == f"oncall-{EXPERIMENT_TEAM}"
    )
    admin = await connect("admin")
    with pytest.raises(AlreadyAcknowledged) as again:
        await admin.perform(ActionIntent.of(ActionKind.ACK, EXPERIMENT))
    assert (
        again.value.incident is not None
        and again.value.incident.acknowledged_by == f"oncall-{EXPERIMENT_TEAM}"
    )
    with pytest.raises(RuleViolation, match="no open incident"):
        await admin.perform(ActionIntent.of(ActionKind.ACK, NO_BASELINE))


async def test_note_goes_to_the_incident_or_to_the_model(connect: Connect) -> None:
    client = await connect("oncall")
    on_incident = await client.perform(
        ActionIntent.of(
            ActionKind.NOTE, EXPERIMENT, text="watch-time head looks miscalibrated \x1b[31m"
        )
    )
    assert on_incident.incident_id is not None
    notes = (await client.incident(on_incident.incident_id)).notes
    assert [n.text for n in notes] == [
        "watch-time head looks miscalibrated \x1b[31m"
    ]  # stored as given
    on_model = await client.perform(
        ActionIntent.of(ActionKind.NOTE, NO_BASELINE, text="quiet for now")
    )
    assert on_model.incident_id is None
    audit = await client.audit(action=ActionKind.NOTE)
    assert audit.total == 2 and {r.detail["text"] for r in audit.items} == {
        "quiet for now",
        "watch-time head looks miscalibrated \x1b[31m",
    }


async def test_registry_rules_refuse_impossible_actions(connect: Connect) -> None:
    client = await connect("admin")
    with pytest.raises(RuleViolation) as no_baseline:
        await client.perform(
            ActionIntent.of(
                ActionKind.ROLLBACK, NO_BASELINE, expected_serving_model_id=NO_BASELINE, reason="x"
            )
        )
    assert (
        no_baseline.value.problem is not None
        and no_baseline.value.problem.suggested_action == "escalate"
    )
    assert "escalate" in no_baseline.value.message
    with pytest.raises(RuleViolation, match="not an experiment"):
        await client.perform(
            ActionIntent.of(
                ActionKind.END_EXPERIMENT,
                NO_BASELINE,
                expected_serving_model_id=NO_BASELINE,
                reason="x",
            )
        )
    assert (await client.audit()).total == 0


DRY_RUNS = {
    ActionKind.ROLLBACK: lambda: ActionIntent.of(
        ActionKind.ROLLBACK, EXPERIMENT, expected_serving_model_id=EXPERIMENT, reason="r"
    ),
    ActionKind.END_EXPERIMENT: lambda: ActionIntent.of(
        ActionKind.END_EXPERIMENT, EXPERIMENT, expected_serving_model_id=EXPERIMENT, reason="r"
    ),
    ActionKind.HALT_LAUNCH: lambda: ActionIntent.of(
        ActionKind.HALT_LAUNCH, EXPERIMENT, expected_serving_model_id=EXPERIMENT, reason="r"
    ),
    ActionKind.RESUME_LAUNCH: lambda: ActionIntent.of(
        ActionKind.RESUME_LAUNCH, EXPERIMENT, expected_serving_model_id=EXPERIMENT, reason="r"
    ),
    ActionKind.ESCALATE: lambda: ActionIntent.of(ActionKind.ESCALATE, NO_BASELINE, reason="r"),
    ActionKind.ACK: lambda: ActionIntent.of(ActionKind.ACK, EXPERIMENT),
    ActionKind.NOTE: lambda: ActionIntent.of(ActionKind.NOTE, EXPERIMENT, text="n"),
}


@pytest.mark.parametrize("kind", list(ActionKind))
async def test_dry_run_says_what_would_change_and_changes_nothing(
    connect: Connect, kind: ActionKind
) -> None:
    client = await connect("admin")
    if kind is ActionKind.RESUME_LAUNCH:  # only a halted launch resumes
        await client.perform(DRY_RUNS[ActionKind.HALT_LAUNCH]())
    intent = DRY_RUNS[kind]()
    before = await world(client, intent.model_id)
    preview = await client.perform(intent.as_dry_run())
    assert preview.dry_run and preview.summary.startswith("Would ")
    assert preview.audit_id is None and preview.event_id is None
    assert await world(client, intent.model_id) == before
    # The real action then does what the preview said.
    done = await client.perform(intent)
    assert done.changes == preview.changes and [p.team for p in done.pages] == [
        p.team for p in preview.pages
    ]
    assert await world(client, intent.model_id) != before


async def test_stale_expected_state_gets_409_with_the_current_state_and_changes_nothing(
    connect: Connect,
) -> None:
    client = await connect("oncall")
    before = await world(client, EXPERIMENT)
    with pytest.raises(StaleState) as caught:
        await client.perform(
            ActionIntent.of(
                ActionKind.ROLLBACK,
                EXPERIMENT,
                expected_serving_model_id=EXPERIMENT_BASELINE,
                reason="stale screen",
            )
        )
    assert caught.value.status == 409
    assert caught.value.current is not None and caught.value.current.serving_model_id == EXPERIMENT
    assert "look again" in caught.value.message
    assert await world(client, EXPERIMENT) == before


async def test_concurrent_conflicting_actions_exactly_one_wins(connect: Connect) -> None:
    clients = [
        await connect(who)
        for who in ("oncall", f"oncall:{EXPERIMENT_TEAM}", "admin", "oncall", "admin")
    ]
    intents = [
        ActionIntent.of(
            ActionKind.ROLLBACK,
            EXPERIMENT,
            expected_serving_model_id=EXPERIMENT,
            reason=f"console {n}",
        )
        if n % 2
        else ActionIntent.of(
            ActionKind.END_EXPERIMENT,
            EXPERIMENT,
            expected_serving_model_id=EXPERIMENT,
            reason=f"console {n}",
        )
        for n in range(len(clients))
    ]
    outcomes = await asyncio.gather(
        *(c.perform(i) for c, i in zip(clients, intents, strict=True)), return_exceptions=True
    )
    winners = [o for o in outcomes if not isinstance(o, BaseException)]
    losers = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(winners) == 1, outcomes
    assert all(isinstance(o, StaleState) for o in losers), losers
    assert all(
        o.current is not None and o.current.serving_model_id == EXPERIMENT_BASELINE
        for o in losers
        if isinstance(o, StaleState)
    )
    audit = await clients[0].audit(model_id=EXPERIMENT)
    assert audit.total == 1 and audit.items[0].id == winners[0].audit_id


async def test_audit_log_filters_by_model_actor_action_and_time(connect: Connect) -> None:
    team = await connect(f"oncall:{EXPERIMENT_TEAM}")
    admin = await connect("admin")
    noted = await team.perform(ActionIntent.of(ActionKind.NOTE, EXPERIMENT, text="first"))
    escalated = await admin.perform(
        ActionIntent.of(ActionKind.ESCALATE, NO_BASELINE, reason="second")
    )
    now = (await admin.info()).now

    everything = await admin.audit()
    assert [r.id for r in everything.items] == [escalated.audit_id, noted.audit_id]  # newest first
    assert [r.id for r in (await admin.audit(actor="admin")).items] == [escalated.audit_id]
    assert [r.id for r in (await admin.audit(action=ActionKind.NOTE)).items] == [noted.audit_id]
    assert [r.id for r in (await admin.audit(model_id=NO_BASELINE)).items] == [escalated.audit_id]
    assert (await admin.audit(since=now - timedelta(minutes=1))).total == 2
    assert (await admin.audit(until=now - timedelta(minutes=1))).total == 0
    first_page = await admin.audit(page=PageRequest(limit=1))
    assert first_page.total == 2 and [r.id for r in first_page.items] == [escalated.audit_id]
