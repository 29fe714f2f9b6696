"""Changes to the registry: what differs between two sets of model records, model by model and field by field.

One shape serves every path that changes or compares the registry: a create, update or retire through the
API, a declarative apply of a fleet file (the change set that turns the registry into the file), and the diff
between two versions of the registry's history; model type records (``TypeChange``) change the same way. Record timestamps are the server's bookkeeping, not part of
what a model is, so they never make a change on their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from fleetdesk.domain.registry import Model
from fleetdesk.domain.type_record import ModelTypeRecord

BOOKKEEPING = frozenset({"created_at", "updated_at"})
"""Fields the server stamps; a difference in them alone is no change."""


class ChangeKind(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    RETIRE = "retire"


class FieldChange(BaseModel):
    """One field of one model record, before and after (JSON values)."""

    model_config = ConfigDict(frozen=True)

    field: str
    before: Any
    after: Any


class ModelChange(BaseModel):
    """One model created, updated or retired; ``fields`` lists what an update changes."""

    model_config = ConfigDict(frozen=True)

    kind: ChangeKind
    model_id: str
    before: Model | None
    after: Model | None
    fields: tuple[FieldChange, ...] = ()

    @property
    def tier_changed(self) -> bool:
        return any(change.field == "tier" for change in self.fields)

    @property
    def teams(self) -> set[str]:
        """The owning teams this change touches: a transfer touches the old owner and the new one."""
        return {m.owner_team for m in (self.before, self.after) if m is not None}

    def lines(self) -> list[str]:
        """The change as diff lines: '+ id', '- id', '~ id' with one '    field: before -> after' each."""
        if self.kind is ChangeKind.CREATE:
            assert self.after is not None
            return [f"+ {self.model_id} ({self.after.role}, {self.after.tier}, {self.after.type})"]
        if self.kind is ChangeKind.RETIRE:
            return [f"- {self.model_id}"]
        return [f"~ {self.model_id}"] + [
            f"    {c.field}: {_shown(c.before)} -> {_shown(c.after)}" for c in self.fields
        ]


class TypeChange(BaseModel):
    """One model type record created, updated or retired (keyed by its type string)."""

    model_config = ConfigDict(frozen=True)

    kind: ChangeKind
    type: str
    before: ModelTypeRecord | None
    after: ModelTypeRecord | None
    fields: tuple[FieldChange, ...] = ()

    @property
    def teams(self) -> set[str]:
        return {r.owner_team for r in (self.before, self.after) if r is not None}

    def lines(self) -> list[str]:
        """The change as diff lines, like ModelChange's, marked as a type record."""
        if self.kind is ChangeKind.CREATE:
            assert self.after is not None
            return [f"+ type {self.type} (owned by {self.after.owner_team})"]
        if self.kind is ChangeKind.RETIRE:
            return [f"- type {self.type}"]
        return [f"~ type {self.type}"] + [
            f"    {c.field}: {_shown(c.before)} -> {_shown(c.after)}" for c in self.fields
        ]


def field_changes(before: BaseModel, after: BaseModel) -> tuple[FieldChange, ...]:
    """The fields that differ between two records of one model or type, bookkeeping left out, in field order."""
    old = before.model_dump(mode="json", exclude=set(BOOKKEEPING))
    new = after.model_dump(mode="json", exclude=set(BOOKKEEPING))
    return tuple(
        FieldChange(field=name, before=old[name], after=new[name])
        for name in old
        if old[name] != new[name]
    )


def diff(old: Mapping[str, Model], new: Mapping[str, Model]) -> list[ModelChange]:
    """Every model created, updated or retired going from ``old`` to ``new``, by model id."""
    changes = []
    for model_id in sorted(old.keys() | new.keys()):
        before, after = old.get(model_id), new.get(model_id)
        if before is None:
            changes.append(
                ModelChange(kind=ChangeKind.CREATE, model_id=model_id, before=None, after=after)
            )
        elif after is None:
            changes.append(
                ModelChange(kind=ChangeKind.RETIRE, model_id=model_id, before=before, after=None)
            )
        elif before == after:
            continue  # the common case of a fleet-wide apply, without dumping both records
        elif fields := field_changes(before, after):
            changes.append(
                ModelChange(
                    kind=ChangeKind.UPDATE,
                    model_id=model_id,
                    before=before,
                    after=after,
                    fields=fields,
                )
            )
    return changes


def type_diff(
    old: Mapping[str, ModelTypeRecord], new: Mapping[str, ModelTypeRecord]
) -> list[TypeChange]:
    """Every type record created, updated or retired going from ``old`` to ``new``, by type string."""
    changes = []
    for type_string in sorted(old.keys() | new.keys()):
        before, after = old.get(type_string), new.get(type_string)
        if before == after:
            continue
        kind = (
            ChangeKind.CREATE
            if before is None
            else ChangeKind.RETIRE
            if after is None
            else ChangeKind.UPDATE
        )
        fields = field_changes(before, after) if before is not None and after is not None else ()
        changes.append(
            TypeChange(kind=kind, type=type_string, before=before, after=after, fields=fields)
        )
    return changes


def declared(current: Mapping[str, Model], models: list[Model], prune: bool) -> dict[str, Model]:
    """The registry a declarative apply asks for: the declared records over the current ones. With ``prune``,
    a model of a team the file declares models for is retired when the file leaves it out: a team's file is
    its source of truth for its own models, and says nothing about other teams'."""
    teams = {model.owner_team for model in models} if prune else set()
    wanted = {m: model for m, model in current.items() if model.owner_team not in teams}
    wanted.update((model.id, model) for model in models)
    return wanted


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return "null" if value is None else str(value)
