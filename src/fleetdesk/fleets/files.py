"""Loading fleet files: resolve a name or path, validate everything, report it all at once.

A broken fleet file is reported as one ``FleetFileError`` that names the file,
then every problem with the model it belongs to and the field, so a fixture
author fixes the whole file in one pass instead of one error per run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError, model_validator

from fleetdesk.domain.fleet import FleetFile, MetricIncident, with_default_tiers
from fleetdesk.domain.registry import Model, Registry, RegistryError
from fleetdesk.domain.stability import HealthBands, StabilityBucket
from fleetdesk.domain.synthetic import (
    BucketRow,
    SeriesColumns,
    Timeline,
    bucket_from_row,
    incidents_by_model,
    synthesize_columns,
    synthesize_rows,
)
from fleetdesk.domain.text import sanitize
from fleetdesk.domain.type_record import ModelTypeRecord, type_violations
from fleetdesk.fleets.unknown_keys import unknown_keys
from fleetdesk.settings import locations
from fleetdesk.settings.local_files import MIB, read_text_file

BUILTIN_FLEETS = ("small", "large")
MAX_FLEET_FILE_BYTES = 256 * MIB
"""A generated fleet of 100,000 models is about 100 MB."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class FleetFileError(ValueError):
    """A fleet file that cannot be used; the message lists every problem found."""

    def __init__(self, source: Path | str, problems: list[str]) -> None:
        self.source = str(source)
        self.problems = problems
        if len(problems) == 1:  # one line, like every other error of the command line
            super().__init__(f"{sanitize(self.source)}: {problems[0]}")
            return
        lines = "\n".join(f"  - {problem}" for problem in problems)
        super().__init__(
            f"{sanitize(self.source)}: {len(problems)} problems in fleet file:\n{lines}"
        )


class Fleet:
    """A validated fleet: its file, its registry, and its metric history on demand."""

    def __init__(self, file: FleetFile, registry: Registry, source: Path) -> None:
        self.file = file
        self.registry = registry
        self.source = source
        history = file.history
        self.timeline = Timeline(history.start, history.end, history.bucket)
        self._incidents = incidents_by_model(history.incidents)

    @property
    def name(self) -> str:
        return self.file.name

    def model(self, model_id: str) -> Model:
        """The model with this id (UnknownModelError with suggestions otherwise)."""
        return self.registry.get(model_id)

    def bands_for(self, model_id: str) -> HealthBands:
        model = self.model(model_id)
        return self.file.policy.bands_for(model, self.file.bands_for(model.type, model.role))

    def incidents_for(self, model_id: str) -> list[MetricIncident]:
        return list(self._incidents.get(model_id, ()))

    def rows(self, model_id: str, timeline: Timeline | None = None) -> list[BucketRow]:
        """One model's buckets as plain rows (no validation per bucket), over its history or ``timeline``."""
        self.model(model_id)
        profile = self.file.history.profiles[model_id]
        return synthesize_rows(
            model_id, profile, self._incidents.get(model_id, ()), timeline or self.timeline
        )

    def columns(self, model_ids: Sequence[str], timeline: Timeline | None = None) -> SeriesColumns:
        """Several models' buckets as columns, over their history or ``timeline``: the bulk-load fast path."""
        profiles = self.file.history.profiles
        return synthesize_columns(
            [
                (model_id, profiles[model_id], self._incidents.get(model_id, ()))
                for model_id in model_ids
            ],
            timeline or self.timeline,
        )

    def continued_until(self, end: datetime) -> Timeline:
        """The buckets after the history's end up to ``end`` (floored to a bucket), as the same history
        would have gone on: same noise stream, drifts held at their full magnitude, feed stops still stopped."""
        bucket = self.file.history.bucket
        return self.timeline.after(end - (end - _EPOCH) % bucket)

    def buckets(self, model_id: str) -> Iterator[StabilityBucket]:
        return map(bucket_from_row, self.rows(model_id))

    def all_rows(self, timeline: Timeline | None = None) -> Iterator[tuple[str, list[BucketRow]]]:
        """Every model's rows (over its history or ``timeline``), model by model: the bulk-load fast path."""
        for model_id in self.registry.models:
            yield model_id, self.rows(model_id, timeline)

    def all_buckets(self) -> Iterator[tuple[str, StabilityBucket]]:
        for model_id, rows in self.all_rows():
            for row in rows:
                yield model_id, bucket_from_row(row)


def resolve_fleet_path(name_or_path: str) -> Path:
    """A built-in fleet name ("small", "large") to its fixture file; anything else is a path."""
    if name_or_path in BUILTIN_FLEETS:
        return locations.fleets_dir() / f"{name_or_path}.json"
    return Path(name_or_path)


def load_fleet(name_or_path: str, end_at: datetime | None = None) -> Fleet:
    """Load and fully validate a fleet; with ``end_at``, move its history to end there."""
    path = resolve_fleet_path(name_or_path)
    try:
        text = read_text_file(path, MAX_FLEET_FILE_BYTES)
    except (OSError, UnicodeDecodeError) as error:
        hint = f" (built-in fleets: {', '.join(BUILTIN_FLEETS)})" if not path.exists() else ""
        raise FleetFileError(
            path, [f"cannot read: {sanitize(str(getattr(error, 'strerror', None) or error))}{hint}"]
        ) from None
    file = parse_fleet_file(_decoded(text, path), path)
    if end_at is not None:
        file = shift_history(file, end_at)
    return build_fleet(file, path)


_File = TypeVar("_File", bound=BaseModel)


def _decoded(text: str, source: Path | str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise FleetFileError(
            source, [f"line {error.lineno} column {error.colno}: not valid JSON: {error.msg}"]
        ) from None


def _validated(schema: type[_File], raw: Any, source: Path | str) -> _File:
    """``raw`` as ``schema``; FleetFileError naming every unknown key and every invalid field at once."""
    unknown = [_describe_schema_error(raw, detail) for detail in unknown_keys(schema, raw)]
    try:
        file = schema.model_validate(raw)
    except ValidationError as error:
        problems = [
            _describe_schema_error(raw, detail)
            for detail in error.errors(include_url=False)
            if detail["type"] != "extra_forbidden"
        ]  # reported above, with every other unknown key
        raise FleetFileError(source, unknown + problems) from None
    if unknown:
        raise FleetFileError(source, unknown)
    return file


def parse_fleet_file(raw: Any, source: Path | str) -> FleetFile:
    """Validate decoded JSON against the fleet schema; FleetFileError naming model and field."""
    return _validated(FleetFile, raw, source)


class RegistryFile(BaseModel):
    """What ``fleetdesk registry apply`` reads of a fleet file: its models and type records (the other sections
    are the seed's)."""

    models: list[Model]
    types: dict[str, ModelTypeRecord] = {}
    seed_only: tuple[str, ...] = Field(default=(), exclude=True)
    """The file's other sections (policy, bands, ...): read when a store is seeded, not applied."""

    @model_validator(mode="before")
    @classmethod
    def _default_tiers(cls, data: Any) -> Any:
        return with_default_tiers(data)


_APPLIED_SECTIONS = ("models", "types")
_NAMING_SECTIONS = ("schema_version", "name", "description")  # say what the file is, change nothing


def parse_registry_file(text: str, source: Path | str) -> RegistryFile:
    """The model and type records of a fleet file's text, every problem named at once (FleetFileError);
    a top-level key that is no section of a fleet file is one of them (a misspelled 'types' would
    otherwise apply nothing without a word)."""
    raw = _decoded(text, source)
    if not isinstance(raw, dict) or "models" not in raw:
        raise FleetFileError(source, ["a fleet file is a JSON object with a 'models' list"])
    sections = dict.fromkeys(raw)  # the top-level keys only: the applied sections are checked below
    unknown = [_describe_schema_error(raw, detail) for detail in unknown_keys(FleetFile, sections)]
    applied = {key: raw[key] for key in _APPLIED_SECTIONS if key in raw}
    try:
        file = _validated(RegistryFile, applied, source)
    except FleetFileError as error:
        raise FleetFileError(source, unknown + error.problems) from None
    if unknown:
        raise FleetFileError(source, unknown)
    seed_only = tuple(key for key in raw if key not in _APPLIED_SECTIONS + _NAMING_SECTIONS)
    return file.model_copy(update={"seed_only": seed_only})


def build_fleet(file: FleetFile, source: Path) -> Fleet:
    """Check registry rules and history references together, then wrap the fleet."""
    problems: list[str] = []
    registry: Registry | None = None
    try:
        registry = Registry(file.models, file.vocabulary)
    except RegistryError as error:
        problems.extend(
            f"model {_quote(v.model_id)}: {sanitize(v.field)}: {sanitize(v.message)}"
            for v in error.violations
        )
    type_problems, attribute_violations = type_violations(file.models, file.types, file.vocabulary)
    problems.extend(type_problems)
    problems.extend(
        f"model {_quote(v.model_id)}: {sanitize(v.field)}: {sanitize(v.message)}"
        for v in attribute_violations
    )
    model_ids = {model.id for model in file.models}
    profiles = file.history.profiles
    problems.extend(
        f"model {_quote(model.id)}: history.profiles: no metric profile for this model"
        for model in file.models
        if model.id not in profiles
    )
    problems.extend(
        f"history.profiles.{_quote(model_id)}: not a model of this fleet"
        for model_id in profiles
        if model_id not in model_ids
    )
    problems.extend(
        f"incident {index} (history.incidents[{index}]): model_id: unknown model {_quote(incident.model_id)}"
        for index, incident in enumerate(file.history.incidents)
        if incident.model_id not in model_ids
    )
    if file.history.bucket != file.slo.slice:
        # Every bucket is one SLO slice: the burn-rate math counts buckets as slices.
        problems.append(
            f"history.bucket: {file.history.bucket} must equal slo.slice ({file.slo.slice})"
        )
    if problems or registry is None:
        raise FleetFileError(source, problems)
    return Fleet(file, registry, source)


def shift_history(file: FleetFile, end_at: datetime) -> FleetFile:
    """The same fleet with its history (and incidents) moved to end at ``end_at`` floored to a bucket."""
    history = file.history
    end = end_at - (end_at - _EPOCH) % history.bucket
    delta = end - history.end
    incidents = [
        incident.model_copy(
            update={
                "start": incident.start + delta,
                "end": None if incident.end is None else incident.end + delta,
            }
        )
        for incident in history.incidents
    ]
    moved = history.model_copy(
        update={"start": history.start + delta, "end": end, "incidents": incidents}
    )
    return file.model_copy(update={"history": moved})


def _quote(text: object) -> str:
    """Quoted and sanitized; not repr(), which would double the escapes sanitize writes."""
    return f"'{sanitize(str(text), limit=120)}'"


def _describe_schema_error(raw: Any, detail: Mapping[str, Any]) -> str:
    """'<where>: <field>: <message>' for one pydantic error, resolving list indexes to model ids."""
    loc = list(detail["loc"])
    message = sanitize(detail["msg"])
    value = detail.get("input")
    if isinstance(value, str | int | float | bool) and detail["type"] not in (
        "missing",
        "extra_forbidden",
    ):
        message += f" (got {_quote(value) if isinstance(value, str) else value})"
    where = "fleet"
    if len(loc) >= 2 and loc[0] == "models" and isinstance(loc[1], int):
        index = loc[1]
        where = f"model {_quote(_model_id_at(raw, index))} (models[{index}])"
        loc = loc[2:]
    elif len(loc) >= 3 and loc[:2] == ["history", "profiles"]:
        where = f"model {_quote(loc[2])} metric profile (history.profiles)"
        loc = loc[3:]
    elif len(loc) >= 3 and loc[:2] == ["history", "incidents"] and isinstance(loc[2], int):
        index = loc[2]
        incident = _item(raw, "history", "incidents", index)
        model_id = incident.get("model_id", "?") if isinstance(incident, dict) else "?"
        where = f"incident {index} of model {_quote(model_id)} (history.incidents[{index}])"
        loc = loc[3:]
    return f"{where}: {_field_path(loc)}: {message}"


def _model_id_at(raw: Any, index: int) -> str:
    model = _item(raw, "models", index)
    model_id = model.get("id") if isinstance(model, dict) else None
    return model_id if isinstance(model_id, str) and model_id else f"#{index} (no id)"


def _item(raw: Any, *path: str | int) -> Any:
    for step in path:
        try:
            raw = raw[step]
        except (KeyError, IndexError, TypeError):
            return None
    return raw


def _field_path(loc: list[str | int]) -> str:
    """('upstream_model_ids', 2) -> 'upstream_model_ids[2]'; empty -> '(whole record)'."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return sanitize(text) if text else "(whole record)"
