"""Escalations reach a real Alertmanager; while it is down they are recorded, kept, and retried."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from pydantic import SecretStr

from fleetdesk.client import ActionIntent, FleetdeskClient, RetryPolicy
from fleetdesk.console.app import Backend, FleetdeskApp
from fleetdesk.console.screens.confirm import ConfirmAction
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.console.widgets.common.status import StatusLine
from fleetdesk.server import incidents
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.server.integrations.alertmanager import ALERT_NAME, AlertmanagerTarget
from fleetdesk.server.integrations.options import attach_paging
from fleetdesk.server.integrations.outbox import RetryBackoff
from fleetdesk.settings.console import ConsoleSettings
from fleetdesk.wire import ActionKind

from .processes import Daemon, alertmanager

pytestmark = pytest.mark.integration

T = TypeVar("T")
DEADLINE = 20.0
STABLE_TIER1 = "ig_stories_tray_mtml.v30"
TIER4 = "ig_tagging_late-stage_dlrm.v6"
TIER2_EXPERIMENT = "ig_feed_late-stage_mtml.x1-watch-time"
FAST_RETRY = RetryBackoff(base_delay=0.2, max_delay=0.5)


async def eventually(
    probe: Callable[[], Awaitable[T | None]], what: str, deadline: float = DEADLINE
) -> T:
    """Poll ``probe`` until it returns something truthy; fail naming ``what`` at the deadline."""
    end = time.monotonic() + deadline
    while True:
        result = await probe()
        if result:
            return result
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {deadline:g}s waiting for {what}")
        await asyncio.sleep(0.1)


async def escalation_alerts(alertmanager_url: str, model_id: str) -> list[dict[str, Any]]:
    """Active escalation alerts for one model, as Alertmanager lists them."""
    async with httpx.AsyncClient(timeout=5.0) as http:
        response = await http.get(
            f"{alertmanager_url}/api/v2/alerts",
            params={"filter": [f'alertname="{ALERT_NAME}"', f'model_id="{model_id}"']},
        )
    response.raise_for_status()
    return response.json()


@pytest.fixture
def paged_server(
    small_server: EmbeddedServer, alertmanager_daemon: Daemon
) -> Iterator[EmbeddedServer]:
    target = AlertmanagerTarget(
        alertmanager_daemon.url, small_server.url, backoff=FAST_RETRY, sweep_interval=0.2
    )
    attach_paging(small_server.backend, target)
    yield small_server
    target.close()


def client_for(server: EmbeddedServer) -> FleetdeskClient:
    return FleetdeskClient(
        server.url, SecretStr(server.oncall_token), retry=RetryPolicy(attempts=1)
    )


async def test_escalation_arrives_with_identity_labels_deduplicates_and_resolves(
    paged_server: EmbeddedServer, alertmanager_daemon: Daemon
) -> None:
    model = paged_server.backend.registry.get(STABLE_TIER1)
    async with client_for(paged_server) as client:
        first = await client.perform(
            ActionIntent.of(ActionKind.ESCALATE, model.id, reason="NE up 8% since the 14:00 push")
        )
        assert first.pages and first.pages[0].delivered_via == "alertmanager"
        alerts = await eventually(
            lambda: escalation_alerts(alertmanager_daemon.url, model.id), "the alert"
        )
        assert len(alerts) == 1
        alert = alerts[0]
        assert alert["labels"] == {
            "alertname": ALERT_NAME,
            "model_id": model.id,
            "model_type": model.type,
            "tier": "TIER1",
            "team": model.owner_team,
            "severity": "critical",
        }
        annotations = alert["annotations"]
        assert "NE up 8% since the 14:00 push" in annotations["summary"]
        assert model.purpose in annotations["context"]
        assert (
            annotations["console"]
            == f"fleetdesk console --server {paged_server.url}  # then open {model.id}"
        )
        assert annotations["incident"] == str(first.incident_id)
        assert alert["generatorURL"] == f"{paged_server.url}/v1/models/{model.id}"

        await client.perform(
            ActionIntent.of(ActionKind.ESCALATE, model.id, reason="still climbing")
        )
        fingerprint = alert["fingerprint"]

        async def updated() -> list[dict[str, Any]] | None:
            found = await escalation_alerts(alertmanager_daemon.url, model.id)
            return (
                found
                if found and found[0]["annotations"]["summary"].endswith("still climbing")
                else None
            )

        repeated = await eventually(updated, "the repeat to update the same alert")
        assert [a["fingerprint"] for a in repeated] == [fingerprint], (
            "a repeat must be the same alert"
        )

    # The model is stable, so its incident resolves when the server checks it; the page is then withdrawn.
    assert first.incident_id is not None
    backend = paged_server.backend
    with backend.write() as conn:
        assert incidents.resolve_if_clear(conn, first.incident_id, backend.clock.now())

    async def withdrawn() -> bool:
        return not await escalation_alerts(alertmanager_daemon.url, model.id)

    await eventually(withdrawn, "the alert to resolve (endsAt) after the incident resolved")


async def test_alertmanager_down_failure_on_incident_then_retry_delivers(
    small_server: EmbeddedServer, tmp_path: Path
) -> None:
    directory = tmp_path / "am-restartable"
    directory.mkdir()
    daemon = alertmanager(directory)
    daemon.start()
    port_url = daemon.url
    daemon.stop()  # down before the escalation
    target = AlertmanagerTarget(port_url, small_server.url, backoff=FAST_RETRY, sweep_interval=0.2)
    attach_paging(small_server.backend, target)
    try:
        async with client_for(small_server) as client:
            result = await client.perform(
                ActionIntent.of(
                    ActionKind.ESCALATE,
                    TIER4,
                    reason="tagging NE regression, owner unreachable on chat",
                )
            )
            assert result.incident_id is not None
            detail = await client.incident(result.incident_id)
            failures = [entry for entry in detail.timeline if entry.kind == "page_failed"]
            assert len(failures) == 1, detail.timeline
            assert "connection refused" in failures[0].text and "retried" in failures[0].text
            assert len(target.outbox.pending()) == 1, (
                "the failed page must stay queued, not be dropped"
            )

            daemon.start()  # same port, fresh state: only the retry can put the alert there
            alerts = await eventually(
                lambda: escalation_alerts(port_url, TIER4), "the retried alert"
            )
            assert alerts[0]["labels"]["severity"] == "info"
            assert alerts[0]["labels"]["tier"] == "TIER4"

            async def delivered_entry() -> list[Any] | None:
                timeline = (await client.incident(result.incident_id)).timeline
                return [entry for entry in timeline if entry.kind == "page_delivered"] or None

            delivered = await eventually(
                delivered_entry, "the incident to show the retry got through"
            )
            assert "delivered on try" in delivered[0].text
            assert target.outbox.pending() == []
    finally:
        target.close()
        daemon.stop()


async def test_escalation_from_the_console_arrives_in_alertmanager(
    paged_server: EmbeddedServer,
    alertmanager_daemon: Daemon,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(
        "XDG_CONFIG_HOME", str(tmp_path / "config")
    )  # never the engineer's own config
    monkeypatch.delenv("FLEETDESK_TOKEN", raising=False)
    model = paged_server.backend.registry.get(TIER2_EXPERIMENT)
    app = FleetdeskApp(
        Backend(paged_server.url, SecretStr(paged_server.oncall_token)), ConsoleSettings()
    )
    async with app.run_test(size=(120, 40)) as pilot:

        async def shown(condition: Callable[[], object]) -> bool:
            await pilot.pause(0.02)
            return bool(condition())

        screen = ModelScreen(model.id)
        await app.push_screen(screen)
        await eventually(
            lambda: shown(lambda: screen.detail is not None and app.me is not None),
            "the model view",
        )
        await pilot.press("x")
        await eventually(
            lambda: shown(lambda: isinstance(app.screen, ConfirmAction)), "the confirmation dialog"
        )
        await pilot.press("y")
        await eventually(
            lambda: shown(
                lambda: app.screen is screen and ActionKind.ESCALATE not in screen.in_flight
            ),
            "the escalation to finish",
        )
        note = screen.query_one(StatusLine).note
        assert note.startswith("done:"), note
    alerts = await eventually(
        lambda: escalation_alerts(alertmanager_daemon.url, model.id), "the console's page"
    )
    assert alerts[0]["labels"] == {
        "alertname": ALERT_NAME,
        "model_id": model.id,
        "model_type": model.type,
        "tier": "TIER2",
        "team": model.owner_team,
        "severity": "warning",
    }


async def test_a_page_queued_when_the_server_stopped_is_delivered_by_the_next_run(
    small_server: EmbeddedServer, tmp_path: Path
) -> None:
    directory = tmp_path / "am-later"
    directory.mkdir()
    daemon = alertmanager(directory)  # configured, not started: down during the escalation
    first_run = AlertmanagerTarget(
        daemon.url, small_server.url, backoff=FAST_RETRY, sweep_interval=0.2
    )
    attach_paging(small_server.backend, first_run)
    async with client_for(small_server) as client:
        await client.perform(
            ActionIntent.of(ActionKind.ESCALATE, TIER4, reason="queued across a restart")
        )
    first_run.close()  # the server stops with the page still queued in its database
    assert len(first_run.outbox.pending()) == 1
    daemon.start()
    next_run = AlertmanagerTarget(
        daemon.url, small_server.url, backoff=FAST_RETRY, sweep_interval=0.2
    )
    attach_paging(small_server.backend, next_run)
    try:
        alerts = await eventually(
            lambda: escalation_alerts(daemon.url, TIER4), "the page from the earlier run"
        )
        assert alerts[0]["annotations"]["reason"] == "queued across a restart"
    finally:
        next_run.close()
        daemon.stop()
