"""Tier-aware monitoring policy: what a burn-rate alert does depends on the model's tier."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from fleetdesk.domain.policy import MonitoringPolicy, WorkingHours
from fleetdesk.domain.registry import Model, Role, Tier
from fleetdesk.domain.slo import Severity, SliceHealth, SloPolicy, evaluate
from fleetdesk.domain.stability import Health
from fleetdesk.fleets import FleetFileError, load_fleet
from fleetdesk.settings import locations

POLICY = MonitoringPolicy()
SLO = SloPolicy()
# A Saturday, 02:00 UTC: nobody works.
SATURDAY_2AM = datetime(2026, 12, 5, 2, 0, tzinfo=UTC)


def model(tier: Tier, team: str = "ig-tagging-ranking") -> Model:
    return Model(
        id=f"m-{tier}",
        type="ig_tagging_late-stage_dlrm",
        role=Role.BASELINE,
        tier=tier,
        tier_justification="x",
        owner_team=team,
        oncall_rotation=f"{team}-oncall",
        traffic_share=1.0,
        purpose="Ranks tags.",
        created_at=SATURDAY_2AM,
        updated_at=SATURDAY_2AM,
    )


def one_bad_hour(tier: Tier, now: datetime = SATURDAY_2AM, policy: MonitoringPolicy = POLICY):
    """27 good days and then one bad hour, judged by the tier's SLO."""
    hours = 28 * 24
    slices = [
        SliceHealth(
            start=now - timedelta(hours=hours - i),
            health=Health.UNSTABLE if i == hours - 1 else Health.STABLE,
        )
        for i in range(hours)
    ]
    return evaluate(slices, now, policy.slo_for(tier, SLO))


def test_a_tier4_bad_hour_opens_a_ticket_not_a_page() -> None:
    status = one_bad_hour(Tier.TIER4)
    assert {a.rule for a in status.alerts} == {"page-fast", "page-slow", "ticket"}  # as any tier
    assert {a.severity for a in status.alerts} == {Severity.TICKET}
    verdict = POLICY.verdict(model(Tier.TIER4), status)
    assert verdict.severity is Severity.TICKET
    assert verdict.reason.startswith(
        "ticket: TIER4 policy, page-fast 100x ≥ 14.4x (TIER4 never pages)"
    )


@pytest.mark.parametrize("tier", [Tier.TIER0, Tier.TIER1])
def test_tier0_and_tier1_page_around_the_clock(tier: Tier) -> None:
    status = one_bad_hour(tier)
    verdict = POLICY.verdict(model(tier), status)
    assert verdict.severity is Severity.PAGE
    assert verdict.held_until is None
    assert verdict.reason == f"pages: {tier} policy, page-fast 100x ≥ 14.4x"


def test_tier2_pages_on_the_fast_burn_and_tickets_the_slow_one() -> None:
    slo = POLICY.slo_for(Tier.TIER2, SLO)
    assert {r.name: r.severity for r in slo.rules} == {
        "page-fast": Severity.PAGE,
        "page-slow": Severity.TICKET,
        "ticket": Severity.TICKET,
    }
    # With hourly slices the 5m and 30m windows are both the latest slice, so a slow burn always comes
    # with a fast one; five-minute slices tell them apart. Five bad slices 10 to 30 minutes ago and a
    # good one since: 6h and 30m burn (>= 6x), the last 5m does not, the 3 days are under 1x.
    fine = SloPolicy(slice=timedelta(minutes=5))
    now = SATURDAY_2AM
    count = 28 * 24 * 12
    slices = [
        SliceHealth(
            start=now - timedelta(minutes=5 * (count - i)),
            health=Health.UNSTABLE if count - i in (2, 3, 4, 5, 6) else Health.STABLE,
        )
        for i in range(count)
    ]
    status = evaluate(slices, now, POLICY.slo_for(Tier.TIER2, fine))
    assert {a.rule for a in status.alerts} == {"page-slow"}
    verdict = POLICY.verdict(model(Tier.TIER2), status)
    assert verdict.severity is Severity.TICKET
    assert verdict.reason.startswith("ticket: TIER2 policy, page-slow ")
    # The same slices on a TIER1 model page.
    tier1 = evaluate(slices, now, POLICY.slo_for(Tier.TIER1, fine))
    assert POLICY.verdict(model(Tier.TIER1), tier1).severity is Severity.PAGE


def test_a_held_ticket_waits_for_the_teams_working_hours_in_its_time_zone() -> None:
    policy = MonitoringPolicy(team_timezones={"ig-tagging-ranking": "America/New_York"})
    verdict = policy.verdict(model(Tier.TIER4), one_bad_hour(Tier.TIER4, policy=policy))
    # Saturday 02:00 UTC is Friday 21:00 in New York: held until Monday 09:00 there (14:00 UTC).
    assert verdict.held_until == datetime(2026, 12, 7, 14, 0, tzinfo=UTC)
    assert verdict.reason.endswith("held for working hours until Mon 09:00 America/New_York")
    # Inside working hours nothing waits.
    monday = datetime(2026, 12, 7, 15, 0, tzinfo=UTC)
    assert policy.verdict(model(Tier.TIER4), one_bad_hour(Tier.TIER4, monday)).held_until is None
    # A TIER1 ticket never waits.
    assert not POLICY.tier(Tier.TIER1).tickets_wait_for_working_hours


def test_working_hours_next_start_respects_days_and_times() -> None:
    hours = WorkingHours()
    from zoneinfo import ZoneInfo

    london = ZoneInfo("Europe/London")
    friday_evening = datetime(2026, 12, 4, 18, 0, tzinfo=UTC)
    assert hours.next_start(friday_evening, london) == datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
    tuesday_early = datetime(2026, 12, 8, 7, 0, tzinfo=UTC)
    assert hours.next_start(tuesday_early, london) == datetime(2026, 12, 8, 9, 0, tzinfo=UTC)
    inside = datetime(2026, 12, 8, 10, 0, tzinfo=UTC)
    assert hours.next_start(inside, london) == inside


def test_a_quiet_model_says_when_it_would_page() -> None:
    hours = 28 * 24
    slices = [
        SliceHealth(start=SATURDAY_2AM - timedelta(hours=hours - i), health=Health.STABLE)
        for i in range(hours)
    ]
    status = evaluate(slices, SATURDAY_2AM, POLICY.slo_for(Tier.TIER2, SLO))
    assert POLICY.verdict(model(Tier.TIER2), status).reason == (
        "quiet: TIER2 policy, no burn-rate rule fires (pages on page-fast)"
    )


def test_a_tier_objective_changes_its_burn_rates() -> None:
    policy = MonitoringPolicy.model_validate({"tiers": {"TIER0": {"objective": 0.999}}})
    assert policy.slo_for(Tier.TIER0, SLO).objective == 0.999
    assert policy.slo_for(Tier.TIER1, SLO).objective == SLO.objective
    # Only what the file says changed: the rest of TIER0 keeps its defaults.
    assert policy.tier(Tier.TIER0).page == ("page-fast", "page-slow")


def test_a_rule_in_neither_list_is_off_for_that_tier() -> None:
    policy = MonitoringPolicy.model_validate({"tiers": {"TIER4": {"ticket": ["ticket"]}}})
    assert [r.name for r in policy.slo_for(Tier.TIER4, SLO).rules] == ["ticket"]
    assert [a.rule for a in one_bad_hour(Tier.TIER4, policy=policy).alerts] == ["ticket"]
    silent = MonitoringPolicy.model_validate({"tiers": {"TIER4": {"ticket": []}}})
    status = one_bad_hour(Tier.TIER4, policy=silent)
    assert status.alerts == []
    assert silent.verdict(model(Tier.TIER4), status).reason == (
        "quiet: TIER4 policy, no burn-rate rule fires (never pages)"
    )


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ({"tiers": {"TIER2": {"page": ["page-fast"], "ticket": ["page-fast"]}}}, "not both"),
        ({"team_timezones": {"ig-feed": "Mars/Olympus"}}, "unknown IANA time zone 'Mars/Olympus'"),
        ({"default_timezone": "EST5"}, "unknown IANA time zone"),
        ({"working_hours": {"start": "18:00", "end": "09:00"}}, "must be before end"),
        ({"tiers": {"TIER9": {}}}, "TIER9"),
        ({"tiers": {"TIER3": {"min_events_per_slice": -1}}}, "greater than or equal to 0"),
    ],
)
def test_a_bad_policy_is_refused_in_plain_words(raw: dict[str, Any], words: str) -> None:
    with pytest.raises(ValidationError) as caught:
        MonitoringPolicy.model_validate(raw)
    assert words in str(caught.value)


def _small_with_policy(tmp_path: Path, policy: dict[str, Any]) -> Path:
    raw = json.loads((locations.fleets_dir() / "small.json").read_text())
    raw["policy"] = policy
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(raw))
    return path


def test_the_policy_lives_in_the_fleet_file_with_defaults(tmp_path: Path) -> None:
    assert load_fleet("small").file.policy.tiers == MonitoringPolicy().tiers
    path = _small_with_policy(
        tmp_path,
        {
            "tiers": {"TIER3": {"min_events_per_slice": 500}},
            "team_timezones": {"ig-tagging-ranking": "Europe/Dublin"},
        },
    )
    policy = load_fleet(str(path)).file.policy
    assert policy.tier(Tier.TIER3).min_events_per_slice == 500
    assert policy.tier(Tier.TIER3).ticket == ("page-fast", "page-slow", "ticket")
    assert str(policy.timezone_of("ig-tagging-ranking")) == "Europe/Dublin"
    assert str(policy.timezone_of("anyone-else")) == "UTC"


def test_unknown_keys_and_rules_in_the_policy_are_named_with_the_file(tmp_path: Path) -> None:
    path = _small_with_policy(
        tmp_path,
        {
            "tiers": {"TIER1": {"pgae": ["page-fast"]}, "TIER2": {"page": ["page-fastest"]}},
            "workinghours": {},
        },
    )
    with pytest.raises(FleetFileError) as caught:
        load_fleet(str(path))
    text = str(caught.value)
    assert str(path) in text
    assert "policy.tiers.TIER1.pgae: unknown key" in text
    assert "policy.workinghours: unknown key" in text
    path = _small_with_policy(tmp_path, {"tiers": {"TIER2": {"page": ["page-fastest"]}}})
    with pytest.raises(FleetFileError) as caught:
        load_fleet(str(path))
    assert "policy.tiers.TIER2.page: unknown burn-rate rule 'page-fastest'" in str(caught.value)
