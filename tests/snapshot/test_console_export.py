"""The console's ``s`` key: a bundle of the screen as it was, with no secret in any byte."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import svgtext
from pydantic import SecretStr
from textual.pilot import Pilot

from fleetdesk.client import ActionIntent, FleetdeskClient
from fleetdesk.console.app import Backend, FleetdeskApp
from fleetdesk.console.snapshot.app import SnapshotConsole
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.settings.console import ConsoleSettings
from fleetdesk.snapshot.bundle import Screen
from fleetdesk.snapshot.redact import encodings
from fleetdesk.snapshot.reopen import load_snapshot
from fleetdesk.wire import ActionKind, Window

EXPERIMENT = "ig_feed_late-stage_mtml.x1-watch-time"
DEADLINE = 30.0


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path / "data" / "fleetdesk" / "snapshots"


async def _wait_for(pilot: Pilot, condition: Callable[[], object], what: str) -> None:
    give_up = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > give_up:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


async def _note(server: EmbeddedServer, text: str) -> None:
    async with FleetdeskClient(server.url, SecretStr(server.oncall_token)) as client:
        await client.perform(ActionIntent.of(ActionKind.ACK, EXPERIMENT, reason="looking"))
        await client.perform(ActionIntent.of(ActionKind.NOTE, EXPERIMENT, text=text))


async def _export_model_screen(server: EmbeddedServer, folder: Path) -> Path:
    from fleetdesk.console.screens.model import ModelScreen

    app = FleetdeskApp(Backend(server.url, SecretStr(server.oncall_token)), ConsoleSettings())
    async with app.run_test(size=(120, 40)) as pilot:
        await _wait_for(pilot, lambda: getattr(app.screen, "_loaded", False), "the fleet")
        app.push_screen(ModelScreen(EXPERIMENT))
        await _wait_for(
            pilot, lambda: getattr(app.screen, "series", None) is not None, "the model screen"
        )
        await pilot.press("2")  # the 6h window: the snapshot must remember which one was shown
        await _wait_for(
            pilot,
            lambda: app.screen.window is Window.H6 and app.screen.series.window is Window.H6,
            "the 6h series",
        )
        await pilot.press("s")
        await _wait_for(pilot, lambda: list(folder.glob("*.json")), "the snapshot files")
    [json_file] = folder.glob("*.json")
    return json_file


async def test_s_writes_the_live_screen_and_its_data(
    server: EmbeddedServer, data_home: Path
) -> None:
    await _note(server, "next: escalate upstream if NE stays high")
    json_file = await _export_model_screen(server, data_home)
    snapshot = load_snapshot(json_file).snapshot
    assert snapshot.view.screen is Screen.MODEL and snapshot.view.window is Window.H6
    assert (
        snapshot.exported_by == "oncall"
        and snapshot.model_id == EXPERIMENT
        and snapshot.redactions == {}
    )
    assert snapshot.incident is not None and snapshot.incident.notes[-1].text.startswith(
        "next: escalate"
    )
    svg = json_file.with_suffix(".svg").read_text()
    shown = "\n".join(svgtext.rows(svg))
    # The live screenshot: the status line says live, the chart shows the chosen window.
    assert (
        " live  │  charts over 6h" in shown
        and re.search(r"calibration \d\.\d{3} 6h", shown)
        and svg == snapshot.screen_svg
    )
    assert "oncall: next: escalate" in shown
    assert "next: escalate upstream if NE stays high" in json_file.with_suffix(".md").read_text()


async def test_s_with_a_secret_on_screen_draws_it_again_from_masked_data(
    server: EmbeddedServer, data_home: Path
) -> None:
    token = server.oncall_token
    await _note(
        server,
        f"temp creds: Authorization: Bearer {token} and password=hunter22x for the dashboard",
    )
    json_file = await _export_model_screen(server, data_home)
    for path in json_file.parent.iterdir():
        data = path.read_bytes()
        for form in encodings(token) | {"hunter22x"}:
            assert form.encode() not in data, (path.name, form)
    snapshot = load_snapshot(json_file).snapshot
    # The client already blanks its own token in answers; the redaction pass masks the rest.
    assert (
        snapshot.redactions["authorization-header"] >= 1
        and snapshot.redactions["secret-assignment"] >= 1
    )
    shown = "\n".join(svgtext.rows(json_file.with_suffix(".svg").read_text()))
    assert "snapshot by oncall at 2026-11-30 12:00:00 UTC (read-only)" in shown
    assert (
        "oncall: temp creds:" in shown
        and "Authorization: [REDACTED] and password=[REDACTED]" in shown
    )


async def test_reopened_console_has_no_snapshot_key(
    server: EmbeddedServer, data_home: Path, tmp_path: Path
) -> None:
    await _note(server, "next: nothing")
    snapshot = load_snapshot(await _export_model_screen(server, data_home)).snapshot
    app = SnapshotConsole(snapshot)
    async with app.run_test(size=(120, 40)) as pilot:
        await _wait_for(pilot, app.drawn, "the reopened model screen")
        assert "snapshot" not in {
            active.binding.id for active in app.screen.active_bindings.values() if active.enabled
        }
        await pilot.press("s")
        await pilot.pause()
    assert len(list(data_home.glob("*.json"))) == 1


async def test_s_on_the_fleet_and_incident_screens_remembers_the_view(
    server: EmbeddedServer, data_home: Path
) -> None:
    from fleetdesk.console.screens.incident import IncidentScreen
    from fleetdesk.console.screens.model import ModelScreen

    await _note(server, "next: hand to the foundation team")
    app = FleetdeskApp(Backend(server.url, SecretStr(server.oncall_token)), ConsoleSettings())
    async with app.run_test(size=(80, 24)) as pilot:
        await _wait_for(pilot, lambda: getattr(app.screen, "_loaded", False), "the fleet")
        await pilot.press("s")  # on the fleet: the selected (worst) model's handoff
        await _wait_for(
            pilot, lambda: len(list(data_home.glob("*.json"))) == 1, "the fleet snapshot"
        )
        app.push_screen(ModelScreen(EXPERIMENT))
        await _wait_for(
            pilot, lambda: getattr(app.screen, "detail", None) is not None, "the model screen"
        )
        await pilot.press("i")
        await _wait_for(
            pilot, lambda: isinstance(app.screen, IncidentScreen), "the incident screen"
        )
        await pilot.press("s")
        await _wait_for(
            pilot, lambda: len(list(data_home.glob("*.json"))) == 2, "the incident snapshot"
        )
    views = {
        snapshot.view.screen: snapshot
        for snapshot in (load_snapshot(path).snapshot for path in data_home.glob("*.json"))
    }
    assert views[Screen.FLEET].model_id == views[Screen.FLEET].models[0].id
    snapshot = views[Screen.INCIDENT]
    assert snapshot.model_id == EXPERIMENT
    reopened = SnapshotConsole(snapshot)
    async with reopened.run_test(size=(80, 24)) as pilot:
        await _wait_for(
            pilot, lambda: isinstance(reopened.screen, IncidentScreen), "the reopened incident"
        )
        assert reopened.screen.incident_id == snapshot.incident.id
