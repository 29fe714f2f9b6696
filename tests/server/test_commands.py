"""`fleetdesk token` and `fleetdesk serve` refusals, as an operator runs them."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path


def _fleetdesk(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleetdesk.cli", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
    )


def test_token_create_prints_once_stores_only_a_hash_and_revokes(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    created = _fleetdesk(
        "token",
        "create",
        "--db",
        str(db),
        "--user",
        "ana",
        "--role",
        "oncall",
        "--team",
        "ig-feed-ranking",
        "--expires-in",
        "30d",
    )
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip()
    assert token.startswith("fdk_") and token not in created.stderr
    assert token.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir())
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT user, role, revoked FROM tokens").fetchall() == [
            ("ana", "oncall", 0)
        ]
    listing = _fleetdesk("token", "list", "--db", str(db))
    assert "ana" in listing.stdout and token not in listing.stdout
    revoked = _fleetdesk("token", "revoke", "--db", str(db), "--token-stdin", stdin=token + "\n")
    assert revoked.returncode == 0 and "revoked 1" in revoked.stderr
    assert (
        _fleetdesk("token", "create", "--db", str(db), "--user", "x", "--role", "oncall").returncode
        == 2
    )


def test_serve_refuses_tokenless_demo_off_loopback(tmp_path: Path) -> None:
    result = _fleetdesk("serve", "--demo", "--host", "0.0.0.0", "--db", str(tmp_path / "db.sqlite"))
    assert result.returncode == 2 and "loopback only" in result.stderr
    assert not (tmp_path / "db.sqlite").exists()
