"""The snapshot commands as an engineer types them: clear one-line failures, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import factory
import pytest

from fleetdesk.snapshot.export import write_bundle
from fleetdesk.snapshot.redact import Redactor
from fleetdesk.snapshot.reopen import SnapshotError, load_snapshot

V1_FIXTURE = Path(__file__).parent / "fixtures" / "snapshot-v1.json"


def _fleetdesk(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleetdesk.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_open_summary_checks_and_prints_the_handoff(tmp_path: Path) -> None:
    bundle = write_bundle(factory.snapshot(), Redactor(), tmp_path)
    done = _fleetdesk("open", str(bundle.json), "--summary")
    assert done.returncode == 0, done.stderr
    first, _, rest = done.stdout.partition("\n")
    assert (
        first
        == "valid snapshot (schema version 2) of ig_feed_late_mtml_exp7 by alice at 2026-12-03 06:00:00 UTC"
    )
    assert "## What is still open" in rest and done.stderr == ""


def test_open_old_version_says_it_was_lifted() -> None:
    done = _fleetdesk("open", str(V1_FIXTURE), "--summary")
    assert done.returncode == 0
    assert (
        done.stderr
        == "fleetdesk open: a version 1 snapshot, read as version 2 (the file is unchanged)\n"
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            b'{"schema_version": 9, "exported_by": "x"}',
            "snapshot schema version 9 is newer than this fleetdesk",
        ),
        (b'{"schema_version": 2, "exported_by": "al', "the file ends early (truncated at byte 40)"),
        (b"\x89PNG\r\n\x1a\n", "not UTF-8 text"),
    ],
)
def test_open_refuses_bad_files_in_one_line(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "handoff.json"
    path.write_bytes(content)
    done = _fleetdesk("open", str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert (
        done.stderr.startswith("fleetdesk open: ")
        and expected in done.stderr
        and done.stderr.count("\n") == 1
    )


def test_export_token_file_must_be_private(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("fdk_not-a-real-token-but-long-enough\n")
    token_file.chmod(0o644)
    done = _fleetdesk(
        "snapshot",
        "export",
        "--server",
        "http://127.0.0.1:9",
        "--model",
        "m",
        "--token-file",
        str(token_file),
        "--out",
        str(tmp_path / "out"),
    )
    assert done.returncode == 1 and "readable or writable by other users" in done.stderr
    assert (
        "fdk_not-a-real-token" not in done.stderr + done.stdout and not (tmp_path / "out").exists()
    )


def test_export_to_a_full_disk_fails_in_one_line_and_keeps_the_last_bundle(
    server, tmp_path: Path
) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    if (
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)]).returncode
        != 0
    ):
        pytest.skip("cannot mount a small tmpfs here")
    try:
        args = (
            "snapshot",
            "export",
            "--server",
            server.url,
            "--model",
            "fb_feed_late-stage_dhen.v52",
            "--out",
            str(mount),
            "--no-screenshot",
        )
        env = {"FLEETDESK_TOKEN": server.viewer_token, "XDG_CONFIG_HOME": str(tmp_path / "config")}
        first_run = _fleetdesk(*args, env=env)
        assert (
            first_run.returncode == 0
            and "(no screenshot: --no-screenshot was given)" in first_run.stdout
        )
        first = {path: path.read_bytes() for path in mount.iterdir()}
        free = os.statvfs(mount).f_bavail * os.statvfs(mount).f_frsize
        (mount / "filler").write_bytes(
            b"\0" * (free - 16 * 1024)
        )  # leave 16 KiB: less than a bundle
        done = _fleetdesk(*args, env=env)
        assert done.returncode == 1 and done.stdout == ""
        assert (
            done.stderr.startswith("fleetdesk snapshot: cannot write ")
            and "the disk is full" in done.stderr
        )
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        (mount / "filler").unlink()
        assert {path: path.read_bytes() for path in mount.iterdir()} == first
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_reopen_error_type_is_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"schema_version": 2}))
    with pytest.raises(
        SnapshotError,
        match="not a valid version 2 snapshot: exported_by: Field required "
        r"\(and \d+ more problems\)",
    ):
        load_snapshot(path)
