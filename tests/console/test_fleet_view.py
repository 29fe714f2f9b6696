"""The fleet view against the real server: worst first, filter as you type, tier jump, open a model."""

from __future__ import annotations

from console_helpers import TIER2_EXPERIMENT, make_app, screen_text, wait_for
from network import HoldingProxy
from pydantic import SecretStr
from textual import events
from textual.widgets import Input

from fleetdesk.client import ActionIntent, ConnectionState, FleetdeskClient
from fleetdesk.console.app import Backend, FleetdeskApp
from fleetdesk.console.fleet_filter import matches, split, wider_filters
from fleetdesk.console.screens.fleet import FleetScreen
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.console.widgets.fleet.table import FleetTable, sort_key
from fleetdesk.wire import ActionKind, Attention, Tier, Window


def table(app) -> FleetTable:
    return app.screen.query_one(FleetTable)


async def loaded(pilot) -> FleetTable:
    await wait_for(
        pilot,
        lambda: isinstance(pilot.app.screen, FleetScreen) and table(pilot.app).row_count > 0,
        "the fleet table to fill",
    )
    return table(pilot.app)


async def test_fleet_lists_every_model_worst_first(server):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        fleet = await loaded(pilot)
        assert fleet.row_count == 21
        shown = [fleet.models[i] for i in fleet.shown_ids]
        assert shown == sorted(shown, key=sort_key)
        assert shown[0].attention is Attention.PAGE
        text = screen_text(pilot.app)
        assert "21 models" in text
        assert "‼ page" in text and "✓ ok" in text  # health reads without colour
        assert "live" in text


async def test_health_columns_show_the_latest_buckets_calibration_and_ne(server):
    async with FleetdeskClient(server.url, SecretStr(server.tokens["oncall"])) as client:
        series = await client.stability(TIER2_EXPERIMENT)
    latest = series.points[-1]
    assert latest.calibration is not None and latest.normalized_entropy is not None
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        fleet = await loaded(pilot)
        row = fleet.get_row(TIER2_EXPERIMENT)
        cells = dict(zip((c.key for c in fleet.columns), (str(cell).strip() for cell in row)))
        assert cells["calibration"] == f"{latest.calibration:.2f}"
        assert cells["ne"] == f"{latest.normalized_entropy:.2f}"
        header = screen_text(pilot.app)
        assert (
            " cal " in header and " NE " in header and " type " in header
        )  # all fit at 120 columns


async def test_filter_as_you_type_and_clear(server):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        fleet = await loaded(pilot)
        await pilot.press("slash")
        await pilot.press(*"t0 page")
        expected = {
            m.id
            for m in fleet.models.values()
            if m.tier is Tier.TIER0 and m.attention is Attention.PAGE
        }
        assert expected
        await wait_for(pilot, lambda: set(fleet.shown_ids) == expected, "the filter to apply")
        assert "(1 shown)" in screen_text(pilot.app) or f"({len(expected)} shown)" in screen_text(
            pilot.app
        )
        await pilot.press("escape")
        await wait_for(pilot, lambda: fleet.row_count == 21, "the filter to clear")


async def test_keys_arriving_in_one_burst_after_slash_all_reach_the_filter(server):
    """Over a slow link "/" and the words after it arrive in one read: none may fall through to the table."""
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        fleet = await loaded(pilot)
        for key, character in (("slash", "/"), ("t", "t"), ("2", "2")):
            pilot.app.post_message(
                events.Key(key, character)
            )  # queued together, as the driver does
        field = pilot.app.screen.query_one("#filter", Input)
        await wait_for(pilot, lambda: field.value == "t2", "the whole burst in the filter")
        await wait_for(pilot, lambda: fleet.row_count < 21, "the filter to apply")
        # "t2" is the TIER2 filter; a "2" that reached the table would have jumped to TIER1 instead.
        assert {fleet.models[m].tier for m in fleet.shown_ids} == {Tier.TIER2}


async def test_filter_matches_type_words_and_team(server):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        fleet = await loaded(pilot)
        await pilot.press("slash", *"reels")
        await wait_for(
            pilot,
            lambda: set(fleet.shown_ids) == {m for m in fleet.models if "reels" in m},
            "the filter to apply",
        )
        await pilot.press("ctrl+u", *"ig-feed-ranking")
        await wait_for(
            pilot,
            lambda: all(fleet.models[m].owner_team == "ig-feed-ranking" for m in fleet.shown_ids),
            "the team filter",
        )
        assert len(fleet.shown_ids) == 5


async def test_digit_jumps_to_a_tier_and_back(server):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        fleet = await loaded(pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: fleet.row_count < 21, "the tier filter")
        assert {fleet.models[m].tier for m in fleet.shown_ids} == {Tier.TIER1}
        await pilot.press("2")
        await wait_for(pilot, lambda: fleet.row_count == 21, "all tiers again")


async def test_enter_opens_the_model_and_escape_returns(server):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        fleet = await loaded(pilot)
        row = fleet.shown_ids.index(TIER2_EXPERIMENT)
        fleet.move_cursor(row=row)
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: (
                isinstance(pilot.app.screen, ModelScreen) and pilot.app.screen.detail is not None
            ),
            "the model view",
        )
        assert pilot.app.screen.model_id == TIER2_EXPERIMENT
        text = " ".join(screen_text(pilot.app).split())
        assert (
            "Instagram" in text
            and "safe fallback is its baseline ig_feed_late-stage_mtml.v41" in text
        )
        assert "budget left" in text and "calibration" in text and "NE" in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, FleetScreen), "the fleet view")


async def test_the_chart_window_stays_for_the_next_model_opened(server):
    # Comparing models (an experiment, then its baseline, then another) is done over one window.
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        fleet = await loaded(pilot)
        fleet.move_cursor(row=fleet.shown_ids.index(TIER2_EXPERIMENT))
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: (
                isinstance(pilot.app.screen, ModelScreen) and pilot.app.screen.series is not None
            ),
            "the model view",
        )
        experiment = pilot.app.screen
        assert experiment.series.window is Window.H24
        await pilot.press("5")
        await wait_for(pilot, lambda: experiment.series.window is Window.D28, "28 days of buckets")
        await pilot.press("b")
        await wait_for(
            pilot,
            lambda: pilot.app.screen is not experiment and pilot.app.screen.series is not None,
            "the baseline's view",
        )
        assert pilot.app.screen.model_id == "ig_feed_late-stage_mtml.v41"
        assert pilot.app.screen.series.window is Window.D28
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, FleetScreen), "the fleet view")
        fleet.move_cursor(row=0)
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: (
                isinstance(pilot.app.screen, ModelScreen) and pilot.app.screen.series is not None
            ),
            "another model's view",
        )
        assert pilot.app.screen.series.window is Window.D28


async def test_a_model_opened_while_someone_acts_shows_what_they_did(server):
    # A model view is fetched before it is shown; an action landing meanwhile must not leave it behind.
    proxy = await HoldingProxy(server.url).start()
    app = FleetdeskApp(Backend(proxy.url, SecretStr(server.oncall_token)))
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            fleet = await loaded(pilot)
            await wait_for(pilot, lambda: app.link.feed is ConnectionState.LIVE, "the live feed")
            proxy.hold(reads=True)
            fleet.move_cursor(row=fleet.shown_ids.index(TIER2_EXPERIMENT))
            await pilot.press("enter")
            await wait_for(
                pilot, lambda: proxy.held > 0, "the model view's reads to reach the server"
            )
            async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as other:
                await other.perform(
                    ActionIntent.of(
                        ActionKind.ROLLBACK,
                        TIER2_EXPERIMENT,
                        expected_serving_model_id=TIER2_EXPERIMENT,
                        reason="other on-call",
                    )
                )
            await wait_for(
                pilot, lambda: pilot.app._live_while_opening, "the rollback's live event"
            )
            proxy.release()
            await wait_for(
                pilot, lambda: isinstance(pilot.app.screen, ModelScreen), "the model view"
            )
            await wait_for(
                pilot,
                lambda: pilot.app.screen.detail.live.serving_model_id != TIER2_EXPERIMENT,
                "the model view to show the rollback",
            )
    finally:
        await proxy.stop()


async def test_narrow_terminal_drops_columns_by_priority(server):
    async with make_app(server).run_test(size=(80, 24)) as pilot:
        fleet = await loaded(pilot)
        keys = [column.key for column in fleet.columns]
        assert keys[:6] == ["health", "budget", "calibration", "ne", "tier", "id"]
        assert "owner" not in keys and "type" not in keys


async def test_cursor_stays_on_its_model_when_the_order_changes(server):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        fleet = await loaded(pilot)
        await pilot.press("down", "down")
        chosen = fleet.selected_id()
        assert chosen == fleet.shown_ids[2]
        worst = fleet.models[fleet.shown_ids[0]]
        fleet.update_model(
            worst._replace(attention=Attention.OK)
        )  # the worst model drops down the list
        await wait_for(pilot, lambda: fleet.shown_ids.index(chosen) == 1, "the re-sort")
        assert fleet.selected_id() == chosen
        await pilot.press("end")
        assert fleet.selected_id() == fleet.shown_ids[-1]
        await pilot.press("home")
        assert fleet.selected_id() == fleet.shown_ids[0]


async def test_click_selects_a_row_and_a_second_click_opens_it(server):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        fleet = await loaded(pilot)
        await pilot.click(
            FleetTable, offset=(20, 4)
        )  # the header is line 0: line 4 is the fourth model
        assert fleet.selected_id() == fleet.shown_ids[3]
        await pilot.click(FleetTable, offset=(20, 4))
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ModelScreen), "the model view")
        assert pilot.app.screen.model_id == fleet.shown_ids[3]


async def test_each_keystroke_shows_what_a_full_scan_would(server):
    """A keystroke that narrows the filter scans what the wider one showed: across extended words, a new
    word, a word that turns into a tier or health word, backspaces and a model changing under the filter,
    the table shows exactly what the words select of the whole fleet, in order."""
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        fleet = await loaded(pilot)
        field = pilot.app.screen.query_one("#filter", Input)

        def full_scan() -> list[str]:
            ordered = sorted(fleet.models.values(), key=sort_key)
            return [m.id for m in ordered if matches(m, split(field.value))]

        await pilot.press("slash")
        keys = [*"ig fe", "backspace", "backspace", "t", "2", "backspace", *"0 okx"]
        keys += ["ctrl+u", *"page", "ctrl+u"]
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
            assert fleet.shown_ids == full_scan(), field.value
        await pilot.press(*"page")
        await pilot.pause()
        calm = next(
            m
            for m in fleet.models.values()
            if m.id.startswith("ig_") and m.attention is Attention.OK
        )
        fleet.update_model(calm._replace(attention=Attention.PAGE))  # now one of the "page" models
        await pilot.press(*" ig")
        await pilot.pause()
        assert calm.id in fleet.shown_ids and fleet.shown_ids == full_scan()


def test_wider_filters_show_everything_the_narrower_shows() -> None:
    assert wider_filters([]) == []
    assert wider_filters(["ig", "fee"]) == [("ig", "fe"), ("ig",)]
    assert wider_filters(["ig", "f"]) == [("ig",)]  # no empty word
    assert wider_filters(["t0"]) == [()]  # a tier word is no longer a substring test
    assert wider_filters(["t0x"]) == [()]  # nor is "t0" wider than "t0x"
    assert wider_filters(["okay"]) == [("oka",), ()]
    assert wider_filters(["oka"]) == [()]  # "ok" is a health word
