"""Stability per task: a multi-task model is judged per task, and its health is its worst task's (or, when its
type declares task weights, the weighted verdict of its tasks).

A multi-task model (clicks, comments, follows; a foundation model's heads) predicts several labels, each with
its own base rate: summing clicks and follows into one calibration says nothing about either. So each task
keeps its own additive sums per bucket, calibration and NE are computed per task after summing (as for any
model, fleetdesk.domain.stability), and the model's bucket is judged from its tasks' judgements. The
model's combined sums (every task's summed) are still kept: they are what /metrics totals and charts of
the model as a whole read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Annotated

from pydantic import StringConstraints

from fleetdesk.domain.stability import Health

TASK_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,39}")
TaskName = Annotated[str, StringConstraints(pattern=rf"^{TASK_PATTERN.pattern}$")]
"""A task's name: a lowercase word (also a Prometheus label value and a column of the console)."""


def worst_task(healths: Iterable[Health]) -> Health:
    """The model's health from its tasks' in one bucket: unstable when any task is; stable when none is and
    at least one task has data; no data when no task has.

    A task without data (a sparse conversion head below its minimum events) says nothing about the model:
    it neither makes the model unstable nor keeps a stable task's bucket from counting as good.
    """
    seen = set(healths)
    if Health.UNSTABLE in seen:
        return Health.UNSTABLE
    return Health.STABLE if Health.STABLE in seen else Health.NO_DATA


UNSTABLE_SHARE = 0.5
"""Under declared task weights, the model is unstable when its unstable tasks carry at least this share of the
weight of its tasks that have data."""


def model_health(
    healths: Mapping[str, Health], weights: Mapping[str, float] | None = None
) -> Health:
    """The model's health from its tasks' (task → health) in one bucket: its worst task's, or with declared
    ``weights`` (task → weight, every task) unstable when its unstable tasks carry at least UNSTABLE_SHARE of
    the weight of its tasks with data, no data when no task of positive weight has data.

    Weights let a type say that a head which barely matters (an experimental one: weight 0) or a minor task
    beside a major one does not decide alone; without them every task decides alone.
    """
    if weights is None:
        return worst_task(healths.values())
    judged = [
        (weights[task], health)
        for task, health in healths.items()
        if health is not Health.NO_DATA and weights[task] > 0.0
    ]
    total = sum(weight for weight, _ in judged)
    if not total:
        return Health.NO_DATA
    unstable = sum(weight for weight, health in judged if health is Health.UNSTABLE)
    return Health.UNSTABLE if unstable >= UNSTABLE_SHARE * total else Health.STABLE


def split_synthetic(
    tasks: Sequence[str], sums: Sequence[float]
) -> Iterator[tuple[str, tuple[float, ...]]]:
    """A synthetic fleet's series is one per model (fleetdesk.domain.synthetic): a multi-task model's is split
    over its tasks, (task, its sums) each, the first task the most frequent and each next one with half as many
    events, every task with the model's ratios (an incident injected into the model shows in each task)."""
    shares = [0.5**i for i in range(len(tasks))]
    whole = sum(shares)
    for task, share in zip(tasks, shares):
        yield task, tuple(value * share / whole for value in sums)
