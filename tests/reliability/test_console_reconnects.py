"""The real console on a pty while its server is SIGKILLed and restarted: it says it is disconnected, comes
back by itself, and shows what changed while it was away (a launch halted by someone else)."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx

from ports import free_port
from security.pty_console import PtyConsole  # tests/ is on sys.path (rootdir-relative packages)
from serve_process import ServeProcess, admin_token

EXPERIMENT = "ig_feed_late-stage_mtml.x1-watch-time"  # in scale-up, serving itself


def test_console_survives_a_server_crash_and_shows_the_true_state(tmp_path: Path) -> None:
    db = tmp_path / "fleetdesk.sqlite"
    token = admin_token(db)
    server = ServeProcess(db, free_port(), "--fleet", "small").start()
    console = PtyConsole(server.url, token, tmp_path)
    try:
        mark = console.wait_for("ig_tagging_late-stage")
        mark = console.open_model("x1-watch", "serving itself", since=mark)
        assert "(halted)" not in console.visible_since(0)

        server.kill()
        mark = console.wait_for("disconnected since", since=mark)
        server.start()  # same database and port; someone else acts before the console is back
        halted = httpx.post(
            f"{server.url}/v1/models/{EXPERIMENT}/actions/halt-launch",
            json={"expected_serving_model_id": EXPERIMENT, "reason": "while the console was away"},
            headers={"Authorization": f"Bearer {token}", "Idempotency-Key": uuid.uuid4().hex},
            timeout=10,
        )
        assert halted.status_code == 200, halted.text
        console.wait_for("(halted)", "live", since=mark)
        assert console.process.poll() is None, "the console exited"
    finally:
        console.close()
        server.stop()
