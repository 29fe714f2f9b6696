"""Export from a live server after real actions, reopen, and get the same values; the token never leaves memory."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from fleetdesk.client import ActionIntent, FleetdeskClient, NotFound, PageRequest
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.snapshot.frozen import FrozenClient
from fleetdesk.snapshot.redact import MASK, encodings
from fleetdesk.snapshot.reopen import load_snapshot
from fleetdesk.wire import ActionKind, IncidentState, Window

EXPERIMENT = "ig_feed_late-stage_mtml.x1-watch-time"
BASELINE = "ig_feed_late-stage_mtml.v41"


async def _triage(server: EmbeddedServer) -> str:
    """What an on-call engineer does before handing over: ack, roll back, leave notes (one with secrets)."""
    token = server.oncall_token
    async with FleetdeskClient(server.url, SecretStr(token)) as client:
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
                ActionKind.NOTE,
                EXPERIMENT,
                text="next: if NE stays high after rollback, escalate upstream",
            )
        )
        leaky = (
            f"debug: curl -H 'Authorization: Bearer {token}' http://svc:pw-4321@grafana.internal/d "
            f"b64={base64.b64encode(token.encode()).decode()} customer CUST-778899"
        )
        await client.perform(ActionIntent.of(ActionKind.NOTE, EXPERIMENT, text=leaky))
    return token


def _export(server: EmbeddedServer, home: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    config = home / "config" / "fleetdesk"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        '[snapshot.secret_patterns]\ncustomer-id = "CUST-[0-9]{6}"\n'
    )
    env = {
        **os.environ,
        "FLEETDESK_TOKEN": server.oncall_token,
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetdesk.cli",
            "snapshot",
            "export",
            "--server",
            server.url,
            "--model",
            EXPERIMENT,
            *extra,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_export_reopen_same_values_and_no_token_in_any_byte(
    server: EmbeddedServer, tmp_path: Path
) -> None:
    token = await _triage(server)
    done = _export(server, tmp_path)
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "data" / "fleetdesk" / "snapshots"
    files = sorted(folder.iterdir())
    assert [path.suffix for path in files] == [".json", ".md", ".svg"]
    for path in files:
        assert str(path) in done.stdout and path.stat().st_mode & 0o777 == 0o600
        data = path.read_bytes()
        for form in encodings(token) | {
            base64.b64encode(token.encode()).decode(),
            "pw-4321",
            "CUST-778899",
        }:
            assert form.encode() not in data, (path.name, form)
    assert token not in done.stdout + done.stderr

    [json_file] = [path for path in files if path.suffix == ".json"]
    snapshot = load_snapshot(json_file).snapshot
    assert snapshot.exported_by == "oncall" and snapshot.server.url == server.url
    assert snapshot.redactions["customer-id"] >= 1 and snapshot.redactions["exporter-token"] >= 1
    assert {series.window for series in snapshot.stability} == set(Window)
    async with FleetdeskClient(server.url, SecretStr(token)) as live:
        assert snapshot.model == await live.model(EXPERIMENT)
        assert snapshot.lineage == await live.lineage(EXPERIMENT)
        for window in Window:
            assert snapshot.series(window) == await live.stability(EXPERIMENT, window)
        assert snapshot.fleet == await live.fleet_summary()
        incident = await live.incident(snapshot.model.open_incident_id)
        audit = (await live.audit(model_id=EXPERIMENT)).items
    assert snapshot.model.live.serving_model_id == BASELINE
    assert snapshot.incident.state is IncidentState.ACKNOWLEDGED
    assert [entry.kind for entry in snapshot.incident.timeline] == [
        entry.kind for entry in incident.timeline
    ]
    assert [(r.id, r.action, r.before, r.after) for r in snapshot.audit] == [
        (r.id, r.action, r.before, r.after) for r in audit
    ]
    assert [r.action for r in reversed(snapshot.audit)] == ["ack", "rollback", "note", "note"]
    clean, leaky = snapshot.incident.notes[-2:]
    assert clean == incident.notes[-2]
    assert leaky.text.startswith(
        f"debug: curl -H 'Authorization: {MASK}' http://{MASK}@grafana.internal/d"
    )
    screen = json_file.with_suffix(".svg").read_text()
    assert screen == snapshot.screen_svg and "snapshot&#160;by&#160;oncall" in screen
    summary = json_file.with_suffix(".md").read_text()
    assert "next: if NE stays high after rollback, escalate upstream" in summary
    assert (
        "**rollback** (serving `ig_feed_late-stage_mtml.x1-watch-time` to `ig_feed_late-stage_mtml.v41`"
        in summary
    )


async def test_frozen_client_answers_the_console_reads_like_the_server(
    server: EmbeddedServer, tmp_path: Path
) -> None:
    await _triage(server)
    assert (
        _export(
            server, tmp_path, "--out", str(tmp_path / "out"), "--window", "6h", "--no-screenshot"
        ).returncode
        == 0
    )
    [json_file] = (tmp_path / "out").glob("*.json")
    frozen = FrozenClient(load_snapshot(json_file).snapshot)
    async with FleetdeskClient(server.url, SecretStr(server.viewer_token)) as live, frozen:
        assert await frozen.info() == await live.info()
        assert await frozen.list_models(page=PageRequest(limit=500)) == await live.list_models(
            page=PageRequest(limit=500)
        )
        assert await frozen.model(EXPERIMENT) == await live.model(EXPERIMENT)
        assert await frozen.stability(EXPERIMENT, Window.H6) == await live.stability(
            EXPERIMENT, Window.H6
        )
        assert (await frozen.audit(model_id=EXPERIMENT, action=ActionKind.ROLLBACK)).items == (
            await live.audit(model_id=EXPERIMENT, action=ActionKind.ROLLBACK)
        ).items
        assert (await frozen.incidents(model_id=EXPERIMENT)).items[0] == next(
            item
            for item in (await live.incidents(model_id=EXPERIMENT)).items
            if item.id == frozen.snapshot.incident.id
        )
        assert (await frozen.me()).role.value == "viewer"
        assert frozen.banner.startswith("snapshot by oncall at 2026-11-30 12:00:00 UTC (read-only)")
        with pytest.raises(NotFound, match="no 24h series"):
            await frozen.stability(EXPERIMENT, Window.H24)
        # The models one key away (baseline, holdout, upstream) are held at the shown window; others are not.
        assert await frozen.model(BASELINE) == await live.model(BASELINE)
        assert await frozen.stability(BASELINE, Window.H6) == await live.stability(
            BASELINE, Window.H6
        )
        upstream = (await live.lineage(EXPERIMENT)).upstream[0].id
        assert await frozen.lineage(upstream) == await live.lineage(upstream)
        with pytest.raises(NotFound, match="not in this snapshot"):
            await frozen.model("fb_feed_late-stage_dhen.v52")


def test_export_of_an_unknown_model_fails_in_one_line_and_writes_nothing(
    server: EmbeddedServer, tmp_path: Path
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetdesk.cli",
            "snapshot",
            "export",
            "--server",
            server.url,
            "--model",
            "no_such_model",
            "--out",
            str(tmp_path / "out"),
        ],
        env={**os.environ, "FLEETDESK_TOKEN": server.viewer_token},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("fleetdesk snapshot: ") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()


async def test_export_with_an_explicit_incident_hands_that_one_over(
    server: EmbeddedServer, tmp_path: Path
) -> None:
    async with FleetdeskClient(server.url, SecretStr(server.viewer_token)) as live:
        other = next(
            item for item in (await live.incidents()).items if EXPERIMENT not in item.model_ids
        )
    done = _export(
        server,
        tmp_path,
        "--incident",
        str(other.id),
        "--out",
        str(tmp_path / "out"),
        "--no-screenshot",
    )
    assert done.returncode == 0, done.stderr
    [json_file] = (tmp_path / "out").glob("*.json")
    snapshot = load_snapshot(json_file).snapshot
    assert snapshot.incident is not None and snapshot.incident.id == other.id
    # The incident's own models are one key away from the handoff, so their screens open too.
    assert set(other.model_ids) <= {item.model.model.id for item in snapshot.related}
    async with FrozenClient(snapshot) as frozen:
        assert (await frozen.model(EXPERIMENT)).open_incident_id == other.id
        assert (await frozen.model(other.model_id)).model.id == other.model_id
