"""Stability per task: each task's signals from its own additive sums, the model judged by its worst task."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from itertools import permutations
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from fleet_variants import MULTI_TASK, declare_tasks, declare_weighted_tasks, small_variant
from fleetdesk.domain.stability import Health, HealthBands, StabilitySums, merge
from fleetdesk.domain.tasks import model_health, worst_task
from fleetdesk.domain.type_record import ModelTypeRecord
from fleetdesk.fleets import load_fleet
from fleetdesk.server.store import HEALTH_BY_CODE, FleetConfig
from fleetdesk.server.store.seeding import BucketRows

BANDS = HealthBands(calibration_low=0.9, calibration_high=1.1, ne_max=0.95, min_events=100)
CLICKS = [(0.5, 1.0, 1.0)] * 10 + [(0.5 / 9, 0.0, 1.0)] * 90  # 10% base rate, calibrated
COMMENTS = [(0.03, 1.0, 1.0)] + [(0.03, 0.0, 1.0)] * 49  # 2% base rate, over-predicts 1.5x


def _hours(events: list[tuple[float, float, float]], hours: int) -> list[StabilitySums]:
    return [StabilitySums.from_events(events) for _ in range(hours)]


def test_each_task_is_judged_from_its_own_window_sums() -> None:
    clicks = merge(_hours(CLICKS * 2, 3))
    comments = merge(_hours(COMMENTS * 3, 3))
    assert clicks.calibration == pytest.approx(1.0)
    assert comments.calibration == pytest.approx(1.5)
    assert BANDS.health(clicks) is Health.STABLE
    assert BANDS.health(comments) is Health.UNSTABLE
    # The model's sums are the tasks' summed: its calibration is a ratio of sums over every task, which a
    # big healthy task hides the small bad one in, so the model is judged by its tasks, not by this.
    whole = clicks + comments
    assert whole.calibration == pytest.approx(
        (clicks.prediction_sum + comments.prediction_sum) / (clicks.label_sum + comments.label_sum)
    )
    assert BANDS.health(whole) is Health.STABLE
    assert worst_task([BANDS.health(clicks), BANDS.health(comments)]) is Health.UNSTABLE


def test_a_tasks_signals_are_ratios_of_summed_buckets_never_averages() -> None:
    light = StabilitySums.from_events(COMMENTS)  # 50 events
    heavy = StabilitySums.from_events([(0.02, 1.0, 1.0)] + [(0.02, 0.0, 1.0)] * 49) + light
    window = merge([light, heavy])
    mean_of_ratios = (light.calibration + heavy.calibration) / 2  # type: ignore[operator]
    assert window.calibration == pytest.approx(
        (light.prediction_sum + heavy.prediction_sum) / (light.label_sum + heavy.label_sum)
    )
    assert not math.isclose(window.calibration or 0.0, mean_of_ratios)


healths = st.lists(st.sampled_from(list(Health)), max_size=6)


@given(healths)
def test_worst_task_any_unstable_task_makes_the_model_unstable(tasks: list[Health]) -> None:
    model = worst_task(tasks)
    if Health.UNSTABLE in tasks:
        assert model is Health.UNSTABLE
    elif Health.STABLE in tasks:
        assert model is Health.STABLE
    else:
        assert model is Health.NO_DATA
    assert all(worst_task(order) is model for order in permutations(tasks[:4] + tasks[4:]))


def test_a_task_without_data_neither_breaks_nor_keeps_the_model() -> None:
    sparse = StabilitySums.from_events(
        [(0.01, 0.0, 1.0)] * 20
    )  # conversions: no positives, too few
    assert BANDS.health(sparse) is Health.NO_DATA
    assert worst_task([Health.STABLE, BANDS.health(sparse)]) is Health.STABLE
    assert worst_task([BANDS.health(sparse)]) is Health.NO_DATA
    assert worst_task([]) is Health.NO_DATA


S, U, N = Health.STABLE, Health.UNSTABLE, Health.NO_DATA
WEIGHTS = {"clicks": 0.6, "comments": 0.3, "follows": 0.1, "experimental": 0.0}


@pytest.mark.parametrize(
    ("healths", "expected"),
    [
        (
            {"clicks": S, "comments": S, "follows": U, "experimental": U},
            S,
        ),  # 0.1 of 1.0 is not half
        ({"clicks": S, "comments": U, "follows": U, "experimental": S}, S),  # 0.4 of 1.0
        ({"clicks": U, "comments": S, "follows": S, "experimental": S}, U),  # 0.6 of 1.0
        (
            {"clicks": N, "comments": U, "follows": S, "experimental": S},
            U,
        ),  # 0.3 of the 0.4 with data
        ({"clicks": N, "comments": U, "follows": U, "experimental": S}, U),
        (
            {"clicks": N, "comments": N, "follows": N, "experimental": U},
            N,
        ),  # weight 0 never decides
        ({"clicks": N, "comments": S, "follows": U, "experimental": N}, S),  # 0.1 of 0.4
    ],
)
def test_declared_weights_decide_by_the_weight_of_unstable_tasks(
    healths: dict[str, Health], expected: Health
) -> None:
    assert model_health(healths, WEIGHTS) is expected


@given(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.sampled_from(list(Health))))
def test_without_weights_the_worst_task_decides(healths: dict[str, Health]) -> None:
    assert model_health(healths) is worst_task(healths.values())


def test_a_type_declares_each_task_once_with_a_plain_name() -> None:
    record = {
        "owner_team": "t",
        "description": "d",
        "default_tier": "TIER2",
        "runbook_url": "https://runbooks.example/t",
    }
    assert ModelTypeRecord.model_validate(record | {"tasks": ["clicks", "follows"]}).tasks == (
        "clicks",
        "follows",
    )
    assert ModelTypeRecord.model_validate(record).tasks == ()
    with pytest.raises(ValidationError, match="named once each: clicks"):
        ModelTypeRecord.model_validate(record | {"tasks": ["clicks", "clicks"]})
    with pytest.raises(ValidationError, match="tasks.0"):
        ModelTypeRecord.model_validate(record | {"tasks": ['clicks"} or vector(1)']})
    tasks = record | {"tasks": ["clicks", "follows"]}
    weighted = ModelTypeRecord.model_validate(tasks | {"task_weights": {"clicks": 2, "follows": 0}})
    assert weighted.task_weights == {"clicks": 2.0, "follows": 0.0}
    for weights in ({"clicks": 1.0}, {"clicks": 1.0, "follows": 1.0, "likes": 1.0}):
        with pytest.raises(ValidationError, match="a weight to each of its tasks"):
            ModelTypeRecord.model_validate(tasks | {"task_weights": weights})
    for weights in ({"clicks": 0, "follows": 0}, {"clicks": -1, "follows": 1}):
        with pytest.raises(ValidationError, match="at least one is above 0"):
            ModelTypeRecord.model_validate(tasks | {"task_weights": weights})


def test_seeded_history_splits_a_multi_task_model_into_its_tasks_exactly() -> None:
    fleet = load_fleet("small")
    model = fleet.registry.models["ig_notifications_late-stage_mtml.v15"]
    record = ModelTypeRecord(
        owner_team="t",
        description="d",
        default_tier=model.tier,
        runbook_url="https://runbooks.example/t",
        tasks=("clicks", "comments", "follows"),
    )
    config = FleetConfig.of(fleet.file).model_copy(update={"types": {model.type: record}})
    keys = {model_id: key for key, model_id in enumerate(fleet.registry.models, start=1)}
    end = fleet.timeline.end
    rows = BucketRows(fleet, config, keys, fleet.continued_until(end + timedelta(hours=3)), None)
    model_rows = [
        row
        for batch in rows.batches()
        for row in zip(*(column.tolist() for column in batch), strict=True)
        if row[0] == keys[model.id]
    ]
    assert len(model_rows) == 3 and len(rows.task_rows) == 9
    for _key, start, *sums, health in model_rows:
        parts = [row for row in rows.task_rows if row[2] == start]
        assert [row[1] for row in parts] == ["clicks", "comments", "follows"]
        assert [row[3] for row in parts] == pytest.approx(
            [sums[0] * f for f in (4 / 7, 2 / 7, 1 / 7)]
        )
        for column in range(4):
            assert math.fsum(row[3 + column] for row in parts) == pytest.approx(
                sums[column], rel=1e-12
            )
        assert HEALTH_BY_CODE[health] is worst_task(HEALTH_BY_CODE[row[-1]] for row in parts)
    assert datetime.fromtimestamp(model_rows[0][1], UTC) == end


def test_explain_lists_a_types_tasks(tmp_path: Path) -> None:
    from fleetdesk.fleets.explanation import explain, render_text

    fleet = load_fleet(str(small_variant(tmp_path / "tasks.json", change=declare_tasks)))
    text = render_text(explain(fleet, MULTI_TASK))
    assert "tasks       clicks, comments, follows (each judged; the model is its worst)" in text
    fleet = load_fleet(
        str(small_variant(tmp_path / "weighted.json", change=declare_weighted_tasks))
    )
    text = render_text(explain(fleet, MULTI_TASK))
    assert "tasks       clicks 0.6, comments 0.3, follows 0.1 (each judged; the model is\n" in text


def test_a_drill_sends_a_multi_task_models_buckets_with_every_task(tmp_path: Path) -> None:
    from fleetdesk.drills.replay import drill_fleet, plan_replay
    from fleetdesk.drills.scenario import load_scenario

    scenario, path = load_scenario("stale-feed")
    fleet_file = small_variant(tmp_path / "tasks.json", change=declare_tasks)
    plan = plan_replay(scenario, drill_fleet(scenario, str(path), str(fleet_file)))
    sent = [bucket for bucket in plan.ticks[0].buckets if bucket.model_id == MULTI_TASK]
    assert [bucket.task for bucket in sent] == ["clicks", "comments", "follows"]
    others = [bucket for bucket in plan.ticks[0].buckets if bucket.model_id != MULTI_TASK]
    assert others and all(bucket.task is None for bucket in others)


def test_a_batch_whose_every_bucket_a_feed_stop_removed_counts_no_days() -> None:
    """Continuing a history through a feed stop that covers every model of a batch leaves it no buckets: the
    batch then has no per-day counts and nothing to add to its models, rather than failing."""
    import numpy as np

    from fleetdesk.server.store.seeding import _added_history, _day_counts

    none = np.empty(0, np.int64)
    sums = [np.empty(0, np.float64)] * 4
    assert [len(column) for column in _day_counts(none, none, none)] == [0] * 5
    assert [len(column) for column in _added_history(none, none, np.zeros(3, np.int64), sums)] == [
        0
    ] * 10
