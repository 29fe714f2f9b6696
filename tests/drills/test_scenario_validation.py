"""Malformed scenario files: every problem named with its file and field, nothing half-loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetdesk.console.drill.player import key_for_character
from fleetdesk.drills.scenario import ScenarioError, load_scenario, parse_scenario
from fleetdesk.drills.script import load_script

VALID = """
title = "t"
summary = "s"
story = "a story"
fleet = "small"
start = "2026-11-30T02:00:00Z"
length = "PT12H"

[grading]
acknowledge_within = 30
time_limit = 60

[[injections]]
model_id = "m"
kind = "calibration_drift"
after = "PT2H"
magnitude = 1.4

[[incidents]]
model_id = "m"
by = "PT4H"

[[responses]]
id = "end-it"
description = "end the experiment"
within = 45
any_of = [{ action = "end-experiment", model_id = "m" }]

[[wrong]]
why = "no"
match = { action = "rollback" }
"""


def fields(error: ScenarioError) -> dict[str, str]:
    return {problem.field: problem.message for problem in error.problems}


def test_a_valid_file_parses() -> None:
    scenario = parse_scenario(VALID, "ok.toml")
    assert scenario.injections[0].after.total_seconds() == 7200
    assert scenario.responses[0].any_of[0].action == "end-experiment"


def test_every_bad_field_is_named_at_once() -> None:
    text = (
        VALID.replace('kind = "calibration_drift"', 'kind = "meltdown"')
        .replace("acknowledge_within = 30", "acknowledge_within = -1")
        .replace('summary = "s"\n', "")
    )
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text, "fixtures/scenarios/bad.toml")
    found = fields(caught.value)
    assert set(found) == {"injections[0].kind", "grading.acknowledge_within", "summary"}
    assert "calibration_drift" in found["injections[0].kind"]
    message = str(caught.value)
    assert message.startswith("fixtures/scenarios/bad.toml: invalid scenario (3 problems)")
    assert "  - summary: Field required" in message


def test_unknown_keys_are_refused() -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(VALID.replace('fleet = "small"', 'fleet = "small"\nspeed = 3'), "x.toml")
    assert fields(caught.value) == {"speed": "Extra inputs are not permitted"}


def test_escalation_fields_only_on_escalate() -> None:
    text = VALID.replace(
        'match = { action = "rollback" }', 'match = { action = "rollback", team = "feed" }'
    )
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text, "x.toml")
    assert fields(caught.value) == {"wrong[0].match": "target and team only apply to escalate"}


def test_duplicate_response_ids_and_a_drift_ramping_across_the_start() -> None:
    text = (
        VALID.replace('after = "PT2H"', 'after = "-PT1H"')
        + """
[[responses]]
id = "end-it"
description = "again"
within = 10
any_of = [{ action = "ack" }]
"""
    )
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text, "x.toml")
    found = fields(caught.value)
    # A drift may begin before the drill (it is then in the history), but not ramp across its start.
    assert (
        found["injections[0]"]
        == "a calibration drift that began before the drill needs a ramp that ends before it starts"
    )
    assert found["responses"] == "duplicate id(s) end-it"


def test_a_condition_that_began_before_the_drill_and_a_drill_that_expects_nothing() -> None:
    text = VALID.replace('after = "PT2H"', 'after = "-PT6H"\nramp = "PT2H"')
    text = (
        text[: text.index("[[incidents]]")]
        + """
[[quiet]]
model_id = "m"
"""
    )
    scenario = parse_scenario(text.replace("other = 1", ""), "quiet.toml")
    assert scenario.injections[0].after.total_seconds() == -6 * 3600
    assert (
        scenario.incidents == []
        and scenario.responses == []
        and scenario.quiet[0].at_most == "ticket"
    )
    assert scenario.other_actions == "ungraded" and scenario.grading.settle == 10


def test_broken_toml_names_the_file() -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario('title = "unterminated', "broken.toml")
    assert str(caught.value).startswith("broken.toml: invalid scenario")
    assert "not valid TOML" in fields(caught.value)["(file)"]


def test_unknown_scenario_name_lists_the_known_ones() -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario("no-such-drill")
    assert "no such scenario (known:" in fields(caught.value)["(name)"]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(tmp_path / "gone.toml")
    assert caught.value.source.endswith("gone.toml")


def test_script_steps_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(
        '[{"at": 1, "keys": "a"}, {"at": 0.5, "keys": "b"}, {"at": 2, "keys": "c", "type": "d"}]'
    )
    with pytest.raises(ScenarioError) as caught:
        load_script(path)
    found = fields(caught.value)
    assert found == {"[2]": "give exactly one of 'keys' and 'type'"}
    path.write_text('[{"at": 1, "keys": "a"}, {"at": 0.5, "keys": "b"}]')
    with pytest.raises(ScenarioError) as caught:
        load_script(path)
    assert "step 1 at 0.5s comes before an earlier step" in str(caught.value)


def test_script_presses() -> None:
    from fleetdesk.drills.script import ScriptStep

    assert ScriptStep.model_validate({"at": 0, "keys": "slash enter"}).presses() == [
        "slash",
        "enter",
    ]
    assert ScriptStep.model_validate({"at": 0, "from": "page", "type": "a b"}).presses() == [
        "a",
        " ",
        "b",
    ]
    assert [key_for_character(c) for c in "a b-."] == ["a", "space", "b", "minus", "full_stop"]


def _on_small(text: str, tmp_path: Path) -> ScenarioError:
    from fleetdesk.drills.replay import drill_fleet

    path = tmp_path / "drill.toml"
    path.write_text(text)
    scenario, _ = load_scenario(path)
    with pytest.raises(ScenarioError) as caught:
        drill_fleet(scenario, str(path))
    return caught.value


def test_references_are_checked_against_the_fleet(tmp_path: Path) -> None:
    text = (
        VALID.replace("02:00:00Z", "02:30:00Z")
        .replace(
            'model_id = "m"\nkind', 'model_id = "ig_feed_late-stage_mtml.x2-long-histroy"\nkind'
        )
        .replace(
            '{ action = "end-experiment", model_id = "m" }',
            '{ action = "end-experiment", model_id = "ig_feed_late-stage_mtml.v41" }',
        )
        .replace(
            'match = { action = "rollback" }', 'match = { action = "escalate", team = "nobody" }'
        )
    )
    error = _on_small(text, tmp_path)
    found = fields(error)
    assert str(tmp_path / "drill.toml") in str(error)
    assert found["start"] == "must fall on a bucket boundary (1:00:00 buckets)"
    assert (
        "unknown model 'ig_feed_late-stage_mtml.x2-long-histroy'" in found["injections[0].model_id"]
    )
    assert (
        "did you mean: ig_feed_late-stage_mtml.x2-long-history" in found["injections[0].model_id"]
    )
    assert (
        found["responses[0].any_of[0].action"]
        == "ig_feed_late-stage_mtml.v41: a baseline, not an experiment: nothing to end"
    )
    assert found["wrong[0].match.team"] == "no team 'nobody' owns a model in the fleet"
    assert found["incidents[0].model_id"].startswith("unknown model 'm'")


def test_a_correct_response_cannot_also_be_wrong(tmp_path: Path) -> None:
    text = VALID.replace('"m"', '"ig_feed_late-stage_mtml.x2-long-history"').replace(
        'match = { action = "rollback" }',
        'match = { action = "end-experiment", model_id = "ig_feed_late-stage_mtml.x2-long-history" }',
    )
    assert fields(_on_small(text, tmp_path)) == {
        "wrong[0].match": "also a correct response (end-it)"
    }


def test_every_shipped_scenario_loads_and_checks() -> None:
    from fleetdesk.drills.replay import drill_fleet
    from fleetdesk.drills.scenario import list_scenarios

    shipped = list_scenarios()
    assert len(shipped) >= 5
    for name, path in shipped:
        scenario, _ = load_scenario(name)
        drill_fleet(scenario, str(path))
        assert scenario.story.strip() and scenario.summary
