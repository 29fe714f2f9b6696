"""Model type records in the fleet file: owner, description, default tier, bands per role, runbook, and the
extension attributes its models carry (declared, validated, an undeclared key named)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from fleetdesk.domain.registry import Role, Tier
from fleetdesk.domain.type_record import AttributeKind, AttributeSpec, ModelTypeRecord
from fleetdesk.fleets import FleetFileError, load_fleet, parse_registry_file
from fleetdesk.settings import locations

TAGGING_TYPE = "ig_tagging_late-stage_dlrm"
TAGGING = "ig_tagging_late-stage_dlrm.v6"
RECORD: dict[str, Any] = {
    "owner_team": "ig-tagging-ranking",
    "description": "Ranks people to tag in a new Instagram photo.",
    "default_tier": "TIER4",
    "runbook_url": "https://wiki.example/runbooks/ig-tagging",
    "bands": {"baseline": {"calibration_low": 0.8, "calibration_high": 1.2, "ne_max": 0.97}},
    "attributes": {
        "label_source": {
            "kind": "choice",
            "description": "Where its labels come from",
            "choices": ["accepted-tags", "manual"],
            "required": True,
        },
        "label_delay_hours": {"kind": "number", "description": "Typical label delay"},
    },
}


def _write(tmp_path: Path, change) -> Path:  # type: ignore[no-untyped-def]
    raw = json.loads((locations.fleets_dir() / "small.json").read_text())
    raw["types"] = {TAGGING_TYPE: json.loads(json.dumps(RECORD))}
    model = next(m for m in raw["models"] if m["id"] == TAGGING)
    model["attributes"] = {"label_source": "accepted-tags", "label_delay_hours": 6}
    change(raw, model)
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(raw))
    return path


def test_a_type_record_loads_and_its_model_carries_declared_attributes(tmp_path: Path) -> None:
    fleet = load_fleet(str(_write(tmp_path, lambda raw, model: None)))
    record = fleet.file.types[TAGGING_TYPE]
    assert record.owner_team == "ig-tagging-ranking" and record.default_tier is Tier.TIER4
    assert fleet.model(TAGGING).attributes == {
        "label_source": "accepted-tags",
        "label_delay_hours": 6,
    }
    # The record's baseline band is the band its baseline is judged against.
    assert fleet.bands_for(TAGGING).calibration_low == 0.8
    assert fleet.file.bands_for(TAGGING_TYPE, Role.EXPERIMENT).calibration_low == 0.9  # the default


def test_a_model_without_a_tier_takes_its_types_default(tmp_path: Path) -> None:
    def drop_tier(raw: dict[str, Any], model: dict[str, Any]) -> None:
        del model["tier"]

    path = _write(tmp_path, drop_tier)
    assert load_fleet(str(path)).model(TAGGING).tier is Tier.TIER4
    # The same file read as a `registry apply` file says the same (the fleet file is the apply format).
    applied = parse_registry_file(path.read_text(), path)
    assert next(m for m in applied.models if m.id == TAGGING).tier is Tier.TIER4


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            lambda raw, model: model["attributes"].update(colour="red"),
            f"model '{TAGGING}': attributes.colour: not an attribute its type declares"
            " (declared: label_delay_hours, label_source)",
        ),
        (
            lambda raw, model: model["attributes"].update(label_source="guessed"),
            "attributes.label_source: 'guessed' is not one of accepted-tags, manual",
        ),
        (
            lambda raw, model: model["attributes"].update(label_delay_hours="six"),
            "attributes.label_delay_hours: 'six' is not a number",
        ),
        (
            lambda raw, model: model["attributes"].pop("label_source"),
            "attributes.label_source: required by its type, missing",
        ),
        (
            lambda raw, model: raw["types"].update({"ig_tagging_nowhere_dlrm": RECORD}),
            "types.ig_tagging_nowhere_dlrm: not a model type (position: unknown position 'nowhere'",
        ),
        (
            lambda raw, model: raw["types"][TAGGING_TYPE].update(runbok="x"),
            "types.ig_tagging_late-stage_dlrm.runbok: unknown key",
        ),
        (
            lambda raw, model: raw["role_bands"].update(
                {"baseline": {TAGGING_TYPE: RECORD["bands"]["baseline"]}}
            ),
            f"types.{TAGGING_TYPE}.bands.baseline: also set in role_bands.baseline.{TAGGING_TYPE}",
        ),
    ],
)
def test_a_broken_type_record_or_attribute_is_named_with_the_file(
    tmp_path: Path, change, words: str
) -> None:  # type: ignore[no-untyped-def]
    path = _write(tmp_path, change)
    with pytest.raises(FleetFileError) as caught:
        load_fleet(str(path))
    assert str(path) in str(caught.value)
    assert words in str(caught.value)


def test_attributes_of_a_type_without_a_record_are_undeclared(tmp_path: Path) -> None:
    def other_model(raw: dict[str, Any], model: dict[str, Any]) -> None:
        raw["models"][0]["attributes"] = {"label_source": "manual"}

    with pytest.raises(FleetFileError) as caught:
        load_fleet(str(_write(tmp_path, other_model)))
    assert "attributes.label_source: not an attribute its type declares (declared: none)" in str(
        caught.value
    )


def test_attribute_specs_are_checked_themselves() -> None:
    with pytest.raises(ValidationError, match="choices are given for a choice attribute"):
        AttributeSpec(kind=AttributeKind.CHOICE, description="x")
    with pytest.raises(ValidationError, match="lowercase words joined by '_'"):
        ModelTypeRecord.model_validate(
            {**RECORD, "attributes": {"Label Source": RECORD["attributes"]["label_delay_hours"]}}
        )
    with pytest.raises(ValidationError, match="runbook_url"):
        ModelTypeRecord.model_validate({**RECORD, "runbook_url": "wiki page"})
    flag = AttributeSpec(kind=AttributeKind.FLAG, description="x")
    assert flag.problem(True) is None and flag.problem(1) == "1 is not a flag (true or false)"


def test_explain_shows_the_type_record_and_the_models_attributes(tmp_path: Path) -> None:
    from fleetdesk.fleets.explanation import explain, render_text

    text = render_text(explain(load_fleet(str(_write(tmp_path, lambda raw, model: None))), TAGGING))
    assert "type owner  ig-tagging-ranking: Ranks people to tag in a new Instagram photo." in text
    assert "runbook     https://wiki.example/runbooks/ig-tagging" in text
    assert "attributes  label_delay_hours=6, label_source=accepted-tags" in text


def test_the_server_sends_the_type_record_with_the_model(tmp_path: Path, server_factory) -> None:  # type: ignore[no-untyped-def]
    import httpx

    server = server_factory(fleet=str(_write(tmp_path, lambda raw, model: None)))
    detail = httpx.get(
        f"{server.url}/v1/models/{TAGGING}",
        headers={"Authorization": f"Bearer {server.tokens['viewer']}"},
        timeout=10,
    ).json()
    assert detail["type_record"]["runbook_url"] == "https://wiki.example/runbooks/ig-tagging"
    assert detail["model"]["attributes"] == {
        "label_source": "accepted-tags",
        "label_delay_hours": 6,
    }
    assert detail["bands"]["calibration_low"] == 0.8  # the record's baseline band
