"""A token is only ever in the environment or a 0600 file: never in argv, logs, screens, errors, files or exports.

Unit-level cases live in tests/api/test_client_failures.py (a server echoing the token) and
tests/api/test_token_loading.py (file permissions); tests/snapshot/test_roundtrip.py greps one export.
Here one scenario runs every real process and then greps every artifact it left.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import traceback
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import SecretStr

from fleetdesk.client import ActionIntent, FleetdeskClient, Unauthorized
from fleetdesk.server.auth import create_token
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.wire import AccessRole, ActionKind
from ports import free_port  # tests/ is on sys.path (rootdir-relative packages)
from serve_process import ServeProcess

from .pty_console import PtyConsole

MODEL = "ig_feed_late-stage_mtml.x1-watch-time"


def _cli(
    *args: str, env: dict[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleetdesk.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=120,
    )


def _cmdline(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


async def test_one_scenario_leaves_the_token_in_no_artifact(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
    }
    env.pop("FLEETDESK_TOKEN", None)
    db = home / "fleetdesk.sqlite"
    created = _cli(
        "token",
        "create",
        "--db",
        str(db),
        "--user",
        "alice",
        "--role",
        "oncall",
        "--team",
        "ig-feed-ranking",
        env=env,
    )
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip()  # printed once, on stdout, by design
    assert token.startswith("fdk_") and token not in created.stderr
    artifacts: dict[str, bytes] = {"token create stderr": created.stderr.encode()}

    server = ServeProcess(
        db, free_port(), "--fleet", "small", "--log-level", "debug", env=env
    ).start()
    try:
        artifacts["serve argv"] = _cmdline(server.process.pid)  # type: ignore[union-attr]
        console_env = {**env, "FLEETDESK_TOKEN": token}
        console = PtyConsole(server.url, token, home)
        try:
            mark = console.wait_for("ig_tagging_late-stage")
            artifacts["console argv"] = _cmdline(console.process.pid)
            mark = console.open_model("x1-watch", "safe fallback", since=mark)
            console.send("l")  # the audit log: every screen that reads with the token
            console.wait_for("audit log ·", since=mark)
        finally:
            console.close()
        artifacts["console screen (pty)"] = console.captured()

        exported = _cli(
            "snapshot",
            "export",
            "--server",
            server.url,
            "--model",
            MODEL,
            "--out",
            str(home / "out"),
            "--window",
            "24h",
            env=console_env,
        )
        assert exported.returncode == 0, exported.stderr
        artifacts["snapshot stdout+stderr"] = (exported.stdout + exported.stderr).encode()

        # The client: an action, then the same token revoked: errors, tracebacks and debug logs.
        caplog.set_level(logging.DEBUG)
        async with FleetdeskClient(server.url, SecretStr(token)) as client:
            artifacts["client repr"] = repr(client).encode()
            await client.perform(ActionIntent.of(ActionKind.NOTE, MODEL, text="handed over"))
            revoked = _cli(
                "token", "revoke", "--db", str(db), "--token-stdin", env=env, stdin=token + "\n"
            )
            assert revoked.returncode == 0, revoked.stderr
            with pytest.raises(Unauthorized) as caught:
                await client.fleet_summary()
        artifacts["client error"] = "".join(traceback.format_exception(caught.value)).encode()
        artifacts["client logs"] = caplog.text.encode()
    finally:
        server.stop()
    artifacts["serve log"] = "".join(server.log).encode()
    for path in sorted(home.rglob("*")):
        if path.is_file():
            artifacts[f"file {path.relative_to(home)}"] = path.read_bytes()

    assert any(name.startswith("file out/") for name in artifacts), (
        "the export wrote nothing to grep"
    )
    assert b"handed over" in artifacts["file fleetdesk.sqlite"] + artifacts.get(
        "file fleetdesk.sqlite-wal", b""
    )
    assert b"401" in artifacts["client error"] or b"revoked" in artifacts["client error"]
    leaked = [name for name, data in artifacts.items() if token.encode() in data]
    assert not leaked, f"the token appears in: {leaked}"


def test_a_token_file_others_can_read_is_refused_with_the_fix(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("fdk_" + "x" * 43 + "\n")
    token_file.chmod(0o644)
    done = _cli(
        "console",
        "--server",
        "http://127.0.0.1:9",
        "--token-file",
        str(token_file),
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg")},
    )
    assert done.returncode != 0
    assert str(token_file) in done.stderr and "chmod 600" in done.stderr, done.stderr
    assert "x" * 43 not in done.stderr + done.stdout


def test_tokenless_demo_mode_refuses_a_non_loopback_address(tmp_path: Path) -> None:
    # Refused before binding, so the test never listens beyond loopback.
    done = _cli(
        "serve",
        "--demo",
        "--host",
        "0.0.0.0",
        "--port",
        str(free_port()),
        "--db",
        str(tmp_path / "db"),
        env=dict(os.environ),
    )
    assert done.returncode == 2
    assert "refusing --demo on 0.0.0.0" in done.stderr and "loopback" in done.stderr
    assert not (tmp_path / "db").exists(), "the database was opened before the refusal"


def test_console_with_an_expired_token_says_so_and_never_shows_it(
    server: EmbeddedServer, tmp_path: Path
) -> None:
    expired = create_token(
        server.backend.store, "bob", AccessRole.ONCALL, ["ig-feed-ranking"], timedelta(seconds=-1)
    )
    console = PtyConsole(server.url, expired, tmp_path, size=(100, 30))
    try:
        console.wait_for("not signed in (401)")
        console.wait_for("token expired")
    finally:
        console.close()
    assert expired.encode() not in console.captured()
