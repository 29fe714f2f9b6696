"""Stability per task over HTTP, on each store: a multi-task model's buckets carry a task label, each task is
judged on its own, the model by its worst task; its tasks are listed with the model and charted one at a time."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from fleet_variants import (
    FIXED_NOW,
    MULTI_TASK,
    TASKS,
    declare_tasks,
    declare_weighted_tasks,
    small_variant,
    task_bucket,
)
from fleetdesk.server.embedded import EmbeddedServer

from .helpers import assert_problem, auth, get

HOUR = timedelta(hours=1)


@pytest.fixture
def server(server_factory: Callable[..., EmbeddedServer], tmp_path: Path) -> EmbeddedServer:
    return server_factory(fleet=str(small_variant(tmp_path / "tasks.json", change=declare_tasks)))


def _post(server: EmbeddedServer, buckets: list[Any]) -> httpx.Response:
    body = [
        item.model_dump(mode="json") if hasattr(item, "model_dump") else item for item in buckets
    ]
    return httpx.post(
        f"{server.url}/v1/metrics",
        json={"buckets": body},
        headers=auth(server, "admin", uuid.uuid4().hex),
        timeout=10,
    )


def _advance(server: EmbeddedServer, hours: int) -> None:
    response = httpx.put(
        f"{server.url}/v1/clock",
        json={"now": (FIXED_NOW + hours * HOUR).isoformat()},
        headers=auth(server, "admin", uuid.uuid4().hex),
        timeout=10,
    )
    assert response.status_code == 200, response.text


def _whole_bucket(server: EmbeddedServer, task: str | None = None) -> dict[str, Any]:
    params = {"window": "1h"} | ({"task": task} if task else {})
    series = get(server, f"/v1/models/{MULTI_TASK}/stability", **params).json()
    assert series["task"] == task
    return series["points"][-1]


def test_seeded_history_is_kept_per_task_and_sums_to_the_model(server: EmbeddedServer) -> None:
    detail = get(server, f"/v1/models/{MULTI_TASK}").json()
    assert [task["task"] for task in detail["tasks"]] == list(TASKS)
    assert all(task["health"] == "stable" for task in detail["tasks"])
    whole = _whole_bucket(server)
    parts = [_whole_bucket(server, task) for task in TASKS]
    for name in ("weight", "label_sum", "prediction_sum", "cross_entropy_sum"):
        assert math.isclose(sum(part[name] for part in parts), whole[name], rel_tol=1e-12)
    # A model judged as one series has no tasks.
    assert get(server, "/v1/models/ig_feed_late-stage_mtml.v41").json()["tasks"] == []


def test_the_worst_task_drives_the_models_health(server: EmbeddedServer) -> None:
    _advance(server, 1)
    buckets = [task_bucket("clicks", FIXED_NOW), task_bucket("comments", FIXED_NOW, 1.6)]
    buckets.append(task_bucket("follows", FIXED_NOW))
    result = _post(server, buckets).json()
    assert result["accepted"] == 3
    assert result["unstable"] == [MULTI_TASK]
    assert result["incident_ids"]  # the model's SLO machinery follows its worst task

    detail = get(server, f"/v1/models/{MULTI_TASK}").json()
    assert detail["health"] == "unstable"
    by_task = {task["task"]: task for task in detail["tasks"]}
    assert [by_task[t]["health"] for t in TASKS] == ["stable", "unstable", "stable"]
    assert by_task["comments"]["calibration"] == pytest.approx(1.6)
    assert by_task["clicks"]["normalized_entropy"] == pytest.approx(0.8)

    # The whole series sums the tasks first and divides after (never an average of the tasks' ratios), and
    # its bucket is judged by the worst task, not by the sum's ratios (inside the bands here).
    whole = _whole_bucket(server)
    labels = sum(bucket.label_sum for bucket in buckets)
    predictions = sum(bucket.prediction_sum for bucket in buckets)
    assert whole["calibration"] == pytest.approx(predictions / labels)
    assert 0.85 <= whole["calibration"] <= 1.15
    assert whole["health"] == "unstable"
    assert _whole_bucket(server, "comments")["health"] == "unstable"
    assert _whole_bucket(server, "clicks")["health"] == "stable"


def test_declared_task_weights_decide_instead_of_the_worst_task(
    server_factory: Callable[..., EmbeddedServer], tmp_path: Path
) -> None:
    server = server_factory(
        fleet=str(small_variant(tmp_path / "weighted.json", change=declare_weighted_tasks))
    )
    _advance(server, 2)
    comments_bad = [task_bucket(t, FIXED_NOW, 1.6 if t == "comments" else 1.0) for t in TASKS]
    clicks_bad = [task_bucket(t, FIXED_NOW + HOUR, 1.6 if t == "clicks" else 1.0) for t in TASKS]
    assert _post(server, comments_bad).json()["unstable"] == []  # 0.3 of the weight: not half
    assert _post(server, clicks_bad).json()["unstable"] == [MULTI_TASK]  # 0.6: more than half
    points = get(server, f"/v1/models/{MULTI_TASK}/stability", window="6h").json()["points"]
    assert [p["health"] for p in points[-2:]] == ["stable", "unstable"]


def test_a_task_bucket_is_idempotent_and_never_rewritten(server: EmbeddedServer) -> None:
    _advance(server, 1)
    buckets = [task_bucket(task, FIXED_NOW) for task in TASKS]
    assert _post(server, buckets).json()["accepted"] == 3
    again = _post(server, buckets).json()
    assert (again["accepted"], again["unchanged"]) == (0, 3)
    changed = [*buckets[:2], task_bucket("follows", FIXED_NOW, 1.3)]
    body = assert_problem(_post(server, changed), 409, "bucket-conflict")
    assert [(c["model_id"], c["task"]) for c in body["conflicts"]] == [(MULTI_TASK, "follows")]


def test_task_labels_must_fit_the_model(server: EmbeddedServer) -> None:
    _advance(server, 1)
    plain = task_bucket("clicks", FIXED_NOW).model_copy(update={"task": None})
    stranger = task_bucket("clicks", FIXED_NOW, model_id="ig_feed_late-stage_mtml.v41")
    body = assert_problem(
        _post(server, [plain, stranger, task_bucket("likes", FIXED_NOW)]), 422, "validation"
    )
    messages = {tuple(error["loc"]): error["message"] for error in body["errors"]}
    assert "clicks, comments, follows" in messages[("body", "buckets", 0, "task")]
    assert "not a task of ig_feed_late-stage_mtml.v41" in messages[("body", "buckets", 1, "task")]
    assert "'likes' is not a task" in messages[("body", "buckets", 2, "task")]

    # One bucket of the model comes with every task at once: it is judged on all of them.
    partial = [task_bucket("clicks", FIXED_NOW), task_bucket("follows", FIXED_NOW)]
    body = assert_problem(_post(server, partial), 422, "validation")
    assert "missing comments" in body["errors"][0]["message"]
    assert (
        get(server, f"/v1/models/{MULTI_TASK}")
        .json()["last_bucket_start"]
        .startswith((FIXED_NOW - HOUR).isoformat()[:16])
    )  # nothing was stored


def test_charting_an_unknown_task_is_refused(server: EmbeddedServer) -> None:
    response = get(server, f"/v1/models/{MULTI_TASK}/stability", task="likes")
    body = assert_problem(response, 422, "validation")
    assert "clicks, comments, follows" in body["detail"]


def test_metrics_carry_the_task_label(server: EmbeddedServer) -> None:
    _advance(server, 1)
    assert _post(server, [task_bucket(task, FIXED_NOW) for task in TASKS]).status_code == 200
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    events = {
        line.split("{")[1].split("}")[0]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("fleetdesk_stability_events_total{") and MULTI_TASK in line
    }
    # One series per task, none without: a sum over the model's series is the model's total.
    assert sorted(labels.rsplit('task="', 1)[1].rstrip('"') for labels in events) == sorted(TASKS)
    single = [
        line
        for line in text.splitlines()
        if line.startswith("fleetdesk_stability_events_total{")
        and 'model_id="ig_feed_late-stage_mtml.v41"' in line
    ]
    assert len(single) == 1 and "task=" not in single[0]
