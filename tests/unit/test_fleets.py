"""Fleet files: the committed fleets meet their brief, the generator is deterministic,
and a broken file is reported naming the file, the model and the field."""

from __future__ import annotations

import copy
import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fleetdesk import cli
from fleetdesk.domain.fleet import IncidentKind
from fleetdesk.domain.model_type import FunnelStage
from fleetdesk.domain.registry import LaunchPhase, Role, Tier
from fleetdesk.domain.stability import Health
from fleetdesk.fleets import Fleet, FleetFileError, load_fleet
from fleetdesk.fleets.generator import generate_fleet
from fleetdesk.settings import locations

SMALL = locations.fleets_dir() / "small.json"
LARGE = locations.fleets_dir() / "large.json"


@pytest.fixture(scope="module")
def small() -> Fleet:
    return load_fleet("small")


@pytest.fixture(scope="module")
def large() -> Fleet:
    return load_fleet("large")


def coverage(fleet: Fleet) -> dict[str, Counter]:
    registry = fleet.registry
    types = {model.id: registry.model_type(model.id) for model in registry.models.values()}
    return {
        "role": Counter(model.role for model in registry.models.values()),
        "tier": Counter(model.tier for model in registry.models.values()),
        "phase": Counter(model.launch_phase for model in registry.models.values()),
        "stage": Counter(registry.vocabulary.stage(t) for t in types.values()),
        "app": Counter(t.app for t in types.values()),
        "surface": Counter(t.surface for t in types.values() if t.surface != "cross-surface"),
        "incident": Counter(incident.kind for incident in fleet.file.history.incidents),
    }


def assert_history_covers_a_28_day_slo(fleet: Fleet) -> None:
    history = fleet.file.history
    assert history.bucket == timedelta(hours=1) == fleet.file.slo.slice
    assert history.end - history.start >= timedelta(days=28) + timedelta(days=2)
    assert history.end == datetime(2026, 11, 30, tzinfo=UTC)


# --- the committed fleets -------------------------------------------------------------------


def test_small_fleet_tells_every_story(small: Fleet) -> None:
    registry = small.registry
    found = coverage(small)
    assert 18 <= len(registry) <= 25
    assert set(found["role"]) == set(Role)
    assert set(found["tier"]) == set(Tier)
    assert set(found["phase"]) == set(LaunchPhase)
    assert set(found["stage"]) == set(FunnelStage)
    assert len(found["app"]) >= 2
    assert "marketplace-search" in found["surface"]  # a multi-word surface
    foundations = [m for m in registry.models.values() if m.role is Role.FOUNDATION]
    assert max(len(registry.downstream(m.id)) for m in foundations) >= 5
    # An experiment and a holdout share one slot with their baseline.
    feed = [m for m in registry.models.values() if m.type == "ig_feed_late-stage_mtml"]
    assert {m.role for m in feed} == {Role.BASELINE, Role.EXPERIMENT, Role.HOLDOUT}
    # A TIER0 baseline has no baseline of its own: its fallback is escalation.
    assert any(
        m.tier is Tier.TIER0 and m.role is Role.BASELINE and m.baseline_model_id is None
        for m in registry.models.values()
    )
    assert any(m.launch_phase is LaunchPhase.SCALE_UP for m in registry.models.values())
    assert all(
        m.purpose.endswith(".") and m.purpose.count(". ") == 0 for m in registry.models.values()
    )
    assert all(m.tier_justification for m in registry.models.values() if m.tier.needs_justification)
    assert set(found["incident"]) == set(IncidentKind)
    assert_history_covers_a_28_day_slo(small)


def test_large_fleet_meets_its_size_and_coverage(large: Fleet) -> None:
    registry = large.registry
    found = coverage(large)
    assert len(registry) >= 1000
    assert len(found["app"]) >= 2
    assert len(found["surface"]) >= 6
    assert set(found["stage"]) == set(FunnelStage)
    assert set(found["tier"]) == set(Tier)
    assert set(found["role"]) == set(Role)
    assert set(found["phase"]) == set(LaunchPhase)
    assert min(found["stage"].values()) >= 100
    foundations = [m for m in registry.models.values() if m.role is Role.FOUNDATION]
    assert max(len(registry.downstream(m.id)) for m in foundations) >= 50
    assert all(m.tier_justification for m in registry.models.values() if m.tier.needs_justification)
    assert set(found["incident"]) == set(IncidentKind)
    assert_history_covers_a_28_day_slo(large)


def test_large_fleet_is_exactly_what_the_generator_makes() -> None:
    regenerated = generate_fleet(1200, 7, name="large").model_dump_json(indent=1) + "\n"
    assert regenerated == LARGE.read_text(encoding="utf-8"), (
        "large.json drifted from the generator; regenerate it with: fleetdesk fleet generate"
        " --models 1200 --seed 7 --name large --out fixtures/fleets/large.json"
    )


def test_deliberate_incidents_show_in_the_small_fleet(small: Fleet) -> None:
    end = small.file.history.end
    drifting = list(small.buckets("ig_feed_late-stage_mtml.x1-watch-time"))
    bands = small.bands_for("ig_feed_late-stage_mtml.x1-watch-time")
    assert bands.health(drifting[-1]) is Health.UNSTABLE
    assert drifting[-1].calibration > bands.calibration_high
    stopped = list(small.buckets("fb_marketplace-search_late-stage_dhen.v11"))
    assert stopped[-1].start + timedelta(hours=1) < end  # feed stopped: recent buckets missing
    healthy = list(small.buckets("ig_feed_late-stage_mtml.v41"))
    assert len(healthy) == len(small.timeline)
    assert all(
        small.bands_for(healthy_id := "ig_feed_late-stage_mtml.v41").health(b) is Health.STABLE
        for b in healthy
    )
    assert healthy_id in small.registry


def test_bands_come_from_the_model_type_or_the_default(small: Fleet) -> None:
    sourcing = small.bands_for("ig_feed_sourcing_two-tower.v9")
    assert sourcing == small.file.bands["ig_feed_sourcing_two-tower"]
    assert small.bands_for("ig_feed_late-stage_mtml.v41") == small.file.default_bands


def test_all_buckets_covers_every_model(small: Fleet) -> None:
    counts = Counter(model_id for model_id, _ in small.all_buckets())
    assert set(counts) == set(small.registry.models)
    assert counts["ig_feed_late-stage_mtml.v41"] == len(small.timeline)
    assert counts["fb_marketplace-search_late-stage_dhen.v11"] == len(small.timeline) - 3


def test_end_at_moves_the_whole_history_to_now(small: Fleet) -> None:
    now = datetime(2026, 12, 3, 7, 42, 13, tzinfo=UTC)
    moved = load_fleet("small", end_at=now)
    history, original = moved.file.history, small.file.history
    assert history.end == datetime(2026, 12, 3, 7, tzinfo=UTC)
    delta = history.end - original.end
    assert history.start == original.start + delta
    assert [i.start for i in history.incidents] == [i.start + delta for i in original.incidents]
    assert [i.end for i in history.incidents] == [
        None if i.end is None else i.end + delta for i in original.incidents
    ]
    before = list(small.buckets("ig_feed_late-stage_mtml.x1-watch-time"))
    after = list(moved.buckets("ig_feed_late-stage_mtml.x1-watch-time"))
    assert after[-1].start + moved.timeline.bucket == history.end
    assert [b.calibration for b in after] == pytest.approx([b.calibration for b in before])


# --- the generator --------------------------------------------------------------------------


@pytest.mark.parametrize("models", [4, 20, 100, 137, 1000])  # 100: foundations raised to TIER0
def test_generator_makes_exactly_n_valid_models(models: int, tmp_path: Path) -> None:
    out = tmp_path / "gen.json"
    assert (
        cli.main(["fleet", "generate", "--models", str(models), "--seed", "3", "--out", str(out)])
        == 0
    )
    fleet = load_fleet(str(out))
    assert len(fleet.registry) == models
    assert set(fleet.file.history.profiles) == set(fleet.registry.models)


def test_generator_is_deterministic_per_seed() -> None:
    assert generate_fleet(300, 1) == generate_fleet(300, 1)
    assert generate_fleet(300, 1).models != generate_fleet(300, 2).models


def test_generator_baselines_take_the_traffic_remainder() -> None:
    fleet = generate_fleet(2000, 5)
    slots: dict[str, list[float]] = {}
    for model in fleet.models:
        if model.role is not Role.FOUNDATION:
            slots.setdefault(model.type, []).append(model.traffic_share)
    assert all(sum(shares) == pytest.approx(1.0, abs=1e-9) for shares in slots.values())


def test_generator_refuses_too_few_models(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(ValueError):
        generate_fleet(3, 0)
    assert cli.main(["fleet", "generate", "--models", "2", "--out", str(tmp_path / "x.json")]) == 2
    assert "--models: must be from 4 to" in capsys.readouterr().err


def test_validate_command_reports_ok_and_problems(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert cli.main(["fleet", "validate", "small"]) == 0
    assert "21 models" in capsys.readouterr().out
    broken = write_variant(tmp_path, lambda raw: raw["models"][0].update(tier="TIER9"))
    assert cli.main(["fleet", "validate", str(broken)]) == 1
    assert "TIER9" in capsys.readouterr().err


# --- broken fleet files ---------------------------------------------------------------------


def write_variant(tmp_path: Path, mutate, name: str = "broken.json") -> Path:
    raw = json.loads(SMALL.read_text(encoding="utf-8"))
    mutate(raw)
    path = tmp_path / name
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def load_error(path: Path) -> FleetFileError:
    with pytest.raises(FleetFileError) as caught:
        load_fleet(str(path))
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert "Traceback" not in message
    return caught.value


def test_json_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "syntax.json"
    path.write_text('{\n  "name": "x",\n  "models": [,]\n}\n', encoding="utf-8")
    error = load_error(path)
    assert "line 3 column" in str(error) and "not valid JSON" in str(error)


def test_missing_file_names_it_and_the_builtin_fleets(tmp_path: Path) -> None:
    error = load_error(tmp_path / "nowhere.json")
    assert "cannot read" in str(error) and "small, large" in str(error)


def test_schema_errors_name_the_model_by_id_and_the_field(tmp_path: Path) -> None:
    def mutate(raw: dict) -> None:
        raw["models"][3]["tier"] = "TIER9"
        del raw["models"][5]["purpose"]
        raw["models"][7]["upstream_model_ids"] = ["ok", 42]

    path = write_variant(tmp_path, mutate)
    raw = json.loads(path.read_text())
    error = load_error(path)
    text = str(error)
    assert len(error.problems) == 3, text
    assert f"model '{raw['models'][3]['id']}' (models[3]): tier:" in text and "'TIER9'" in text
    assert f"model '{raw['models'][5]['id']}' (models[5]): purpose: Field required" in text
    assert f"model '{raw['models'][7]['id']}' (models[7]): upstream_model_ids[1]:" in text


def test_profile_and_incident_schema_errors_name_their_model(tmp_path: Path) -> None:
    def mutate(raw: dict) -> None:
        raw["history"]["profiles"]["ig_feed_late-stage_mtml.v41"]["base_rate"] = 1.5
        raw["history"]["incidents"][0]["kind"] = "meteor_strike"

    error = load_error(write_variant(tmp_path, mutate))
    text = str(error)
    assert (
        "model 'ig_feed_late-stage_mtml.v41' metric profile (history.profiles): base_rate:" in text
    )
    assert (
        "incident 0 of model 'ig_feed_late-stage_mtml.x1-watch-time' (history.incidents[0]): kind:"
        in text
    )


def test_registry_and_history_problems_are_all_listed_at_once(tmp_path: Path) -> None:
    def mutate(raw: dict) -> None:
        models = {m["id"]: m for m in raw["models"]}
        models["ig_feed_late-stage_mtml.x2-long-history"]["baseline_model_id"] = "ig_feed_gone.v1"
        models["ig_tagging_late-stage_dlrm.v6"]["type"] = "ig_tagging_mid-stage_dlrm"
        models["ig_tagging_late-stage_dlrm.v6"]["tier"] = "TIER1"
        del raw["history"]["profiles"]["ig_reels_late-stage_dhen.v23"]
        raw["history"]["profiles"]["ig_ghost.v1"] = copy.deepcopy(
            raw["history"]["profiles"]["ig_feed_late-stage_mtml.v41"]
        )
        raw["history"]["incidents"][1]["model_id"] = "fb_nobody.v0"
        raw["history"]["bucket"] = "PT30M"

    error = load_error(write_variant(tmp_path, mutate))
    text = str(error)
    expected = [
        "model 'ig_feed_late-stage_mtml.x2-long-history': baseline_model_id: unknown model 'ig_feed_gone.v1'",
        "model 'ig_tagging_late-stage_dlrm.v6': type: position:",
        "model 'ig_tagging_late-stage_dlrm.v6': tier_justification: TIER1 needs a business-impact justification",
        "model 'ig_reels_late-stage_dhen.v23': history.profiles: no metric profile",
        "history.profiles.'ig_ghost.v1': not a model of this fleet",
        "incident 1 (history.incidents[1]): model_id: unknown model 'fb_nobody.v0'",
        "history.bucket: 0:30:00 must equal slo.slice (1:00:00)",
    ]
    for line in expected:
        assert line in text, f"{line!r} missing from:\n{text}"
    assert len(error.problems) == len(expected)


def test_hostile_text_in_a_broken_file_is_shown_escaped(tmp_path: Path) -> None:
    def mutate(raw: dict) -> None:
        raw["models"][2]["id"] = "evil\x1b[2J\u202eid"
        raw["models"][2]["tier"] = "TIER\x07"

    text = str(load_error(write_variant(tmp_path, mutate)))
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert "evil\\x1b[2J\\u202eid" in text


def test_an_unknown_key_anywhere_in_a_fleet_file_is_an_error_naming_it_and_the_file(tmp_path):
    raw = json.loads((locations.fleets_dir() / "small.json").read_text())
    raw["models"][2]["purpsoe"] = "a misspelled purpose"
    raw["default_bands"]["ne_maxx"] = 1.0
    raw["slo"]["rules"] = [
        {
            "name": "page-fast",
            "severity": "page",
            "long_window": "PT1H",
            "short_window": "PT5M",
            "threshold": 14.4,
            "treshold": 1.0,
        }
    ]
    raw["history"]["profiles"][raw["models"][0]["id"]]["nosie"] = 0.1
    raw["colour"] = "red"
    path = tmp_path / "typos.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(FleetFileError) as caught:
        load_fleet(str(path))
    text = str(caught.value)
    assert str(path) in text
    for key in ("purpsoe", "ne_maxx", "treshold", "nosie", "colour"):
        assert f"{key}: unknown key" in text, text
    assert "ig_feed_late-stage_mtml.v41" in text  # the model the typo is in
    assert text.count("colour") == 1
