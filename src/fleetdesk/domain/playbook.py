"""The playbook: which actions apply to a model, why not, what they would change and how they are confirmed.

This is the one home of the action rules. The server builds a ``Situation`` from its store, calls
``options`` for the model detail (``ModelDetail.actions``: the console renders those, it never decides) and
``plan`` inside the transaction that applies an action (a ``Refusal`` becomes a problem response); drill
scenarios check their expected actions against the same rules.

The rules, kind by kind:

- rollback: the model needs a baseline (else: escalate instead) and must still serve its own traffic;
  its traffic share moves to the baseline, which then serves it.
- end-experiment: experiments only, once; its traffic goes back to its baseline.
- halt-launch: a launch in scale-up only, once; traffic stays where it is.
- escalate: always; pages the owning team, or the teams of the direct upstream models (target
  ``upstream``; none: escalate to the owner instead). The console proposes upstream when the nearest
  upstream model is itself unstable: the cause is likely there.
- ack: the model's open incident, once (a second ack is a conflict: someone was first).
- note: always; attached to the open incident, or to the model.

rollback, end-experiment, halt-launch and escalate need a reason; note needs its text. TIER0 and TIER1
models are confirmed by typing the model id (and a reason); TIER2-TIER4 by one key.

Adding an action kind touches this module (the kind, its rule, its plan), ``console/screens/model.py``
(its key binding) and ``console/screens/confirm.py`` (its dialog title).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from fleetdesk.domain.attention import Attention
from fleetdesk.domain.live import LiveState
from fleetdesk.domain.registry import LaunchPhase, Model, Role, Tier
from fleetdesk.domain.stability import Health


class ActionKind(StrEnum):
    ROLLBACK = "rollback"
    END_EXPERIMENT = "end-experiment"
    ESCALATE = "escalate"
    HALT_LAUNCH = "halt-launch"
    ACK = "ack"
    NOTE = "note"

    @property
    def needs_expected_state(self) -> bool:
        """Moves or freezes traffic: the request carries the serving model its sender saw."""
        return self in (ActionKind.ROLLBACK, ActionKind.END_EXPERIMENT, ActionKind.HALT_LAUNCH)

    @property
    def needs_reason(self) -> bool:
        return self in (ActionKind.ROLLBACK, ActionKind.END_EXPERIMENT, ActionKind.HALT_LAUNCH, ActionKind.ESCALATE)

    @property
    def needs_text(self) -> bool:
        return self is ActionKind.NOTE


class EscalationTarget(StrEnum):
    OWNER = "owner"
    UPSTREAM = "upstream"


class Confirmation(StrEnum):
    """How much the engineer must do to confirm, weakest first."""

    PRESS = "press"  # one key (y); a reason is optional
    TYPE_ID = "type-id"  # type the model id and give a reason


class ActionOption(BaseModel):
    """One action kind as it stands for one model now: whether it applies, and how it is confirmed."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    kind: ActionKind
    available: bool
    reason: str | None = Field(default=None, description="Why it does not apply now, in plain words")
    instead: ActionKind | None = Field(default=None, description="What to do instead, when it does not apply")
    confirmation: Confirmation
    reason_required: bool = Field(description="The request needs a non-empty reason")
    text_required: bool = Field(description="The request needs a text (a note)")
    target: EscalationTarget | None = Field(default=None, description="Escalations: who would be paged")
    warnings: list[str] = Field(default_factory=list, description="What to weigh before confirming")


@dataclass(frozen=True)
class Neighbour:
    """A model an action involves besides the model itself (its baseline, its holdout, an upstream model)."""

    model: Model
    live: LiveState
    health: Health
    attention: Attention
    open_incident_id: int | None = None


@dataclass(frozen=True)
class Situation:
    """Everything the rules look at for one model, as the store has it now."""

    model: Model
    live: LiveState
    incident_id: int | None = None
    """The model's open or acknowledged incident."""
    acknowledged_by: str | None = None
    """Who acknowledged that incident (None: not acknowledged, or no incident)."""
    baseline: Neighbour | None = None
    holdout: Neighbour | None = None
    upstream: tuple[Neighbour, ...] = ()
    """The direct upstream models, in registry order."""


class Refusal(Exception):
    """The rules do not allow the action now; ``reason`` says why in plain words."""

    def __init__(self, reason: str, instead: ActionKind | None = None, *, conflict: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.instead = instead
        self.conflict = conflict
        """Someone else got there first (an incident already acknowledged), not a rule of the registry."""


@dataclass(frozen=True)
class Change:
    """One model's live state before and after."""

    model_id: str
    before: LiveState
    after: LiveState


@dataclass(frozen=True)
class Recipient:
    """A team's on-call rotation an escalation pages."""

    team: str
    rotation: str


@dataclass
class Plan:
    """What an allowed action would do."""

    kind: ActionKind
    model_id: str
    changes: list[Change] = field(default_factory=list)
    traffic_moved: float = 0.0
    traffic_to: str | None = None
    recipients: list[Recipient] = field(default_factory=list)
    target: EscalationTarget | None = None
    opens_incident: bool = False
    done: str = ""
    """The summary once done."""
    would: str = ""
    """The summary as a dry run."""


def confirmation(kind: ActionKind, model: Model) -> Confirmation:
    """The confirmation an action on ``model`` needs: it grows with the harm the model can do."""
    return Confirmation.TYPE_ID if model.tier in (Tier.TIER0, Tier.TIER1) else Confirmation.PRESS


def escalation_target(situation: Situation) -> EscalationTarget:
    """Upstream when the nearest upstream model is itself unstable (the cause is likely there), else the owner."""
    if situation.upstream and situation.upstream[0].health is Health.UNSTABLE:
        return EscalationTarget.UPSTREAM
    return EscalationTarget.OWNER


def options(situation: Situation) -> list[ActionOption]:
    """Every action kind for the model, in ActionKind order."""
    return [option(kind, situation) for kind in ActionKind]


def option(kind: ActionKind, situation: Situation) -> ActionOption:
    """One action kind for the model: available or not (and why), with its confirmation."""
    target = escalation_target(situation) if kind is ActionKind.ESCALATE else None
    try:
        plan(kind, situation, target)
    except Refusal as refusal:
        available, reason, instead = False, refusal.reason, refusal.instead
    else:
        available, reason, instead = True, None, None
    return ActionOption(kind=kind, available=available, reason=reason, instead=instead,
                        confirmation=confirmation(kind, situation.model), reason_required=kind.needs_reason,
                        text_required=kind.needs_text, target=target)


def plan(kind: ActionKind, situation: Situation, target: EscalationTarget | None = None) -> Plan:
    """What ``kind`` would do now; raises Refusal when the rules do not allow it."""
    model, live = situation.model, situation.live
    share = f"{live.traffic_share:.1%}"
    result = Plan(kind=kind, model_id=model.id)
    if kind is ActionKind.ROLLBACK:
        baseline = _baseline(situation, ActionKind.ESCALATE)
        if live.serving_model_id != model.id:
            raise Refusal(f"already serving {live.serving_model_id}")
        _move_to_baseline(result, situation, baseline)
        result.done = f"Rolled back {model.id}: {share} of traffic moved to baseline {baseline.model.id}"
        result.would = f"Would roll back {model.id}: {share} of traffic would move to baseline {baseline.model.id}"
    elif kind is ActionKind.END_EXPERIMENT:
        if model.role is not Role.EXPERIMENT:
            raise Refusal(f"a {model.role}, not an experiment: nothing to end",
                          ActionKind.ROLLBACK if model.baseline_model_id else ActionKind.ESCALATE)
        if live.experiment_ended:
            raise Refusal("experiment already ended")
        baseline = _baseline(situation, ActionKind.ESCALATE)
        _move_to_baseline(result, situation, baseline, experiment_ended=True)
        result.done = f"Ended experiment {model.id}: {share} of traffic back to baseline {baseline.model.id}"
        result.would = (f"Would end experiment {model.id}: {share} of traffic would go back to baseline"
                        f" {baseline.model.id}")
    elif kind is ActionKind.HALT_LAUNCH:
        if live.launch_phase is not LaunchPhase.SCALE_UP:
            raise Refusal(f"launch phase is {live.launch_phase}, not scale-up")
        if live.launch_halted:
            raise Refusal("launch already halted")
        result.changes.append(Change(model.id, live, live.model_copy(update={"launch_halted": True})))
        result.done = f"Halted the launch of {model.id} at {share} of traffic"
        result.would = f"Would halt the launch of {model.id} at {share} of traffic"
    elif kind is ActionKind.ESCALATE:
        result.target = target or EscalationTarget.OWNER
        if result.target is EscalationTarget.UPSTREAM:
            if not situation.upstream:
                raise Refusal("no upstream model: escalate to its owner instead", ActionKind.ESCALATE)
            teams = [(up.model.owner_team, up.model.oncall_rotation) for up in situation.upstream]
        else:
            teams = [(model.owner_team, model.oncall_rotation)]
        result.recipients = [Recipient(team, rotation) for team, rotation in dict.fromkeys(teams)]
        result.opens_incident = situation.incident_id is None
        who = ", ".join(f"{r.team} ({r.rotation})" for r in result.recipients)
        result.done = f"Paged {who} about {model.id}"
        result.would = f"Would page {who} about {model.id}" + (" and open an incident" if result.opens_incident else "")
    elif kind is ActionKind.ACK:
        if situation.incident_id is None:
            raise Refusal("no open incident")
        if situation.acknowledged_by is not None:
            raise Refusal(f"already acknowledged by {situation.acknowledged_by}", conflict=True)
        result.done = f"Acknowledged incident {situation.incident_id} on {model.id}"
        result.would = f"Would acknowledge incident {situation.incident_id} on {model.id}"
    elif kind is ActionKind.NOTE:
        where = f"incident {situation.incident_id}" if situation.incident_id is not None else "the model (no open incident)"
        result.done = f"Added a note on {model.id} to {where}"
        result.would = f"Would add a note on {model.id} to {where}"
    return result


def _baseline(situation: Situation, instead: ActionKind) -> Neighbour:
    if situation.baseline is None:
        raise Refusal("no baseline: escalate instead", instead)
    return situation.baseline


def _move_to_baseline(result: Plan, situation: Situation, baseline: Neighbour, **extra: object) -> None:
    live = situation.live
    result.changes.append(Change(situation.model.id, live, live.model_copy(
        update={"serving_model_id": baseline.model.id, "traffic_share": 0.0, **extra})))
    result.changes.append(Change(baseline.model.id, baseline.live, baseline.live.model_copy(
        update={"traffic_share": round(min(1.0, baseline.live.traffic_share + live.traffic_share), 9)})))
    result.traffic_moved = live.traffic_share
    result.traffic_to = baseline.model.id
