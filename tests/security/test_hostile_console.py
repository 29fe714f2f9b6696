"""Hostile registry text, notes and server texts reach the real console's pty only as inert, visible text."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from fleetdesk.server.embedded import EmbeddedServer

from .hostile import (
    FILTER_WORD,
    HOSTILE_ID,
    HOSTILE_NOTE,
    HOSTILE_OWNER,
    HOSTILE_PURPOSE,
    HOSTILE_ROTATION,
    LEAKS,
    hostile_fleet,
    leaks,
)
from .pty_console import PtyConsole, visible

NOTE = HOSTILE_NOTE.replace(
    "\udcff\udc80", ""
)  # lone surrogates are refused by the API (tested below)


def _note(server: EmbeddedServer, text: str, key: str) -> httpx.Response:
    body = json.dumps(
        {"text": text}
    ).encode()  # ASCII JSON: the \\uXXXX escapes are what the wire allows
    return httpx.post(
        f"{server.url}/v1/models/{quote(HOSTILE_ID, safe='')}/actions/note",
        content=body,
        headers={
            "Authorization": f"Bearer {server.admin_token}",
            "Idempotency-Key": key,
            "Content-Type": "application/json",
        },
        timeout=10,
    )


@pytest.fixture
def hostile_server(server_factory: Callable[..., EmbeddedServer], tmp_path: Path) -> EmbeddedServer:
    server = server_factory(fleet=str(hostile_fleet(tmp_path)))
    assert _note(server, NOTE, "hostile-note").status_code == 200
    return server


def test_non_utf8_text_is_refused_by_the_api_not_stored(hostile_server: EmbeddedServer) -> None:
    response = _note(hostile_server, HOSTILE_NOTE, "surrogates")
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    raw = httpx.post(
        f"{hostile_server.url}/v1/models/{quote(HOSTILE_ID, safe='')}/actions/note",
        content=b'{"text": "\xff\xfe bytes"}',
        timeout=10,
        headers={
            "Authorization": f"Bearer {hostile_server.admin_token}",
            "Idempotency-Key": "bytes",
            "Content-Type": "application/json",
        },
    )
    assert raw.status_code in (400, 422), raw.text


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_console_shows_hostile_data_literally_and_no_raw_control_reaches_the_terminal(
    hostile_server: EmbeddedServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    size: tuple[int, int],
) -> None:
    console = PtyConsole(hostile_server.url, hostile_server.oncall_token, tmp_path, size=size)
    try:
        mark = console.wait_for("21 models")  # the fleet table is loaded
        mark = console.open_model(FILTER_WORD, "PURPOSE-MARK", since=mark)
        console.send("i")  # the incident's timeline and notes
        # Its title, not NOTE-MARK: at 120x40 the model view's incident panel shows the note already, and an
        # Esc sent before the incident screen is up leaves the next key to land on it.
        opened = console.wait_for("fleetdesk · incident", "NOTE-MARK", since=mark)
        console.send("\x1b")  # alone: an escape with a key right behind it reads as alt+key
        mark = console.wait_for("fleetdesk · model", "PURPOSE-MARK", since=opened)
        console.send("l")  # the model's audit log; its record of the hostile note
        console.wait_for("audit log ·", "admin (admin)", since=mark)
    finally:
        console.close()
    output = console.captured()
    assert not leaks(output), f"raw hostile bytes reached the terminal: {leaks(output)}"
    assert not leaks(caplog.text.encode()), "the server logged hostile text raw"
    shown = visible(output)
    # Markup arrives as the literal brackets, and escapes as readable text.
    assert "[@click=app.quit]CLICK-MARK" in shown and "[bold]MARKUP-MARK[/bold]" in shown
    assert "\\x1b]52;c;" in shown and "\\u202e" in shown


def test_the_leak_detector_finds_every_raw_payload() -> None:
    """Guards the test above: fed the raw hostile texts, the detector names every payload kind."""
    raw = "".join((HOSTILE_ID, HOSTILE_OWNER, HOSTILE_ROTATION, HOSTILE_PURPOSE, NOTE)).encode()
    assert set(leaks(raw)) == set(LEAKS) - {"raw 8-bit C1 control"}
    assert leaks("\x9bC1-MARK".encode("latin-1")) == ["raw 8-bit C1 control"]


def test_snapshot_export_of_the_hostile_model_holds_the_payloads_only_escaped(
    hostile_server: EmbeddedServer, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    env = {
        **os.environ,
        "FLEETDESK_TOKEN": hostile_server.oncall_token,
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetdesk.cli",
            "snapshot",
            "export",
            "--server",
            hostile_server.url,
            "--model",
            HOSTILE_ID,
            "--out",
            str(out),
            "--window",
            "24h",
        ],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    files = {path.suffix: path.read_bytes() for path in out.iterdir()}
    assert {".json", ".md"} <= set(files), sorted(files)
    for suffix, data in [*files.items(), ("stdout", done.stdout), ("stderr", done.stderr)]:
        assert not leaks(data), f"{suffix}: {leaks(data)}"
        assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", data), (
            f"{suffix} holds a raw control byte"
        )
    markdown, bundle = files[".md"].decode(), json.loads(files[".json"])
    assert "NOTE-MARK" in markdown and "\\x1b" in markdown and "\\u202e" in markdown
    assert (
        "\\[@click=app.quit\\]CLICK-MARK" in markdown
    )  # Markdown-escaped, so a renderer shows it literally
    # The JSON keeps the data exactly (escaped by JSON itself), so a reopened console shows what was seen.
    assert bundle["model_id"] == HOSTILE_ID
