"""deploy/systemd/fleetdesk@.service: systemd accepts it, and its command line starts a replica that serves.

A renamed or removed `fleetdesk serve` flag would otherwise break every team's unit at their next upgrade.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from serve_process import ServeProcess

UNIT = Path(__file__).resolve().parents[2] / "deploy" / "systemd" / "fleetdesk@.service"


def _exec_start() -> list[str]:
    """ExecStart's command, continuation lines joined."""
    text = UNIT.read_text(encoding="utf-8").replace("\\\n", " ")
    line = re.search(r"^ExecStart=(.*)$", text, re.MULTILINE)
    assert line is not None, "no ExecStart"
    return shlex.split(line.group(1))


def test_the_units_command_line_starts_a_replica_that_serves(tmp_path: Path) -> None:
    from fleetdesk.fleets.files import resolve_fleet_path

    command = _exec_start()
    assert command[0].endswith("/bin/fleetdesk") and command[1] == "serve"
    db = tmp_path / "fleetdesk.sqlite"
    # What systemd substitutes: the environment file's database, the instance number; the fleet file a team
    # puts in /etc/fleetdesk; loopback and a free port for a test.
    substituted = {
        "${FLEETDESK_DB}": str(db),
        "/etc/fleetdesk/fleet.json": str(resolve_fleet_path("small")),
        "0.0.0.0": "127.0.0.1",
        "808%i": "0",
    }
    assert set(substituted) <= set(command), "the unit's command line changed: update this test"
    arguments = [substituted.get(word, word) for word in command[2:]]
    db_at = arguments.index("--db")  # ServeProcess passes --db (and --port, --now) itself
    server = ServeProcess(db, 0, *arguments[:db_at], *arguments[db_at + 2 :])
    server.start()
    try:
        assert httpx.get(server.url + "/readyz", timeout=10).json()["status"] == "ready"
    finally:
        server.stop()


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_accepts_the_unit(tmp_path: Path) -> None:
    unit = tmp_path / "fleetdesk@1.service"
    executable = shutil.which("fleetdesk")
    assert executable is not None
    unit.write_text(
        UNIT.read_text(encoding="utf-8").replace("/opt/fleetdesk/.venv/bin/fleetdesk", executable),
        encoding="utf-8",
    )
    done = subprocess.run(
        ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stderr.strip() == "", done.stderr
