"""The model detail carries the playbook's word on every action kind, and the server enforces exactly that."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from fleetdesk.client import ActionIntent, FleetdeskClient, FleetdeskError
from fleetdesk.wire import ActionKind, ActionOption, Confirmation, EscalationTarget

BASELINE = "ig_feed_late-stage_mtml.v41"  # TIER0, launched, no baseline of its own, upstream fm-v7
EXPERIMENT = "ig_feed_late-stage_mtml.x1-watch-time"  # TIER2, scale-up, baseline v41
HOLDOUT = "ig_feed_late-stage_mtml.holdout-2026h2"  # TIER3, baseline v41
FOUNDATION = "ig_cross-surface_late-stage_transformer.fm-v7"  # TIER0, no baseline, nothing upstream

EXPECTED = {
    BASELINE: {
        ActionKind.ROLLBACK: "no baseline: escalate instead",
        ActionKind.END_EXPERIMENT: "a baseline, not an experiment: nothing to end",
        ActionKind.HALT_LAUNCH: "launch phase is launched, not scale-up",
        ActionKind.RESUME_LAUNCH: "launch is not halted",
    },
    EXPERIMENT: {ActionKind.RESUME_LAUNCH: "launch is not halted"},
    HOLDOUT: {
        ActionKind.HALT_LAUNCH: "launch phase is launched, not scale-up",
        ActionKind.RESUME_LAUNCH: "launch is not halted",
    },
    FOUNDATION: {
        ActionKind.ROLLBACK: "no baseline: escalate instead",
        ActionKind.END_EXPERIMENT: "a foundation, not an experiment: nothing to end",
        ActionKind.HALT_LAUNCH: "launch phase is launched, not scale-up",
        ActionKind.RESUME_LAUNCH: "launch is not halted",
    },
}


def by_kind(options: list[ActionOption]) -> dict[ActionKind, ActionOption]:
    return {option.kind: option for option in options}


@pytest.mark.parametrize("model_id", list(EXPECTED))
async def test_every_kind_is_in_the_detail_with_its_reason(server, model_id):
    async with FleetdeskClient(server.url, SecretStr(server.oncall_token)) as client:
        detail = await client.model(model_id)
    options = by_kind(detail.actions)
    assert list(options) == list(ActionKind)
    unavailable = {
        kind: option.reason
        for kind, option in options.items()
        if not option.available and kind is not ActionKind.ACK
    }
    assert unavailable == EXPECTED[model_id]
    # ack depends on the incident only.
    assert options[ActionKind.ACK].available == (detail.open_incident_id is not None)
    strict = detail.model.tier.rank <= 1
    # Ending a holdout's measurement steps up to the strongest confirmation (see test_fallback_health).
    stepped = {ActionKind.ROLLBACK, ActionKind.END_EXPERIMENT} if model_id == HOLDOUT else set()
    assert {option.confirmation for kind, option in options.items() if kind not in stepped} == {
        Confirmation.TYPE_ID if strict else Confirmation.PRESS
    }
    assert {options[kind].confirmation for kind in stepped} <= {Confirmation.ACKNOWLEDGE}
    assert options[ActionKind.ROLLBACK].reason_required and options[ActionKind.NOTE].text_required
    assert options[ActionKind.ESCALATE].target in (
        EscalationTarget.OWNER,
        EscalationTarget.UPSTREAM,
    )
    if not options[ActionKind.ROLLBACK].available:
        assert options[ActionKind.ROLLBACK].instead is ActionKind.ESCALATE


def _fields(kind: ActionKind, model_id: str, option: ActionOption) -> dict:
    fields: dict = {"reason": "checking the playbook", "dry_run": True}
    if kind.needs_expected_state:
        fields["expected_serving_model_id"] = model_id
    if kind.needs_text:
        fields = {"text": "n", "dry_run": True}
    if option.target is not None:
        fields["target"] = option.target
    return fields


@pytest.mark.parametrize("model_id", list(EXPECTED))
async def test_the_dry_run_agrees_with_the_detail_for_every_kind(server, model_id):
    async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as client:
        options = by_kind((await client.model(model_id)).actions)
        for kind, option in options.items():
            try:
                await client.perform(
                    ActionIntent.of(kind, model_id, **_fields(kind, model_id, option))
                )
            except FleetdeskError as refused:
                assert not option.available, (
                    f"{kind} is offered but the server refused it: {refused.message}"
                )
                assert option.reason and option.reason in refused.message
            else:
                assert option.available, (
                    f"{kind} is not offered ({option.reason}) but the server did it"
                )


async def test_the_options_follow_the_live_state(server):
    async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as client:
        await client.perform(
            ActionIntent.of(
                ActionKind.ROLLBACK,
                EXPERIMENT,
                expected_serving_model_id=EXPERIMENT,
                reason="NE regression",
            )
        )
        options = by_kind((await client.model(EXPERIMENT)).actions)
    assert options[ActionKind.ROLLBACK].reason == f"already serving {BASELINE}"
    assert options[
        ActionKind.END_EXPERIMENT
    ].available  # ending it after a rollback still records the end
