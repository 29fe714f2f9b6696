"""`fleetdesk explain`: the one-paragraph answer, as text and JSON, through the real command."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fleetdesk.domain.registry import Role, Tier
from fleetdesk.domain.stability import Health
from fleetdesk.fleets import Fleet, load_fleet
from fleetdesk.fleets.explanation import Explanation, explain, render_text
from fleetdesk.settings import locations

FLEETDESK = Path(sys.executable).with_name("fleetdesk")
README = Path(__file__).resolve().parents[2] / "README.md"
DRIFTING = "ig_feed_late-stage_mtml.x1-watch-time"


def fleetdesk(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(FLEETDESK), *args], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def small() -> Fleet:
    return load_fleet("small")


def test_drifting_experiment_text_answers_every_question() -> None:
    result = fleetdesk("explain", DRIFTING, "--fleet", "small")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    summary = out.split("\n\n", 1)[0].replace("\n", " ")
    assert summary.startswith(f"{DRIFTING} is a TIER2 experiment in scale-up on 3% of traffic")
    assert "Instagram · Feed · late-stage (late-stage ranking) · multi-task multi-label" in summary
    assert "Tests a watch-time task head" in summary
    assert "TIER2 because: ramping on the Instagram Feed" in summary
    assert "Safe fallback: roll back to baseline ig_feed_late-stage_mtml.v41." in summary
    assert "Now UNSTABLE in the latest bucket (calibration 1.3" in summary
    assert "burn-rate alerts firing: page-fast" in summary
    assert "(pages: TIER2 policy, page-fast 100x ≥ 14.4x)" in summary
    assert "Blast radius: nothing downstream." in summary
    assert "Upstream: ig_cross-surface_late-stage_transformer.fm-v7." in summary
    assert re.search(r"^alerts +page-fast \(page\): 100x and 100x >= 14\.4x", out, re.M)
    assert re.search(r"^burn rates +5m 100x, 30m 100x, 1h 100x, 6h 100x, 3d ", out, re.M)
    assert re.search(r"^as of +2026-11-30 00:00 UTC", out, re.M)
    # Plain text for pipes: no escape sequences, no box drawing, lines fit 80 columns.
    assert "\x1b" not in out and not re.search("[\u2500-\u257f]", out)
    assert max(len(line) for line in out.splitlines()) <= 80


def test_json_is_one_object_of_the_explanation_schema() -> None:
    result = fleetdesk("explain", DRIFTING, "--fleet", "small", "--json")
    assert result.returncode == 0, result.stderr
    assert result.stdout.isascii()  # inert on a terminal, exact for a parser
    data = json.loads(result.stdout)
    explanation = Explanation.model_validate(data)
    assert explanation.model_id == DRIFTING
    assert explanation.fallback_model_id == "ig_feed_late-stage_mtml.v41"
    assert explanation.latest.health is Health.UNSTABLE
    assert explanation.slo.budget_remaining is not None and explanation.slo.budget_remaining < 0.5
    assert {alert.rule for alert in explanation.slo.alerts} >= {"page-fast"}
    assert data["blast_radius"] == {tier.value: 0 for tier in Tier}


def test_large_fleet_foundation_shows_its_blast_radius() -> None:
    fleet = load_fleet("large")
    foundation = max(
        (m for m in fleet.registry.models.values() if m.role is Role.FOUNDATION),
        key=lambda m: len(fleet.registry.downstream(m.id)),
    )
    result = fleetdesk("explain", foundation.id, "--fleet", "large", "--json")
    assert result.returncode == 0, result.stderr
    explanation = Explanation.model_validate_json(result.stdout)
    assert explanation.downstream_total == len(fleet.registry.downstream(foundation.id)) >= 50
    assert sum(explanation.blast_radius.values()) == explanation.downstream_total
    assert "none: escalate to" in explanation.fallback
    assert (
        f"Blast radius: {explanation.downstream_total} downstream models (TIER0 "
        in explanation.summary
    )


def test_tier0_baseline_has_no_fallback_but_escalation(small: Fleet) -> None:
    explanation = explain(small, "ig_feed_late-stage_mtml.v41")
    assert explanation.fallback_model_id is None
    assert explanation.fallback == "none: escalate to ig-feed-ranking (ig-feed-ranking-oncall)"
    assert (
        "TIER0 because: ranks the Instagram Feed: 40% of Instagram ad revenue."
        in explanation.summary
    )
    assert explanation.latest.health is Health.STABLE and not explanation.slo.alerts
    assert explanation.slo.budget_remaining == 1.0


def test_downstream_victim_points_upstream(small: Fleet) -> None:
    explanation = explain(small, "fb_feed_late-stage_dhen.v52")
    assert explanation.latest.health is Health.UNSTABLE
    assert [up.id for up in explanation.upstream] == [
        "fb_cross-surface_late-stage_transformer.fm-v4"
    ]
    assert explanation.upstream[0].health is Health.UNSTABLE
    assert (
        "Look upstream first: fb_cross-surface_late-stage_transformer.fm-v4 (UNSTABLE)."
        in explanation.summary
    )


def test_stopped_feed_is_no_data_not_healthy(small: Fleet) -> None:
    explanation = explain(small, "fb_marketplace-search_late-stage_dhen.v11")
    assert explanation.latest.health is Health.NO_DATA
    assert explanation.latest.buckets == 0
    assert explanation.last_24h.buckets == 21
    assert "NO DATA in the latest bucket (last bucket 2026-11-29 20:00 UTC)" in explanation.summary
    assert re.search(r"^latest +never: no data: NO DATA", render_text(explanation), re.M)


def test_unknown_id_exits_2_with_close_suggestions() -> None:
    result = fleetdesk("explain", "ig_feed_late-stage_mtml.x1-watch-tim", "--fleet", "small")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(
        "fleetdesk explain: no model 'ig_feed_late-stage_mtml.x1-watch-tim' (did you mean: "
        "ig_feed_late-stage_mtml.x1-watch-time"
    )


def test_bad_fleet_file_exits_2_naming_the_problem(tmp_path: Path) -> None:
    raw = json.loads((locations.fleets_dir() / "small.json").read_text(encoding="utf-8"))
    raw["models"][0]["role"] = "oracle"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    result = fleetdesk("explain", DRIFTING, "--fleet", str(path))
    assert result.returncode == 2
    assert result.stderr.startswith(
        f"fleetdesk explain: {path}: model '{raw['models'][0]['id']}' (models[0]): role:"
    )
    assert result.stderr.count("\n") == 1  # one problem, one line
    assert "Traceback" not in result.stderr


def test_hostile_registry_text_is_escaped(small: Fleet, tmp_path: Path) -> None:
    raw = json.loads((locations.fleets_dir() / "small.json").read_text(encoding="utf-8"))
    model = next(m for m in raw["models"] if m["id"] == "ig_tagging_late-stage_dlrm.v6")
    model["purpose"] = "Suggests tags.\x1b]52;c;ZXZpbA==\x07 \u202eevil"
    model["owner_team"] = "tagging\x1b[31m"
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    text = render_text(explain(load_fleet(str(path)), "ig_tagging_late-stage_dlrm.v6"))
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "\\x1b]52;c;ZXZpbA==\\x07" in text and "\\u202eevil" in text
    assert "tagging\\x1b[31m" in text


def test_readme_explain_example_names_a_real_model(small: Fleet) -> None:
    command = re.search(
        r"fleetdesk explain (\S+) --fleet small", README.read_text(encoding="utf-8")
    )
    assert command is not None
    assert command.group(1) in small.registry


def test_a_sick_baseline_is_not_called_a_safe_fallback(small: Fleet) -> None:
    # fb_feed_late-stage_dhen.v52 has paged since its NE regression at 22:00 (fixture time).
    explanation = explain(small, "fb_feed_late-stage_dhen.x7-integrity")
    health = explanation.fallback_health
    assert health is not None and not health.healthy and health.state == "paging"
    assert health.since is not None and f"{health.since:%H:%M}" == "22:00"
    assert explanation.fallback == (
        "none: baseline fb_feed_late-stage_dhen.v52 is itself paging since 22:00:"
        " escalate to fb-feed-ranking (fb-feed-ranking-oncall)"
    )
    assert "Safe fallback" not in explanation.summary
    assert (
        "Fallback: baseline fb_feed_late-stage_dhen.v52 is itself paging since 22:00: escalate to"
        " fb-feed-ranking (fb-feed-ranking-oncall) instead of rolling back."
    ) in explanation.summary
    healthy = explain(small, DRIFTING)
    assert healthy.fallback_health is not None and healthy.fallback_health.healthy
    assert "Safe fallback: roll back to baseline ig_feed_late-stage_mtml.v41." in healthy.summary


def test_explain_says_why_a_model_pages_or_stays_quiet_by_its_tier(small: Fleet) -> None:
    paging = explain(small, "fb_feed_late-stage_dhen.v52")  # TIER0, NE regression since 22:00
    assert paging.paging.reason.startswith("pages: TIER0 policy, page-fast ")
    assert f"paging      {paging.paging.reason}" in render_text(paging)
    quiet = explain(small, "ig_tagging_late-stage_dlrm.v6")  # TIER4, stable
    assert quiet.paging.severity is None
    assert quiet.paging.reason == "quiet: TIER4 policy, no burn-rate rule fires (never pages)"
