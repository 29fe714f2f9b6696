"""Atomic bundle writes: a killed writer, a crash between write and rename, and a full disk never corrupt a final name."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import factory
import pytest

from fleetdesk.snapshot.atomic import TEMP_MARK, AtomicWriteError, write_atomic, write_files
from fleetdesk.snapshot.export import write_bundle
from fleetdesk.snapshot.redact import Redactor
from fleetdesk.snapshot.reopen import load_snapshot

HERE = Path(__file__).parent
NEW = b'{"new": true}'
PRELUDE = f"import sys; sys.path.insert(0, {str(HERE)!r})\n"


def _start(script: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _line(process: subprocess.Popen[str], timeout: float = 60.0) -> str:
    """The writer's next progress line, waiting on the pipe (not a sleep) up to ``timeout``."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    assert ready, "the writer said nothing in time"
    line = process.stdout.readline()
    assert line, f"the writer ended early: {process.stderr.read() if process.stderr else ''}"
    return line.strip()


def _temps(directory: Path) -> list[Path]:
    return [path for path in directory.iterdir() if TEMP_MARK in path.name]


def test_writer_killed_mid_write_leaves_the_previous_file(tmp_path: Path) -> None:
    final = tmp_path / "handoff.json"
    previous = factory.snapshot().model_dump_json().encode()
    write_atomic(final, previous)
    process = _start(f"""
        from pathlib import Path
        import factory
        from fleetdesk.snapshot.atomic import write_atomic
        data = factory.snapshot(audit_records=20000).model_dump_json(indent=1).encode()
        def chunks():
            step = 1 << 16
            for offset in range(0, len(data), step):
                yield data[offset:offset + step]
                if offset >= len(data) // 2:
                    print("HALF", len(data), flush=True)
                    sys.stdin.read()  # hold here, mid-write, until killed
        write_atomic(Path({str(final)!r}), chunks())
    """)
    try:
        word, total = _line(process).split()
        assert word == "HALF"
        [temp] = _temps(tmp_path)
        assert 0 < temp.stat().st_size < int(total)
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=30) == -signal.SIGKILL
    finally:
        process.kill()
    assert final.read_bytes() == previous
    assert load_snapshot(final).snapshot == factory.snapshot()


def test_writer_killed_while_exporting_in_a_loop_never_leaves_a_partial_bundle(
    tmp_path: Path,
) -> None:
    write_bundle(factory.snapshot(), Redactor(), tmp_path, name="handoff")
    process = _start(f"""
        from pathlib import Path
        import factory
        from fleetdesk.snapshot.export import write_bundle
        from fleetdesk.snapshot.redact import Redactor
        big = factory.snapshot(audit_records=1000)
        for round in range(1000):
            write_bundle(big, Redactor(["tok-abcdefgh"]), Path({str(tmp_path)!r}), name="handoff")
            print("WROTE", round, flush=True)
    """)
    try:
        assert _line(process) == "WROTE 0"
        # Kill as soon as the next export's temp files exist: inside a write, wherever it is.
        deadline = time.monotonic() + 60
        while not _temps(tmp_path):
            assert time.monotonic() < deadline, "the writer never started another export"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        process.kill()
    reopened = load_snapshot(tmp_path / "handoff.json").snapshot
    assert len(reopened.audit) in (2, 1000)
    assert (
        (tmp_path / "handoff.md")
        .read_text()
        .endswith("Reopen it read-only with `fleetdesk open handoff.json`.\n")
    )


def test_crash_between_write_and_rename_keeps_the_old_file(tmp_path: Path) -> None:
    final = tmp_path / "handoff.json"
    write_atomic(final, b'{"old": true}')
    process = _start(f"""
        import os, signal
        from pathlib import Path
        from fleetdesk.snapshot.atomic import write_atomic
        def crash(temp):
            print("COMPLETE", temp.stat().st_size, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        write_atomic(Path({str(final)!r}), b'{{"new": true}}' * 1000, before_rename=crash)
    """)
    try:
        assert _line(process) == f"COMPLETE {len(NEW) * 1000}"
        assert process.wait(timeout=30) == -signal.SIGKILL
    finally:
        process.kill()
    assert final.read_bytes() == b'{"old": true}'
    [leftover] = _temps(tmp_path)
    assert leftover.name.startswith(".handoff.json" + TEMP_MARK)


def test_error_before_rename_removes_temps_and_replaces_nothing(tmp_path: Path) -> None:
    files = {tmp_path / "a.md": b"new a", tmp_path / "a.json": b"new json"}
    for path in files:
        path.write_bytes(b"old")

    def fail(temp: Path) -> None:
        raise OSError(5, "Input/output error")

    with pytest.raises(AtomicWriteError, match="nothing was replaced"):
        write_files(files, before_rename=fail)
    assert all(path.read_bytes() == b"old" for path in files)
    assert _temps(tmp_path) == []


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs: a real full disk (needs mount rights; skipped without them)."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_full_disk_gives_a_clear_error_and_keeps_the_previous_bundle(small_disk: Path) -> None:
    previous = write_bundle(factory.snapshot(), Redactor(), small_disk, name="handoff")
    before = {path: path.read_bytes() for path in previous.paths}
    with pytest.raises(AtomicWriteError) as caught:
        write_bundle(factory.snapshot(audit_records=3000), Redactor(), small_disk, name="handoff")
    assert "the disk is full" in str(caught.value) and "nothing was replaced" in str(caught.value)
    assert {path: path.read_bytes() for path in previous.paths} == before
    assert _temps(small_disk) == []


def test_file_size_limit_gives_a_clear_error_and_keeps_the_previous_file(tmp_path: Path) -> None:
    final = tmp_path / "handoff.json"
    write_atomic(final, b'{"old": true}')
    process = _start(f"""
        import resource, signal
        from pathlib import Path
        from fleetdesk.snapshot.atomic import AtomicWriteError, write_atomic
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG instead of being killed
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
        try:
            write_atomic(Path({str(final)!r}), b"y" * (1 << 20))
        except AtomicWriteError as error:
            print(error, flush=True)
    """)
    out, err = process.communicate(timeout=60)
    assert (
        "the disk is full (or the file is over the size limit) (EFBIG); nothing was replaced" in out
    ), err
    assert "Traceback" not in out + err
    assert final.read_bytes() == b'{"old": true}'
    assert _temps(tmp_path) == []


def test_bundle_json_is_written_last_and_loads(tmp_path: Path) -> None:
    order: list[str] = []
    write_files(
        {tmp_path / "x.svg": b"<svg/>", tmp_path / "x.md": b"# x\n", tmp_path / "x.json": b"{}"},
        before_rename=lambda temp: order.append(temp.name.split(TEMP_MARK)[0]),
    )
    assert order == [".x.svg", ".x.md", ".x.json"]
    assert json.loads((tmp_path / "x.json").read_text()) == {}
    assert os.stat(tmp_path / "x.json").st_mode & 0o777 == 0o644


def test_next_export_sweeps_old_leftovers_of_killed_writers_only(tmp_path: Path) -> None:
    old = tmp_path / f".a.json{TEMP_MARK}x1"
    young = tmp_path / f".b.json{TEMP_MARK}x2"
    unrelated = tmp_path / f".notes.txt{TEMP_MARK}x3"
    for path in (old, young, unrelated):
        path.write_bytes(b"partial")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    os.utime(unrelated, (two_hours_ago, two_hours_ago))
    write_bundle(factory.snapshot(), Redactor(), tmp_path, name="handoff")
    assert not old.exists() and young.exists() and unrelated.exists()
