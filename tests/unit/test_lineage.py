"""Lineage queries: downstream closure, blast radius by tier, upstream chain, suggestions."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fleetdesk.domain.model_type import FunnelStage, Position, Vocabulary
from fleetdesk.domain.registry import Model, Registry, Role, Tier, UnknownModelError

VOCABULARY = Vocabulary(
    apps={"ig": "Instagram"},
    surfaces={f"s{i}": f"surface {i}" for i in range(12)},
    positions={"tray": Position(label="tray", stage=FunnelStage.LATE_STAGE_RANKING)},
    architectures={"mtml": "multi-task multi-label", "fm": "foundation"},
)
WHEN = datetime(2026, 12, 1, tzinfo=UTC)


def node(
    model_id: str, slot: int, *upstream: str, tier: Tier = Tier.TIER4, foundation: bool = False
) -> Model:
    """A model alone on its own surface (so traffic adds up), taking knowledge from ``upstream``."""
    fields: dict[str, Any] = {
        "id": model_id,
        "type": f"ig_s{slot}_tray_{'fm' if foundation else 'mtml'}",
        "role": Role.FOUNDATION if foundation else Role.BASELINE,
        "tier": tier,
        "tier_justification": "revenue" if tier.needs_justification else "",
        "owner_team": "team",
        "oncall_rotation": "rota",
        "traffic_share": 0.0 if foundation else 1.0,
        "upstream_model_ids": upstream,
        "purpose": "Test model.",
        "created_at": WHEN,
        "updated_at": WHEN,
    }
    return Model(**fields)


@pytest.fixture(scope="module")
def registry() -> Registry:
    """
    fm ──> mid-a ──> leaf-1
      └──> mid-b ──> leaf-1       (diamond: leaf-1 reached twice)
             └────> leaf-2 ──> deep
    other-fm ──> leaf-2           (leaf-2 has two foundations)
    loner                         (no lineage at all)
    """
    return Registry(
        [
            node("fm", 0, foundation=True, tier=Tier.TIER0),
            node("other-fm", 1, foundation=True, tier=Tier.TIER3),  # as critical as leaf-2
            node("mid-a", 2, "fm", tier=Tier.TIER1),
            node("mid-b", 3, "fm", tier=Tier.TIER1),
            node("leaf-1", 4, "mid-a", "mid-b", tier=Tier.TIER2),
            node("leaf-2", 5, "mid-b", "other-fm", tier=Tier.TIER3),
            node("deep", 6, "leaf-2", tier=Tier.TIER3),
            node("loner", 7),
        ],
        VOCABULARY,
    )


def ids(models: list[Model]) -> list[str]:
    return [m.id for m in models]


def test_downstream_is_the_transitive_closure_each_model_once(registry: Registry) -> None:
    assert ids(registry.downstream("fm")) == ["deep", "leaf-1", "leaf-2", "mid-a", "mid-b"]


def test_downstream_of_a_middle_model(registry: Registry) -> None:
    assert ids(registry.downstream("mid-b")) == ["deep", "leaf-1", "leaf-2"]
    assert ids(registry.downstream("other-fm")) == ["deep", "leaf-2"]


def test_leaf_and_isolated_models_have_no_downstream(registry: Registry) -> None:
    assert registry.downstream("deep") == []
    assert registry.downstream("loner") == []


def test_blast_radius_counts_every_tier_including_zeros(registry: Registry) -> None:
    # mid-a, mid-b: TIER1; leaf-1: TIER2; leaf-2, deep: TIER3.
    assert registry.blast_radius("fm") == {
        Tier.TIER0: 0,
        Tier.TIER1: 2,
        Tier.TIER2: 1,
        Tier.TIER3: 2,
        Tier.TIER4: 0,
    }
    assert list(registry.blast_radius("fm")) == list(Tier)


def test_blast_radius_of_a_leaf_is_all_zeros(registry: Registry) -> None:
    assert registry.blast_radius("loner") == {tier: 0 for tier in Tier}


def test_upstream_chain_is_nearest_first(registry: Registry) -> None:
    # deep <- leaf-2 <- (mid-b, other-fm) <- fm
    assert ids(registry.upstream_chain("deep")) == ["leaf-2", "mid-b", "other-fm", "fm"]


def test_upstream_chain_through_a_diamond_lists_the_root_once(registry: Registry) -> None:
    assert ids(registry.upstream_chain("leaf-1")) == ["mid-a", "mid-b", "fm"]


def test_upstream_chain_of_a_root_is_empty(registry: Registry) -> None:
    assert registry.upstream_chain("fm") == []
    assert registry.upstream_chain("loner") == []


@pytest.mark.parametrize(
    "query", ["downstream", "blast_radius", "upstream_chain", "get", "model_type"]
)
def test_lineage_of_an_unknown_id_is_an_error_with_suggestions(
    registry: Registry, query: str
) -> None:
    with pytest.raises(UnknownModelError) as caught:
        getattr(registry, query)("leaf-3")
    assert caught.value.model_id == "leaf-3"
    assert set(caught.value.suggestions) == {"leaf-1", "leaf-2"}


def test_suggest_ranks_the_closest_first_and_respects_the_limit(registry: Registry) -> None:
    assert set(registry.suggest("mid-c")[:2]) == {"mid-a", "mid-b"}
    assert registry.suggest("other_fm")[0] == "other-fm"
    assert registry.suggest("leaf", limit=1) == ["leaf-1"]
    assert registry.suggest("completely-unrelated-name-xyz") == []
    assert registry.suggest("") == []


def test_suggest_prefers_ids_that_contain_the_query(registry: Registry) -> None:
    # Prefix matches first (shortest first), then ids that merely contain it.
    assert registry.suggest("MID") == ["mid-a", "mid-b"]
    assert registry.suggest("fm") == ["fm", "other-fm"]


def test_suggest_finds_an_id_from_its_prefix_in_a_big_fleet() -> None:
    models = [node("fm", 0, foundation=True, tier=Tier.TIER3)] + [
        node(f"ig_s{s}_tray_mtml_v{s}", s, "fm") for s in range(1, 12)
    ]
    registry = Registry(models, VOCABULARY)
    # Every id is a near look-alike of "ig_s1_tray"; the one that starts with it wins.
    suggestions = registry.suggest("ig_s1_tray")
    assert suggestions[0] == "ig_s1_tray_mtml_v1"
    assert len(suggestions) == 3
    assert registry.suggest("s7_tray")[0] == "ig_s7_tray_mtml_v7"


def test_large_fan_out_blast_radius() -> None:
    # A foundation feeding 10 models, each feeding one more: 20 downstream.
    models = [node("fm", 0, foundation=True, tier=Tier.TIER3)]
    vocabulary = VOCABULARY.model_copy(
        update={"surfaces": {f"s{i}": f"surface {i}" for i in range(21)}}
    )
    for i in range(1, 11):
        models.append(node(f"a{i}", i, "fm", tier=Tier.TIER3))
        models.append(node(f"b{i}", 10 + i, f"a{i}", tier=Tier.TIER4))
    registry = Registry(models, vocabulary)
    assert len(registry.downstream("fm")) == 20
    assert registry.blast_radius("fm")[Tier.TIER3] == 10
    assert registry.blast_radius("fm")[Tier.TIER4] == 10
    assert ids(registry.upstream_chain("b3")) == ["a3", "fm"]
