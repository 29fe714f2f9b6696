"""Keys never vanish in a confirmation dialog: it opens on the field that takes what is typed, the hint says
what to type, Tab moves between fields only, and a burst of keys typed across a Tab (a slow link, a paste)
lands in the field Tab moved to. A ``y`` dialog still opens on Cancel: Enter never confirms by accident."""

from __future__ import annotations

import pytest
from console_helpers import (
    TIER0_BASELINE,
    TIER1_EXPERIMENT,
    TIER2_EXPERIMENT,
    make_app,
    screen_text,
    wait_for,
)
from network import HoldingProxy
from pydantic import SecretStr
from textual import events
from textual.keys import REPLACED_KEYS, key_to_character
from textual.widgets import Button, Checkbox, Input

from fleetdesk.client import FleetdeskClient, PageRequest
from fleetdesk.console.app import Backend, FleetdeskApp
from fleetdesk.console.drill.player import key_for_character
from fleetdesk.console.screens.confirm import ConfirmAction
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.settings.console import ConsoleSettings

FALLBACK_PAGES = "fb_feed_late-stage_dhen.x7-integrity"
"""TIER2 experiment whose baseline pages: its rollback needs the strongest confirmation."""


async def dialog_on(pilot, model_id: str, key: str) -> tuple[ModelScreen, ConfirmAction]:
    screen = ModelScreen(model_id)
    await pilot.app.push_screen(screen)
    await wait_for(
        pilot, lambda: screen.detail is not None and pilot.app.me is not None, f"{model_id} to load"
    )
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmAction), "the dialog")
    await pilot.pause()
    return screen, pilot.app.screen


async def burst(pilot, *keys: str) -> None:
    """Keys as one read from the terminal delivers them: all queued before the app handles the first."""
    for key in keys:
        pilot.app.post_message(events.Key(key, key_to_character(REPLACED_KEYS.get(key, key))))
    await pilot.pause()
    await pilot.pause()


def typed(text: str) -> list[str]:
    return [key_for_character(character) for character in text]


async def audit_actions(server, model_id: str) -> list[str]:
    async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as client:
        page = await client.audit(model_id=model_id, page=PageRequest(limit=100))
    return [record.action for record in page.items]


@pytest.mark.parametrize(
    ("model_id", "key", "variant"),
    [(TIER1_EXPERIMENT, "e", "x4-int8"), (TIER0_BASELINE, "x", "v52")],
    ids=["TIER1", "TIER0"],
)
async def test_a_type_to_confirm_dialog_opens_on_the_id_and_a_burst_across_tab_lands_where_meant(
    server, model_id, key, variant
):
    async with make_app(server).run_test(size=(80, 24)) as pilot:
        screen, confirm = await dialog_on(pilot, model_id, key)
        typed_id, reason = (
            confirm.query_one("#typed-id", Input),
            confirm.query_one("#reason", Input),
        )
        assert confirm.focused is typed_id
        hint = " ".join(screen_text(pilot.app).split())
        assert f"Type {variant}, Tab, a reason, then Enter." in hint
        # The whole answer in one burst, as a paste or a slow link delivers it.
        await burst(pilot, *typed(variant), "tab", *typed("NE up 25%"))
        assert (typed_id.value, reason.value) == (variant, "NE up 25%")
        assert confirm.focused is reason
        assert not confirm.query_one("#confirm", Button).disabled
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: pilot.app.screen is screen and not screen.in_flight,
            "the action to finish",
        )
        assert len(await audit_actions(server, model_id)) == 1


async def test_enter_never_confirms_a_tier0_action_by_accident(server):
    async with make_app(server).run_test(size=(80, 24)) as pilot:
        screen, confirm = await dialog_on(pilot, TIER0_BASELINE, "x")
        await pilot.press("enter", "y", "enter", "tab", "enter")
        assert pilot.app.screen is confirm and confirm.query_one("#confirm", Button).disabled
        # A typed id that names another model does not confirm either.
        await burst(pilot, "shift+tab", *typed("v5"), "tab", *typed("reason"), "enter")
        assert pilot.app.screen is confirm
        assert await audit_actions(server, TIER0_BASELINE) == []


async def test_tab_visits_only_the_fields_and_buttons(server):
    async with make_app(server).run_test(size=(80, 24)) as pilot:
        _, confirm = await dialog_on(pilot, FALLBACK_PAGES, "r")
        # The strongest confirmation opens on its first field: the box the warnings ask to tick.
        assert confirm.focused is confirm.query_one("#acknowledge-target", Checkbox)
        assert "Space ticks the box, Tab, type x7-integrity, Tab, a reason" in " ".join(
            screen_text(pilot.app).split()
        )
        visited = []
        for _ in range(5):
            await pilot.press("tab")
            visited.append(confirm.focused)
        assert all(isinstance(widget, Input | Checkbox | Button) for widget in visited), visited
        assert [widget.id for widget in visited] == [
            "typed-id",
            "reason",
            "cancel",
            "acknowledge-target",
            "typed-id",
        ]
        # Everything it asks for is on the 80x24 screen: the focused field, the hint and the buttons.
        for widget_id in ("typed-id", "reason", "hint", "confirm"):
            region = confirm.query_one(f"#{widget_id}").region
            assert region.height and region.bottom <= 24, widget_id


async def test_a_press_dialog_opens_on_cancel_and_enter_cancels(server):
    async with make_app(server).run_test(size=(80, 24)) as pilot:
        screen, confirm = await dialog_on(pilot, TIER2_EXPERIMENT, "e")
        assert confirm.focused is confirm.query_one("#cancel", Button)
        assert "Press y to confirm, Esc to cancel." in screen_text(pilot.app)
        await pilot.press("enter")
        await wait_for(pilot, lambda: pilot.app.screen is screen, "the dialog to close")
        assert await audit_actions(server, TIER2_EXPERIMENT) == []


async def test_the_note_dialog_opens_on_its_text_so_a_first_paste_is_kept(server):
    async with make_app(server).run_test(size=(80, 24)) as pilot:
        screen, confirm = await dialog_on(pilot, TIER2_EXPERIMENT, "n")
        text = confirm.query_one("#text", Input)
        assert confirm.focused is text
        pilot.app.post_message(events.Paste("label job late again; recovers by 04:00"))
        await pilot.pause()
        assert text.value == "label job late again; recovers by 04:00"
        await pilot.press("enter")
        await wait_for(pilot, lambda: pilot.app.screen is screen, "the dialog to close")
        await wait_for(pilot, lambda: not screen.in_flight, "the note to be sent")
        assert await audit_actions(server, TIER2_EXPERIMENT) == ["note"]


async def test_keys_typed_while_the_dry_run_is_on_its_way_land_in_its_dialog_in_order(server):
    # The server's answer to the dry run is held back, as a slow link would: the engineer has typed the
    # variant, Tab and the reason before the dialog opens. Taken as the model view's keys, "5" and "2"
    # switched the chart window and the rest vanished.
    proxy = await HoldingProxy(server.url).start()
    app = FleetdeskApp(Backend(proxy.url, SecretStr(server.oncall_token)), ConsoleSettings())
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = ModelScreen(TIER0_BASELINE)
            await app.push_screen(screen)
            await wait_for(pilot, lambda: screen.detail is not None and app.me, "the model view")
            window = screen.window
            proxy.hold()
            await burst(pilot, "x", *typed("v52"), "tab", *typed("NE up"))
            await wait_for(pilot, lambda: proxy.held, "the dry run held back")
            assert isinstance(app.screen, ModelScreen) and screen.window is window
            proxy.release()
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmAction), "the dialog")
            confirm = app.screen
            await wait_for(
                pilot, lambda: confirm.query_one("#reason", Input).value == "NE up", "the reason"
            )
            assert confirm.query_one("#typed-id", Input).value == "v52"
            assert not confirm.query_one("#confirm", Button).disabled
    finally:
        await proxy.stop()
