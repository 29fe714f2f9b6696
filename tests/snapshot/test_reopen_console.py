"""Reopened in the console: the same screens and values as the live console, read-only, with the banner."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import SecretStr
from textual.pilot import Pilot
from textual.screen import ModalScreen

from fleetdesk.client import ActionIntent, FleetdeskClient
from fleetdesk.console.app import Backend, FleetdeskApp
from fleetdesk.console.snapshot.app import SnapshotConsole
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.settings.console import ConsoleSettings
from fleetdesk.snapshot.bundle import Screen
from fleetdesk.snapshot.export import capture, write_bundle
from fleetdesk.snapshot.redact import Redactor
from fleetdesk.snapshot.reopen import load_snapshot
from fleetdesk.wire import ActionKind, Window

EXPERIMENT = "ig_feed_late-stage_mtml.x1-watch-time"
DEADLINE = 20.0
SIZE = (120, 40)


@pytest.fixture(autouse=True)
def _no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("NO_COLOR", raising=False)


async def _wait_for(pilot: Pilot, condition: Callable[[], object], what: str) -> None:
    give_up = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > give_up:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)
    await pilot.pause()


def _screen_text(app: FleetdeskApp) -> list[str]:
    compositor = app.screen._compositor  # noqa: SLF001 - the composed cells, read-only
    chops = compositor._render_chops(compositor.size.region, lambda y: True)  # noqa: SLF001
    return ["".join(strip.text for strip in chop.values()) for chop in chops]


async def _exported(server: EmbeddedServer, out: Path) -> Path:
    """A handoff after real actions, written and read back through the file."""
    token = SecretStr(server.oncall_token)
    async with FleetdeskClient(server.url, token) as client:
        await client.perform(ActionIntent.of(ActionKind.ACK, EXPERIMENT, reason="looking"))
        await client.perform(
            ActionIntent.of(
                ActionKind.ROLLBACK,
                EXPERIMENT,
                expected_serving_model_id=EXPERIMENT,
                reason="NE regression since the x1 launch",
            )
        )
        await client.perform(
            ActionIntent.of(
                ActionKind.NOTE, EXPERIMENT, text="next: escalate upstream if NE stays high"
            )
        )
        snapshot = await capture(client, server.url, EXPERIMENT, windows=list(Window))
    return write_bundle(snapshot, Redactor([server.oncall_token]), out).json


def _model_loaded(app: FleetdeskApp) -> bool:
    return (
        getattr(app.screen, "detail", None) is not None
        and getattr(app.screen, "series", None) is not None
    )


async def _live_and_reopened(
    server: EmbeddedServer, json_file: Path, model_id: str
) -> tuple[list[str], list[str]]:
    """The model screen's text in the live console and in the console reopened on the snapshot."""
    from fleetdesk.console.screens.model import ModelScreen

    live = FleetdeskApp(
        Backend(server.url, SecretStr(server.viewer_token)), ConsoleSettings(read_only=True)
    )
    async with live.run_test(size=SIZE) as pilot:
        await _wait_for(pilot, lambda: getattr(live.screen, "_loaded", False), "the live fleet")
        live.push_screen(ModelScreen(model_id))
        await _wait_for(pilot, lambda: _model_loaded(live), "the live model screen")
        live_lines = _screen_text(live)
    frozen = SnapshotConsole(load_snapshot(json_file).snapshot)
    async with frozen.run_test(size=SIZE) as pilot:
        await _wait_for(pilot, frozen.drawn, "the reopened model screen")
        frozen_lines = _screen_text(frozen)
    return live_lines, frozen_lines


def _same_but_the_status_line(live_lines: list[str], frozen_lines: list[str], banner: str) -> None:
    [status] = [index for index, line in enumerate(frozen_lines) if banner in line]
    assert "live" in live_lines[status]
    assert [line for index, line in enumerate(frozen_lines) if index != status] == [
        line for index, line in enumerate(live_lines) if index != status
    ]


async def test_reopened_model_screen_shows_what_the_live_console_shows(
    server: EmbeddedServer, tmp_path: Path
) -> None:
    live_lines, frozen_lines = await _live_and_reopened(
        server, await _exported(server, tmp_path), EXPERIMENT
    )
    _same_but_the_status_line(
        live_lines, frozen_lines, "snapshot by oncall at 2026-11-30 12:00:00 UTC (read-only)"
    )
    assert any("serving ig_feed_late-stage_mtml.v41 at 0% traffic" in line for line in frozen_lines)


async def test_snapshot_of_a_live_drill_reopens_to_the_same_screen(
    server_factory, tmp_path: Path
) -> None:
    from fleetdesk.drills.replay import drill_fleet, plan_replay, write_fleet
    from fleetdesk.drills.scenario import load_scenario

    scenario, path = load_scenario("launch-ne-regression")
    fleet = drill_fleet(scenario, str(path))
    plan = plan_replay(scenario, fleet)
    server = server_factory(str(write_fleet(fleet, tmp_path / "fleet.json")), now=scenario.start)
    model_id = scenario.incidents[0].model_id
    async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as admin:
        # Replay the drill as `fleetdesk drill` does (clock, then buckets) until its incident opens.
        for tick in plan.ticks:
            await admin.set_clock(tick.end)
            await admin.ingest(list(tick.buckets))
            if (await admin.model(model_id)).open_incident_id is not None:
                break
        else:
            raise AssertionError("the drill never paged")
    async with FleetdeskClient(server.url, SecretStr(server.oncall_token)) as oncall:
        await oncall.perform(ActionIntent.of(ActionKind.ACK, model_id, reason="drill"))
        await oncall.perform(
            ActionIntent.of(
                ActionKind.HALT_LAUNCH,
                model_id,
                expected_serving_model_id=model_id,
                reason="NE regression in scale-up",
            )
        )
        await oncall.perform(
            ActionIntent.of(
                ActionKind.NOTE,
                model_id,
                text="next: watch NE for two buckets, then decide rollback",
            )
        )
        snapshot = await capture(oncall, server.url, model_id, windows=list(Window))
    json_file = write_bundle(snapshot, Redactor([server.oncall_token]), tmp_path / "out").json
    live_lines, frozen_lines = await _live_and_reopened(server, json_file, model_id)
    when = snapshot.exported_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    _same_but_the_status_line(live_lines, frozen_lines, f"snapshot by oncall at {when} (read-only)")
    assert any("halted" in line for line in frozen_lines)


async def test_reopened_console_has_no_action_keys_and_every_screen_works(
    server: EmbeddedServer, tmp_path: Path
) -> None:
    from fleetdesk.console.screens.audit import AuditScreen
    from fleetdesk.console.screens.fleet import FleetScreen
    from fleetdesk.console.screens.incident import IncidentScreen

    snapshot = load_snapshot(await _exported(server, tmp_path)).snapshot
    app = SnapshotConsole(snapshot)
    async with app.run_test(size=SIZE) as pilot:
        await _wait_for(pilot, app.drawn, "the reopened model screen")
        keys = {
            active.binding.id for active in app.screen.active_bindings.values() if active.enabled
        }
        assert not keys & {"rollback", "end-experiment", "escalate", "halt-launch", "ack", "note"}
        for key in "reahxn":
            await pilot.press(key)
        await pilot.pause()
        assert not isinstance(app.screen, ModalScreen)
        await pilot.press("i")
        await _wait_for(
            pilot, lambda: isinstance(app.screen, IncidentScreen), "the incident screen"
        )
        await _wait_for(
            pilot,
            lambda: any(
                "next: escalate upstream if NE stays high" in line for line in _screen_text(app)
            ),
            "the incident notes",
        )
        assert any("snapshot by oncall" in line for line in _screen_text(app))
        await pilot.press("escape", "l")
        await _wait_for(pilot, lambda: isinstance(app.screen, AuditScreen), "the audit screen")
        await _wait_for(
            pilot,
            lambda: "NE regression since the x1 launch" in "".join(_screen_text(app)),
            "the rollback in the audit log",
        )
        await pilot.press("escape", "b")  # the baseline is one key away, so it was captured too
        await _wait_for(
            pilot,
            lambda: (
                getattr(app.screen, "model_id", None) == "ig_feed_late-stage_mtml.v41"
                and _model_loaded(app)
            ),
            "the baseline's model screen",
        )
        assert any("snapshot by oncall" in line for line in _screen_text(app))
        await pilot.press("escape", "escape")
        await _wait_for(pilot, lambda: isinstance(app.screen, FleetScreen), "the fleet screen")
        text = "\n".join(_screen_text(app))
        assert f"{len(snapshot.models)} models" in text and "snapshot by oncall" in text
        assert all(row.id[:20] in text for row in snapshot.models)
        [row] = [line for line in _screen_text(app) if " -4% " in line]
        assert "ig_feed_late-stage_mtml.x" in row and "TIER2" in row and "#2" in row


def test_reopened_screen_snapshot(server: EmbeddedServer, tmp_path: Path, snap_compare) -> None:
    import asyncio

    snapshot = load_snapshot(asyncio.run(_exported(server, tmp_path))).snapshot
    app = SnapshotConsole(snapshot)

    async def drawn(pilot: Pilot) -> None:
        await _wait_for(pilot, app.drawn, "the reopened model screen")

    assert snap_compare(app, terminal_size=SIZE, run_before=drawn)


HOSTILE = "[bold red]pwned[/] \x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07 \u202eevil\u202c done"


async def test_hostile_snapshot_text_shows_literally_on_the_incident_screen() -> None:
    """A snapshot is a file from someone else: its text must not drive the terminal or be read as markup."""
    import factory

    from fleetdesk.console.screens.incident import IncidentScreen
    from fleetdesk.snapshot.bundle import View

    snapshot = factory.snapshot(note=HOSTILE).model_copy(
        update={"view": View(screen=Screen.INCIDENT)}
    )
    app = SnapshotConsole(snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await _wait_for(
            pilot, lambda: isinstance(app.screen, IncidentScreen), "the incident screen"
        )
        await _wait_for(pilot, lambda: "pwned" in "".join(_screen_text(app)), "the hostile note")
        text = "".join(_screen_text(app))
        assert "[bold red]pwned[/]" in text and "\\x1b[2J" in text and "\\u202eevil" in text
        assert "\x1b" not in text and "\u202e" not in text


def test_reopened_incident_screen_snapshot_80x24(snap_compare) -> None:
    import factory

    from fleetdesk.snapshot.bundle import View

    app = SnapshotConsole(
        factory.snapshot(note=HOSTILE).model_copy(update={"view": View(screen=Screen.INCIDENT)})
    )

    async def drawn(pilot: Pilot) -> None:
        await _wait_for(pilot, lambda: "pwned" in "".join(_screen_text(app)), "the incident notes")

    assert snap_compare(app, terminal_size=(80, 24), run_before=drawn)


@pytest.mark.parametrize("screen", list(Screen))
def test_headless_screenshot_draws_the_exported_view(screen: Screen) -> None:
    import factory
    import svgtext

    from fleetdesk.console.snapshot.app import render_svg
    from fleetdesk.snapshot.bundle import View

    svg, why_not = render_svg(
        factory.snapshot().model_copy(update={"view": View(screen=screen)}), (80, 24)
    )
    assert svg is not None, why_not
    shown = "\n".join(svgtext.rows(svg))
    assert "snapshot by alice at 2026-12-03 06:00:00 UTC (read-only)" in shown
    title = {
        Screen.FLEET: "fleetdesk · fleet",
        Screen.MODEL: "fleetdesk · model ig_feed_late_mtml_exp7",
        Screen.INCIDENT: "fleetdesk · incident #7",
    }[screen]
    assert shown.lstrip().startswith(title)
