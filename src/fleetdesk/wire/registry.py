"""Registry changes and history on the wire: create, update, retire, declarative apply, as-of reads and diffs."""

from __future__ import annotations

from pydantic import ConfigDict, Field, StrictBool

from fleetdesk.domain.bounds import FINITE, Moment
from fleetdesk.domain.registry import Model
from fleetdesk.domain.registry_change import ModelChange, TypeChange
from fleetdesk.domain.type_record import ModelTypeRecord
from fleetdesk.wire.base import LAZY, WireModel

MAX_REASON = 2000

_REQUEST = ConfigDict(frozen=True, extra="forbid", **FINITE, **LAZY)
"""A request body: a misspelled field is refused, not ignored (as for actions)."""


class ModelWrite(WireModel):
    """Create (POST /v1/registry/models) or replace (PUT /v1/registry/models/{id}) one model record."""

    model_config = _REQUEST

    model: Model = Field(
        description="The whole record; created_at and updated_at are set by the server"
    )
    reason: str = Field(
        min_length=1, max_length=MAX_REASON, description="Why: goes into the audit log"
    )
    dry_run: StrictBool = False


class ModelRetire(WireModel):
    """Retire one model or type record (POST /v1/registry/models/{id}/retire, /types/{type}/retire)."""

    model_config = _REQUEST

    reason: str = Field(
        min_length=1, max_length=MAX_REASON, description="Why: goes into the audit log"
    )
    dry_run: StrictBool = False


class TypeWrite(WireModel):
    """Create or replace one model type record (PUT /v1/registry/types/{type})."""

    model_config = _REQUEST

    record: ModelTypeRecord
    reason: str = Field(
        min_length=1, max_length=MAX_REASON, description="Why: goes into the audit log"
    )
    dry_run: StrictBool = False


class RegistryApply(WireModel):
    """Make the registry say what a fleet file says (POST /v1/registry/apply), in one transaction."""

    model_config = _REQUEST

    models: list[Model] = Field(description="The declared records (a fleet file's models)")
    types: dict[str, ModelTypeRecord] = Field(
        default_factory=dict,
        description="Declared type records (a fleet file's types); a type left out keeps its record",
    )
    reason: str = Field(
        min_length=1, max_length=MAX_REASON, description="Why: goes into the audit log"
    )
    prune: StrictBool = Field(
        default=False,
        description="Retire the models the file leaves out, of the teams it declares models for",
    )
    dry_run: StrictBool = False


class RegistryChangeResult(WireModel):
    """What a registry write changed (or, as a dry run, would change)."""

    dry_run: bool
    at: Moment
    version: int | None = Field(
        description="The registry version it made; None for a dry run or no change"
    )
    changes: list[ModelChange] = Field(
        description="By model id; empty when the registry already says it"
    )
    type_changes: list[TypeChange] = Field(default_factory=list, description="By type string")
    audit_ids: list[int] = Field(
        default_factory=list, description="One audit record per model or type record changed"
    )


class RegistryEventData(WireModel):
    """The ``registry.changed`` event: one model (``change``) or type record (``type_change``) created, updated
    or retired."""

    version: int
    change: ModelChange | None = None
    type_change: TypeChange | None = None
    actor: str
    reason: str


class RegistrySnapshot(WireModel):
    """The registry as it was at one version (GET /v1/registry?as_of=|version=)."""

    version: int = Field(description="0 is the registry as seeded")
    at: Moment = Field(description="When that version was made")
    models: list[Model] = Field(description="By model id")
    types: dict[str, ModelTypeRecord] = Field(default_factory=dict, description="Type records")


class ModelVersion(WireModel):
    """One change to one model, with who made it, when and why."""

    version: int
    at: Moment
    actor: str
    reason: str
    change: ModelChange


class ModelHistory(WireModel):
    """Every recorded change to one model, newest first (GET /v1/registry/models/{id}/history)."""

    model_id: str
    versions: list[ModelVersion]


class TypeVersion(WireModel):
    """One change to one type record, with who made it, when and why."""

    version: int
    at: Moment
    actor: str
    reason: str
    change: TypeChange


class TypeHistory(WireModel):
    """Every recorded change to one type's record, newest first (GET /v1/registry/types/{type}/history)."""

    type: str
    versions: list[TypeVersion]


class RegistryDiff(WireModel):
    """What changed between two registry versions (GET /v1/registry/diff?from=&to=)."""

    from_version: int
    to_version: int
    changes: list[ModelChange]
    type_changes: list[TypeChange] = Field(default_factory=list)
