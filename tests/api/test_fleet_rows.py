"""The fleet table's rows (``GET /v1/fleet/rows``): what the console loads the whole fleet from. Each row must say
what the listing of models says of the same model, in the same order, page after page, on each store; and a
model's signals are its newest bucket's, however its buckets arrive."""

from __future__ import annotations

import pytest

from fleet_variants import FIXED_NOW, HOUR, bucket
from fleetdesk.client import FleetdeskClient, PageRequest, Unauthorized
from fleetdesk.wire import ModelRow, ModelSort

from .conftest import Connect

TAGGING = "ig_tagging_late-stage_dlrm.v6"  # TIER4, stable, no incident


async def every_row(client: FleetdeskClient, limit: int) -> list[ModelRow]:
    rows: list[ModelRow] = []
    while True:
        page = await client.fleet_rows(page=PageRequest(offset=len(rows), limit=limit))
        assert (page.offset, page.limit) == (len(rows), limit)
        rows.extend(page.rows)
        if not page.rows:
            assert len(rows) == page.total
            return rows


async def assert_rows_match_listing(client: FleetdeskClient) -> list[ModelRow]:
    """The rows, in pages of 7, equal the worst-first listing's models made rows (``ModelRow.of``)."""
    listed = await client.list_models(sort=ModelSort.WORST, page=PageRequest(limit=1000))
    rows = await every_row(client, limit=7)
    assert rows == [ModelRow.of(model) for model in listed.items]
    assert len(rows) == listed.total
    return rows


async def test_the_rows_are_the_listing_of_every_model_worst_first(connect: Connect) -> None:
    client = await connect("oncall:ig-feed-ranking")
    rows = await assert_rows_match_listing(client)
    assert len({row.id for row in rows}) == len(rows) > 7  # more than one page, none twice
    assert rows[0].attention.value == "page"  # the worst first
    assert any(row.calibration is not None for row in rows)


async def test_a_model_shows_its_newest_bucket_whatever_order_its_buckets_arrive_in(
    connect: Connect,
) -> None:
    admin = await connect("admin")
    await admin.set_clock(FIXED_NOW + 2 * HOUR)
    # The newer bucket first in the request, the older after it: the row shows the newer one.
    await admin.ingest(
        [
            bucket(TAGGING, FIXED_NOW + HOUR, calibration=1.5, ne=0.7, weight=40_000),
            bucket(TAGGING, FIXED_NOW, calibration=2.0, ne=0.9, weight=40_000),
        ]
    )
    rows = {row.id: row for row in await assert_rows_match_listing(admin)}
    assert rows[TAGGING].calibration == pytest.approx(1.5)
    assert rows[TAGGING].normalized_entropy == pytest.approx(0.7)

    await admin.set_clock(FIXED_NOW + 3 * HOUR)
    await admin.ingest([bucket(TAGGING, FIXED_NOW + 2 * HOUR, calibration=0.5, weight=40_000)])
    rows = {row.id: row for row in await assert_rows_match_listing(admin)}
    assert rows[TAGGING].calibration == pytest.approx(0.5)


async def test_the_rows_need_a_token(connect: Connect) -> None:
    anonymous = await connect(None)
    with pytest.raises(Unauthorized):
        await anonymous.fleet_rows()
