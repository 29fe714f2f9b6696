"""Registry changes reach an open console: a model created through the API appears in the fleet table, and a
tier change moves its row, without a reload and long before the next poll."""

from __future__ import annotations

from console_helpers import make_app, screen_text, wait_for
from pydantic import SecretStr

from fleetdesk.client import ConnectionState, FleetdeskClient, RegistryIntent
from fleetdesk.console.screens.audit import AuditScreen
from fleetdesk.console.screens.fleet import FleetScreen
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.console.widgets.fleet.table import FleetTable, sort_key
from fleetdesk.domain.registry import LaunchPhase, Tier

NEW = "ig_feed_late-stage_mtml.x3-fresh-start"
TEMPLATE = "ig_feed_late-stage_mtml.x2-long-history"  # TIER3 experiment of the same type
NEVER = 3600.0
"""The console's own poll, far beyond the test: only the live event can bring the change."""


def table(app) -> FleetTable:
    return app.screen.query_one(FleetTable)


def in_order(fleet: FleetTable) -> bool:
    keys = [sort_key(fleet.models[m]) for m in fleet.shown_ids]
    return keys == sorted(keys)


async def test_a_model_created_through_the_api_appears_in_an_open_console(server):
    app = make_app(server, poll_seconds=NEVER)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, FleetScreen) and table(app).row_count > 0,
            "the fleet table to fill",
        )
        await wait_for(pilot, lambda: app.link.feed is ConnectionState.LIVE, "the live feed")
        fleet = table(app)
        assert NEW not in fleet.models
        async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as admin:
            template = await admin.registry_model(TEMPLATE)
            model = template.model_copy(
                update={
                    "id": NEW,
                    "traffic_share": 0.0,
                    "launch_phase": LaunchPhase.ESTIMATION,
                    "purpose": "Tries a fresh-start user embedding on Feed ranking.",
                }
            )
            await admin.change_registry(RegistryIntent.create(model, "new experiment"))
            await wait_for(pilot, lambda: NEW in fleet.shown_ids, "the new experiment's row")
            assert fleet.models[NEW].tier is Tier.TIER3 and in_order(fleet)

            raised = model.model_copy(
                update={"tier": Tier.TIER1, "tier_justification": "carries the Feed launch now"}
            )
            await admin.change_registry(RegistryIntent.update(raised, "launch"))
            await wait_for(pilot, lambda: fleet.models[NEW].tier is Tier.TIER1, "the tier change")
            await pilot.pause()
            fleet.settle()
            assert in_order(fleet)  # re-sorted: the row moved with its tier


async def test_an_open_model_view_follows_a_change_of_its_record(server):
    app = make_app(server, poll_seconds=NEVER)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, FleetScreen) and table(app).row_count > 0,
            "the fleet table to fill",
        )
        fleet = table(app)
        fleet.move_cursor(row=fleet.shown_ids.index(TEMPLATE))
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ModelScreen) and app.screen.detail is not None,
            "the model view",
        )
        await wait_for(pilot, lambda: app.link.feed is ConnectionState.LIVE, "the live feed")
        async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as admin:
            record = await admin.registry_model(TEMPLATE)
            raised = record.model_copy(
                update={"tier": Tier.TIER2, "tier_justification": "2% of Feed: measurable revenue"}
            )
            await admin.change_registry(RegistryIntent.update(raised, "proven impact"))
        await wait_for(
            pilot, lambda: app.screen.detail.model.tier is Tier.TIER2, "the view's new tier"
        )
        await pilot.press("l")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, AuditScreen)
                and any(r.action == "registry.tier" for r in app.screen.records)
            ),
            "the tier change in the audit log",
        )
        assert "tier: TIER3 -> TIER2" in screen_text(app)
