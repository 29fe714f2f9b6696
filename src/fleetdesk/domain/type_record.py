"""Model type records (ModelTypeMetadata): what a category of models is, beside its model records.

The type string says where a model sits (app, surface, position, architecture); the record says who owns
the category, what it is for, the tier a new model of it starts at, its healthy bands per role, where its
runbook is, and which extra attributes its models carry. The registry is extensible that way: a type
declares an attribute (its kind, whether it is required, its choices), a model of the type gives a value,
and a value of the wrong kind or a key the type does not declare is an error naming it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fleetdesk.domain.bounds import MAX_SIGNAL
from fleetdesk.domain.model_type import ModelTypeError, Vocabulary
from fleetdesk.domain.registry import AttributeValue, Model, RegistryViolation, Role, Tier
from fleetdesk.domain.stability import HealthBands
from fleetdesk.domain.tasks import TaskName

ATTRIBUTE_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
MAX_TEXT = 1000

ANY_ROLE = "*"


class AttributeKind(StrEnum):
    TEXT = "text"
    NUMBER = "number"
    INTEGER = "integer"
    FLAG = "flag"
    CHOICE = "choice"


class AttributeSpec(BaseModel):
    """One declared extension attribute of a model type."""

    model_config = ConfigDict(frozen=True)

    kind: AttributeKind
    description: str = Field(min_length=1, max_length=MAX_TEXT)
    required: bool = False
    choices: tuple[str, ...] = Field(default=(), description="The allowed values of a choice")

    @model_validator(mode="after")
    def _choices_for_a_choice(self) -> AttributeSpec:
        if (self.kind is AttributeKind.CHOICE) != bool(self.choices):
            raise ValueError("choices are given for a choice attribute, and only for one")
        return self

    def problem(self, value: AttributeValue) -> str | None:
        """Why ``value`` is not a value of this attribute (None: it is)."""
        kind = self.kind
        if kind is AttributeKind.FLAG:
            ok = isinstance(value, bool)
        elif kind is AttributeKind.INTEGER:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif kind is AttributeKind.NUMBER:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        elif kind is AttributeKind.TEXT:
            ok = isinstance(value, str) and len(value) <= MAX_TEXT
        else:
            if value not in self.choices:
                return f"{value!r} is not one of {', '.join(self.choices)}"
            return None
        return None if ok else f"{value!r} is not {_a(kind)}"


class ModelTypeRecord(BaseModel):
    """A model type's own record, keyed by its type string in the fleet file's ``types``."""

    model_config = ConfigDict(frozen=True, allow_inf_nan=False)

    owner_team: str = Field(min_length=1, description="The team that owns the category")
    description: str = Field(min_length=1, max_length=MAX_TEXT, description="What the type is for")
    default_tier: Tier = Field(
        description="The tier a model of this type gets when its record has none"
    )
    runbook_url: str = Field(pattern=r"^https?://\S+$", max_length=2000)
    bands: dict[Role | Literal["*"], HealthBands] = Field(
        default_factory=dict,
        description='Healthy bands of this type per role, "*" for every role',
    )
    attributes: dict[str, AttributeSpec] = Field(
        default_factory=dict, description="Extension attributes its models may (or must) carry"
    )
    tasks: tuple[TaskName, ...] = Field(
        default=(),
        max_length=32,
        description="The tasks its models predict (clicks, comments, follows), each judged on its own;"
        " none: its models are judged as one series",
    )

    @model_validator(mode="after")
    def _attribute_names(self) -> ModelTypeRecord:
        bad = [name for name in self.attributes if not ATTRIBUTE_NAME.fullmatch(name)]
        if bad:
            raise ValueError(f"attribute names are lowercase words joined by '_': {', '.join(bad)}")
        return self

    task_weights: dict[TaskName, float] | None = Field(
        default=None,
        description="Each task's weight, when its models are not judged by their worst task: a model is then"
        " unstable when its unstable tasks carry at least half the weight of its tasks with data",
    )

    @model_validator(mode="after")
    def _tasks_once(self) -> ModelTypeRecord:
        repeated = sorted({task for task in self.tasks if self.tasks.count(task) > 1})
        if repeated:
            raise ValueError(f"tasks are named once each: {', '.join(repeated)}")
        return self

    @model_validator(mode="after")
    def _weights_for_every_task(self) -> ModelTypeRecord:
        weights = self.task_weights
        if weights is None:
            return self
        if set(weights) != set(self.tasks):
            raise ValueError(
                f"task_weights gives a weight to each of its tasks and only to them ({', '.join(self.tasks) or 'none'})"
            )
        if not all(0.0 <= weight <= MAX_SIGNAL for weight in weights.values()) or not any(
            weights.values()
        ):
            raise ValueError("task weights are at least 0, and at least one is above 0")
        return self


def attribute_problems(
    record: ModelTypeRecord | None, values: Mapping[str, AttributeValue]
) -> list[tuple[str, str]]:
    """(attribute, what is wrong) for each problem with a model's attribute values under its type's record."""
    declared = record.attributes if record is not None else {}
    problems = []
    for name, value in values.items():
        spec = declared.get(name)
        if spec is None:
            known = ", ".join(sorted(declared)) or "none"
            problems.append((name, f"not an attribute its type declares (declared: {known})"))
        elif (problem := spec.problem(value)) is not None:
            problems.append((name, problem))
    problems += [
        (name, "required by its type, missing")
        for name, spec in sorted(declared.items())
        if spec.required and name not in values
    ]
    return problems


def type_violations(
    models: list[Model], types: Mapping[str, ModelTypeRecord], vocabulary: Vocabulary
) -> tuple[list[str], list[RegistryViolation]]:
    """Type records keyed by something that is not a type (one sentence each, naming ``types.KEY``), and
    each model's attribute problems under its type's record (one violation each, naming the attribute)."""
    problems = []
    for type_string in types:
        try:
            vocabulary.parse(type_string)
        except ModelTypeError as error:
            problems.append(
                f"types.{type_string}: not a model type ({error.part}: {error.message})"
            )
    violations = [
        RegistryViolation(model_id=model.id, field=f"attributes.{name}", message=message)
        for model in models
        for name, message in attribute_problems(types.get(model.type), model.attributes)
    ]
    return problems, violations


def _a(kind: AttributeKind) -> str:
    return {"integer": "an integer", "flag": "a flag (true or false)"}.get(kind, f"a {kind}")
