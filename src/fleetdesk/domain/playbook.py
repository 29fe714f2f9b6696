"""The playbook: which actions apply to a model, why not, what they would change and how they are confirmed.

This is the one home of the action rules. The server builds a ``Situation`` from its store, calls
``options`` for the model detail (``ModelDetail.actions``: the console renders those, it never decides) and
``plan`` inside the transaction that applies an action (a ``Refusal`` becomes a problem response); drill
scenarios check their expected actions against the same rules.

The rules, kind by kind:

- rollback: the model needs a baseline (else: escalate instead) and must still serve its own traffic;
  its traffic share moves to the baseline, which then serves it.
- end-experiment: experiments (and holdouts) only, once; its traffic goes back to its baseline.
- halt-launch: a launch in scale-up only, once; traffic stays where it is (the rule: domain.launch).
- resume-launch: a halted launch only; its phase and traffic may move again (domain.launch).
- escalate: always; pages the owning team, or the teams of the direct upstream models (target
  ``upstream``; none: escalate to the owner instead), or, on a shared-cause incident (every stage of
  one surface turned unstable together), the app's data-pipeline rotation from the fleet file, else
  every team owning a model of the group (target ``surface``). The console proposes ``surface`` on a
  shared-cause incident, ``upstream`` when the nearest upstream model is itself unstable (the cause is
  likely there), else the owner.
- ack: the model's open incident, once (a second ack is a conflict: someone was first).
- note: always; attached to the open incident, or to the model.

A safe fallback is a claim about the baseline's health now, not about the registry. Every plan that
moves traffic (rollback, end-experiment) carries the target's own health (``TargetHealth``); when the
target is unstable, paging or without data the plan warns first, the confirmation steps up to the
strongest level (``ACKNOWLEDGE``) and the action needs the target acknowledged by id
(``Consent.acknowledged_target``). A holdout exists to measure the long-run effect of experiments:
rollback or end on a holdout says what is lost and needs ``Consent.holdout_override`` (with the reason
every traffic move needs). ``require`` checks a consent against a plan; dry runs skip it.

rollback, end-experiment, halt-launch, resume-launch and escalate need a reason; note needs its text. TIER0 and TIER1
models are confirmed by typing the model id (and a reason); TIER2-TIER4 by one key; ``ACKNOWLEDGE``
adds the explicit acknowledgement to typing the id.

Adding an action kind touches this module (the kind, its rule, its plan), ``console/screens/model.py``
(its key binding) and ``console/screens/confirm.py`` (its dialog title).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fleetdesk.domain import launch
from fleetdesk.domain.attention import Attention
from fleetdesk.domain.bounds import FINITE, Moment
from fleetdesk.domain.live import LiveState
from fleetdesk.domain.registry import Model, Role, Tier
from fleetdesk.domain.stability import Health, HealthBands


class ActionKind(StrEnum):
    ROLLBACK = "rollback"
    END_EXPERIMENT = "end-experiment"
    ESCALATE = "escalate"
    HALT_LAUNCH = "halt-launch"
    RESUME_LAUNCH = "resume-launch"
    ACK = "ack"
    NOTE = "note"

    @property
    def needs_expected_state(self) -> bool:
        """Moves or freezes traffic: the request carries the serving model its sender saw."""
        return self in (
            ActionKind.ROLLBACK,
            ActionKind.END_EXPERIMENT,
            ActionKind.HALT_LAUNCH,
            ActionKind.RESUME_LAUNCH,
        )

    @property
    def needs_reason(self) -> bool:
        return self in (
            ActionKind.ROLLBACK,
            ActionKind.END_EXPERIMENT,
            ActionKind.HALT_LAUNCH,
            ActionKind.RESUME_LAUNCH,
            ActionKind.ESCALATE,
        )

    @property
    def needs_text(self) -> bool:
        return self is ActionKind.NOTE


class EscalationTarget(StrEnum):
    OWNER = "owner"
    UPSTREAM = "upstream"
    SURFACE = "surface"  # a shared-cause incident: the app's data-pipeline rotation, else the group's teams


class Confirmation(StrEnum):
    """How much the engineer must do to confirm, weakest first."""

    PRESS = "press"  # one key (y); a reason is optional
    TYPE_ID = "type-id"  # type the model id and give a reason
    ACKNOWLEDGE = (
        "acknowledge"  # type the model id, give a reason and acknowledge what the warnings say
    )


class TargetHealth(BaseModel):
    """The health of a model an action names besides the model itself (the baseline traffic would move to,
    or the holdout), as the store has it now."""

    model_config = ConfigDict(frozen=True, defer_build=True, **FINITE)

    model_id: str
    relation: Literal["baseline", "holdout"] = Field(
        description="What it is to the model the action is on"
    )
    health: Health = Field(description="Its latest closed bucket")
    attention: Attention
    calibration: float | None = Field(
        default=None, description="Its latest closed bucket; None: no data"
    )
    normalized_entropy: float | None = None
    bands: HealthBands | None = Field(default=None, description="The band it is judged against")
    alerts: list[str] = Field(default_factory=list, description="Its burn-rate alerts firing now")
    budget_remaining: float | None = None
    open_incident_id: int | None = None
    since: Moment | None = Field(
        default=None,
        description="When its trouble began: the first bucket after its last stable one"
        " (None while its latest bucket is stable)",
    )
    as_of: Moment | None = Field(default=None, description="When this was read")
    healthy: bool = Field(description="Stable latest bucket and no page: safe to move traffic to")
    state: str = Field(description="paging, unstable, without data, on a ticket or stable")
    summary: str = Field(
        description="One line, e.g. 'baseline X is paging since 18:00 (NE 0.97 above 0.95)'"
    )


class ActionOption(BaseModel):
    """One action kind as it stands for one model now: whether it applies, and how it is confirmed."""

    model_config = ConfigDict(frozen=True, defer_build=True, **FINITE)

    kind: ActionKind
    available: bool
    reason: str | None = Field(
        default=None, description="Why it does not apply now, in plain words"
    )
    instead: ActionKind | None = Field(
        default=None, description="What to do instead, when it does not apply"
    )
    confirmation: Confirmation
    reason_required: bool = Field(description="The request needs a non-empty reason")
    text_required: bool = Field(description="The request needs a text (a note)")
    target: EscalationTarget | None = Field(
        default=None, description="Escalations: who would be paged"
    )
    warnings: list[str] = Field(
        default_factory=list, description="What to weigh before confirming, worst first"
    )
    target_health: TargetHealth | None = Field(
        default=None,
        description="rollback, end-experiment: the health of the baseline the traffic would move to",
    )
    acknowledge_target: str | None = Field(
        default=None,
        description="The request must name this model in acknowledged_target (an unhealthy target)",
    )
    override_required: bool = Field(
        default=False,
        description="The request must set holdout_override (the action ends a holdout)",
    )


@dataclass(frozen=True)
class Neighbour:
    """A model an action involves besides the model itself (its baseline, its holdout, an upstream model)."""

    model: Model
    live: LiveState
    health: Health
    attention: Attention
    open_incident_id: int | None = None
    calibration: float | None = None
    """Of its latest closed bucket (None: no data, or not read)."""
    normalized_entropy: float | None = None
    bands: HealthBands | None = None
    alerts: tuple[str, ...] = ()
    budget_remaining: float | None = None
    since: datetime | None = None
    """When its trouble began: the first bucket after its last stable one (None while stable)."""


@dataclass(frozen=True)
class SharedCause:
    """A shared-cause incident: models of one app and surface that turned unstable together."""

    incident_id: int
    app: str
    surface: str
    label: str
    """e.g. 'Instagram · Feed'."""
    started_at: datetime
    members: tuple[str, ...]
    teams: tuple[Recipient, ...]
    """Every team owning a member, first member's first."""
    pipeline: Recipient | None = None
    """The app's data-pipeline rotation (fleet file), paged instead of the teams when set."""


@dataclass(frozen=True)
class PastEscalation:
    """A page already sent on the model's incident."""

    at: datetime
    actor: str
    team: str
    model_id: str


@dataclass(frozen=True)
class Consent:
    """What the engineer explicitly accepted, as sent with the action."""

    acknowledged_target: str | None = None
    """The unhealthy target the engineer moves traffic to anyway (its model id)."""
    holdout_override: bool = False
    """End the holdout's measurement (rollback or end on a holdout)."""


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
    holds_out: tuple[str, ...] = ()
    """When the model is a holdout: the experiments measured against it."""
    shared_cause: SharedCause | None = None
    """The model's incident is a shared-cause group."""
    escalations: tuple[PastEscalation, ...] = ()
    """Pages already sent on the model's incident, oldest first."""
    as_of: datetime | None = None
    """When the store was read."""


class Refusal(Exception):
    """The rules do not allow the action now; ``reason`` says why in plain words."""

    def __init__(
        self,
        reason: str,
        instead: ActionKind | None = None,
        *,
        conflict: bool = False,
        needs: Literal["acknowledgement", "override"] | None = None,
        target: TargetHealth | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.instead = instead
        self.conflict = conflict
        """Someone else got there first (an incident already acknowledged), not a rule of the registry."""
        self.needs = needs
        """Allowed, but only with this consent in the request (see ``require``)."""
        self.target = target


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
    warnings: list[str] = field(default_factory=list)
    """What to weigh before confirming, worst first."""
    target_health: TargetHealth | None = None
    """rollback, end-experiment: the baseline's health."""
    acknowledge_target: str | None = None
    """The consent must name this (unhealthy) target."""
    override_required: bool = False
    """The consent must override a holdout's protection."""


def confirmation(kind: ActionKind, model: Model) -> Confirmation:
    """The confirmation an action on ``model`` needs: it grows with the harm the model can do."""
    return Confirmation.TYPE_ID if model.tier in (Tier.TIER0, Tier.TIER1) else Confirmation.PRESS


def confirmation_for(kind: ActionKind, model: Model, planned: Plan) -> Confirmation:
    """The confirmation this plan needs: the strongest when it moves traffic onto an unhealthy target or ends
    a holdout, else as the model's tier asks."""
    if planned.acknowledge_target is not None or planned.override_required:
        return Confirmation.ACKNOWLEDGE
    return confirmation(kind, model)


def escalation_target(situation: Situation) -> EscalationTarget:
    """Surface on a shared-cause incident; upstream when the nearest upstream model is itself unstable (the
    cause is likely there); else the owner."""
    if situation.shared_cause is not None:
        return EscalationTarget.SURFACE
    if situation.upstream and situation.upstream[0].health is Health.UNSTABLE:
        return EscalationTarget.UPSTREAM
    return EscalationTarget.OWNER


def target_health(
    neighbour: Neighbour, relation: Literal["baseline", "holdout"], as_of: datetime | None = None
) -> TargetHealth:
    """A neighbour's health in the words every fallback is named with."""
    healthy = neighbour.health is Health.STABLE and neighbour.attention is not Attention.PAGE
    state = _state_word(neighbour.health, neighbour.attention)
    since = neighbour.since
    when = f" since {_clock(since, as_of)}" if since is not None and not healthy else ""
    details = _signal_words(neighbour)
    if neighbour.alerts:
        details.append(", ".join(neighbour.alerts))
    if neighbour.open_incident_id is not None:
        details.append(f"incident #{neighbour.open_incident_id}")
    summary = f"{relation} {neighbour.model.id} is {state}{when}" + (
        f" ({'; '.join(details)})" if details else ""
    )
    return TargetHealth(
        model_id=neighbour.model.id,
        relation=relation,
        health=neighbour.health,
        attention=neighbour.attention,
        calibration=neighbour.calibration,
        normalized_entropy=neighbour.normalized_entropy,
        bands=neighbour.bands,
        alerts=list(neighbour.alerts),
        budget_remaining=neighbour.budget_remaining,
        open_incident_id=neighbour.open_incident_id,
        since=since,
        as_of=as_of,
        healthy=healthy,
        state=state,
        summary=summary,
    )


def fallback_words(model: Model, baseline: TargetHealth | None) -> str:
    """The safe fallback in a few words: the baseline, unless it is itself unhealthy (then: escalate)."""
    if model.baseline_model_id is None:
        return "no baseline to fall back to: escalate instead"
    if baseline is None or baseline.model_id != model.baseline_model_id:
        return f"safe fallback is its baseline {model.baseline_model_id}"
    if not baseline.healthy:
        when = (
            f" since {_clock(baseline.since, baseline.as_of)}" if baseline.since is not None else ""
        )
        return f"baseline {baseline.model_id} is itself {baseline.state}{when}: escalate"
    if baseline.attention is Attention.TICKET:
        return f"fallback is its baseline {baseline.model_id} (stable now, on a ticket: its budget burns)"
    return f"safe fallback is its baseline {baseline.model_id}"


def fallback_health(situation: Situation) -> TargetHealth | None:
    """The baseline's health (None: no baseline)."""
    if situation.baseline is None:
        return None
    return target_health(situation.baseline, "baseline", situation.as_of)


def holdout_health(situation: Situation) -> TargetHealth | None:
    """The holdout's health (None: no holdout)."""
    if situation.holdout is None:
        return None
    return target_health(situation.holdout, "holdout", situation.as_of)


def require(plan: Plan, consent: Consent) -> None:
    """Raise Refusal unless ``consent`` gives what the plan needs (an unhealthy target named, a holdout
    overridden); dry runs skip this, so the engineer sees the plan first."""
    if plan.override_required and not consent.holdout_override:
        raise Refusal(
            f"{plan.model_id} is a holdout: {plan.kind} ends its measurement; send holdout_override"
            " with a reason to do it anyway",
            ActionKind.ESCALATE,
            needs="override",
        )
    if (
        plan.acknowledge_target is not None
        and consent.acknowledged_target != plan.acknowledge_target
    ):
        health = plan.target_health
        said = (
            health.summary
            if health is not None
            else f"baseline {plan.acknowledge_target} is unhealthy"
        )
        raise Refusal(
            f"{said}; moving traffic there needs acknowledged_target={plan.acknowledge_target!r}",
            ActionKind.ESCALATE,
            needs="acknowledgement",
            target=health,
        )


def options(situation: Situation) -> list[ActionOption]:
    """Every action kind for the model, in ActionKind order."""
    return [option(kind, situation) for kind in ActionKind]


def option(kind: ActionKind, situation: Situation) -> ActionOption:
    """One action kind for the model: available or not (and why), with its confirmation."""
    target = escalation_target(situation) if kind is ActionKind.ESCALATE else None
    result: Plan | None
    reason: str | None
    instead: ActionKind | None
    try:
        result = plan(kind, situation, target)
    except Refusal as refusal:
        result = None
        available, reason, instead = False, refusal.reason, refusal.instead
    else:
        available, reason, instead = True, None, None
    level = (
        confirmation(kind, situation.model)
        if result is None
        else confirmation_for(kind, situation.model, result)
    )
    return ActionOption(
        kind=kind,
        available=available,
        reason=reason,
        instead=instead,
        confirmation=level,
        reason_required=kind.needs_reason,
        text_required=kind.needs_text,
        target=target,
        warnings=result.warnings if result else [],
        target_health=result.target_health if result else None,
        acknowledge_target=result.acknowledge_target if result else None,
        override_required=result.override_required if result else False,
    )


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
        result.done = (
            f"Rolled back {model.id}: {share} of traffic moved to baseline {baseline.model.id}"
        )
        result.would = f"Would roll back {model.id}: {share} of traffic would move to baseline {baseline.model.id}"
        _weigh_traffic_move(result, situation, "rolling it back")
    elif kind is ActionKind.END_EXPERIMENT:
        if model.role not in (Role.EXPERIMENT, Role.HOLDOUT):
            raise Refusal(
                f"a {model.role}, not an experiment: nothing to end",
                ActionKind.ROLLBACK if model.baseline_model_id else ActionKind.ESCALATE,
            )
        what = "holdout" if model.role is Role.HOLDOUT else "experiment"
        if live.experiment_ended:
            raise Refusal(f"{what} already ended")
        baseline = _baseline(situation, ActionKind.ESCALATE)
        _move_to_baseline(result, situation, baseline, experiment_ended=True)
        result.done = (
            f"Ended {what} {model.id}: {share} of traffic back to baseline {baseline.model.id}"
        )
        result.would = (
            f"Would end {what} {model.id}: {share} of traffic would go back to baseline"
            f" {baseline.model.id}"
        )
        _weigh_traffic_move(result, situation, "ending it")
    elif kind is ActionKind.HALT_LAUNCH:
        if (why_not := launch.halt_refusal(live)) is not None:
            raise Refusal(why_not)
        result.changes.append(
            Change(model.id, live, live.model_copy(update={"launch_halted": True}))
        )
        result.done = f"Halted the launch of {model.id} at {share} of traffic"
        result.would = f"Would halt the launch of {model.id} at {share} of traffic"
    elif kind is ActionKind.RESUME_LAUNCH:
        if (why_not := launch.resume_refusal(live)) is not None:
            raise Refusal(why_not)
        result.changes.append(
            Change(model.id, live, live.model_copy(update={"launch_halted": False}))
        )
        result.done = f"Resumed the launch of {model.id} at {share} of traffic"
        result.would = f"Would resume the launch of {model.id} at {share} of traffic"
    elif kind is ActionKind.ESCALATE:
        result.target = target or EscalationTarget.OWNER
        group = situation.shared_cause
        if result.target is EscalationTarget.UPSTREAM:
            if not situation.upstream:
                raise Refusal(
                    "no upstream model: escalate to its owner instead", ActionKind.ESCALATE
                )
            teams = [(up.model.owner_team, up.model.oncall_rotation) for up in situation.upstream]
        elif result.target is EscalationTarget.SURFACE:
            if group is None:
                raise Refusal(
                    "not part of a shared-cause incident: escalate to its owner instead",
                    ActionKind.ESCALATE,
                )
            recipients = (group.pipeline,) if group.pipeline is not None else group.teams
            teams = [(r.team, r.rotation) for r in recipients]
        else:
            teams = [(model.owner_team, model.oncall_rotation)]
        result.recipients = [Recipient(team, rotation) for team, rotation in dict.fromkeys(teams)]
        result.opens_incident = situation.incident_id is None
        who = ", ".join(f"{r.team} ({r.rotation})" for r in result.recipients)
        about = (
            f"incident #{group.incident_id} ({len(group.members)} models of {group.label}, shared cause"
            " suspected)"
            if group is not None and result.target is EscalationTarget.SURFACE
            else model.id
        )
        result.done = f"Paged {who} about {about}"
        result.would = f"Would page {who} about {about}" + (
            " and open an incident" if result.opens_incident else ""
        )
        if situation.escalations:
            last = situation.escalations[-1]
            result.warnings.append(
                f"incident #{situation.incident_id} was already escalated by {last.actor} at"
                f" {_clock(last.at, situation.as_of)} (paged {last.team}): paging again wakes them a second time"
            )
    elif kind is ActionKind.ACK:
        if situation.incident_id is None:
            raise Refusal("no open incident")
        if situation.acknowledged_by is not None:
            raise Refusal(f"already acknowledged by {situation.acknowledged_by}", conflict=True)
        result.done = f"Acknowledged incident {situation.incident_id} on {model.id}"
        result.would = f"Would acknowledge incident {situation.incident_id} on {model.id}"
    elif kind is ActionKind.NOTE:
        where = (
            f"incident {situation.incident_id}"
            if situation.incident_id is not None
            else "the model (no open incident)"
        )
        result.done = f"Added a note on {model.id} to {where}"
        result.would = f"Would add a note on {model.id} to {where}"
    return result


def _weigh_traffic_move(result: Plan, situation: Situation, doing: str) -> None:
    """What the engineer must weigh before moving traffic to the baseline: its health first, what a holdout
    loses, a cause that lies elsewhere."""
    model = situation.model
    health = fallback_health(situation)
    result.target_health = health
    if health is not None and not health.healthy:
        result.acknowledge_target = health.model_id
        result.warnings.append(
            f"{health.summary}: {result.traffic_moved:.1%} of traffic would move onto a model"
            " that is itself unhealthy; escalate instead, or acknowledge it to go ahead"
        )
    elif health is not None and health.attention is Attention.TICKET:
        result.warnings.append(f"{health.summary}: stable now, but its error budget burns (ticket)")
    if model.role is Role.HOLDOUT:
        result.override_required = True
        measured = ", ".join(situation.holds_out) or "the experiments it holds out"
        result.warnings.insert(
            0,
            (
                f"{model.id} is a holdout: {doing} ends its measurement of the long-run effect of {measured}"
                f" (held out since {model.created_at:%Y-%m-%d}); the same users cannot be held out again, so that"
                " comparison is lost for good. Override only with a reason"
            ),
        )
    group = situation.shared_cause
    if group is not None:
        result.warnings.append(
            f"shared cause suspected: {len(group.members)} models of {group.label} turned unstable together"
            f" (since {_clock(group.started_at, situation.as_of)}); moving one model's traffic is unlikely to help:"
            " escalate"
        )
    elif situation.upstream and situation.upstream[0].health is Health.UNSTABLE:
        result.warnings.append(
            f"upstream {situation.upstream[0].model.id} is unstable: the cause is likely there,"
            " and the baseline takes from it too; escalate upstream"
        )


def _state_word(health: Health, attention: Attention) -> str:
    if attention is Attention.PAGE:
        return "paging"
    if health is Health.UNSTABLE:
        return "unstable"
    if health is Health.NO_DATA:
        return "without data"
    if attention is Attention.TICKET:
        return "on a ticket"
    return "stable"


def _signal_words(neighbour: Neighbour) -> list[str]:
    """Each signal outside its band, with the band; 'no data' when the latest bucket has none."""
    if neighbour.calibration is None or neighbour.normalized_entropy is None:
        return ["no data in its latest bucket"] if neighbour.health is Health.NO_DATA else []
    bands = neighbour.bands
    words = []
    if (
        bands is None
        or not bands.calibration_low <= neighbour.calibration <= bands.calibration_high
    ):
        band = f" outside {bands.calibration_low:.2f}-{bands.calibration_high:.2f}" if bands else ""
        words.append(f"calibration {neighbour.calibration:.3f}{band}")
    if bands is None or neighbour.normalized_entropy > bands.ne_max:
        band = f" above {bands.ne_max:g}" if bands else ""
        words.append(f"NE {neighbour.normalized_entropy:.3f}{band}")
    return words


def _clock(moment: datetime, as_of: datetime | None) -> str:
    """18:00 within a day of ``as_of``, else 11-29 18:00 (UTC, as the console shows times)."""
    moment = moment.astimezone(UTC)
    if as_of is not None and timedelta(0) <= as_of - moment < timedelta(hours=24):
        return moment.strftime("%H:%M")
    return moment.strftime("%m-%d %H:%M")


def _baseline(situation: Situation, instead: ActionKind) -> Neighbour:
    if situation.baseline is None:
        raise Refusal("no baseline: escalate instead", instead)
    return situation.baseline


def _move_to_baseline(
    result: Plan, situation: Situation, baseline: Neighbour, **extra: object
) -> None:
    live = situation.live
    result.changes.append(
        Change(
            situation.model.id,
            live,
            live.model_copy(
                update={"serving_model_id": baseline.model.id, "traffic_share": 0.0, **extra}
            ),
        )
    )
    result.changes.append(
        Change(
            baseline.model.id,
            baseline.live,
            baseline.live.model_copy(
                update={
                    "traffic_share": round(
                        min(1.0, baseline.live.traffic_share + live.traffic_share), 9
                    )
                }
            ),
        )
    )
    result.traffic_moved = live.traffic_share
    result.traffic_to = baseline.model.id
