"""A multi-task model in the model view: its tasks with their health (a snapshot at 120x40, the bad one
charted), kept current as buckets close."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from console_helpers import make_app, wait_for
from test_snapshots import _live_fleet

from fleet_variants import (
    FIXED_NOW,
    HOUR,
    MULTI_TASK,
    TASKS,
    declare_tasks,
    small_variant,
    task_bucket,
)
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.console.widgets.model.tasks import TaskList


def _close_bucket(server, hours: int, bad: str) -> None:
    """Move the server's clock ``hours`` on and ingest the bucket that closed, with task ``bad`` over-predicting
    by 60% and the others fine."""
    admin = {"Authorization": f"Bearer {server.tokens['admin']}"}
    moved = httpx.put(
        f"{server.url}/v1/clock",
        json={"now": (FIXED_NOW + hours * HOUR).isoformat()},
        headers=admin | {"Idempotency-Key": uuid.uuid4().hex},
        timeout=10,
    )
    assert moved.status_code == 200, moved.text
    start = FIXED_NOW + (hours - 1) * HOUR
    buckets = [
        task_bucket(task, start, 1.6 if task == bad else 1.0).model_dump(mode="json")
        for task in TASKS
    ]
    ingested = httpx.post(
        f"{server.url}/v1/metrics",
        json={"buckets": buckets},
        headers=admin | {"Idempotency-Key": uuid.uuid4().hex},
        timeout=10,
    )
    assert ingested.json()["unstable"] == [MULTI_TASK], ingested.text


@pytest.fixture
def comments_drift(server_factory, tmp_path):
    """The multi-task model one hour on: its comments task over-predicts by 60%, clicks and follows are fine."""
    server = server_factory(fleet=str(small_variant(tmp_path / "tasks.json", change=declare_tasks)))
    _close_bucket(server, 1, "comments")
    return server


async def _model(pilot) -> ModelScreen:
    await _live_fleet(pilot)
    screen = ModelScreen(MULTI_TASK)
    await pilot.app.push_screen(screen)
    await wait_for(
        pilot, lambda: screen.detail is not None and screen.series is not None, "the model view"
    )
    return screen


async def _comments_charted(pilot) -> None:
    screen = await _model(pilot)
    await pilot.press("t", "t")  # the whole model, then clicks, then comments
    await wait_for(
        pilot,
        lambda: screen.series is not None and screen.series.task == "comments",
        "the comments task charted",
    )
    assert screen.query_one(TaskList).chosen == "comments"


def test_snapshot_multi_task_model(comments_drift, snap_compare):
    assert snap_compare(
        make_app(comments_drift), terminal_size=(120, 40), run_before=_comments_charted
    )


async def test_the_tasks_follow_each_closed_bucket(comments_drift) -> None:
    """Clicks turning bad while comments recovers leaves the model unstable (no SLO transition to reload on):
    the tasks' lines still change with the bucket."""
    async with make_app(comments_drift).run_test(size=(120, 40)) as pilot:
        screen = await _model(pilot)
        tasks = screen.query_one(TaskList)
        assert [task.health.value for task in tasks.tasks] == ["stable", "unstable", "stable"]
        await asyncio.to_thread(_close_bucket, comments_drift, 2, "clicks")
        await wait_for(
            pilot,
            lambda: [task.health.value for task in tasks.tasks] == ["unstable", "stable", "stable"],
            "the tasks of the next bucket",
        )
