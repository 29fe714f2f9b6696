"""The right call made obvious on screen: an unhealthy fallback warned about first and confirmed the hard way, a holdout
overridden explicitly, a shared-cause group shown as one, a timeline whose actions stand out, live values at once."""

from __future__ import annotations

from datetime import timedelta

import pytest
from console_helpers import make_app, screen_text, wait_for
from pydantic import SecretStr
from textual.widgets import Button, Checkbox, Input

from fleet_variants import FIXED_NOW, HOUR, IG_FEED, bucket, held, small_variant
from fleetdesk.client import ActionIntent, FleetdeskClient
from fleetdesk.console.screens.confirm import ConfirmAction
from fleetdesk.console.screens.fleet import FleetScreen
from fleetdesk.console.screens.incident import IncidentScreen
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.console.widgets.fleet.summary import FleetCounts
from fleetdesk.console.widgets.fleet.table import FleetTable
from fleetdesk.console.widgets.model.chart import StabilityChart
from fleetdesk.console.widgets.model.timeline import IncidentTimeline
from fleetdesk.domain.fleet import IncidentKind
from fleetdesk.wire import ActionKind, Confirmation

SICK_BASELINE_EXPERIMENT = (
    "fb_feed_late-stage_dhen.x7-integrity"  # TIER2; its baseline v52 pages since 10:00
)
SICK_BASELINE = "fb_feed_late-stage_dhen.v52"
HOLDOUT = "ig_feed_late-stage_mtml.holdout-2026h2"
PAGING = "ig_feed_late-stage_mtml.x1-watch-time"


async def open_model(pilot, model_id: str) -> ModelScreen:
    screen = ModelScreen(model_id)
    await pilot.app.push_screen(screen)
    await wait_for(
        pilot,
        lambda: (
            screen.detail is not None and screen.series is not None and pilot.app.me is not None
        ),
        f"{model_id} to load",
    )
    return screen


async def dialog(pilot) -> ConfirmAction:
    await wait_for(
        pilot, lambda: isinstance(pilot.app.screen, ConfirmAction), "the confirmation dialog"
    )
    return pilot.app.screen


def flat(pilot) -> str:
    return " ".join(screen_text(pilot.app).split())


async def audit_details(server, model_id: str) -> list[dict]:
    async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as client:
        return [record.detail for record in (await client.audit(model_id=model_id)).items]


async def test_an_unhealthy_fallback_is_said_in_the_model_view(server):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        await open_model(pilot, SICK_BASELINE_EXPERIMENT)
        text = flat(pilot)
        assert f"baseline {SICK_BASELINE} is itself paging since 10:00: escalate." in text
        assert "safe fallback" not in text
        assert f"baseline {SICK_BASELINE} ‼ page since 10:00 [b]" in text


async def test_rolling_back_onto_an_unhealthy_baseline_warns_first_and_needs_it_ticked(server):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        screen = await open_model(pilot, SICK_BASELINE_EXPERIMENT)
        await pilot.press("r")
        confirm = await dialog(pilot)
        assert (
            confirm.option.confirmation is Confirmation.ACKNOWLEDGE
        )  # a TIER2 model: one key, normally
        # It opens on its first field: the box the warning asks to tick.
        assert confirm.focused is confirm.query_one("#acknowledge-target", Checkbox)
        body = [child.id for child in confirm.query_one(".dialog-body").children]
        assert body.index("warnings") < body.index("preview")  # the warning comes first
        text = flat(pilot)
        assert text.index(f"! baseline {SICK_BASELINE} is paging since 10:00") < text.index(
            "Server dry run:"
        )
        assert f"Target health: UNHEALTHY: baseline {SICK_BASELINE} is paging since 10:00" in text
        await pilot.press("y")  # no one-key confirm at this level
        assert pilot.app.screen is confirm
        confirm.query_one("#typed-id", Input).value = SICK_BASELINE_EXPERIMENT
        confirm.query_one("#reason", Input).value = "integrity penalty misfires"
        await pilot.pause()
        assert confirm.query_one(
            "#confirm", Button
        ).disabled  # typed and reasoned, but not acknowledged
        confirm.query_one("#acknowledge-target", Checkbox).value = True
        await pilot.pause()
        assert not confirm.query_one("#confirm", Button).disabled
        await pilot.click("#confirm")
        await wait_for(
            pilot,
            lambda: pilot.app.screen is screen and ActionKind.ROLLBACK not in screen.in_flight,
            "the rollback",
        )
        details = await audit_details(server, SICK_BASELINE_EXPERIMENT)
        assert details[0]["acknowledged_target"] == SICK_BASELINE


async def test_rolling_back_a_holdout_needs_its_override(server):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        screen = await open_model(pilot, HOLDOUT)
        await pilot.press("r")
        confirm = await dialog(pilot)
        text = flat(pilot)
        assert f"! {HOLDOUT} is a holdout: rolling it back ends its measurement" in text
        assert not confirm.query(
            "#acknowledge-target"
        )  # its baseline v41 is healthy: only the override is asked
        confirm.query_one("#typed-id", Input).value = HOLDOUT
        confirm.query_one("#reason", Input).value = "holdout serving a stale model"
        await pilot.pause()
        assert confirm.query_one("#confirm", Button).disabled
        confirm.query_one("#holdout-override", Checkbox).value = True
        await pilot.pause()
        await pilot.click("#confirm")
        await wait_for(
            pilot,
            lambda: pilot.app.screen is screen and ActionKind.ROLLBACK not in screen.in_flight,
            "the rollback",
        )
        assert (await audit_details(server, HOLDOUT))[0]["holdout_override"] is True


async def test_the_holdout_overlay_and_its_gap(server):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        screen = await open_model(pilot, PAGING)
        chart = screen.query_one("#ne-chart", StabilityChart)
        legend = chart.grid.plain()[0]
        assert "vs baseline" in legend and "vs holdout" not in legend
        await pilot.press("c")
        await wait_for(pilot, lambda: "vs holdout" in chart.grid.plain()[0], "the holdout overlay")
        gap = next(g for g in screen.series.gaps if g.relation == "holdout")
        assert f"{gap.ne_change * 100:+.1f}% vs holdout" in chart.grid.plain()[0]
        await pilot.press("c")
        await wait_for(
            pilot, lambda: "vs holdout" not in chart.grid.plain()[0], "the overlay off again"
        )


@pytest.fixture
def shared_shift(server_factory, tmp_path):
    nine = FIXED_NOW - 3 * HOUR
    incidents = [i for m in IG_FEED for i in held(m, IncidentKind.CALIBRATION_DRIFT, nine, 3, 1.3)]
    return server_factory(
        fleet=str(small_variant(tmp_path / "fleet.json", incidents=incidents, keep_incidents=False))
    )


async def test_a_shared_cause_group_is_one_line_in_the_fleet_and_one_incident(shared_shift):
    async with make_app(shared_shift, token="admin").run_test(size=(120, 40)) as pilot:
        app = pilot.app
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, FleetScreen) and app.screen.query_one(FleetTable).row_count
            ),
            "the fleet",
        )
        counts = app.screen.query_one(FleetCounts)
        assert (
            "shared cause suspected: Instagram · Feed, 6 models since 11-30 09:00"
            in counts.text.plain
        )
        assert "1 open incident" in counts.text.plain
        screen = await open_model(pilot, "ig_feed_sourcing_two-tower.v9")
        await pilot.press("i")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, IncidentScreen) and "members (6)" in flat(pilot),
            "the incident",
        )
        text = flat(pilot)
        assert (
            "Instagram · Feed: 6 models unstable together, shared cause suspected · since 11-30 09:00"
            in text
        )
        assert text.index("members (6)") < text.index("timeline")
        for model_id in IG_FEED:
            assert model_id in text
        assert screen is not None


async def test_repeated_alerts_are_one_line_and_actions_stand_out(server):
    async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as admin:
        # The drifting experiment flaps: a healthy bucket (the page stops), then a drifting one (it fires again).
        for hour in range(4):
            start = FIXED_NOW + 2 * hour * HOUR
            await admin.set_clock(start + HOUR)
            await admin.ingest([bucket(PAGING, start, calibration=1.0)])
            await admin.set_clock(start + 2 * HOUR)
            await admin.ingest([bucket(PAGING, start + HOUR, calibration=1.35)])
        await admin.perform(
            ActionIntent.of(ActionKind.NOTE, PAGING, text="feature pipeline owner paged")
        )
        incident = await admin.incident((await admin.model(PAGING)).open_incident_id or 0)
    alerts = [e for e in incident.timeline if e.kind == "alert"]
    assert (
        len(alerts) == 1 and alerts[0].repeats == 4 and alerts[0].last_at == FIXED_NOW + 8 * HOUR
    )  # judged at each bucket's end
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        screen = await open_model(pilot, PAGING)
        timeline = screen.query_one(IncidentTimeline).text
        assert "(4 times, last 20:00)" in timeline.plain
        note = next(
            line for line in timeline.split("\n") if "feature pipeline owner paged" in line.plain
        )
        assert any("bold" in str(span.style) for span in note.spans)  # a person's entry stands out
        assert (
            sum(
                "alert    server: pages: TIER2 policy, page-fast" in line.plain
                for line in timeline.split("\n")
            )
            == 1
        )


async def test_a_closed_bucket_updates_the_row_at_once_and_counts_agree_under_a_filter(server):
    async with make_app(server, poll_seconds=3600).run_test(size=(120, 40)) as pilot:
        app = pilot.app
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, FleetScreen)
                and app.screen.query_one(FleetTable).row_count
                and app.link.describe()[0] == "live"
            ),
            "the live fleet",
        )
        table = app.screen.query_one(FleetTable)
        await pilot.press("slash", *"unstable")
        await wait_for(
            pilot, lambda: "shown" in app.screen.query_one(FleetCounts).text.plain, "the filter"
        )
        quiet = "ig_reels_late-stage_dhen.x4-int8"
        assert quiet not in table.shown_ids
        async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as admin:
            await admin.set_clock(FIXED_NOW + HOUR)
            await admin.ingest([bucket(quiet, FIXED_NOW, calibration=1.5, rate=0.06)])
        await wait_for(
            pilot, lambda: quiet in table.shown_ids, "the row to appear under the filter"
        )
        assert table.models[quiet].calibration == pytest.approx(
            1.5
        )  # no poll ran: the event brought it
        shown = app.screen.query_one(FleetCounts).text.plain
        assert f"({len(table.shown_ids)} shown)" in shown
        assert timedelta(0) < HOUR


async def test_the_counts_follow_a_model_that_turns_unstable_under_a_typed_filter(server):
    """A filter keystroke reuses the fleet's counts (it changes only how many are shown); a model that
    changes is counted again."""
    async with make_app(server, token="admin").run_test(size=(120, 40)) as pilot:
        app = pilot.app
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, FleetScreen) and app.screen.query_one(FleetTable).row_count
            ),
            "the fleet",
        )
        table = app.screen.query_one(FleetTable)
        counts = app.screen.query_one(FleetCounts)
        calm = next(
            m
            for m in table.models.values()
            if m.tier.value == "TIER1" and m.health.value == "stable"
        )
        await pilot.press("slash", *calm.id[:4])
        await pilot.pause()
        assert "T1 ✗0 ?1 ✓5" in counts.text.plain and "2 open incidents" in counts.text.plain
        async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as admin:
            await admin.set_clock(FIXED_NOW + HOUR)
            await admin.ingest([bucket(calm.id, FIXED_NOW, calibration=2.0)])
        await wait_for(
            pilot,
            lambda: "T1 ✗1 ?1 ✓4" in counts.text.plain and "3 open incidents" in counts.text.plain,
            "the counts with the model unstable",
        )
        await pilot.press("backspace")  # the filter moves on: the counts stay
        await pilot.pause()
        assert "T1 ✗1 ?1 ✓4" in counts.text.plain
