"""Playbook actions from the model view, through their confirmation, against the real server."""

from __future__ import annotations

import json

import httpx
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
from textual.widgets import Button, Input
from textual.widgets._footer import FooterKey
from textual.widgets._toast import Toast

from fleetdesk.client import ActionIntent, ClientTimeouts, FleetdeskClient, PageRequest, RetryPolicy
from fleetdesk.console.app import Backend, FleetdeskApp
from fleetdesk.console.screens.audit import AuditScreen
from fleetdesk.console.screens.confirm import ConfirmAction
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.console.widgets.common.status import StatusLine
from fleetdesk.settings.console import ConsoleSettings
from fleetdesk.wire import ActionKind


async def open_model(pilot, model_id: str) -> ModelScreen:
    screen = ModelScreen(model_id)
    await pilot.app.push_screen(screen)
    await wait_for(
        pilot, lambda: screen.detail is not None and pilot.app.me is not None, f"{model_id} to load"
    )
    return screen


def footer_key(screen: ModelScreen, key: str) -> FooterKey:
    return next(item for item in screen.query(FooterKey) if item.key == key)


async def audit_actions(server, model_id: str) -> list[str]:
    async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as client:
        page = await client.audit(model_id=model_id, page=PageRequest(limit=100))
    return [record.action for record in page.items]


async def dialog(pilot) -> ConfirmAction:
    await wait_for(
        pilot, lambda: isinstance(pilot.app.screen, ConfirmAction), "the confirmation dialog"
    )
    return pilot.app.screen


def status(screen: ModelScreen) -> str:
    return screen.query_one(StatusLine).note


async def finished(pilot, screen: ModelScreen, kind: ActionKind) -> None:
    await wait_for(
        pilot,
        lambda: pilot.app.screen is screen and kind not in screen.in_flight,
        f"{kind} to finish",
    )


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("r", ActionKind.ROLLBACK),
        ("e", ActionKind.END_EXPERIMENT),
        ("x", ActionKind.ESCALATE),
        ("h", ActionKind.HALT_LAUNCH),
        ("a", ActionKind.ACK),
        ("n", ActionKind.NOTE),
    ],
)
async def test_each_action_on_a_tier2_model_confirms_with_y(server, key, kind):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        screen = await open_model(pilot, TIER2_EXPERIMENT)
        await pilot.press(key)
        confirm = await dialog(pilot)
        # Cancel is the default; a note opens on its text, which it needs
        first = "#text" if kind is ActionKind.NOTE else "#cancel"
        assert confirm.focused is confirm.query_one(first)
        text = " ".join(screen_text(pilot.app).split())
        assert "Server dry run:" in text and "Traffic moved:" in text and "Pages:" in text
        if kind is ActionKind.NOTE:
            confirm.query_one("#text", Input).value = "checked the feature pipeline"
            await pilot.press("enter")
        else:
            await pilot.press("y")
        await finished(pilot, screen, kind)
        assert status(screen).startswith("done:"), status(screen)
        assert await audit_actions(server, TIER2_EXPERIMENT) == [kind.value]


@pytest.mark.parametrize(
    ("model_id", "key", "kind"),
    [
        (TIER1_EXPERIMENT, "r", ActionKind.ROLLBACK),
        (TIER1_EXPERIMENT, "e", ActionKind.END_EXPERIMENT),
        (TIER0_BASELINE, "x", ActionKind.ESCALATE),
        (TIER0_BASELINE, "a", ActionKind.ACK),
    ],
)
async def test_tier0_and_tier1_need_the_id_typed_and_a_reason(server, model_id, key, kind):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        screen = await open_model(pilot, model_id)
        await pilot.press(key)
        confirm = await dialog(pilot)
        await pilot.press("y")  # not enough for TIER0/TIER1
        assert isinstance(pilot.app.screen, ConfirmAction)
        confirm_button = confirm.query_one("#confirm", Button)
        assert confirm_button.disabled
        confirm.query_one("#typed-id", Input).value = model_id[:-1]  # as if pasted
        confirm.query_one("#reason", Input).value = "NE regression after deploy"
        confirm.query_one("#reason", Input).focus()
        await pilot.press("enter")
        assert (
            isinstance(pilot.app.screen, ConfirmAction) and confirm_button.disabled
        )  # id not complete
        confirm.query_one("#typed-id", Input).focus()
        await pilot.press("end", model_id[-1])
        assert not confirm_button.disabled
        await pilot.press("enter")
        await finished(pilot, screen, kind)
        assert status(screen).startswith("done:"), status(screen)
        assert await audit_actions(server, model_id) == [kind.value]
        # The console's own audit log screen shows it.
        await pilot.press("l")
        await wait_for(
            pilot,
            lambda: isinstance(pilot.app.screen, AuditScreen) and pilot.app.screen.records,
            "the audit log",
        )
        record = pilot.app.screen.records[0]
        assert record.action == kind.value
        assert "NE regression after deploy" in (record.reason + str(record.detail))


async def test_escape_and_cancel_send_nothing(server):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        screen = await open_model(pilot, TIER2_EXPERIMENT)
        await pilot.press("r")
        await dialog(pilot)
        await pilot.press("escape")
        await wait_for(pilot, lambda: pilot.app.screen is screen, "the dialog to close")
        assert "cancelled" in status(screen)
        await pilot.press("r")
        await dialog(pilot)
        await pilot.press("enter")  # on the focused Cancel button
        await wait_for(pilot, lambda: pilot.app.screen is screen, "the dialog to close")
        assert not screen.in_flight
        assert await audit_actions(server, TIER2_EXPERIMENT) == []


async def test_keys_that_do_not_apply_are_disabled_with_a_reason(server):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        screen = await open_model(pilot, TIER0_BASELINE)
        assert screen.why_not(ActionKind.ROLLBACK) == "no baseline: escalate instead"
        assert (
            screen.why_not(ActionKind.END_EXPERIMENT)
            == "a baseline, not an experiment: nothing to end"
        )
        assert "not scale-up" in (screen.why_not(ActionKind.HALT_LAUNCH) or "")
        keys = screen.active_bindings
        assert not keys["r"].enabled and keys["x"].enabled
        # The bar shows the same: rollback dimmed, escalate bright (updated in place on load).
        await wait_for(
            pilot,
            lambda: (
                footer_key(screen, "r").has_class("-disabled")
                and not footer_key(screen, "x").has_class("-disabled")
            ),
            "the footer to show the key states",
        )
        await pilot.press("r")
        assert pilot.app.screen is screen  # a disabled key does nothing
        await pilot.press("question_mark")
        help_text = " ".join(screen_text(pilot.app).split())
        assert "disabled: no baseline: escalate instead" in help_text
        assert (
            "rollback" in help_text and "end-experiment" in help_text
        )  # binding ids for the keymap


async def test_read_only_and_viewer_hide_the_action_keys(server):
    async with make_app(server, read_only=True).run_test(size=(120, 40)) as pilot:
        screen = await open_model(pilot, TIER2_EXPERIMENT)
        assert not {"r", "e", "x", "h", "a", "n"} & set(screen.active_bindings)
    async with make_app(server, token="viewer").run_test(size=(120, 40)) as pilot:
        screen = await open_model(pilot, TIER2_EXPERIMENT)
        assert not {"r", "e", "x", "h", "a", "n"} & set(screen.active_bindings)
        assert "i" in screen.active_bindings  # reading stays


async def test_other_teams_token_gets_403_with_the_missing_permission(server):
    async with make_app(server, token="oncall:fb-feed-ranking").run_test(size=(120, 40)) as pilot:
        screen = await open_model(pilot, TIER2_EXPERIMENT)
        await pilot.press("r")
        await wait_for(
            pilot,
            lambda: (
                "lacks the permission" in status(screen)
                or isinstance(pilot.app.screen, ConfirmAction)
            ),
            "the refusal or the dialog",
            deadline=5,
        )
        if isinstance(pilot.app.screen, ConfirmAction):
            await pilot.press("y")
            await finished(pilot, screen, ActionKind.ROLLBACK)
        assert "lacks the permission 'act:ig-feed-ranking'" in status(screen), status(screen)
        assert not screen.in_flight
        assert await audit_actions(server, TIER2_EXPERIMENT) == []


async def end_experiment_after_someone_rolled_it_back(pilot, server) -> ModelScreen:
    """Ask to end TIER2_EXPERIMENT; someone else rolls it back while the preview is read; confirm (a 409)."""
    screen = await open_model(pilot, TIER2_EXPERIMENT)
    await pilot.press("e")
    await dialog(pilot)
    async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as other:
        await other.perform(
            ActionIntent.of(
                ActionKind.ROLLBACK,
                TIER2_EXPERIMENT,
                expected_serving_model_id=TIER2_EXPERIMENT,
                reason="other on-call",
            )
        )
    await pilot.press("y")
    await finished(pilot, screen, ActionKind.END_EXPERIMENT)
    return screen


async def test_state_changed_behind_the_console_gives_409_in_plain_words(server):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        screen = await end_experiment_after_someone_rolled_it_back(pilot, server)
        words = status(screen)
        assert "nothing was done: the model changed since you looked" in words, words
        assert "serving ig_feed_late-stage_mtml.v41" in words
        assert await audit_actions(server, TIER2_EXPERIMENT) == ["rollback"]


async def test_the_next_dialog_is_not_covered_by_the_last_failure(server):
    async with make_app(server).run_test(size=(80, 24), notifications=True) as pilot:
        screen = await end_experiment_after_someone_rolled_it_back(pilot, server)
        await wait_for(pilot, lambda: screen.query(Toast), "the failure's toast")
        await pilot.press("n")
        confirm = await dialog(pilot)
        await pilot.pause()
        assert not confirm.query(Toast), "a toast covers the dialog's fields and buttons"


async def test_in_flight_key_is_disabled_and_a_timeout_retry_reuses_the_key(server):
    proxy = await HoldingProxy(server.url).start()
    backend = Backend(
        proxy.url, SecretStr(server.oncall_token), timeouts=ClientTimeouts(read=2.0, deadline=4.0)
    )
    app = FleetdeskApp(backend, ConsoleSettings())
    app.client.retry = RetryPolicy(attempts=2, base_delay=0.05, max_delay=0.1)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await open_model(pilot, TIER2_EXPERIMENT)
            await pilot.press("r")
            await dialog(pilot)
            proxy.hold()
            await pilot.press("y")
            await wait_for(pilot, lambda: proxy.held > 0, "the rollback to reach the server")
            assert screen.why_not(ActionKind.ROLLBACK) == "rollback in flight"
            assert not screen.active_bindings["r"].enabled
            assert "rollback in flight" in status(screen)
            assert screen.why_not(ActionKind.ESCALATE) is None  # other keys still work
            await finished(pilot, screen, ActionKind.ROLLBACK)
            assert "not confirmed: check audit log before retrying" in status(screen), status(
                screen
            )
            first = screen.unconfirmed[ActionKind.ROLLBACK]
            proxy.release()
            # It did happen on the server; retrying sends the same key and gets the stored result.
            assert screen.why_not(ActionKind.ROLLBACK) is None  # a retry is always allowed
            await pilot.press("r")
            confirm = await dialog(pilot)
            assert confirm.retry_of == first.idempotency_key
            assert "same idempotency key" in " ".join(screen_text(pilot.app).split())
            await pilot.press("y")
            await finished(pilot, screen, ActionKind.ROLLBACK)
            assert status(screen).startswith("done:"), status(screen)
            assert ActionKind.ROLLBACK not in screen.unconfirmed
            assert await audit_actions(server, TIER2_EXPERIMENT) == ["rollback"]
    finally:
        await proxy.stop()


class RuledOut(httpx.AsyncBaseTransport):
    """Passes everything to the real server, but its model details rule escalation out, with a reason of
    the server's own that no console rule could produce: whatever the console shows must come from here."""

    REASON = "change freeze until 06:00: page the incident commander instead"

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        parts = request.url.path.split("/")
        if request.method != "GET" or len(parts) != 4 or parts[:3] != ["", "v1", "models"]:
            return response
        body = json.loads(await response.aread())
        for option in body["actions"]:
            if option["kind"] == "escalate":
                option.update(available=False, reason=self.REASON)
        return httpx.Response(
            response.status_code, headers={"content-type": "application/json"}, json=body
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


async def test_the_console_shows_exactly_what_the_server_says_about_each_key(server):
    app = make_app(server)
    app.client = FleetdeskClient(server.url, SecretStr(server.oncall_token), transport=RuledOut())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_model(pilot, TIER2_EXPERIMENT)
        assert screen.detail is not None
        for option in screen.detail.actions:
            assert screen.why_not(option.kind) == (None if option.available else option.reason)
        assert screen.why_not(ActionKind.ESCALATE) == RuledOut.REASON
        assert not screen.active_bindings["x"].enabled
        await pilot.press("x")
        assert pilot.app.screen is screen  # nothing asked, nothing sent
        await pilot.press("question_mark")
        assert f"disabled: {RuledOut.REASON[:40]}" in " ".join(
            screen_text(pilot.app).split()
        )  # cut at the width
    assert await audit_actions(server, TIER2_EXPERIMENT) == []
