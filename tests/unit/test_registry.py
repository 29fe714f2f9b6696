"""Fleet-wide registry validation: every rule, and every violation reported at once."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from fleetdesk.domain.model_type import FunnelStage, Position, Vocabulary
from fleetdesk.domain.registry import (
    Model,
    Registry,
    RegistryError,
    RegistryViolation,
    Role,
    Tier,
    UnknownModelError,
)

VOCABULARY = Vocabulary(
    apps={"ig": "Instagram", "fb": "Facebook"},
    surfaces={"stories": "Stories", "feed": "Feed"},
    positions={
        "retrieval": Position(label="retrieval", stage=FunnelStage.SOURCING),
        "tray": Position(label="tray order", stage=FunnelStage.LATE_STAGE_RANKING),
    },
    architectures={"mtml": "multi-task multi-label", "dhen": "deep hierarchical ensemble"},
)
WHEN = datetime(2026, 12, 1, tzinfo=UTC)
TRAY = "ig_stories_tray_mtml"
FEED = "ig_feed_tray_mtml"
FOUNDATION_TYPE = "ig_feed_retrieval_dhen"


def model(model_id: str, **fields: Any) -> Model:
    """A valid TIER3 baseline serving all of TRAY unless fields say otherwise."""
    values: dict[str, Any] = {
        "id": model_id,
        "type": TRAY,
        "role": Role.BASELINE,
        "tier": Tier.TIER3,
        "owner_team": "stories-ranking",
        "oncall_rotation": "stories-oncall",
        "traffic_share": 1.0,
        "purpose": "Orders the stories tray.",
        "created_at": WHEN,
        "updated_at": WHEN,
    }
    values.update(fields)
    return Model(**values)


def foundation(model_id: str = "fm", **fields: Any) -> Model:
    return model(
        model_id,
        **{"type": FOUNDATION_TYPE, "role": Role.FOUNDATION, "traffic_share": 0.0, **fields},
    )


def violations(models: list[Model]) -> set[tuple[str, str]]:
    """(model id, field) of every violation; asserts the fleet is rejected."""
    with pytest.raises(RegistryError) as caught:
        Registry(models, VOCABULARY)
    return {(v.model_id, v.field) for v in caught.value.violations}


def messages(models: list[Model]) -> list[str]:
    with pytest.raises(RegistryError) as caught:
        Registry(models, VOCABULARY)
    return [v.message for v in caught.value.violations]


def experiment_fleet() -> list[Model]:
    """A valid slot: baseline 90%, experiment 5%, holdout 5%."""
    return [
        model("base", traffic_share=0.9, holdout_model_id="hold"),
        model("exp", role=Role.EXPERIMENT, traffic_share=0.05, baseline_model_id="base"),
        model("hold", role=Role.HOLDOUT, traffic_share=0.05, baseline_model_id="base"),
    ]


def test_a_valid_fleet_loads() -> None:
    fleet = experiment_fleet() + [
        foundation(tier=Tier.TIER0, tier_justification="feeds the TIER0 Feed ranker"),
        model(
            "feed",
            type=FEED,
            tier=Tier.TIER0,
            tier_justification="Feed ads revenue",
            upstream_model_ids=("fm",),
        ),
    ]
    registry = Registry(fleet, VOCABULARY)
    assert len(registry) == 5
    assert "exp" in registry and "nope" not in registry
    assert registry.get("exp").baseline_model_id == "base"
    assert str(registry.model_type("feed")) == FEED


@pytest.mark.parametrize("field", ["baseline_model_id", "holdout_model_id"])
def test_unresolved_reference_is_named(field: str) -> None:
    fleet = [
        model("base", traffic_share=0.5),
        model("other", traffic_share=0.5, **{field: "ghost"}),
    ]
    assert violations(fleet) == {("other", field)}
    assert messages(fleet) == ["unknown model 'ghost'"]


def test_unresolved_upstream_reference_is_named() -> None:
    fleet = [foundation(), model("base", upstream_model_ids=("fm", "ghost"))]
    assert violations(fleet) == {("base", "upstream_model_ids")}
    assert messages(fleet) == ["unknown model 'ghost'"]


@pytest.mark.parametrize("field", ["baseline_model_id", "holdout_model_id"])
def test_self_reference_is_reported_once(field: str) -> None:
    fleet = [model("base", **{field: "base"})]
    assert messages(fleet) == ["refers to the model itself"]
    assert violations(fleet) == {("base", field)}


def test_experiment_self_baseline_is_reported_once() -> None:
    fleet = [
        model("base", traffic_share=0.5),
        model("exp", role=Role.EXPERIMENT, traffic_share=0.5, baseline_model_id="exp"),
    ]
    assert messages(fleet) == ["refers to the model itself"]


def test_upstream_self_loop_is_a_cycle() -> None:
    fleet = [model("base", upstream_model_ids=("base",))]
    assert violations(fleet) == {("base", "upstream_model_ids")}
    assert messages(fleet) == ["upstream cycle: base -> base"]


def test_two_cycle_is_reported_once_on_the_smallest_id() -> None:
    fleet = [foundation("b", upstream_model_ids=("a",)), foundation("a", upstream_model_ids=("b",))]
    assert violations(fleet) == {("a", "upstream_model_ids")}
    assert messages(fleet) == ["upstream cycle: a -> b -> a"]


def test_three_cycle_behind_a_tail_is_reported_once() -> None:
    # tail -> c1 -> c2 -> c3 -> c1: only the loop is a cycle, tail is not in it.
    fleet = [
        model("tail", upstream_model_ids=("c1",)),
        foundation("c1", upstream_model_ids=("c2",)),
        foundation("c2", upstream_model_ids=("c3",)),
        foundation("c3", upstream_model_ids=("c1",)),
    ]
    assert violations(fleet) == {("c1", "upstream_model_ids")}
    (message,) = messages(fleet)
    assert message.startswith("upstream cycle: ")
    assert set(message.removeprefix("upstream cycle: ").split(" -> ")) == {"c1", "c2", "c3"}


def test_two_separate_cycles_are_both_reported() -> None:
    fleet = [
        model("base"),
        foundation("a", upstream_model_ids=("b",)),
        foundation("b", upstream_model_ids=("a",)),
        foundation("x", upstream_model_ids=("y",)),
        foundation("y", upstream_model_ids=("z",)),
        foundation("z", upstream_model_ids=("x",)),
    ]
    assert violations(fleet) == {("a", "upstream_model_ids"), ("x", "upstream_model_ids")}


def test_a_diamond_is_not_a_cycle() -> None:
    fleet = [
        foundation("root"),
        foundation("left", upstream_model_ids=("root",)),
        foundation("right", upstream_model_ids=("root",)),
        model("leaf", upstream_model_ids=("left", "right")),
    ]
    assert len(Registry(fleet, VOCABULARY)) == 4


@pytest.mark.parametrize("role", [Role.EXPERIMENT, Role.HOLDOUT])
def test_experiment_and_holdout_need_a_baseline(role: Role) -> None:
    fleet = [model("base", traffic_share=0.9), model("x", role=role, traffic_share=0.1)]
    assert violations(fleet) == {("x", "baseline_model_id")}
    assert messages(fleet) == [
        {"experiment": "an experiment", "holdout": "a holdout"}[role] + " needs a baseline"
    ]


def test_baseline_of_another_type_is_rejected() -> None:
    fleet = [
        model("base"),
        model("feed-base", type=FEED, traffic_share=0.9),
        model("exp", type=FEED, role=Role.EXPERIMENT, traffic_share=0.1, baseline_model_id="base"),
    ]
    assert violations(fleet) == {("exp", "baseline_model_id")}
    assert "has type 'ig_stories_tray_mtml', not 'ig_feed_tray_mtml'" in messages(fleet)[0]


def test_baseline_that_is_not_a_baseline_role_is_rejected() -> None:
    fleet = [
        model("base", traffic_share=0.8),
        model("exp1", role=Role.EXPERIMENT, traffic_share=0.1, baseline_model_id="base"),
        model("exp2", role=Role.EXPERIMENT, traffic_share=0.1, baseline_model_id="exp1"),
    ]
    assert violations(fleet) == {("exp2", "baseline_model_id")}
    assert messages(fleet) == ["'exp1' is an experiment, not a baseline"]


def test_holdout_reference_must_be_a_holdout() -> None:
    fleet = [
        model("base", traffic_share=0.9, holdout_model_id="exp"),
        model("exp", role=Role.EXPERIMENT, traffic_share=0.1, baseline_model_id="base"),
    ]
    assert violations(fleet) == {("base", "holdout_model_id")}
    assert messages(fleet) == ["'exp' is an experiment, not a holdout"]


@pytest.mark.parametrize("shares", [(0.9, 0.05, 0.04), (0.9, 0.05, 0.06), (0.0, 0.0, 0.0)])
def test_traffic_per_slot_must_add_up_to_one(shares: tuple[float, float, float]) -> None:
    fleet = [m.model_copy(update={"traffic_share": s}) for m, s in zip(experiment_fleet(), shares)]
    assert violations(fleet) == {("base", "traffic_share")}
    (message,) = messages(fleet)
    assert f"add up to {sum(shares):.4g}, not 1" in message
    assert "(base, exp, hold)" in message


def test_traffic_adds_up_per_slot_not_per_fleet() -> None:
    # Two slots at 0.5 each add to 1 over the fleet, but each slot is short.
    fleet = [model("tray", traffic_share=0.5), model("feed", type=FEED, traffic_share=0.5)]
    assert violations(fleet) == {("tray", "traffic_share"), ("feed", "traffic_share")}


def test_architectures_share_a_slot() -> None:
    # Same app, surface and position with another architecture: one traffic slot.
    fleet = [
        model("mtml", traffic_share=0.7),
        model("dhen", type="ig_stories_tray_dhen", traffic_share=0.3),
    ]
    assert len(Registry(fleet, VOCABULARY)) == 2


def test_traffic_sums_tolerate_float_rounding() -> None:
    fleet = [model(f"m{i}", traffic_share=0.1) for i in range(10)]  # 0.1 * 10 != 1.0 exactly
    assert len(Registry(fleet, VOCABULARY)) == 10


def test_foundation_serves_no_traffic() -> None:
    fleet = [foundation(traffic_share=0.2)]
    assert violations(fleet) == {("fm", "traffic_share")}
    assert messages(fleet) == ["a foundation model serves no traffic of its own"]


@pytest.mark.parametrize("tier", [Tier.TIER0, Tier.TIER1, Tier.TIER2])
@pytest.mark.parametrize("justification", ["", "   "])
def test_high_tiers_need_a_justification(tier: Tier, justification: str) -> None:
    fleet = [model("base", tier=tier, tier_justification=justification)]
    assert violations(fleet) == {("base", "tier_justification")}
    assert messages(fleet) == [f"{tier} needs a business-impact justification"]


@pytest.mark.parametrize("tier", [Tier.TIER3, Tier.TIER4])
def test_low_tiers_need_no_justification(tier: Tier) -> None:
    assert len(Registry([model("base", tier=tier)], VOCABULARY)) == 1


def test_tier_rank_and_justification_rule() -> None:
    assert [t.rank for t in Tier] == [0, 1, 2, 3, 4]
    assert [t.needs_justification for t in Tier] == [True, True, True, False, False]


def test_duplicate_ids_are_reported() -> None:
    fleet = [model("base", traffic_share=0.5), model("base", traffic_share=0.5)]
    assert ("base", "id") in violations(fleet)


def test_bad_type_string_is_reported_with_its_part() -> None:
    fleet = [model("base"), model("odd", type="ig_stories_top_mtml", traffic_share=0.0)]
    assert violations(fleet) == {("odd", "type")}
    (message,) = messages(fleet)
    assert message.startswith("position: unknown position 'top'")


def test_type_error_message_is_not_mangled_by_colons_in_the_type() -> None:
    fleet = [model("odd", type="a: b_stories_tray_mtml", traffic_share=0.0)]
    assert messages(fleet) == ["app: 'a: b' is not lowercase words joined by '-'"]


def test_every_violation_is_reported_at_once() -> None:
    fleet = [
        model("base", traffic_share=0.5, tier=Tier.TIER1),  # no justification; slot adds to 0.6
        model("exp", role=Role.EXPERIMENT, traffic_share=0.1),  # no baseline
        model(
            "hold", role=Role.HOLDOUT, traffic_share=0.0, baseline_model_id="ghost"
        ),  # unknown baseline
        model("odd", type="ig_reels_tray_mtml"),  # unknown surface
        foundation("fm", traffic_share=0.3, upstream_model_ids=("fm2",)),  # traffic; 2-cycle
        foundation("fm2", upstream_model_ids=("fm", "missing")),  # unknown upstream
        model("base", traffic_share=0.0),  # duplicate id
    ]
    expected = {
        ("base", "id"),
        ("base", "tier_justification"),
        ("exp", "baseline_model_id"),
        ("hold", "baseline_model_id"),
        ("odd", "type"),
        ("fm", "traffic_share"),
        ("fm", "upstream_model_ids"),
        ("fm2", "upstream_model_ids"),
        ("base", "traffic_share"),
    }
    with pytest.raises(RegistryError) as caught:
        Registry(fleet, VOCABULARY)
    error = caught.value
    assert {(v.model_id, v.field) for v in error.violations} == expected
    assert len(error.violations) == len(expected)  # one each: fm2 one unknown ref, fm one cycle
    text = str(error)
    assert text.startswith(f"{len(expected)} registry violation(s):")
    for violation in error.violations:
        assert f"  - {violation.model_id}.{violation.field}: {violation.message}" in text


def test_error_names_its_source() -> None:
    error = RegistryError(
        [RegistryViolation(model_id="m", field="tier", message="bad")], source="fleet.json"
    )
    assert str(error) == "fleet.json: 1 registry violation(s):\n  - m.tier: bad"


def test_unknown_id_suggests_close_ids() -> None:
    registry = Registry(experiment_fleet(), VOCABULARY)
    with pytest.raises(UnknownModelError) as caught:
        registry.get("hodl")
    assert caught.value.model_id == "hodl"
    assert caught.value.suggestions == ["hold"]
    assert str(caught.value) == "no model 'hodl' (did you mean: hold?)"
    assert isinstance(caught.value, KeyError)


def test_unknown_id_with_nothing_close_has_no_hint() -> None:
    registry = Registry(experiment_fleet(), VOCABULARY)
    with pytest.raises(UnknownModelError) as caught:
        registry.model_type("zzzzzzzz")
    assert caught.value.suggestions == []
    assert str(caught.value) == "no model 'zzzzzzzz'"


@pytest.mark.parametrize(
    "change",
    [
        {"id": ""},
        {"owner_team": ""},
        {"purpose": ""},
        {"traffic_share": 1.5},
        {"traffic_share": -0.1},
        {"traffic_share": float("nan")},
        {"tier": "TIER5"},
        {"role": "champion"},
        {"launch_phase": "shipped"},
        {"created_at": datetime(2026, 12, 1)},  # naive: UTC-aware times only
    ],
)
def test_model_record_rejects_bad_fields(change: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        model("base", **change)


# --- property: independent faults are each reported, and nothing else -----------------

SLOTS = 12
WIDE_VOCABULARY = VOCABULARY.model_copy(
    update={"surfaces": {f"s{i}": f"surface {i}" for i in range(SLOTS)}}
)
FAULTS: dict[str, tuple[str, Any]] = {
    # fault kind: (field reported, change to the model; a callable gets the model id)
    "unjustified tier": ("tier_justification", {"tier": Tier.TIER2}),
    "unknown baseline": ("baseline_model_id", {"baseline_model_id": "ghost"}),
    "unknown holdout": ("holdout_model_id", {"holdout_model_id": "ghost"}),
    "unknown upstream": ("upstream_model_ids", {"upstream_model_ids": ("ghost",)}),
    "self loop": ("upstream_model_ids", lambda model_id: {"upstream_model_ids": (model_id,)}),
    "self baseline": ("baseline_model_id", lambda model_id: {"baseline_model_id": model_id}),
    "unknown type": ("type", {"type": "ig_nowhere_tray_mtml"}),
    "short traffic": ("traffic_share", {"traffic_share": 0.5}),
    "experiment alone": ("baseline_model_id", {"role": Role.EXPERIMENT}),
}


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.integers(min_value=0, max_value=SLOTS - 1),
        st.sampled_from(sorted(FAULTS)),
        max_size=SLOTS,
    )
)
def test_every_injected_fault_is_reported_with_its_model_and_field(faults: dict[int, str]) -> None:
    # One baseline per surface, each alone in its traffic slot, then one fault on some of them.
    fleet = []
    expected = set()
    for slot in range(SLOTS):
        model_id = f"m{slot}"
        change: dict[str, Any] = {}
        if slot in faults:
            field, fault = FAULTS[faults[slot]]
            change = fault(model_id) if callable(fault) else fault
            expected.add((model_id, field))
        fleet.append(model(model_id, **{"type": f"ig_s{slot}_tray_mtml", **change}))
    if not expected:
        assert len(Registry(fleet, WIDE_VOCABULARY)) == SLOTS
        return
    with pytest.raises(RegistryError) as caught:
        Registry(fleet, WIDE_VOCABULARY)
    assert {(v.model_id, v.field) for v in caught.value.violations} == expected
    assert len(caught.value.violations) == len(expected)


def test_a_model_less_critical_than_its_downstream_is_refused_naming_both() -> None:
    # The bundled small fleet once had a TIER1 foundation feeding a TIER0 ranker, and validated.
    fleet = [
        foundation(tier=Tier.TIER1, tier_justification="feeds Feed"),
        model(
            "feed",
            type=FEED,
            tier=Tier.TIER0,
            tier_justification="Feed ads",
            upstream_model_ids=("fm",),
        ),
        model("base"),
    ]
    with pytest.raises(RegistryError) as raised:
        Registry(fleet, VOCABULARY)
    [violation] = raised.value.violations
    assert (violation.model_id, violation.field) == ("fm", "tier")
    assert "TIER1 is less critical than 'feed' (TIER0)" in violation.message
    assert "raise it to TIER0" in violation.message


def test_the_tier_rule_reaches_past_the_nearest_downstream_model() -> None:
    # fm -> mid (TIER2) -> feed (TIER0): both upstream models must be TIER0; each is named once.
    fleet = [
        foundation(tier=Tier.TIER2, tier_justification="x"),
        foundation("mid", tier=Tier.TIER2, tier_justification="x", upstream_model_ids=("fm",)),
        model(
            "feed", type=FEED, tier=Tier.TIER0, tier_justification="x", upstream_model_ids=("mid",)
        ),
        model("base"),
    ]
    assert violations(fleet) == {("fm", "tier"), ("mid", "tier")}
    assert all("'feed' (TIER0)" in text for text in messages(fleet))


def test_a_model_as_critical_as_its_downstream_or_more_is_fine() -> None:
    fleet = [
        foundation(tier=Tier.TIER0, tier_justification="x"),
        model(
            "feed", type=FEED, tier=Tier.TIER0, tier_justification="x", upstream_model_ids=("fm",)
        ),
        model("base", tier=Tier.TIER4, upstream_model_ids=("fm",)),
    ]
    Registry(fleet, VOCABULARY)
