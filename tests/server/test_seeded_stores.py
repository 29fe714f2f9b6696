"""The embedded console's seeded stores: seeded once per fleet file and recipe, reused and continued to
now on later starts, safe with two starts at once and after a crash mid-seed."""

from __future__ import annotations

import fcntl
import io
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fleetdesk.commands.console import StartReport
from fleetdesk.domain.synthetic import Timeline, synthesize_rows
from fleetdesk.fleets import load_fleet
from fleetdesk.server import seeded_stores
from fleetdesk.server.seeded_stores import Outcome, make_spare, prepare
from fleetdesk.server.store import Store

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
QUIET = "ig_feed_late-stage_mtml.v41"
"""A small-fleet model no incident touches."""


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def buckets(path: Path, model_id: str | None = None) -> list[tuple]:
    with closing(sqlite3.connect(path)) as conn:
        where, args = (
            ("", ())
            if model_id is None
            else (" WHERE model_key = (SELECT key FROM models WHERE id = ?)", (model_id,))
        )
        return conn.execute(
            f"SELECT * FROM buckets{where} ORDER BY model_key, start", args
        ).fetchall()


def cached_files(cache_home: Path) -> list[str]:
    return sorted(
        p.name
        for p in (cache_home / "fleetdesk" / "stores").iterdir()
        if not p.name.endswith(".lock")
    )


def test_a_second_start_copies_the_store_the_first_one_seeded(tmp_path, cache_home):
    first = prepare("small", tmp_path / "one.sqlite", now=T0)
    second = prepare("small", tmp_path / "two.sqlite", now=T0 + timedelta(minutes=40))
    assert (first.outcome, second.outcome) == (Outcome.SEEDED, Outcome.REUSED)
    assert first.buckets == 16_125 and second.buckets == 0
    assert buckets(first.path) == buckets(second.path)
    assert cached_files(cache_home) == [first.cached.name]
    # Each start has its own copy: what one console does to its store stays there.
    with closing(sqlite3.connect(second.path)) as conn:
        conn.execute("DELETE FROM buckets")
        conn.commit()
    assert len(buckets(first.cached)) == 16_125


def test_a_store_seeded_hours_ago_is_continued_to_now_as_the_same_history(tmp_path):
    prepare("small", tmp_path / "then.sqlite", now=T0)
    later = prepare("small", tmp_path / "now.sqlite", now=T0 + timedelta(hours=3, minutes=20))
    assert (
        later.outcome is Outcome.CONTINUED and later.buckets == 3 * 20
    )  # 21 models, one of them its feed stopped
    store = Store(later.path)
    assert store.history_end() == T0 + timedelta(hours=3)
    newest = {
        row[0]: row[1]
        for row in store.connection().execute(
            "SELECT id, last_bucket_start FROM models WHERE id = ?", (QUIET,)
        )
    }
    assert newest[QUIET] == int(
        (T0 + timedelta(hours=2)).timestamp()
    )  # its last closed bucket: current
    with store.read() as conn:  # the per-day counts still equal a recount of the buckets
        days = {tuple(row) for row in conn.execute("SELECT * FROM health_days")}
        recounted = {
            tuple(row)
            for row in conn.execute(
                "SELECT model_key, start / 86400, sum(health = 0), sum(health = 1), sum(health = 2) FROM buckets"
                " GROUP BY model_key, start / 86400"
            )
        }
    store.close()
    assert days == recounted
    # The three new hours are what a longer run of the same history holds (same noise stream).
    fleet = load_fleet("small", end_at=T0)
    history = fleet.file.history
    longer = synthesize_rows(
        QUIET,
        history.profiles[QUIET],
        (),
        Timeline(history.start, T0 + timedelta(hours=3), history.bucket),
    )
    stored = buckets(later.path, QUIET)
    assert [row[1:6] for row in stored[-3:]] == [
        (int(r.start.timestamp()), r.weight, r.label_sum, r.prediction_sum, r.cross_entropy_sum)
        for r in longer[-3:]
    ]
    again = prepare("small", tmp_path / "again.sqlite", now=T0 + timedelta(hours=3, minutes=50))
    assert again.outcome is Outcome.REUSED and buckets(again.path) == buckets(later.path)


def test_a_spare_copy_left_by_a_console_is_taken_by_the_next_start_instead_of_copying(
    tmp_path, cache_home
):
    first = prepare(
        "small", tmp_path / "one.sqlite", now=T0, keep_spare=True
    )  # seeded: a spare at once
    spare = first.cached.with_suffix(".spare.sqlite")
    assert spare.exists() and not first.claimed_spare
    second = prepare("small", tmp_path / "two.sqlite", now=T0 + timedelta(hours=2), keep_spare=True)
    assert second.claimed_spare and second.outcome is Outcome.CONTINUED and not spare.exists()
    assert buckets(second.path) == buckets(
        second.cached
    )  # the spare, continued as the cached store was
    make_spare("small")  # the console ended
    assert buckets(spare) == buckets(second.cached)
    assert sorted(cached_files(cache_home)) == sorted([first.cached.name, spare.name])
    third = prepare("small", tmp_path / "three.sqlite", now=T0 + timedelta(hours=2))
    assert third.claimed_spare and third.outcome is Outcome.REUSED


def test_a_store_older_than_the_continuation_limit_is_seeded_again(tmp_path):
    prepare("small", tmp_path / "then.sqlite", now=T0)
    much_later = T0 + seeded_stores.MAX_CONTINUED + timedelta(hours=1)
    fresh = prepare("small", tmp_path / "now.sqlite", now=much_later)
    assert fresh.outcome is Outcome.SEEDED and Store(fresh.path).history_end() == much_later


def test_a_changed_fleet_file_or_recipe_seeds_a_new_store_and_drops_the_old(
    tmp_path, cache_home, monkeypatch
):
    fleet = tmp_path / "fleet.json"
    shutil.copyfile(load_fleet("small").source, fleet)
    first = prepare(str(fleet), tmp_path / "a.sqlite", now=T0)
    raw = json.loads(fleet.read_text())
    raw["description"] = "edited"
    fleet.write_text(json.dumps(raw))
    edited = prepare(str(fleet), tmp_path / "b.sqlite", now=T0)
    assert edited.outcome is Outcome.SEEDED and edited.cached != first.cached
    assert cached_files(cache_home) == [edited.cached.name]
    monkeypatch.setattr(seeded_stores, "SCHEMA_VERSION", 999)
    recipe = prepare(str(fleet), tmp_path / "c.sqlite", now=T0)
    assert recipe.outcome is Outcome.SEEDED and cached_files(cache_home) == [recipe.cached.name]


def _run(script: str, tmp_path: Path, cache_home: Path) -> subprocess.Popen[str]:
    code = textwrap.dedent(f"""
        import os, signal, sys
        from datetime import datetime
        from pathlib import Path
        from fleetdesk.server.seeded_stores import prepare
        now = datetime.fromisoformat({T0.isoformat()!r})
    """) + textwrap.dedent(script)
    # The child imports the fleetdesk under test (a worktree on PYTHONPATH), not whichever one is installed.
    source = str(Path(seeded_stores.__file__).parents[2])
    env = {"XDG_CACHE_HOME": str(cache_home), "PATH": "/usr/bin:/bin", "PYTHONPATH": source}
    return subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_starts_at_once_seed_once_and_both_get_the_whole_store(tmp_path, cache_home):
    script = """
        prepared = prepare("small", Path(f"copy-{os.getpid()}.sqlite"), now=now, say=lambda line: print(line, flush=True))
        print("OUTCOME", prepared.outcome.value, prepared.path, flush=True)
    """
    lock = seeded_stores.lock_path("small")
    lock.parent.mkdir(parents=True)
    with open(lock, "a+b") as held:  # a third start, mid-seed: both new starts must wait for it
        fcntl.flock(held, fcntl.LOCK_EX)
        starts = [_run(script, tmp_path, cache_home) for _ in range(2)]
        for start in starts:
            assert "waiting for it" in start.stdout.readline()
    results = [start.communicate(timeout=120) for start in starts]
    assert all(start.returncode == 0 for start in starts), results
    outcomes = sorted(
        line.split()[1]
        for out, _ in results
        for line in out.splitlines()
        if line.startswith("OUTCOME")
    )
    assert outcomes == ["reused", "seeded"]
    copies = [
        Path(tmp_path, line.split()[2])
        for out, _ in results
        for line in out.splitlines()
        if line.startswith("OUTCOME")
    ]
    assert buckets(copies[0]) == buckets(copies[1]) and len(buckets(copies[0])) == 16_125


def test_a_crash_mid_seed_leaves_no_half_store_and_the_next_start_seeds_it(tmp_path, cache_home):
    script = """
        from fleetdesk.server.store import seeding
        seeding.BATCH_MODELS = 4  # progress is told a batch at a time: crash after a few batches went in
        def crash(done, total, count):
            if done >= 10:
                os.kill(os.getpid(), signal.SIGKILL)
        prepare("small", Path("copy.sqlite"), now=now, progress=crash)
    """
    crashed = _run(script, tmp_path, cache_home)
    crashed.communicate(timeout=120)
    assert crashed.returncode == -signal.SIGKILL
    left = cached_files(cache_home)
    assert left and all(name.startswith(".") and ".tmp" in name for name in left), (
        left
    )  # only the temp file
    fresh = prepare("small", tmp_path / "fresh.sqlite", now=T0)
    assert fresh.outcome is Outcome.SEEDED and cached_files(cache_home) == [fresh.cached.name]
    with closing(sqlite3.connect(fresh.path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert len(buckets(fresh.path)) == 16_125


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("stream", [io.StringIO, Tty], ids=["log", "terminal"])
def test_the_start_says_what_it_is_doing_and_how_far_it_is(tmp_path, stream):
    """What `fleetdesk console --fleet` writes before its screen opens: the seeding with its size, then
    how many models and buckets are written (on a terminal, one line rewritten in place), then ready."""
    out = stream()
    report = StartReport(out)
    prepare("small", tmp_path / "one.sqlite", now=T0, say=report.say, progress=report.seeding)
    report.done()
    lines = out.getvalue().replace("\r", "\n").splitlines()
    said = [line for line in lines if line.strip()]
    assert said[0] == (
        "fleetdesk: seeding the store of fleet 'small': 21 models, 768 hours each (kept for the next start)"
    )
    progress = [line.rstrip() for line in said if "writing buckets" in line]
    assert progress[-1] == ("fleetdesk: writing buckets: 21 of 21 models, 16,125 buckets (100%)")
    assert said[-1].startswith("fleetdesk: backend ready in ") and said[-1].endswith(
        " s; opening the console"
    )
    if stream is Tty:  # progress rewrites its line in place
        assert "\rfleetdesk: writing buckets" in out.getvalue()
    else:  # a log gets whole lines only, and of the progress only its end
        assert "\r" not in out.getvalue() and progress == [progress[-1]]
    again = stream()
    prepare("small", tmp_path / "two.sqlite", now=T0, say=StartReport(again).say)
    assert "seeding" not in again.getvalue()  # the second start copies the store
