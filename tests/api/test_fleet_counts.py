"""The fleet summary's counts follow every write that moves a model between health, tier and attention: a
model created, re-tiered, judged again after an unstable hour, retired. Each time they must equal what the
listing of every model shows, on each store (the store keeps them beside the models, by triggers)."""

from __future__ import annotations

from collections import Counter

from fleet_variants import FIXED_NOW, HOUR, bucket
from fleetdesk.client import FleetdeskClient, PageRequest, RegistryIntent
from fleetdesk.domain.registry import Tier
from fleetdesk.wire import Attention, Health, ModelSort

from .conftest import Connect
from .test_registry import LONG_HISTORY, NEW, new_experiment

TAGGING = "ig_tagging_late-stage_dlrm.v6"  # TIER4, stable, 40,000 events an hour


async def _listed(client: FleetdeskClient) -> tuple[Counter[tuple[str, str]], Counter[str]]:
    """Health × tier and attention counted from the listing of every model, page by page."""
    by_health_tier: Counter[tuple[str, str]] = Counter()
    by_attention: Counter[str] = Counter()
    offset = 0
    while True:
        page = await client.list_models(
            sort=ModelSort.ID, page=PageRequest(offset=offset, limit=500)
        )
        for item in page.items:
            by_health_tier[item.health.value, item.tier.value] += 1
            by_attention[item.attention.value] += 1
        offset += len(page.items)
        if not page.items or offset >= page.total:
            assert offset == page.total  # the listing's total is the same count
            return by_health_tier, by_attention


async def _assert_counts_follow(client: FleetdeskClient) -> None:
    summary = await client.fleet_summary()
    by_health_tier, by_attention = await _listed(client)
    counted = Counter(
        {
            (health.value, tier.value): n
            for health, tiers in summary.counts.items()
            for tier, n in tiers.items()
            if n
        }
    )
    assert counted == by_health_tier
    assert Counter({level.value: n for level, n in summary.attention.items() if n}) == by_attention
    assert sum(counted.values()) == summary.total_models


async def test_summary_counts_follow_creates_tier_changes_judgements_and_retirements(
    connect: Connect,
) -> None:
    admin = await connect("admin")
    await _assert_counts_follow(admin)  # as seeded

    await admin.change_registry(RegistryIntent.create(await new_experiment(admin), "try it"))
    await _assert_counts_follow(admin)
    before = (await admin.fleet_summary()).counts

    record = await admin.registry_model(LONG_HISTORY)
    raised = record.model_copy(
        update={"tier": Tier.TIER2, "tier_justification": "serves 2% of Feed now"}
    )
    await admin.change_registry(RegistryIntent.update(raised, "it matters now"))
    await _assert_counts_follow(admin)
    health = (await admin.model(LONG_HISTORY)).health
    after = (await admin.fleet_summary()).counts
    assert after[health][Tier.TIER3] == before[health][Tier.TIER3] - 1  # the test moved a model
    assert after[health][Tier.TIER2] == before[health][Tier.TIER2] + 1

    await admin.set_clock(FIXED_NOW + HOUR)
    await admin.ingest([bucket(TAGGING, FIXED_NOW, calibration=2.0, weight=40_000)])
    judged = await admin.model(TAGGING)
    assert judged.health is Health.UNSTABLE and judged.attention is not Attention.OK
    await _assert_counts_follow(admin)

    await admin.change_registry(RegistryIntent.retire(NEW, "never launched"))
    await _assert_counts_follow(admin)
