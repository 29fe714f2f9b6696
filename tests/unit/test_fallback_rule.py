"""The playbook's fallback rule, for every state a baseline can be in: only a stable baseline without a page
is a safe place to move traffic; anything else is said first, named in the plan and needs the strongest
confirmation (the API tests hold the same for a paging baseline through the server)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fleetdesk.domain.attention import Attention
from fleetdesk.domain.live import LiveState
from fleetdesk.domain.playbook import (
    ActionKind,
    Confirmation,
    Neighbour,
    Situation,
    confirmation_for,
    fallback_words,
    plan,
)
from fleetdesk.domain.registry import Model
from fleetdesk.domain.stability import Health
from fleetdesk.fleets import load_fleet

EXPERIMENT = "ig_feed_late-stage_mtml.x1-watch-time"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SINCE = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def live(model: Model) -> LiveState:
    return LiveState(
        serving_model_id=model.id,
        traffic_share=model.traffic_share,
        launch_phase=model.launch_phase,
    )


def situation(health: Health, attention: Attention) -> Situation:
    registry = load_fleet("small").registry
    model = registry.get(EXPERIMENT)
    assert model.baseline_model_id is not None
    baseline = registry.get(model.baseline_model_id)
    sick = not (health is Health.STABLE and attention is not Attention.PAGE)
    neighbour = Neighbour(
        model=baseline,
        live=live(baseline),
        health=health,
        attention=attention,
        since=SINCE if sick else None,
    )
    return Situation(model=model, live=live(model), baseline=neighbour, as_of=NOW)


UNHEALTHY = [
    (Health.UNSTABLE, Attention.UNSTABLE, "unstable"),
    (Health.UNSTABLE, Attention.PAGE, "paging"),
    (Health.NO_DATA, Attention.NO_DATA, "without data"),
    (Health.STABLE, Attention.PAGE, "paging"),  # recovered this hour, its page still firing
]


@pytest.mark.parametrize(("health", "attention", "word"), UNHEALTHY)
@pytest.mark.parametrize("kind", [ActionKind.ROLLBACK, ActionKind.END_EXPERIMENT])
def test_an_unhealthy_baseline_is_said_first_named_and_needs_the_strongest_confirmation(
    kind: ActionKind, health: Health, attention: Attention, word: str
) -> None:
    now = situation(health, attention)
    planned = plan(kind, now)
    assert planned.target_health is not None and not planned.target_health.healthy
    assert planned.acknowledge_target == now.model.baseline_model_id
    assert planned.warnings[0].startswith(f"baseline {now.model.baseline_model_id} is {word}")
    assert "itself unhealthy; escalate instead" in planned.warnings[0]
    assert confirmation_for(kind, now.model, planned) is Confirmation.ACKNOWLEDGE
    assert fallback_words(now.model, planned.target_health).endswith(": escalate")


@pytest.mark.parametrize("kind", [ActionKind.ROLLBACK, ActionKind.END_EXPERIMENT])
def test_a_stable_baseline_is_a_safe_fallback_and_a_ticket_is_a_warning_only(
    kind: ActionKind,
) -> None:
    calm = situation(Health.STABLE, Attention.OK)
    planned = plan(kind, calm)
    assert planned.acknowledge_target is None and planned.warnings == []
    assert confirmation_for(kind, calm.model, planned) is not Confirmation.ACKNOWLEDGE
    assert fallback_words(calm.model, planned.target_health).startswith("safe fallback is")
    burning = plan(kind, situation(Health.STABLE, Attention.TICKET))
    assert burning.acknowledge_target is None
    assert [w.endswith("its error budget burns (ticket)") for w in burning.warnings] == [True]
