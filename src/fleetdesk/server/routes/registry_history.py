"""The registry's history: the registry or one model as of a time or version, a model's changes, diffs."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from fleetdesk.domain.bounds import MomentText
from fleetdesk.domain.registry import Model
from fleetdesk.domain.registry_change import (
    ChangeKind,
    ModelChange,
    diff,
    field_changes,
    type_diff,
)
from fleetdesk.domain.type_record import ModelTypeRecord
from fleetdesk.server.deps import SQL_INT_MAX, BackendDep, ModelIdPath, PrincipalDep
from fleetdesk.server.problems import Problem, ProblemDetails
from fleetdesk.server.store import Connection, registry_log
from fleetdesk.server.store.registry_log import RegistryVersion
from fleetdesk.wire import (
    API_PREFIX,
    ModelHistory,
    ModelVersion,
    ProblemType,
    RegistryDiff,
    RegistrySnapshot,
    TypeHistory,
    TypeVersion,
)

router = APIRouter(prefix=f"{API_PREFIX}/registry", tags=["registry"])

_READ_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ProblemDetails} for status in (401, 404, 422)
}

VersionQuery = Annotated[int | None, Query(ge=0, le=SQL_INT_MAX)]
AsOfQuery = Annotated[MomentText | None, Query(description="An RFC 3339 time with its UTC offset")]


@router.get("", response_model=RegistrySnapshot, responses=_READ_ERRORS)
def registry_as_of(
    backend: BackendDep,
    _: PrincipalDep,
    as_of: AsOfQuery = None,
    version: VersionQuery = None,
) -> RegistrySnapshot:
    """The whole registry now, as of a time, or at a version."""
    with backend.store.read() as conn:
        found = _version(conn, as_of, version)
        models = registry_log.registry_at(conn, found.version)
        types = registry_log.types_at(conn, found.version)
    return RegistrySnapshot(
        version=found.version, at=found.at, models=list(models.values()), types=types
    )


@router.get("/diff", response_model=RegistryDiff, responses=_READ_ERRORS)
def registry_diff(
    backend: BackendDep,
    _: PrincipalDep,
    from_version: Annotated[int, Query(alias="from", ge=0, le=SQL_INT_MAX)],
    to_version: Annotated[
        int | None, Query(alias="to", ge=0, le=SQL_INT_MAX, description="Default: the newest")
    ] = None,
) -> RegistryDiff:
    """What changed from one registry version to another."""
    with backend.store.read() as conn:
        old = _version(conn, None, from_version)
        new = _version(conn, None, to_version)
        changes = diff(
            registry_log.registry_at(conn, old.version), registry_log.registry_at(conn, new.version)
        )
        type_changes = type_diff(
            registry_log.types_at(conn, old.version), registry_log.types_at(conn, new.version)
        )
    return RegistryDiff(
        from_version=old.version,
        to_version=new.version,
        changes=changes,
        type_changes=type_changes,
    )


@router.get("/models/{model_id}", response_model=Model, responses=_READ_ERRORS)
def model_as_of(
    model_id: ModelIdPath,
    backend: BackendDep,
    _: PrincipalDep,
    as_of: AsOfQuery = None,
    version: VersionQuery = None,
) -> Model:
    """One model's record now, as of a time, or at a version (404 when it was not registered then)."""
    with backend.store.read() as conn:
        found = _version(conn, as_of, version)
        record = registry_log.registry_at(conn, found.version, model_id).get(model_id)
    if record is None:
        raise Problem(
            404,
            ProblemType.NOT_FOUND,
            f"no model {model_id!r} in the registry at version {found.version} ({found.at.isoformat()})",
            title="Unknown model",
        )
    return record


@router.get("/models/{model_id}/history", response_model=ModelHistory, responses=_READ_ERRORS)
def model_history(model_id: ModelIdPath, backend: BackendDep, _: PrincipalDep) -> ModelHistory:
    """Every recorded change to one model, newest first, each with who, when, why and what changed."""
    with backend.store.read() as conn:
        rows = registry_log.model_history(conn, model_id)
    if not rows:
        raise Problem(
            404,
            ProblemType.NOT_FOUND,
            f"the registry never had a model {model_id!r}",
            title="Unknown model",
        )
    versions: list[ModelVersion] = []
    before: Model | None = None
    for found, kind, record in reversed(rows):
        change = ModelChange(
            kind=kind,
            model_id=model_id,
            before=before,
            after=record,
            fields=field_changes(before, record)
            if kind is ChangeKind.UPDATE and before is not None and record is not None
            else (),
        )
        versions.append(_model_version(found, change))
        before = record
    return ModelHistory(model_id=model_id, versions=versions[::-1])


@router.get("/types/{type_string}/history", response_model=TypeHistory, responses=_READ_ERRORS)
def type_history(type_string: ModelIdPath, backend: BackendDep, _: PrincipalDep) -> TypeHistory:
    """Every recorded change to one type's record, newest first."""
    with backend.store.read() as conn:
        rows = registry_log.type_history(conn, type_string)
    if not rows:
        raise Problem(
            404,
            ProblemType.NOT_FOUND,
            f"the registry never had a record of type {type_string!r}",
            title="Unknown type",
        )
    versions: list[TypeVersion] = []
    before: ModelTypeRecord | None = None
    for found, record in reversed(rows):
        # A version records a type only when its record changed: one change, never none.
        [change] = type_diff(
            {} if before is None else {type_string: before},
            {} if record is None else {type_string: record},
        )
        versions.append(
            TypeVersion(
                version=found.version,
                at=found.at,
                actor=found.actor,
                reason=found.reason,
                change=change,
            )
        )
        before = record
    return TypeHistory(type=type_string, versions=versions[::-1])


def _model_version(found: RegistryVersion, change: ModelChange) -> ModelVersion:
    return ModelVersion(
        version=found.version, at=found.at, actor=found.actor, reason=found.reason, change=change
    )


def _version(conn: Connection, as_of: datetime | None, version: int | None) -> RegistryVersion:
    if as_of is not None and version is not None:
        raise Problem(422, ProblemType.VALIDATION, "give as_of or version, not both")
    if version is not None:
        found = registry_log.get_version(conn, version)
    elif as_of is not None:
        found = registry_log.version_at(conn, as_of)
    else:
        found = registry_log.latest_version(conn)
    if found is None:
        raise Problem(
            404,
            ProblemType.NOT_FOUND,
            "no such registry version" if version is not None else "the registry has no versions",
            title="Unknown version",
        )
    return found
