"""Malformed scenario files: every problem named with its file and field, nothing half-loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetdesk.drills.scenario import ScenarioError, load_scenario, parse_scenario
from fleetdesk.drills.script import load_script

VALID = '''
title = "t"
summary = "s"
story = "a story"
fleet = "small"
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
'''


def fields(error: ScenarioError) -> dict[str, str]:
    return {problem.field: problem.message for problem in error.problems}


def test_a_valid_file_parses() -> None:
    scenario = parse_scenario(VALID, "ok.toml")
    assert scenario.injections[0].after.total_seconds() == 7200
    assert scenario.responses[0].any_of[0].action == "end-experiment"


def test_every_bad_field_is_named_at_once() -> None:
    text = VALID.replace('kind = "calibration_drift"', 'kind = "meltdown"').replace(
        "acknowledge_within = 30", "acknowledge_within = -1").replace('summary = "s"\n', "")
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text, "fixtures/scenarios/bad.toml")
    found = fields(caught.value)
    assert set(found) == {"injections[0].kind", "grading.acknowledge_within", "summary"}
    assert "calibration_drift" in found["injections[0].kind"]
    message = str(caught.value)
    assert message.startswith("fixtures/scenarios/bad.toml: invalid scenario (3 problem(s))")
    assert "  - summary: Field required" in message


def test_unknown_keys_are_refused() -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(VALID.replace('fleet = "small"', 'fleet = "small"\nspeed = 3'), "x.toml")
    assert fields(caught.value) == {"speed": "Extra inputs are not permitted"}


def test_escalation_fields_only_on_escalate() -> None:
    text = VALID.replace('match = { action = "rollback" }', 'match = { action = "rollback", team = "feed" }')
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text, "x.toml")
    assert fields(caught.value) == {"wrong[0].match": "target and team only apply to escalate"}


def test_duplicate_response_ids_and_negative_offsets() -> None:
    text = VALID.replace('after = "PT2H"', 'after = "-PT1H"') + '''
[[responses]]
id = "end-it"
description = "again"
within = 10
any_of = [{ action = "ack" }]
'''
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text, "x.toml")
    found = fields(caught.value)
    assert found["injections[0]"] == "after must not be negative"
    assert found["responses"] == "duplicate id(s) end-it"


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
    path.write_text('[{"at": 1, "keys": "a"}, {"at": 0.5, "keys": "b"}, {"at": 2, "keys": "c", "type": "d"}]')
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

    assert ScriptStep.model_validate({"at": 0, "keys": "slash enter"}).presses() == ["slash", "enter"]
    assert ScriptStep.model_validate({"at": 0, "from": "page", "type": "a b"}).presses() == ["a", "space", "b"]
