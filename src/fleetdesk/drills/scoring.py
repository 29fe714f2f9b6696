"""The drill scorecard: what the engineer did, when, and whether it was right.

Graded from what the backend recorded, never from what the console believes it
did: the event log carries every incident change and every audited action
(with the pages it sent), each stamped by the drill with the wall time it was
seen. Times are wall seconds after the first page (the first incident the
scenario's injections opened), since they grade a human at any ``--speed``.
Keystrokes come from the console's key log (zero when actions came through the
client directly).

An incident of an expected model that is already open when the drill starts is
the first page at the start (the engineer sits down to it); any other incident
opened before the start is not the drill's. A response counts once: the same
response again (a second escalation of the same cause) is a wrong action, and a
scenario can make every other state-changing action wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from pydantic import AwareDatetime, BaseModel, ConfigDict

from fleetdesk.domain.text import sanitize
from fleetdesk.drills.scenario import ActionMatch, Scenario
from fleetdesk.wire import (
    ActionEventData,
    ActionKind,
    Attention,
    EventType,
    Incident,
    IncidentEventData,
    ServerEvent,
    SloChangedData,
)

STATE_CHANGING = frozenset(
    {
        ActionKind.ROLLBACK,
        ActionKind.END_EXPERIMENT,
        ActionKind.HALT_LAUNCH,
        ActionKind.RESUME_LAUNCH,
        ActionKind.ESCALATE,
    }
)
"""Actions that change the world (traffic, a launch, someone woken up): what ``other_actions = "wrong"`` grades."""
_QUIET_RANK = {"ticket": Attention.TICKET.rank, "ok": Attention.OK.rank}

SCORECARD_SCHEMA_VERSION = 1
_INLINE = re.compile(r"([\\`*\[\]<>|!&~])")
"""Characters that open a link, an image, HTML, an entity, a code span, emphasis or a table cell."""
_BLOCK_START = re.compile(r"^(\s*)([#+=-]|\d+(?=[.)]))")
"""What turns a line into a heading, quote, list or rule."""


@dataclass(frozen=True, slots=True)
class SeenEvent:
    """A server event and the wall time (seconds after the drill started) the drill saw it."""

    event: ServerEvent
    wall: float


@dataclass(frozen=True, slots=True)
class Keystroke:
    wall: float
    key: str


class _Card(BaseModel):
    model_config = ConfigDict(frozen=True)


class TakenAction(_Card):
    """One audited action, as the scorecard lists it."""

    audit_id: int
    action: str
    model_id: str
    actor: str
    seconds: float | None = None  # after the first page; None when it came before any page
    teams_paged: list[str] = []
    why: str = ""  # for wrong actions: why it is wrong

    def describe(self) -> str:
        paged = f" (paged {', '.join(self.teams_paged)})" if self.teams_paged else ""
        return f"{self.action} on {self.model_id}{paged}"


class ResponseResult(_Card):
    id: str
    description: str
    expected: list[str]
    within: float
    met: bool
    late: bool = False
    by: TakenAction | None = None


class IncidentCheck(_Card):
    model_id: str
    expected_by: timedelta
    opened_after: timedelta | None  # scenario time from the drill's start; None: never
    ok: bool


class QuietCheck(_Card):
    """A model that had to stay quiet: the worst it got during the drill."""

    model_id: str
    at_most: str
    worst: (
        Attention | None
    )  # None: it never changed during the drill (and was not loud at the start)
    ok: bool


class Scorecard(_Card):
    schema_version: int = SCORECARD_SCHEMA_VERSION
    scenario: str
    title: str
    story: str
    fleet: str
    seed: int
    speed: float
    started_at: AwareDatetime
    duration: float
    first_page: float | None  # wall seconds after start
    time_to_acknowledge: float | None  # after the first page
    acknowledge_within: float
    time_to_first_mitigation: float | None
    responses: list[ResponseResult]
    wrong: list[TakenAction]
    ungraded: list[TakenAction]
    incidents: list[IncidentCheck]
    quiet: list[QuietCheck] = []
    keystrokes: int
    keystrokes_to_mitigation: int | None
    passed: bool
    reasons: list[str]  # why it failed; empty when passed


def score(
    scenario: Scenario,
    name: str,
    *,
    drill_start: datetime,
    started_at: datetime,
    speed: float,
    duration: float,
    events: list[SeenEvent],
    keystrokes: list[Keystroke],
    open_at_start: list[Incident] = (),  # type: ignore[assignment]
    attention_at_start: dict[str, Attention] | None = None,
) -> Scorecard:
    """Grade one drill run from the events it saw and the keys pressed.

    ``open_at_start``: the incidents already open when the drill started; ``attention_at_start``: how the
    scenario's quiet models stood then.
    """
    joined = _incident_joins(events, drill_start)
    for incident in open_at_start:
        for model_id in incident.model_ids:
            joined[(model_id, incident.id)] = (0.0, drill_start)
    expected_models = {incident.model_id for incident in scenario.incidents}
    pages = [wall for (model_id, _), (wall, _) in joined.items() if model_id in expected_models]
    first_page = min(pages) if pages else None
    drill_incidents = {incident_id for (_, incident_id) in joined}

    def after_page(wall: float) -> float | None:
        return None if first_page is None or wall < first_page else round(wall - first_page, 3)

    checks = []
    for expected in scenario.incidents:
        seen = [at for (model_id, _), (_, at) in joined.items() if model_id == expected.model_id]
        opened = min(seen) - drill_start if seen else None
        checks.append(
            IncidentCheck(
                model_id=expected.model_id,
                expected_by=expected.by,
                opened_after=opened,
                ok=opened is not None and opened <= expected.by,
            )
        )

    acks: list[float] = []
    taken: list[tuple[TakenAction, ActionEventData]] = []
    for arrival in events:
        if arrival.event.type is not EventType.ACTION:
            continue
        data = ActionEventData.model_validate(arrival.event.data)
        if data.result.dry_run:
            continue
        action = TakenAction(
            audit_id=data.audit.id,
            action=data.audit.action,
            model_id=data.audit.model_id,
            actor=data.audit.actor,
            seconds=after_page(arrival.wall),
            teams_paged=sorted({page.team for page in data.result.pages}),
        )
        taken.append((action, data))
        if data.audit.action == ActionKind.ACK and data.audit.incident_id in drill_incidents:
            acks.append(arrival.wall)
    time_to_ack = after_page(min(acks)) if acks and first_page is not None else None

    results: list[ResponseResult] = []
    used: set[int] = set()
    repeats: list[tuple[TakenAction, str]] = []
    for response in scenario.responses:
        hits = [
            (a, d)
            for a, d in taken
            if a.audit_id not in used and any(matches(m, d) for m in response.any_of)
        ]
        hit = hits[0] if hits else None
        met = late = False
        if hit is not None:
            used.add(hit[0].audit_id)
            if response.once:
                first = hit[0]
                repeats += [
                    (
                        again,
                        f"{response.id} was already done ({first.describe()} at {_seconds(first.seconds)}):"
                        " one cause, one response; doing it again wakes or moves the same again",
                    )
                    for again, _ in hits[1:]
                ]
            late = hit[0].seconds is not None and hit[0].seconds > response.within
            met = hit[0].seconds is not None and not late
        results.append(
            ResponseResult(
                id=response.id,
                description=response.description,
                expected=[m.describe() for m in response.any_of],
                within=response.within,
                met=met,
                late=late,
                by=None if hit is None else hit[0],
            )
        )
    mitigations = [
        result.by.seconds
        for result, response in zip(results, scenario.responses)
        if response.mitigation
        and result.met
        and result.by is not None
        and result.by.seconds is not None
    ]
    first_mitigation = min(mitigations) if mitigations else None

    wrong: list[TakenAction] = []
    ungraded: list[TakenAction] = []
    repeated = {action.audit_id: why for action, why in repeats}
    for action, data in taken:
        if action.audit_id in used:
            continue
        rule = next((w for w in scenario.wrong if matches(w.match, data)), None)
        if rule is not None:
            wrong.append(action.model_copy(update={"why": rule.why}))
        elif action.audit_id in repeated:
            wrong.append(action.model_copy(update={"why": repeated[action.audit_id]}))
        elif scenario.other_actions == "wrong" and data.audit.action in STATE_CHANGING:
            wrong.append(
                action.model_copy(
                    update={
                        "why": scenario.other_actions_why
                        or (
                            "nothing but what the scenario expects was needed here: every other change is one more to undo"
                        )
                    }
                )
            )
        elif data.audit.action != ActionKind.ACK:  # acks are graded by time to acknowledge
            ungraded.append(action)
    wrong.sort(key=lambda action: action.audit_id)

    keys_to_mitigation = None
    if first_mitigation is not None and first_page is not None:
        keys_to_mitigation = sum(
            1 for key in keystrokes if key.wall <= first_page + first_mitigation
        )

    quiet = _quiet_checks(scenario, events, attention_at_start or {})
    reasons: list[str] = []
    for check in checks:
        if not check.ok:
            reasons.append(
                f"the drill did not page on {check.model_id} in time (a scenario or backend problem)"
            )
    for loud in quiet:
        if not loud.ok:
            reasons.append(
                f"the drill made {loud.model_id} {loud.worst} (expected {loud.at_most} at most):"
                " a scenario or backend problem"
            )
    if first_page is not None:
        if time_to_ack is None:
            reasons.append("the page was never acknowledged")
        elif time_to_ack > scenario.grading.acknowledge_within:
            reasons.append(
                f"acknowledged after {time_to_ack:.1f}s (limit {scenario.grading.acknowledge_within:g}s)"
            )
    for result in results:
        if result.late and result.by is not None:  # late: done, after the limit
            reasons.append(
                f"{result.id}: done after {result.by.seconds:.1f}s (limit {result.within:g}s)"
            )
        elif not result.met:
            reasons.append(f"{result.id}: not done ({result.description})")
    for action in wrong:
        reasons.append(f"wrong action: {action.describe()}: {action.why}")

    return Scorecard(
        scenario=name,
        title=scenario.title,
        story=scenario.story,
        fleet=scenario.fleet,
        seed=scenario.seed,
        speed=speed,
        started_at=started_at,
        duration=round(duration, 3),
        first_page=first_page,
        time_to_acknowledge=time_to_ack,
        acknowledge_within=scenario.grading.acknowledge_within,
        time_to_first_mitigation=first_mitigation,
        responses=results,
        wrong=wrong,
        ungraded=ungraded,
        incidents=checks,
        quiet=quiet,
        keystrokes=len(keystrokes),
        keystrokes_to_mitigation=keys_to_mitigation,
        passed=not reasons,
        reasons=reasons,
    )


def _quiet_checks(
    scenario: Scenario, events: list[SeenEvent], at_start: dict[str, Attention]
) -> list[QuietCheck]:
    worst: dict[str, Attention] = {}
    for model_id, attention in at_start.items():
        worst[model_id] = attention
    for seen in events:
        if seen.event.type is EventType.SLO_CHANGED:
            data = SloChangedData.model_validate(seen.event.data)
            if data.model_id not in worst or data.attention.rank < worst[data.model_id].rank:
                worst[data.model_id] = data.attention
    checks = []
    for quiet in scenario.quiet:
        seen_worst = worst.get(quiet.model_id)
        loud = seen_worst is not None and seen_worst.rank < _QUIET_RANK[quiet.at_most]
        if quiet.at_most == "ok" and seen_worst is Attention.NO_DATA:
            loud = False  # no data is neither healthy nor violating
        checks.append(
            QuietCheck(
                model_id=quiet.model_id, at_most=quiet.at_most, worst=seen_worst, ok=not loud
            )
        )
    return checks


def _incident_joins(
    events: list[SeenEvent], drill_start: datetime
) -> dict[tuple[str, int], tuple[float, datetime]]:
    """(model id, incident id) -> (wall, server time) each model first appeared in an incident opened in the drill."""
    joins: dict[tuple[str, int], tuple[float, datetime]] = {}
    for seen in events:
        if seen.event.type not in (EventType.INCIDENT_OPENED, EventType.INCIDENT_UPDATED):
            continue
        incident = IncidentEventData.model_validate(seen.event.data).incident
        if incident.opened_at < drill_start:
            continue  # left over from the fleet's history, not part of the drill
        for model_id in incident.model_ids:
            joins.setdefault((model_id, incident.id), (seen.wall, seen.event.at))
    return joins


def matches(match: ActionMatch, data: ActionEventData) -> bool:
    """Whether an audited (non-dry-run) action is one the match describes."""
    if data.result.dry_run:
        return False
    if data.audit.action != match.action:
        return False
    if match.model_id is not None and data.audit.model_id != match.model_id:
        return False
    if match.target is not None and not any(
        page.target == match.target for page in data.result.pages
    ):
        return False
    return match.team is None or any(page.team == match.team for page in data.result.pages)


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}s"


def markdown_text(value: str) -> str:
    """Data as inert Markdown: sanitized, and every character that would open a link, an image, HTML, a code
    span or a table cell escaped. Ids stay readable raw (headless drills print this page): "_" inside a word
    and "-" are plain text to Markdown."""
    return _INLINE.sub(r"\\\1", sanitize(value))


def to_markdown(card: Scorecard) -> str:
    """The scorecard as a Markdown page, the one form of it: saved, printed by headless drills and rendered
    by the console (data sanitized and escaped: a model id holding "|" must not split a table cell)."""
    s = markdown_text
    lines = [
        f"# Drill scorecard: {s(card.title)} — {'PASS' if card.passed else 'FAIL'}",
        "",
        f"- Scenario: {s(card.scenario)} on fleet {s(card.fleet)}, seed {card.seed}, "
        f"speed {card.speed:g} bucket(s)/s",
        f"- Started: {card.started_at.isoformat()} · ran {card.duration:.1f}s",
        f"- First page: {_seconds(card.first_page)} after start",
        f"- Time to acknowledge: {_seconds(card.time_to_acknowledge)} (limit {card.acknowledge_within:g}s)",
        f"- Time to first correct mitigation: {_seconds(card.time_to_first_mitigation)}",
        f"- Keystrokes: {card.keystrokes}"
        + (
            ""
            if card.keystrokes_to_mitigation is None
            else f" ({card.keystrokes_to_mitigation} to the mitigation)"
        ),
        "",
        "## Expected responses",
        "",
        "| Response | Result | Taken | Expected (any of) |",
        "|---|---|---|---|",
    ]
    for result in card.responses:
        outcome = "met" if result.met else ("late" if result.late else "missed")
        taken = (
            "—"
            if result.by is None
            else f"{s(result.by.describe())} at {_seconds(result.by.seconds)}"
        )
        lines.append(
            f"| {s(result.id)} | {outcome} (≤ {result.within:g}s) | {taken} | "
            f"{'; '.join(s(e) for e in result.expected)} |"
        )
    lines += ["", "## Wrong actions", ""]
    lines += [f"- {s(a.describe())} at {_seconds(a.seconds)}: {s(a.why)}" for a in card.wrong] or [
        "- none"
    ]
    if card.ungraded:
        lines += ["", "## Other actions (not graded)", ""]
        lines += [f"- {s(a.describe())} at {_seconds(a.seconds)}" for a in card.ungraded]
    lines += ["", "## Incidents the drill opened", ""]
    for check in card.incidents:
        when = (
            "never"
            if check.opened_after is None
            else f"after {_hours(check.opened_after)} of scenario time"
        )
        lines.append(
            f"- {s(check.model_id)}: {when} (expected by {_hours(check.expected_by)})"
            + ("" if check.ok else " — NOT OK")
        )
    if not card.incidents:
        lines.append("- none expected")
    if card.quiet:
        lines += ["", "## Models that had to stay quiet", ""]
        for loud in card.quiet:
            worst = "never changed" if loud.worst is None else f"at worst {loud.worst}"
            lines.append(
                f"- {s(loud.model_id)}: {worst} (allowed: {loud.at_most} at most)"
                + ("" if loud.ok else " — NOT OK")
            )
    if card.reasons:
        lines += ["", "## Why it failed", ""] + [f"- {s(reason)}" for reason in card.reasons]
    lines += ["", "## The story", "", _paragraphs(card.story), ""]
    return "\n".join(lines)


def _paragraphs(text: str) -> str:
    """The story's lines as text, none of them a heading, a list or a rule."""
    return "\n".join(
        _BLOCK_START.sub(_escape_block, markdown_text(line)) for line in text.strip().splitlines()
    )


def _escape_block(match: re.Match[str]) -> str:
    indent, marker = match.groups()
    return f"{indent}{marker}\\" if marker[0].isdigit() else f"{indent}\\{marker}"


def _hours(delta: timedelta) -> str:
    hours = delta / timedelta(hours=1)
    return f"{hours:g}h"
