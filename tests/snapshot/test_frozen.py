"""FrozenClient: the console's reads answered from a snapshot, with the server's filters, sorts and paging."""

from __future__ import annotations

import factory
import pytest

from fleetdesk.client import ActionIntent, Forbidden, ModelFilters, NotFound, PageRequest
from fleetdesk.snapshot.frozen import FrozenClient
from fleetdesk.wire import ActionKind, IncidentState, ModelSort, Tier, Window


def _client() -> FrozenClient:
    snapshot = factory.snapshot()
    rows = [
        snapshot.models[0].model_copy(
            update={"id": f"m{index}", "tier": tier, "budget_remaining": budget}
        )
        for index, (tier, budget) in enumerate(
            [(Tier.TIER3, 0.5), (Tier.TIER0, None), (Tier.TIER1, -0.2)]
        )
    ]
    return FrozenClient(snapshot.model_copy(update={"models": [*snapshot.models, *rows]}))


async def test_list_models_filters_sorts_and_pages_like_the_server() -> None:
    client = _client()
    assert [row.id for row in (await client.list_models()).items] == [
        factory.MODEL_ID,
        "m0",
        "m1",
        "m2",
    ]
    filtered = await client.list_models(ModelFilters(tier=(Tier.TIER0, Tier.TIER1)))
    assert [row.id for row in filtered.items] == [factory.MODEL_ID, "m1", "m2"]
    assert [row.id for row in (await client.list_models(sort=ModelSort.BUDGET)).items] == [
        factory.MODEL_ID,
        "m2",
        "m0",
        "m1",
    ]
    page = await client.list_models(sort=ModelSort.ID, page=PageRequest(offset=1, limit=2))
    assert [row.id for row in page.items] == ["m0", "m1"] and page.total == 4
    assert (await client.list_models(ModelFilters(q="EXP7"))).total == 1


async def test_reads_outside_the_snapshot_say_so_and_actions_are_refused() -> None:
    client = _client()
    with pytest.raises(
        NotFound, match="holds no 7d series of ig_feed_late_mtml_exp7 \\(it holds: 24h\\)"
    ):
        await client.stability(factory.MODEL_ID, Window.D7)
    with pytest.raises(NotFound, match="incident 99 is not in this snapshot"):
        await client.incident(99)
    with pytest.raises(Forbidden, match="read-only snapshot"):
        await client.perform(ActionIntent.of(ActionKind.ACK, factory.MODEL_ID))
    assert (await client.incidents(state=IncidentState.OPEN)).total == 0
    assert (await client.incidents(state=IncidentState.ACKNOWLEDGED)).items[0].id == 7
    assert [r.id for r in (await client.audit(action=ActionKind.NOTE)).items] == [2]
    assert (await client.event_log(after=5)).items == []
