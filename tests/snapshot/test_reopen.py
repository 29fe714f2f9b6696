"""Reopening snapshot files: current and older versions open; newer, corrupted and truncated ones fail in one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import factory
import pytest

from fleetdesk.snapshot.bundle import SCHEMA_VERSION, Screen
from fleetdesk.snapshot.reopen import SnapshotError, load_snapshot
from fleetdesk.wire import Window

V1_FIXTURE = Path(__file__).parent / "fixtures" / "snapshot-v1.json"


def _write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "handoff.json"
    path.write_bytes(data)
    return path


def _error(path: Path) -> str:
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(path)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def test_current_version_round_trips_exactly(tmp_path: Path) -> None:
    original = factory.snapshot()
    reopened = load_snapshot(_write(tmp_path, original.model_dump_json().encode()))
    assert reopened.file_version == SCHEMA_VERSION and not reopened.migrated
    assert reopened.snapshot == original


def test_version_1_file_opens_lifted_to_the_current_schema() -> None:
    reopened = load_snapshot(V1_FIXTURE)
    assert reopened.file_version == 1 and reopened.migrated
    snap = reopened.snapshot
    assert snap.schema_version == SCHEMA_VERSION
    assert snap.exported_by == "alice" and snap.model_id == factory.MODEL_ID
    assert [series.window for series in snap.stability] == [Window.H24]
    assert snap.series(Window.H24).points[-1].calibration == pytest.approx(1.4)
    assert [row.id for row in snap.models] == [factory.MODEL_ID]
    assert snap.view.screen is Screen.MODEL and snap.redactions == {}
    assert snap.incident is not None and snap.incident.notes[0].author == "alice"


def test_invalid_version_1_file_names_the_version_and_field(tmp_path: Path) -> None:
    document = json.loads(V1_FIXTURE.read_text())
    del document["stability"]
    message = _error(_write(tmp_path, json.dumps(document).encode()))
    assert "not a valid version 1 snapshot: stability: Field required" in message


def test_newer_version_says_upgrade(tmp_path: Path) -> None:
    document = factory.snapshot().model_dump(mode="json") | {"schema_version": SCHEMA_VERSION + 1}
    message = _error(_write(tmp_path, json.dumps(document).encode()))
    assert (
        f"schema version {SCHEMA_VERSION + 1} is newer than this fleetdesk understands" in message
    )
    assert "upgrade fleetdesk" in message


@pytest.mark.parametrize("cut", [1, 100, 5000, -2])
def test_truncated_file_says_truncated(tmp_path: Path, cut: int) -> None:
    data = factory.snapshot().model_dump_json(indent=1).encode()
    message = _error(_write(tmp_path, data[:cut]))
    assert "ends early (truncated" in message


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", "the file is empty"),
        (b"\xff\xfe{\x00", "not UTF-8 text"),
        (b'{"schema_version": 2, "exported_by": }', "not valid JSON at line 1 column 38"),
        (b"[1, 2]", "not a fleetdesk snapshot (no schema_version field)"),
        (b'{"schema_version": "two"}', "schema_version 'two' is not a snapshot version"),
        (
            b'{"schema_version": 2, "exported_by": "bob"}',
            "not a valid version 2 snapshot: exported_at: Field required",
        ),
    ],
)
def test_corrupted_file_gives_one_clear_line(tmp_path: Path, data: bytes, expected: str) -> None:
    assert expected in _error(_write(tmp_path, data))


def test_flipped_bytes_in_the_middle_are_reported_not_raised(tmp_path: Path) -> None:
    data = bytearray(factory.snapshot().model_dump_json(indent=1).encode())
    data[len(data) // 2 : len(data) // 2 + 8] = b"\x00garbag\x00"
    message = _error(_write(tmp_path, bytes(data)))
    assert "the file is corrupted" in message or "not a valid version 2 snapshot" in message


def test_missing_file_and_directory(tmp_path: Path) -> None:
    assert "no such file" in _error(tmp_path / "absent.json")
    assert "is a directory" in _error(tmp_path)


def test_hostile_path_is_sanitized_in_the_message(tmp_path: Path) -> None:
    assert "\\x1b[31m" in _error(tmp_path / "evil\x1b[31m.json")


def test_deeply_nested_file_is_refused_not_a_recursion_traceback(tmp_path: Path) -> None:
    message = _error(_write(tmp_path, b"[" * 200_000 + b"]" * 200_000))
    assert "nested far deeper than any snapshot" in message


def test_huge_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(600 * 1024 * 1024)  # sparse: no real disk used
    assert "is larger than 128 MiB, more than any such file" in _error(path)
