"""Tier-aware monitoring policy: what a model's burn-rate alerts do, by its tier.

A tier is the most severe incident a model can cause, and only models with proven business impact get
24/7 paging. So the same burn rate means different things per tier: a TIER0 Feed baseline's bad hour pages
at 2am; a TIER4 tagging model's opens a ticket that waits for its team's working hours. Per tier the policy
says the SLO objective, which burn-rate rules page and which open a ticket (a rule in neither is off),
whether tickets wait for working hours, and how many events a slice needs before it is judged at all
(below that it is no data, not bad: sparse conversion labels say nothing).

The policy lives in the fleet file's optional ``policy`` section; every tier it leaves out, and every field
of a tier it leaves out, takes the defaults below.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from enum import StrEnum
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from fleetdesk.domain.bounds import FINITE
from fleetdesk.domain.registry import Model, Tier
from fleetdesk.domain.slo import ActiveAlert, Severity, SloPolicy, SloStatus
from fleetdesk.domain.stability import HealthBands

PAGE_FAST, PAGE_SLOW, TICKET = "page-fast", "page-slow", "ticket"
"""The default burn-rate rules' names (fleetdesk.domain.slo.DEFAULT_RULES)."""

MAX_MIN_EVENTS = 1e9


class Weekday(StrEnum):
    MON = "mon"
    TUE = "tue"
    WED = "wed"
    THU = "thu"
    FRI = "fri"
    SAT = "sat"
    SUN = "sun"

    @property
    def number(self) -> int:
        """0 for Monday, as datetime.weekday()."""
        return list(Weekday).index(self)


class WorkingHours(BaseModel):
    """When a team works, in its own time zone: held tickets are opened then."""

    model_config = ConfigDict(frozen=True)

    start: time = time(9, 0)
    end: time = time(17, 0)
    days: tuple[Weekday, ...] = (Weekday.MON, Weekday.TUE, Weekday.WED, Weekday.THU, Weekday.FRI)

    @model_validator(mode="after")
    def _sensible(self) -> WorkingHours:
        if self.start.tzinfo is not None or self.end.tzinfo is not None:
            raise ValueError(
                "start and end are local times of each team's time zone, without offset"
            )
        if not self.start < self.end:
            raise ValueError(f"start ({self.start}) must be before end ({self.end})")
        if not self.days:
            raise ValueError("days must name at least one weekday")
        return self

    def next_start(self, moment: datetime, zone: ZoneInfo) -> datetime:
        """``moment`` itself when it is inside working hours in ``zone``, else when they next begin (UTC)."""
        local = moment.astimezone(zone)
        working = {day.number for day in self.days}
        if local.weekday() in working and self.start <= local.time() < self.end:
            return moment
        for ahead in range(8):
            day = (local + timedelta(days=ahead)).date()
            begins = datetime.combine(day, self.start, tzinfo=zone)
            if day.weekday() in working and begins > local:
                return begins.astimezone(moment.tzinfo)
        raise AssertionError("a non-empty week of working days always has a next start")


class TierPolicy(BaseModel):
    """How one tier's burn-rate alerts are handled."""

    model_config = ConfigDict(frozen=True, **FINITE)

    objective: float | None = Field(
        default=None,
        gt=0.0,
        le=0.999999,
        description="Share of slices that must be good; None: the fleet's slo.objective",
    )
    page: tuple[str, ...] = Field(description="Burn-rate rules (slo.rules names) that page")
    ticket: tuple[str, ...] = Field(description="Burn-rate rules that open a ticket")
    tickets_wait_for_working_hours: bool = Field(
        description="A ticket is held until the owning team's working hours begin"
    )
    min_events_per_slice: float = Field(
        default=0.0,
        ge=0.0,
        le=MAX_MIN_EVENTS,
        description="A slice with fewer events is no data, not bad",
    )

    @model_validator(mode="after")
    def _disjoint(self) -> TierPolicy:
        both = sorted(set(self.page) & set(self.ticket))
        if both:
            raise ValueError(f"a rule either pages or opens a ticket, not both: {', '.join(both)}")
        return self

    def severity_of(self, rule: str) -> Severity | None:
        """What this rule does for this tier: page, ticket, or nothing (None)."""
        if rule in self.page:
            return Severity.PAGE
        if rule in self.ticket:
            return Severity.TICKET
        return None


DEFAULT_TIERS: dict[Tier, TierPolicy] = {
    # Proven business impact: paged around the clock, on the fast and the slow burn.
    Tier.TIER0: TierPolicy(
        page=(PAGE_FAST, PAGE_SLOW), ticket=(TICKET,), tickets_wait_for_working_hours=False
    ),
    Tier.TIER1: TierPolicy(
        page=(PAGE_FAST, PAGE_SLOW), ticket=(TICKET,), tickets_wait_for_working_hours=False
    ),
    # Pages only when the budget goes in hours; a slow burn can wait for a ticket.
    Tier.TIER2: TierPolicy(
        page=(PAGE_FAST,), ticket=(PAGE_SLOW, TICKET), tickets_wait_for_working_hours=True
    ),
    # Never worth waking anyone: every burn opens a ticket for working hours.
    Tier.TIER3: TierPolicy(
        page=(), ticket=(PAGE_FAST, PAGE_SLOW, TICKET), tickets_wait_for_working_hours=True
    ),
    Tier.TIER4: TierPolicy(
        page=(), ticket=(PAGE_FAST, PAGE_SLOW, TICKET), tickets_wait_for_working_hours=True
    ),
}


class MonitoringPolicy(BaseModel):
    """The fleet's monitoring policy: per tier, and the working hours and time zone of each team."""

    model_config = ConfigDict(frozen=True)

    tiers: dict[Tier, TierPolicy] = Field(
        default_factory=lambda: dict(DEFAULT_TIERS),
        description="Per tier; a tier or field left out takes its default",
    )
    working_hours: WorkingHours = WorkingHours()
    default_timezone: str = Field(
        default="UTC", description="IANA time zone of a team not in team_timezones"
    )
    team_timezones: dict[str, str] = Field(
        default_factory=dict, description="Per owner team: its IANA time zone, e.g. Europe/London"
    )

    @field_validator("tiers", mode="before")
    @classmethod
    def _over_defaults(cls, value: Any) -> Any:
        """Each tier's fields over that tier's defaults, so a file says only what it changes."""
        if not isinstance(value, dict):
            return value
        merged: dict[Any, Any] = {
            tier: policy.model_dump() for tier, policy in DEFAULT_TIERS.items()
        }
        for key, given in value.items():
            default = merged.get(key)
            if isinstance(given, dict) and isinstance(default, dict):
                merged[key] = {**default, **given}
            else:
                merged[key] = given  # an unknown tier or a non-table: pydantic names the problem
        return merged

    @field_validator("default_timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        _zone(value)
        return value

    @field_validator("team_timezones")
    @classmethod
    def _known_zones(cls, value: dict[str, str]) -> dict[str, str]:
        for team, name in value.items():
            try:
                _zone(name)
            except ValueError as error:
                raise ValueError(f"team {team!r}: {error}") from None
        return value

    def tier(self, tier: Tier) -> TierPolicy:
        return self.tiers[tier]

    def timezone_of(self, team: str) -> ZoneInfo:
        return _zone(self.team_timezones.get(team, self.default_timezone))

    def bands_for(self, model: Model, bands: HealthBands) -> HealthBands:
        """The model's band with its tier's minimum events per slice."""
        least = self.tiers[model.tier].min_events_per_slice
        return (
            bands if bands.min_events == least else bands.model_copy(update={"min_events": least})
        )

    def slo_for(self, tier: Tier, base: SloPolicy) -> SloPolicy:
        """The fleet's SLO as this tier sees it: its objective, and each rule's severity by the tier (rules
        that neither page nor ticket dropped)."""
        policy = self.tiers[tier]
        rules = tuple(
            rule.model_copy(update={"severity": severity})
            for rule in base.rules
            if (severity := policy.severity_of(rule.name)) is not None
        )
        objective = base.objective if policy.objective is None else policy.objective
        return base.model_copy(update={"rules": rules, "objective": objective})

    def problems(self, base: SloPolicy) -> list[str]:
        """Rule names the tiers use that the fleet's SLO does not define, one sentence each."""
        known = {rule.name for rule in base.rules}
        return [
            f"policy.tiers.{tier}.{field}: unknown burn-rate rule {name!r}"
            f" (slo.rules has: {', '.join(sorted(known)) or 'none'})"
            for tier, policy in self.tiers.items()
            for field in ("page", "ticket")
            for name in getattr(policy, field)
            if name not in known
        ]

    def verdict(self, model: Model, status: SloStatus) -> PagingVerdict:
        """What the model's firing alerts do under its tier's policy, and why, in words."""
        policy = self.tiers[model.tier]
        worst = _worst(status.alerts)
        held_until = None
        zone = self.team_timezones.get(model.owner_team, self.default_timezone)
        if (
            worst is not None
            and worst.severity is Severity.TICKET
            and policy.tickets_wait_for_working_hours
        ):
            starts = self.working_hours.next_start(status.evaluated_at, _zone(zone))
            held_until = starts if starts > status.evaluated_at else None
        return PagingVerdict(
            tier=model.tier,
            severity=None if worst is None else worst.severity,
            rule=None if worst is None else worst.rule,
            burn_rate=None if worst is None else min(worst.long_burn_rate, worst.short_burn_rate),
            threshold=None if worst is None else worst.threshold,
            page_rules=policy.page,
            ticket_rules=policy.ticket,
            held_until=held_until,
            timezone=zone,
        )


class PagingVerdict(BaseModel):
    """Why a model pages, opens a ticket or stays quiet: its tier's policy and the alert that decided."""

    model_config = ConfigDict(frozen=True, **FINITE)

    tier: Tier
    severity: Severity | None = Field(description="None: no burn-rate rule fires")
    rule: str | None = Field(description="The firing rule that decided (the worst, fastest first)")
    burn_rate: float | None = Field(description="Its burn rate: the lower of its two windows")
    threshold: float | None
    page_rules: tuple[str, ...]
    ticket_rules: tuple[str, ...]
    held_until: datetime | None = Field(
        default=None, description="A ticket waits for the team's working hours until then (UTC)"
    )
    timezone: str

    @property
    def reason(self) -> str:
        """e.g. 'pages: TIER1 policy, page-fast 100x ≥ 14.4x'."""
        policy = f"{self.tier} policy"
        if self.severity is None or self.rule is None:
            pages = f"pages on {', '.join(self.page_rules)}" if self.page_rules else "never pages"
            return f"quiet: {policy}, no burn-rate rule fires ({pages})"
        verb = "pages" if self.severity is Severity.PAGE else "ticket"
        said = f"{verb}: {policy}, {self.rule} {_times(self.burn_rate)} ≥ {_times(self.threshold)}"
        if self.severity is Severity.TICKET and not self.page_rules:
            said += f" ({self.tier} never pages)"
        if self.held_until is not None:
            local = self.held_until.astimezone(_zone(self.timezone))
            said += f", held for working hours until {local:%a %H:%M} {self.timezone}"
        return said


def _worst(alerts: list[ActiveAlert]) -> ActiveAlert | None:
    """The deciding alert: a page before a ticket, then the one burning furthest above its threshold."""
    if not alerts:
        return None
    return min(
        alerts,
        key=lambda a: (
            a.severity is not Severity.PAGE,
            -min(a.long_burn_rate, a.short_burn_rate) / a.threshold,
        ),
    )


def _times(value: float | None) -> str:
    return "?" if value is None else f"{value:.3g}x"


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown IANA time zone {name!r} (e.g. Europe/London, America/New_York)"
        ) from None
