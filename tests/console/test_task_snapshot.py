"""Snapshot of a multi-task model at 120x40: its tasks with their health, the worst one charted."""

from __future__ import annotations

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


@pytest.fixture
def comments_drift(server_factory, tmp_path):
    """The multi-task model one hour on: its comments task over-predicts by 60%, clicks and follows are fine."""
    server = server_factory(fleet=str(small_variant(tmp_path / "tasks.json", change=declare_tasks)))
    admin = {"Authorization": f"Bearer {server.tokens['admin']}"}
    moved = httpx.put(
        f"{server.url}/v1/clock",
        json={"now": (FIXED_NOW + HOUR).isoformat()},
        headers=admin | {"Idempotency-Key": uuid.uuid4().hex},
        timeout=10,
    )
    assert moved.status_code == 200, moved.text
    buckets = [
        task_bucket(task, FIXED_NOW, 1.6 if task == "comments" else 1.0).model_dump(mode="json")
        for task in TASKS
    ]
    ingested = httpx.post(
        f"{server.url}/v1/metrics",
        json={"buckets": buckets},
        headers=admin | {"Idempotency-Key": uuid.uuid4().hex},
        timeout=10,
    )
    assert ingested.json()["unstable"] == [MULTI_TASK], ingested.text
    return server


async def _comments_charted(pilot) -> None:
    await _live_fleet(pilot)
    screen = ModelScreen(MULTI_TASK)
    await pilot.app.push_screen(screen)
    await wait_for(
        pilot, lambda: screen.detail is not None and screen.series is not None, "the model view"
    )
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
