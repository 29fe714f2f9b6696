"""The drill scenario file: a story, metric injections over time, and how to grade the response.

A scenario lives in ``fixtures/scenarios/NAME.toml``. Times inside it are
offsets from the drill's start (the end of the fleet's metric history), so one
file works whatever dates the fleet's history covers. Grading limits are wall
seconds after the first page, because they grade a human, whatever ``--speed``
compresses scenario time by.

Loading checks the file in two passes and reports every problem at once, each
naming the file and the field: the shape (pydantic), then the references
against the fleet (model ids, teams, what each action can do to that model).
A drill never starts from a scenario that failed either pass.

What a scenario can say, beyond "this should page and this is the fix":

- conditions that began before the drill: an injection with a negative ``after`` is already in the
  fleet's history when the drill starts (an incident may be open then, already paging: the first page
  is the drill's start);
- ``[[quiet]]``: a model that must not page (or not even get a ticket) during the drill — it checks
  the drill and its bands, not the engineer;
- no ``responses`` at all, so that acknowledging is the whole right answer, and no ``incidents`` at
  all (nothing should page);
- each response is right at most once: doing it again (a second escalation of the same cause) is
  wrong, unless the response says ``once = false``;
- ``other_actions = "wrong"``: any other state-changing action (rollback, end, halt, escalate) is
  wrong, with ``other_actions_why`` on the scorecard.
"""

from __future__ import annotations

import tomllib
from collections.abc import Collection
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from fleetdesk.domain import playbook
from fleetdesk.domain.attention import Attention
from fleetdesk.domain.bounds import FINITE, MomentText, Span
from fleetdesk.domain.fleet import MAX_MAGNITUDE, IncidentKind, MetricIncident
from fleetdesk.domain.live import LiveState
from fleetdesk.domain.playbook import Neighbour, Recipient, SharedCause, Situation
from fleetdesk.domain.registry import Model, Registry
from fleetdesk.domain.stability import Health
from fleetdesk.settings.local_files import MIB, read_text_file, why_unreadable
from fleetdesk.wire import ActionKind, EscalationTarget

SCENARIO_SUFFIX = ".toml"
MAX_WALL_SECONDS = 86_400.0
"""Longest wall-clock limit a drill may set (TOML also spells inf and nan, which no limit can be)."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", **FINITE)


class Injection(_Strict):
    """A disturbance of one model's metrics, placed on the drill's timeline."""

    model_id: str = Field(min_length=1)
    kind: IncidentKind
    after: Span = Field(
        description="When it starts, from the drill's start; negative: it began before the"
        " drill (it is in the fleet's history when the drill starts)"
    )
    lasts: Span | None = Field(default=None, description="How long; None: until the replay ends")
    magnitude: float = Field(
        default=1.0,
        ge=1.0 / MAX_MAGNITUDE,
        le=MAX_MAGNITUDE,
        description="Ratio, as in domain.fleet.MetricIncident",
    )
    ramp: Span | None = Field(
        default=None,
        description="Calibration drift only: reach the full magnitude after this long, then hold it"
        " (without it the drift ramps over its whole span, as in domain.synthetic)",
    )

    @model_validator(mode="after")
    def _positive_times(self) -> Injection:
        if (
            self.after < timedelta(0)
            and self.kind is IncidentKind.CALIBRATION_DRIFT
            and (self.ramp is None or self.after + self.ramp > timedelta(0))
        ):
            # A ramp cut in two by the drill's start would ramp twice (once in the history, once in the replay).
            raise ValueError(
                "a calibration drift that began before the drill needs a ramp that ends before it starts"
            )
        if self.lasts is not None and self.lasts <= timedelta(0):
            raise ValueError("lasts must be positive")
        if self.ramp is not None:
            if self.kind is not IncidentKind.CALIBRATION_DRIFT:
                raise ValueError("ramp only applies to calibration_drift")
            if self.ramp <= timedelta(0) or (self.lasts is not None and self.ramp > self.lasts):
                raise ValueError("ramp must be positive and within lasts")
        return self

    def incidents(
        self, drill_start: datetime, replay_end: datetime, bucket: timedelta
    ) -> list[MetricIncident]:
        """The domain incidents this injection becomes once the drill has a start time.

        A held drift is its ramp followed by one full-magnitude incident per
        bucket: a one-bucket drift is at full magnitude in its only bucket.
        """
        start = drill_start + self.after
        end = replay_end if self.lasts is None else min(start + self.lasts, replay_end)
        if self.ramp is None:
            return [
                MetricIncident(
                    model_id=self.model_id,
                    kind=self.kind,
                    start=start,
                    end=end,
                    magnitude=self.magnitude,
                )
            ]
        ramp_end = start + self.ramp
        held = []
        moment = ramp_end
        while moment < end:
            held.append(
                MetricIncident(
                    model_id=self.model_id,
                    kind=self.kind,
                    start=moment,
                    end=moment + bucket,
                    magnitude=self.magnitude,
                )
            )
            moment += bucket
        return [
            MetricIncident(
                model_id=self.model_id,
                kind=self.kind,
                start=start,
                end=ramp_end,
                magnitude=self.magnitude,
            ),
            *held,
        ]


class ExpectedIncident(_Strict):
    """An incident the injections should open: checks the drill itself, not the engineer."""

    model_id: str = Field(min_length=1, description="A model the incident opens on or joins")
    by: Span = Field(description="Latest scenario time (from the drill's start) it should be open")


class Quiet(_Strict):
    """A model that must stay quiet during the drill: it checks the drill (its bands, its grouping), not the engineer."""

    model_id: str = Field(min_length=1)
    at_most: Literal["ticket", "ok"] = Field(
        default="ticket",
        description="ticket: it may get a ticket, never a page; ok: not even a ticket or an"
        " unstable bucket",
    )


class ActionMatch(_Strict):
    """Which audited actions count: the kind, and optionally the model and who was paged."""

    action: ActionKind
    model_id: str | None = Field(default=None, description="None: on any model")
    target: EscalationTarget | None = Field(
        default=None, description="Escalations only: owner or upstream"
    )
    team: str | None = Field(
        default=None, description="Escalations only: a team that must be paged"
    )

    @model_validator(mode="after")
    def _escalation_fields(self) -> ActionMatch:
        if self.action is not ActionKind.ESCALATE and (
            self.target is not None or self.team is not None
        ):
            raise ValueError("target and team only apply to escalate")
        return self

    def describe(self) -> str:
        where = f" on {self.model_id}" if self.model_id else " on any model"
        extra = f" to {self.target}" if self.target else ""
        extra += f" (paging {self.team})" if self.team else ""
        return f"{self.action}{where}{extra}"


class ExpectedResponse(_Strict):
    """One thing the engineer should do: the preferred action first, then acceptable alternatives."""

    id: str = Field(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
    description: str = Field(min_length=1)
    any_of: list[ActionMatch] = Field(min_length=1)
    within: float = Field(
        gt=0.0, le=MAX_WALL_SECONDS, description="Wall seconds after the first page"
    )
    mitigation: bool = Field(
        default=True, description="Counts for 'time to first correct mitigation'"
    )
    once: bool = Field(
        default=True,
        description="Right at most once: doing it again (a second page for the"
        " same cause) is wrong",
    )


class WrongAction(_Strict):
    """An action that is wrong in this scenario, and why (shown on the scorecard)."""

    match: ActionMatch
    why: str = Field(min_length=1)


class Grading(_Strict):
    acknowledge_within: float = Field(
        gt=0.0, le=MAX_WALL_SECONDS, description="Wall seconds from the first page to the ack"
    )
    time_limit: float = Field(
        gt=0.0, le=MAX_WALL_SECONDS, description="Wall seconds the drill runs at most"
    )
    settle: float = Field(
        default=10.0,
        ge=0.0,
        le=MAX_WALL_SECONDS,
        description="Wall seconds the drill runs on once every expected response is in, so that"
        " what comes after counts too",
    )


class Scenario(_Strict):
    """One incident drill (fixtures/scenarios/NAME.toml)."""

    schema_version: int = Field(default=1, ge=1, le=1)
    title: str = Field(min_length=1, max_length=100)
    summary: str = Field(
        min_length=1, max_length=200, description="One line, for `fleetdesk drill --list`"
    )
    story: str = Field(
        min_length=1, description="What is happening, told to the engineer after the drill"
    )
    fleet: str = Field(min_length=1, description="Fixture fleet name or path")
    start: MomentText = Field(
        description="Scenario time the drill starts at; the fleet's history is moved to end here"
        " (a fixed start keeps the replay's daily traffic curve, and so its buckets, the same on every run)"
    )
    seed: int = Field(
        default=0, description="Noise seed of the replay (mixed with each model's own)"
    )
    length: Span = Field(description="Scenario time replayed; one bucket per tick")
    injections: list[Injection] = Field(min_length=1)
    incidents: list[ExpectedIncident] = Field(
        default_factory=list, description="Empty: nothing should page"
    )
    quiet: list[Quiet] = Field(default_factory=list)
    responses: list[ExpectedResponse] = Field(
        default_factory=list, description="Empty: acknowledging is all"
    )
    wrong: list[WrongAction] = Field(default_factory=list)
    other_actions: Literal["ungraded", "wrong"] = Field(
        default="ungraded",
        description="wrong: any state-changing action no response or wrong rule names is wrong",
    )
    other_actions_why: str = Field(
        default="", description="Why, on the scorecard, when other_actions is wrong"
    )
    grading: Grading

    @field_validator("length")
    @classmethod
    def _positive_length(cls, length: timedelta) -> timedelta:
        if length <= timedelta(0):
            raise ValueError("length must be positive")
        return length

    @field_validator("responses")
    @classmethod
    def _unique_ids(cls, responses: list[ExpectedResponse]) -> list[ExpectedResponse]:
        ids = [response.id for response in responses]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate id(s) {', '.join(duplicates)}")
        return responses


class ScenarioProblem(BaseModel):
    model_config = ConfigDict(frozen=True)

    field: str
    message: str


class ScenarioError(ValueError):
    """A scenario file that cannot run; lists every problem with its field."""

    def __init__(
        self, source: str, problems: list[ScenarioProblem], what: str = "scenario"
    ) -> None:
        self.source = source
        self.problems = problems
        if len(problems) == 1:  # one line, like every other error of the command line
            super().__init__(
                f"{source}: invalid {what}: {problems[0].field}: {problems[0].message}"
            )
            return
        lines = "\n".join(f"  - {p.field}: {p.message}" for p in problems)
        super().__init__(f"{source}: invalid {what} ({len(problems)} problems):\n{lines}")


def _field(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(file)"


def parse_scenario(text: str, source: str) -> Scenario:
    """Validate a scenario's TOML text; ScenarioError names ``source`` and each bad field."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(
            source, [ScenarioProblem(field="(file)", message=f"not valid TOML: {error}")]
        ) from None
    try:
        return Scenario.model_validate(data)
    except ValidationError as error:
        problems = [
            ScenarioProblem(
                field=_field(tuple(e["loc"])), message=e["msg"].removeprefix("Value error, ")
            )
            for e in error.errors(include_url=False)
        ]
        raise ScenarioError(source, problems) from None


def load_scenario(name_or_path: str | Path) -> tuple[Scenario, Path]:
    """A shipped scenario by name, or a file by path; validated for shape (see check_against_fleet)."""
    path = resolve_scenario(name_or_path)
    try:
        text = read_text_file(path, MIB)
    except (OSError, UnicodeDecodeError) as error:
        raise ScenarioError(
            str(path),
            [ScenarioProblem(field="(file)", message=f"cannot read: {why_unreadable(error)}")],
        ) from None
    return parse_scenario(text, str(path)), path


def resolve_scenario(name_or_path: str | Path) -> Path:
    from fleetdesk.settings.locations import scenarios_dir

    candidate = Path(name_or_path)
    if candidate.suffix == SCENARIO_SUFFIX or candidate.exists():
        if (
            not candidate.exists()
        ):  # anything else that is not a regular file is refused when it is read
            raise ScenarioError(
                str(candidate), [ScenarioProblem(field="(file)", message="no such file")]
            )
        return candidate
    shipped = scenarios_dir() / f"{name_or_path}{SCENARIO_SUFFIX}"
    if not shipped.is_file():
        known = ", ".join(name for name, _ in list_scenarios()) or "none"
        raise ScenarioError(
            str(name_or_path),
            [ScenarioProblem(field="(name)", message=f"no such scenario (known: {known})")],
        )
    return shipped


def list_scenarios() -> list[tuple[str, Path]]:
    """Every shipped scenario, by name."""
    from fleetdesk.settings.locations import scenarios_dir

    folder = scenarios_dir()
    if not folder.is_dir():
        return []
    return [(path.stem, path) for path in sorted(folder.glob(f"*{SCENARIO_SUFFIX}"))]


def check_against_fleet(
    scenario: Scenario,
    registry: Registry,
    fleet_bucket: timedelta,
    source: str,
    pipeline_teams: Collection[str] = (),
) -> None:
    """Raise ScenarioError unless every model id and team is in the fleet and each graded action could happen."""
    problems: list[ScenarioProblem] = []
    teams = {model.owner_team for model in registry.models.values()} | set(pipeline_teams)

    def model_ok(field: str, model_id: str | None) -> bool:
        if model_id is None or model_id in registry:
            return True
        hint = registry.suggest(model_id)
        problems.append(
            ScenarioProblem(
                field=field,
                message=f"unknown model {model_id!r} in fleet {scenario.fleet!r}"
                + (f" (did you mean: {', '.join(hint)}?)" if hint else ""),
            )
        )
        return False

    def match_ok(field: str, match: ActionMatch, *, must_be_possible: bool) -> None:
        if match.team is not None and match.team not in teams:
            problems.append(
                ScenarioProblem(
                    field=f"{field}.team",
                    message=f"no team {match.team!r} owns a model in the fleet",
                )
            )
        if (
            not model_ok(f"{field}.model_id", match.model_id)
            or match.model_id is None
            or not must_be_possible
        ):
            return
        reason = _impossible(match, registry)
        if reason:
            problems.append(ScenarioProblem(field=f"{field}.action", message=reason))

    if (scenario.start - datetime(1970, 1, 1, tzinfo=UTC)) % fleet_bucket:
        problems.append(
            ScenarioProblem(
                field="start", message=f"must fall on a bucket boundary ({fleet_bucket} buckets)"
            )
        )
    for i, injection in enumerate(scenario.injections):
        model_ok(f"injections[{i}].model_id", injection.model_id)
        if injection.after < timedelta(0) and injection.after % fleet_bucket:
            problems.append(
                ScenarioProblem(
                    field=f"injections[{i}].after",
                    message=f"a start before the drill must be whole buckets ({fleet_bucket})",
                )
            )
        if injection.after >= scenario.length:
            problems.append(
                ScenarioProblem(
                    field=f"injections[{i}].after",
                    message="starts after the replay ends (see length)",
                )
            )
    for i, quiet in enumerate(scenario.quiet):
        model_ok(f"quiet[{i}].model_id", quiet.model_id)
    for i, incident in enumerate(scenario.incidents):
        model_ok(f"incidents[{i}].model_id", incident.model_id)
        if incident.by > scenario.length:
            problems.append(
                ScenarioProblem(
                    field=f"incidents[{i}].by", message="later than the replay's length"
                )
            )
    for i, response in enumerate(scenario.responses):
        for j, match in enumerate(response.any_of):
            match_ok(f"responses[{i}].any_of[{j}]", match, must_be_possible=True)
        if response.within > scenario.grading.time_limit:
            problems.append(
                ScenarioProblem(
                    field=f"responses[{i}].within", message="longer than grading.time_limit"
                )
            )
    for i, wrong in enumerate(scenario.wrong):
        match_ok(f"wrong[{i}].match", wrong.match, must_be_possible=False)
        for response in scenario.responses:
            if wrong.match in response.any_of:
                problems.append(
                    ScenarioProblem(
                        field=f"wrong[{i}].match",
                        message=f"also a correct response ({response.id})",
                    )
                )
    if problems:
        raise ScenarioError(source, problems)


def _impossible(match: ActionMatch, registry: Registry) -> str | None:
    """Why the playbook would refuse this expected action on the model as the fleet file has it, with the
    page the drill is about open; None when it could happen."""
    model = registry.get(match.model_id or "")

    def as_seeded(other: Model) -> Neighbour:
        return Neighbour(
            model=other,
            live=seeded_state(other),
            health=Health.NO_DATA,
            attention=Attention.NO_DATA,
        )

    # A shared cause forms during the replay or not: an escalation to the surface is judged as if it had.
    shared = (
        SharedCause(
            incident_id=0,
            app="",
            surface="",
            label="",
            started_at=datetime(1970, 1, 1, tzinfo=UTC),
            members=(model.id,),
            teams=(Recipient(model.owner_team, model.oncall_rotation),),
        )
        if match.target is EscalationTarget.SURFACE
        else None
    )
    situation = Situation(
        model=model,
        live=seeded_state(model),
        incident_id=0,
        baseline=as_seeded(registry.models[model.baseline_model_id])
        if model.baseline_model_id
        else None,
        upstream=tuple(
            as_seeded(registry.models[m]) for m in model.upstream_model_ids if m in registry.models
        ),
        shared_cause=shared,
    )
    try:
        playbook.plan(match.action, situation, match.target)
    except playbook.Refusal as refusal:
        return f"{model.id}: {refusal.reason}"
    return None


def seeded_state(model: Model) -> LiveState:
    """A model's live state as a store seeded from the registry starts it."""
    return LiveState(
        serving_model_id=model.id,
        traffic_share=model.traffic_share,
        launch_phase=model.launch_phase,
    )
