"""Models: list, detail, lineage, stability series, SLO status."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query

from fleetdesk.domain.comparison import compare
from fleetdesk.domain.stability import StabilityBucket
from fleetdesk.domain.tasks import model_health
from fleetdesk.server import views
from fleetdesk.server.deps import SQL_INT_MAX, BackendDep, ModelIdPath, PrincipalDep, TextQuery
from fleetdesk.server.metrics_source import MetricsSourceError
from fleetdesk.server.problems import Problem
from fleetdesk.server.store import epoch, from_epoch
from fleetdesk.wire import (
    API_PREFIX,
    FieldError,
    Health,
    HealthBands,
    Lineage,
    ModelDetail,
    ModelPage,
    ModelSort,
    ProblemType,
    Role,
    SloStatus,
    StabilityPoint,
    StabilitySeries,
    Tier,
    Window,
)

router = APIRouter(prefix=f"{API_PREFIX}/models", tags=["models"])


@router.get("", response_model=ModelPage)
def list_models(
    backend: BackendDep,
    _: PrincipalDep,
    app: TextQuery = None,
    surface: TextQuery = None,
    tier: Annotated[list[Tier] | None, Query()] = None,
    role: Role | None = None,
    health: Health | None = None,
    q: Annotated[
        str | None, Query(max_length=200, description="Text in id, type, team, rotation or purpose")
    ] = None,
    sort: ModelSort = ModelSort.WORST,
    offset: Annotated[int, Query(ge=0, le=SQL_INT_MAX)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> ModelPage:
    return views.list_models(
        backend,
        app=app,
        surface=surface,
        tiers=tier or [],
        role=role,
        health=health,
        query=q,
        sort=sort,
        offset=offset,
        limit=limit,
    )


@router.get("/{model_id}", response_model=ModelDetail)
def model_detail(model_id: ModelIdPath, backend: BackendDep, _: PrincipalDep) -> ModelDetail:
    return views.model_detail(backend, model_id)


@router.get("/{model_id}/lineage", response_model=Lineage)
def lineage(model_id: ModelIdPath, backend: BackendDep, _: PrincipalDep) -> Lineage:
    return views.lineage(backend, model_id)


@router.get("/{model_id}/slo", response_model=SloStatus)
def slo(model_id: ModelIdPath, backend: BackendDep, _: PrincipalDep) -> SloStatus:
    return views.slo_status(backend, model_id)


def _points(buckets: list[StabilityBucket], bands: HealthBands) -> list[StabilityPoint]:
    return [
        StabilityPoint(**bucket.model_dump(), health=bands.health(bucket)) for bucket in buckets
    ]


def _judged_by_tasks(
    points: list[StabilityPoint],
    per_task: dict[str, list[StabilityPoint]],
    weights: dict[str, float] | None,
) -> list[StabilityPoint]:
    """A multi-task model's whole series, each bucket judged from its tasks (as ingest judged it), not by its
    summed sums: a sum over clicks and follows has no band of its own."""
    healths: dict[datetime, dict[str, Health]] = defaultdict(dict)
    for task, task_points in per_task.items():
        for point in task_points:
            healths[point.start][task] = point.health
    return [
        point.model_copy(update={"health": model_health(healths[point.start], weights)})
        for point in points
    ]


@router.get("/{model_id}/stability", response_model=StabilitySeries)
def stability(
    model_id: ModelIdPath,
    backend: BackendDep,
    _: PrincipalDep,
    window: Window = Window.H24,
    holdout: Annotated[
        bool,
        Query(description="Include the holdout's buckets, for overlay (its gap is always in gaps)"),
    ] = False,
    task: Annotated[
        str | None,
        Query(
            max_length=40,
            description="One task of a multi-task model (its baseline's and holdout's same task, when they"
            " have it); none: the model as a whole",
        ),
    ] = None,
) -> StabilitySeries:
    model = views.model_or_404(backend, model_id)
    tasks = backend.config.tasks_for(model)
    if task is not None and task not in tasks:
        raise Problem(
            422,
            ProblemType.VALIDATION,
            f"{task!r} is not a task of {model_id} (its tasks: {', '.join(tasks) or 'none'})",
            title="Unknown task",
            errors=[FieldError(loc=["query", "task"], message="not a task of this model")],
        )
    step = backend.config.bucket_seconds
    now_s = epoch(backend.clock.now())
    end = from_epoch(now_s - now_s % step)  # end of the latest closed bucket
    start = end - window.duration
    bands = backend.config.bands_for(model)

    def series_of(other_id: str | None) -> list[StabilityPoint]:
        # Each model judged against its own band: a holdout lags by design and has a band of its own.
        other = backend.registry.models.get(other_id or "")
        if other is None:
            return []
        same_task = task if task in backend.config.tasks_for(other) else None
        return _points(
            backend.metrics.buckets(other.id, start, end, same_task),
            backend.config.bands_for(other),
        )

    try:
        points = _points(backend.metrics.buckets(model_id, start, end, task), bands)
        if task is None and tasks:
            points = _judged_by_tasks(
                points,
                {
                    t: _points(backend.metrics.buckets(model_id, start, end, t), bands)
                    for t in tasks
                },
                backend.config.task_weights_for(model),
            )
        baseline_points = series_of(model.baseline_model_id)
        holdout_points = series_of(model.holdout_model_id)
    except Problem:
        raise  # a source that speaks problem details (Prometheus: unreachable 503, query error 502) keeps them
    except MetricsSourceError as error:
        raise Problem(
            503, ProblemType.UNAVAILABLE, f"metrics source {backend.metrics.name}: {error}"
        ) from None
    gaps = []
    if model.baseline_model_id:
        gaps.append(compare(points, baseline_points, model.baseline_model_id, "baseline"))
    if model.holdout_model_id:
        gaps.append(compare(points, holdout_points, model.holdout_model_id, "holdout"))
    return StabilitySeries(
        model_id=model_id,
        task=task,
        window=window,
        start=start,
        end=end,
        bucket=backend.config.bucket,
        bands=bands,
        points=points,
        baseline_model_id=model.baseline_model_id,
        baseline_points=baseline_points,
        holdout_model_id=model.holdout_model_id,
        holdout_points=holdout_points if holdout else [],
        gaps=gaps,
    )
