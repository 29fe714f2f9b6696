"""The registry's rows: the ``models`` table's registry columns and the versioned history beside them.

Every registry change set is one row of ``registry_versions`` (version 0 is the registry as seeded); every
model it created, updated or retired has a ``model_versions`` row holding its record as of that version
(NULL once retired), and every type record a ``type_versions`` row. So the registry as of a version is, per
model (and type), its newest row at or before it. The current type records also live in the fleet config
(``meta``), where the server reads its settings from.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fleetdesk.domain.model_type import Vocabulary
from fleetdesk.domain.registry import LaunchPhase, Model
from fleetdesk.domain.registry_change import ChangeKind, ModelChange, TypeChange
from fleetdesk.domain.type_record import ModelTypeRecord
from fleetdesk.server.store.values import iso, parse_iso

if TYPE_CHECKING:
    from fleetdesk.server.store.contract import Connection

SEED_ACTOR = "fleetdesk"
SEED_REASON = "the registry as seeded"

REGISTRY_AS_SEEDED = f"""
-- A database seeded before version 8 gets its registry as it stands now as version 0, made when its history
-- ended (the time it was seeded from), so reads as of any time before a change return it.
INSERT INTO registry_versions (version, at, actor, reason)
SELECT 0, coalesce((SELECT value FROM meta WHERE key = 'history_end'), '1970-01-01T00:00:00.000000+00:00'),
       '{SEED_ACTOR}', '{SEED_REASON}'
WHERE EXISTS (SELECT 1 FROM models);
INSERT INTO model_versions (model_id, version, kind, record)
SELECT id, 0, 'create', record FROM models;
"""

_RECORD_COLUMNS = (
    "type",
    "app",
    "surface",
    "tier",
    "tier_rank",
    "role",
    "owner_team",
    "search_text",
    "record",
)
"""The ``models`` columns that follow the registry record (the rest is the key and the live state)."""
MODEL_COLUMNS = (
    "id",
    "key",
    *_RECORD_COLUMNS,
    "serving_model_id",
    "traffic_share",
    "launch_phase",
)


@dataclass(frozen=True)
class RegistryVersion:
    version: int
    at: datetime
    actor: str
    reason: str


def seeded_models(models: Iterable[Model]) -> Iterator[tuple[str, int, str, str]]:
    """The model_versions rows (MODEL_VERSION_COLUMNS) of version 0: every model as seeded."""
    return ((model.id, 0, "create", model.model_dump_json()) for model in models)


def model_row(model: Model, key: int, vocabulary: Vocabulary) -> tuple[Any, ...]:
    """The ``models`` row of a new model (``MODEL_COLUMNS``): its registry columns and a fresh live state."""
    return (
        model.id,
        key,
        *_record_values(model, vocabulary),
        model.id,
        model.traffic_share,
        model.launch_phase.value,
    )


def _record_values(model: Model, vocabulary: Vocabulary) -> tuple[Any, ...]:
    """``_RECORD_COLUMNS`` of ``model``."""
    model_type = vocabulary.parse(model.type)
    return (
        model.type,
        model_type.app,
        model_type.surface,
        model.tier.value,
        model.tier.rank,
        model.role.value,
        model.owner_team,
        _search_text(model),
        model.model_dump_json(),
    )


def insert_models(conn: Connection, rows: Iterable[Sequence[Any]]) -> None:
    conn.executemany(
        f"INSERT INTO models ({', '.join(MODEL_COLUMNS)}) VALUES ({', '.join('?' * len(MODEL_COLUMNS))})",
        rows,
    )


MODEL_VERSION_COLUMNS = ("model_id", "version", "kind", "record")


def record_seed(conn: Connection, at: datetime, types: Mapping[str, ModelTypeRecord]) -> None:
    """Version 0: the registry as seeded (its models' records: ``seeded_models``)."""
    conn.execute(
        "INSERT INTO registry_versions (version, at, actor, reason) VALUES (0, ?, ?, ?)",
        (iso(at), SEED_ACTOR, SEED_REASON),
    )
    conn.executemany(
        "INSERT INTO type_versions (type, version, record) VALUES (?, 0, ?)",
        ((type_string, record.model_dump_json()) for type_string, record in types.items()),
    )


def new_model_key(conn: Connection) -> int:
    """A compact key no model ever had: a retired model's buckets keep theirs, so a key is never reused."""
    row = conn.execute(
        "SELECT max(k) FROM (SELECT max(key) AS k FROM models UNION ALL SELECT max(model_key) FROM buckets"
        " UNION ALL SELECT max(model_key) FROM health_days) AS keys"
    ).fetchone()
    return int(row[0] or 0) + 1


def apply_change(conn: Connection, change: ModelChange, vocabulary: Vocabulary) -> int | None:
    """Make one change in the ``models`` table; returns the new model's key (None unless created)."""
    if change.kind is ChangeKind.RETIRE:
        conn.execute("DELETE FROM models WHERE id = ?", (change.model_id,))
        return None
    model = change.after
    assert model is not None
    if change.kind is ChangeKind.CREATE:
        key = new_model_key(conn)
        insert_models(conn, [model_row(model, key, vocabulary)])
        return key
    conn.execute(
        f"UPDATE models SET {', '.join(f'{column} = ?' for column in _RECORD_COLUMNS)} WHERE id = ?",
        (*_record_values(model, vocabulary), model.id),
    )
    # The live traffic share and launch phase follow a declared change of either; an apply that leaves them
    # as declared leaves what actions (a rollback, a halt) did since.
    changed = {field.field for field in change.fields}
    if "traffic_share" in changed:
        conn.execute(
            "UPDATE models SET traffic_share = ? WHERE id = ?", (model.traffic_share, model.id)
        )
    if "launch_phase" in changed:
        conn.execute(
            "UPDATE models SET launch_phase = ? WHERE id = ?", (model.launch_phase.value, model.id)
        )
    return None


def halted_launches(conn: Connection, model_ids: Iterable[str]) -> dict[str, LaunchPhase]:
    """The models among these whose launch is halted now, with the phase it is halted in."""
    found = {}
    for model_id in model_ids:
        row = conn.execute(
            "SELECT launch_phase FROM models WHERE id = ? AND launch_halted = 1", (model_id,)
        ).fetchone()
        if row is not None:
            found[model_id] = LaunchPhase(row[0])
    return found


def record_version(
    conn: Connection,
    at: datetime,
    actor: str,
    reason: str,
    changes: list[ModelChange],
    type_changes: list[TypeChange],
) -> int:
    """Record a change set as the next registry version; returns it."""
    version = int(
        conn.execute("SELECT coalesce(max(version), -1) + 1 FROM registry_versions").fetchone()[0]
    )
    conn.execute(
        "INSERT INTO registry_versions (version, at, actor, reason) VALUES (?, ?, ?, ?)",
        (version, iso(at), actor, reason),
    )
    conn.executemany(
        "INSERT INTO model_versions (model_id, version, kind, record) VALUES (?, ?, ?, ?)",
        (
            (
                c.model_id,
                version,
                c.kind.value,
                None if c.after is None else c.after.model_dump_json(),
            )
            for c in changes
        ),
    )
    conn.executemany(
        "INSERT INTO type_versions (type, version, record) VALUES (?, ?, ?)",
        (
            (c.type, version, None if c.after is None else c.after.model_dump_json())
            for c in type_changes
        ),
    )
    return version


def store_types(conn: Connection, types: Mapping[str, ModelTypeRecord]) -> None:
    """The current type records into the fleet config the server reads its settings from."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'fleet'").fetchone()
    config = json.loads(row[0])
    config["types"] = {t: record.model_dump(mode="json") for t, record in sorted(types.items())}
    conn.execute("UPDATE meta SET value = ? WHERE key = 'fleet'", (json.dumps(config),))


def types_at(conn: Connection, version: int) -> dict[str, ModelTypeRecord]:
    """Every type record as of ``version``, retired ones left out."""
    rows = conn.execute(
        "SELECT v.type, v.record FROM type_versions AS v JOIN (SELECT type AS t, max(version) AS newest"
        " FROM type_versions WHERE version <= ? GROUP BY type) AS n ON v.type = n.t AND v.version = n.newest"
        " WHERE v.record IS NOT NULL ORDER BY v.type",
        (version,),
    ).fetchall()
    return {row[0]: ModelTypeRecord.model_validate_json(row[1]) for row in rows}


def latest_version(conn: Connection) -> RegistryVersion | None:
    row = conn.execute(
        "SELECT version, at, actor, reason FROM registry_versions ORDER BY version DESC LIMIT 1"
    ).fetchone()
    return None if row is None else _version(row)


def version_at(conn: Connection, at: datetime) -> RegistryVersion | None:
    """The version in force at ``at``: the newest made at or before it; version 0 for any earlier time (the
    registry as seeded is all that is known of before)."""
    row = conn.execute(
        "SELECT version, at, actor, reason FROM registry_versions WHERE at <= ?"
        " ORDER BY version DESC LIMIT 1",
        (iso(at),),
    ).fetchone()
    return get_version(conn, 0) if row is None else _version(row)


def get_version(conn: Connection, version: int) -> RegistryVersion | None:
    row = conn.execute(
        "SELECT version, at, actor, reason FROM registry_versions WHERE version = ?", (version,)
    ).fetchone()
    return None if row is None else _version(row)


def registry_at(conn: Connection, version: int, model_id: str | None = None) -> dict[str, Model]:
    """Every model's record as of ``version`` (or just ``model_id``'s), retired ones left out."""
    only = " AND model_id = ?" if model_id is not None else ""
    rows = conn.execute(
        "SELECT v.record FROM model_versions AS v JOIN (SELECT model_id AS id, max(version) AS newest"
        f" FROM model_versions WHERE version <= ?{only} GROUP BY model_id) AS n"
        " ON v.model_id = n.id AND v.version = n.newest WHERE v.record IS NOT NULL ORDER BY v.model_id",
        (version,) if model_id is None else (version, model_id),
    ).fetchall()
    models = (Model.model_validate_json(row[0]) for row in rows)
    return {model.id: model for model in models}


def model_history(
    conn: Connection, model_id: str
) -> list[tuple[RegistryVersion, ChangeKind, Model | None]]:
    """Each version that changed ``model_id``, newest first, with the record it left (None: retired)."""
    rows = conn.execute(
        "SELECT r.version, r.at, r.actor, r.reason, m.kind, m.record FROM model_versions AS m"
        " JOIN registry_versions AS r ON r.version = m.version WHERE m.model_id = ?"
        " ORDER BY r.version DESC",
        (model_id,),
    ).fetchall()
    return [
        (
            _version(row),
            ChangeKind(row[4]),
            None if row[5] is None else Model.model_validate_json(row[5]),
        )
        for row in rows
    ]


def type_history(
    conn: Connection, type_string: str
) -> list[tuple[RegistryVersion, ModelTypeRecord | None]]:
    """Each version that changed ``type_string``'s record, newest first, with the record it left (None: retired)."""
    rows = conn.execute(
        "SELECT r.version, r.at, r.actor, r.reason, t.record FROM type_versions AS t"
        " JOIN registry_versions AS r ON r.version = t.version WHERE t.type = ?"
        " ORDER BY r.version DESC",
        (type_string,),
    ).fetchall()
    return [
        (_version(row), None if row[4] is None else ModelTypeRecord.model_validate_json(row[4]))
        for row in rows
    ]


def _version(row: Any) -> RegistryVersion:
    return RegistryVersion(version=int(row[0]), at=parse_iso(row[1]), actor=row[2], reason=row[3])


def _search_text(model: Model) -> str:
    return " ".join(
        (model.id, model.type, model.owner_team, model.oncall_rotation, model.purpose)
    ).lower()
