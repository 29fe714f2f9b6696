"""Stability per task: a multi-task model is judged per task, and its health is its worst task's.

A multi-task model (clicks, comments, follows; a foundation model's heads) predicts several labels, each with
its own base rate: summing clicks and follows into one calibration says nothing about either. So each task
keeps its own additive sums per bucket, calibration and NE are computed per task after summing (as for any
model, fleetdesk.domain.stability), and the model's bucket is judged from its tasks' judgements. The
model's combined sums (every task's summed) are still kept: they are what /metrics totals and charts of
the model as a whole read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
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
