"""The SQLite store: connections, versioned migrations, write transactions and seeding.

Durability and concurrency choices:
- WAL with ``synchronous=FULL``: a commit the API acknowledged survives SIGKILL
  and power loss; readers never block the writer.
- One process-wide write lock around ``BEGIN IMMEDIATE``: writers queue in
  Python (fair, no busy-loop sleeps) and SQLite's own lock is taken up front,
  so a transaction never fails half-way on a lock upgrade. ``busy_timeout``
  still covers other processes (``fleetdesk token create`` on a live db).
- Times are ISO 8601 UTC text (readable with the sqlite3 shell), except bucket
  starts, which are epoch seconds because SLO counting ranges over millions.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from fleetdesk.domain.bands import bands_for
from fleetdesk.domain.fleet import PipelineRotation
from fleetdesk.domain.live import LiveState
from fleetdesk.domain.model_type import Vocabulary
from fleetdesk.domain.policy import MonitoringPolicy
from fleetdesk.domain.registry import LaunchPhase, Model, Registry, Role
from fleetdesk.domain.slo import SloPolicy
from fleetdesk.domain.stability import Health, HealthBands, binary_entropy
from fleetdesk.domain.text import sanitize
from fleetdesk.domain.type_record import ModelTypeRecord

if TYPE_CHECKING:
    from fleetdesk.domain.synthetic import Timeline
    from fleetdesk.fleets import Fleet

BUSY_TIMEOUT_MS = 10_000
DAY_SECONDS = 86_400

# Bucket health as stored (a small int keeps the bucket table and its scans small).
STABLE, UNSTABLE, NO_DATA = 0, 1, 2
HEALTH_BY_CODE = {STABLE: Health.STABLE, UNSTABLE: Health.UNSTABLE, NO_DATA: Health.NO_DATA}

_SCHEMA_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE models (
    id TEXT PRIMARY KEY,
    key INTEGER NOT NULL UNIQUE,  -- compact id for the bucket table
    type TEXT NOT NULL,
    app TEXT NOT NULL,
    surface TEXT NOT NULL,
    tier TEXT NOT NULL,
    tier_rank INTEGER NOT NULL,
    role TEXT NOT NULL,
    owner_team TEXT NOT NULL,
    search_text TEXT NOT NULL,
    record TEXT NOT NULL,
    -- live state, changed by actions
    serving_model_id TEXT NOT NULL,
    traffic_share REAL NOT NULL,
    launch_phase TEXT NOT NULL,
    launch_halted INTEGER NOT NULL DEFAULT 0,
    experiment_ended INTEGER NOT NULL DEFAULT 0,
    -- derived state, maintained at ingest and when a slice closes
    last_bucket_start INTEGER,
    health TEXT NOT NULL DEFAULT 'no_data',
    attention TEXT NOT NULL DEFAULT 'no_data',
    attention_rank INTEGER NOT NULL DEFAULT 3,
    budget_remaining REAL,
    max_burn_rate REAL,
    alerts TEXT NOT NULL DEFAULT '[]',
    slo TEXT,
    open_incident_id INTEGER,
    -- monotonic stability sums, exported as Prometheus counters
    total_weight REAL NOT NULL DEFAULT 0,
    total_label_sum REAL NOT NULL DEFAULT 0,
    total_prediction_sum REAL NOT NULL DEFAULT 0,
    total_cross_entropy_sum REAL NOT NULL DEFAULT 0
);
CREATE INDEX models_worst ON models (attention_rank, tier_rank, budget_remaining);

CREATE TABLE buckets (
    model_key INTEGER NOT NULL,
    start INTEGER NOT NULL,
    weight REAL NOT NULL,
    label_sum REAL NOT NULL,
    prediction_sum REAL NOT NULL,
    cross_entropy_sum REAL NOT NULL,
    health INTEGER NOT NULL,
    PRIMARY KEY (model_key, start)
) WITHOUT ROWID;

CREATE TABLE incidents (
    id INTEGER PRIMARY KEY,
    model_id TEXT NOT NULL,
    model_ids TEXT NOT NULL,
    state TEXT NOT NULL,
    severity TEXT NOT NULL,
    title TEXT NOT NULL,
    opened_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    acknowledged_at TEXT,
    acknowledged_by TEXT,
    resolved_at TEXT
);
CREATE INDEX incidents_by_model ON incidents (model_id, state);
CREATE INDEX incidents_by_state ON incidents (state, id);

CREATE TABLE incident_events (
    id INTEGER PRIMARY KEY,
    incident_id INTEGER NOT NULL REFERENCES incidents (id),
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    model_id TEXT NOT NULL,
    actor TEXT,
    text TEXT NOT NULL,
    audit_id INTEGER
);
CREATE INDEX incident_events_by_incident ON incident_events (incident_id, id);

CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    model_id TEXT NOT NULL,
    incident_id INTEGER,
    author TEXT NOT NULL,
    at TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX notes_by_model ON notes (model_id);
CREATE INDEX notes_by_incident ON notes (incident_id);

CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    role TEXT NOT NULL,
    action TEXT NOT NULL,
    model_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    before TEXT,
    after TEXT,
    idempotency_key TEXT NOT NULL,
    incident_id INTEGER,
    detail TEXT NOT NULL
);
CREATE INDEX audit_by_model ON audit_log (model_id, id);
CREATE INDEX audit_by_actor ON audit_log (actor, id);
CREATE INDEX audit_by_time ON audit_log (at);
-- The audit log is append-only: no code path may rewrite history, and the
-- database itself refuses to.
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;

CREATE TABLE idempotency (
    actor TEXT NOT NULL,
    key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('in_progress', 'done')),
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (actor, key)
);

CREATE TABLE tokens (
    id INTEGER PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    user TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('viewer', 'oncall', 'admin')),
    teams TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    revoked INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    type TEXT NOT NULL,
    at TEXT NOT NULL,
    model_id TEXT,
    payload TEXT NOT NULL
);

CREATE TABLE pages (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    model_id TEXT NOT NULL,
    team TEXT NOT NULL,
    rotation TEXT NOT NULL,
    target TEXT NOT NULL,
    reason TEXT NOT NULL,
    incident_id INTEGER,
    actor TEXT NOT NULL,
    delivered_via TEXT NOT NULL
);
"""

_SCHEMA_V2 = """
-- Bucket health counted per model and UTC day: a 28-day window is then 28 rows
-- plus the buckets of its two partial days, not 672 buckets per model.
CREATE TABLE health_days (
    model_key INTEGER NOT NULL,
    day INTEGER NOT NULL,  -- start // 86400
    good INTEGER NOT NULL,
    bad INTEGER NOT NULL,
    no_data INTEGER NOT NULL,
    PRIMARY KEY (model_key, day)
) WITHOUT ROWID;
INSERT INTO health_days
SELECT model_key, start / 86400, sum(health = 0), sum(health = 1), sum(health = 2)
FROM buckets GROUP BY model_key, start / 86400;
"""

_SCHEMA_V3 = """
-- Covering indexes for the fleet summary's counts, so they never read the wide model rows.
CREATE INDEX models_health_tier ON models (health, tier);
CREATE INDEX models_attention ON models (attention);
"""

_SCHEMA_V4 = """
-- The fleet list's whole worst-first order (views._ORDER), so that each page the console loads is a walk
-- along this index; the v1 index stopped short of it, and every page sorted the whole fleet again.
DROP INDEX models_worst;
CREATE INDEX models_worst ON models (attention_rank, tier_rank, budget_remaining IS NULL, budget_remaining, id);
"""

_SCHEMA_V5 = """
-- REPLACE (INSERT OR REPLACE, REPLACE INTO) deletes the row it collides with without firing DELETE triggers,
-- and an upsert's DO UPDATE would rewrite it: so an insert may only add an id that is not there yet. An id
-- left out arrives here as -1 and always passes.
CREATE TRIGGER audit_log_no_replace BEFORE INSERT ON audit_log
WHEN EXISTS (SELECT 1 FROM audit_log WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
"""

_SCHEMA_V6 = """
-- Where each incident's trouble began (app, surface, its first bad bucket), so that models of one surface whose
-- trouble began in the same or the next bucket join one incident (shared = 1: shared cause suspected).
-- Only server/incident_groups.py reads and writes it.
CREATE TABLE incident_origins (
    incident_id INTEGER PRIMARY KEY REFERENCES incidents (id),
    app TEXT NOT NULL,
    surface TEXT NOT NULL,
    label TEXT NOT NULL,
    began_at TEXT,
    shared INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX incident_origins_by_surface ON incident_origins (app, surface, began_at);
"""

MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "initial schema", _SCHEMA_V1),
    (2, "per-day health counts, so SLO recounts read days instead of every bucket", _SCHEMA_V2),
    (3, "fleet summary counts from covering indexes", _SCHEMA_V3),
    (4, "worst-first pages from an index, not a sort of the fleet per page", _SCHEMA_V4),
    (
        5,
        "the audit log refuses REPLACE and upserts onto an existing record, not only UPDATE and DELETE",
        _SCHEMA_V5,
    ),
    (6, "incident origins, so one surface's shared trouble is one incident", _SCHEMA_V6),
]
"""(version, why, SQL). Append only; a released migration is never edited."""

SCHEMA_VERSION = MIGRATIONS[-1][0]


class StoreError(RuntimeError):
    """The database cannot be used (newer schema, not a fleetdesk database, …)."""


class FleetConfig(BaseModel):
    """Fleet-wide settings copied from the fleet file at seed time."""

    model_config = ConfigDict(frozen=True)

    name: str
    vocabulary: Vocabulary
    default_bands: HealthBands
    bands: dict[str, HealthBands]
    role_bands: dict[Role, dict[str, HealthBands]] = {}
    """Per role, then type (or "*"); databases seeded before role bands have none."""
    pipelines: dict[str, PipelineRotation] = {}
    """Per app: the data-pipeline rotation a shared-cause incident pages."""
    slo: SloPolicy
    bucket: timedelta
    policy: MonitoringPolicy = MonitoringPolicy()
    types: dict[str, ModelTypeRecord] = {}
    """Per type string: its record; databases seeded before type records have none."""
    """Per tier: objective, which rules page or ticket, sparse slices; databases seeded before have the defaults."""

    def bands_for(self, model: Model) -> HealthBands:
        """The band this model is judged against: its type's, or its role's (see domain.bands), with its
        tier's minimum events per slice."""
        return self.policy.bands_for(
            model,
            bands_for(self.default_bands, self.bands, self.role_bands, model.type, model.role),
        )

    @property
    def bucket_seconds(self) -> int:
        return int(self.bucket.total_seconds())


def iso(moment: datetime) -> str:
    """Fixed-width ISO text, so string order is time order."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text)


def epoch(moment: datetime) -> int:
    return int(moment.timestamp())


def from_epoch(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def bucket_health(
    bands: HealthBands,
    weight: float,
    label_sum: float,
    prediction_sum: float,
    cross_entropy_sum: float,
) -> int:
    """HealthBands.health on raw sums without building a model (seeding scores ~10⁶ buckets).

    Same arithmetic as fleetdesk.domain.stability; tests check they agree bucket for bucket.
    """
    if weight <= 0.0 or weight < bands.min_events:
        return NO_DATA
    rate = label_sum / weight
    if not 0.0 < rate < 1.0:
        return NO_DATA
    calibration = prediction_sum / label_sum
    ne = (cross_entropy_sum / weight) / binary_entropy(rate)
    if not (math.isfinite(calibration) and math.isfinite(ne)):
        return NO_DATA  # a ratio over a vanishing sum says nothing (as in StabilitySums)
    inside = bands.calibration_low <= calibration <= bands.calibration_high and ne <= bands.ne_max
    return STABLE if inside else UNSTABLE


class Store:
    """One SQLite database file, used from many threads (one connection per thread)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()

    # --- connections and transactions ------------------------------------

    def connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                check_same_thread=False,
                timeout=BUSY_TIMEOUT_MS / 1000,
            )
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
            with self._connections_lock:
                self._connections.append(conn)
        return conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed on normal exit, rolled back on any exception."""
        conn = self.connection()
        with self._write_lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                # A COMMIT that failed (a full disk) may leave the transaction open: without this rollback
                # every later write on this thread's connection would fail to BEGIN.
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot for several reads."""
        conn = self.connection()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def close(self) -> None:
        with self._connections_lock:
            for conn in self._connections:
                try:
                    conn.close()
                except sqlite3.ProgrammingError:
                    pass  # closed from its own thread already
            self._connections.clear()
        self._local = threading.local()

    # --- schema -----------------------------------------------------------

    def migrate(self) -> int:
        """Bring the schema to SCHEMA_VERSION; returns the version found before. StoreError for a path that is
        not a database (a directory, another kind of file, a place that cannot be written)."""
        where = sanitize(str(self.path))
        if self.path.exists() and not self.path.is_file():
            raise StoreError(
                f"{where}: not a regular file (a fleetdesk database is one SQLite file)"
            )
        try:
            conn = self.connection()
            found = conn.execute("PRAGMA user_version").fetchone()[0]
        except (
            sqlite3.DatabaseError
        ) as error:  # "file is not a database", "unable to open database file", ...
            raise StoreError(
                f"{where}: cannot use it as a fleetdesk database ({sanitize(str(error))})"
            ) from None
        if found > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: schema version {found} is newer than this fleetdesk ({SCHEMA_VERSION}); upgrade fleetdesk"
            )
        if found == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise StoreError(
                f"{self.path}: not a fleetdesk database (tables present, no schema version)"
            )
        for version, _why, sql in MIGRATIONS:
            if version <= found:
                continue
            with self._write_lock:
                # executescript runs the BEGIN/COMMIT itself; a failure leaves the
                # transaction open, which we roll back so the version stays put.
                try:
                    conn.executescript(
                        f"BEGIN IMMEDIATE;\n{sql}\nPRAGMA user_version = {version};\nCOMMIT;"
                    )
                except sqlite3.Error:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
        return found

    def schema_version(self) -> int:
        return self.connection().execute("PRAGMA user_version").fetchone()[0]

    # --- fleet config and registry ------------------------------------------

    def is_seeded(self) -> bool:
        row = self.connection().execute("SELECT value FROM meta WHERE key = 'fleet'").fetchone()
        return row is not None

    def fleet_config(self) -> FleetConfig:
        row = self.connection().execute("SELECT value FROM meta WHERE key = 'fleet'").fetchone()
        if row is None:
            raise StoreError(f"{self.path}: database has no fleet (not seeded)")
        return FleetConfig.model_validate_json(row["value"])

    def model_keys(self) -> dict[str, int]:
        return {row[0]: row[1] for row in self.connection().execute("SELECT id, key FROM models")}

    def registry(self, config: FleetConfig) -> Registry:
        rows = self.connection().execute("SELECT record FROM models ORDER BY id").fetchall()
        return Registry(
            (Model.model_validate_json(row["record"]) for row in rows), config.vocabulary
        )

    def seed(self, fleet: Fleet, progress: SeedProgress | None = None) -> int:
        """Fill an empty database from a fleet: registry, live state and every bucket. Returns bucket count."""
        file = fleet.file
        config = FleetConfig(
            name=file.name,
            vocabulary=file.vocabulary,
            default_bands=file.default_bands,
            bands=file.effective_bands[0],
            role_bands=file.effective_bands[1],
            types=file.types,
            pipelines=file.pipelines,
            slo=file.slo,
            bucket=file.history.bucket,
            policy=file.policy,
        )
        vocabulary = file.vocabulary
        model_rows = []
        keys: dict[str, int] = {}
        for key, model in enumerate(fleet.registry.models.values(), start=1):
            keys[model.id] = key
            model_type = vocabulary.parse(model.type)
            search = " ".join(
                (model.id, model.type, model.owner_team, model.oncall_rotation, model.purpose)
            ).lower()
            model_rows.append(
                (
                    model.id,
                    key,
                    model.type,
                    model_type.app,
                    model_type.surface,
                    model.tier.value,
                    model.tier.rank,
                    model.role.value,
                    model.owner_team,
                    search,
                    model.model_dump_json(),
                    model.id,
                    model.traffic_share,
                    model.launch_phase.value,
                )
            )
        buckets = _Buckets(fleet, config, keys, None, progress)
        with self.write() as conn:
            if conn.execute("SELECT count(*) FROM models").fetchone()[0]:
                raise StoreError(f"{self.path}: already seeded")
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('fleet', ?)", (config.model_dump_json(),)
            )
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('history_end', ?)",
                (iso(fleet.timeline.end),),
            )
            conn.executemany(
                "INSERT INTO models (id, key, type, app, surface, tier, tier_rank, role, owner_team, search_text,"
                " record, serving_model_id, traffic_share, launch_phase)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                model_rows,
            )
            conn.executemany("INSERT INTO buckets VALUES (?, ?, ?, ?, ?, ?, ?)", buckets.rows())
            conn.executemany(
                "INSERT INTO health_days VALUES (?, ?, ?, ?, ?)",
                ((key, day, *counts) for (key, day), counts in buckets.days.items()),
            )
            conn.executemany(
                "UPDATE models SET total_weight = ?, total_label_sum = ?, total_prediction_sum = ?,"
                " total_cross_entropy_sum = ?, last_bucket_start = (SELECT max(start) FROM buckets"
                " WHERE buckets.model_key = models.key) WHERE id = ?",
                ((*total, model_id) for model_id, total in buckets.totals.items()),
            )
        return buckets.counted

    def history_end(self) -> datetime | None:
        """Where the seeded (and since extended) history ends; None for a store seeded before this was kept."""
        row = (
            self.connection().execute("SELECT value FROM meta WHERE key = 'history_end'").fetchone()
        )
        return None if row is None else parse_iso(row["value"])

    def extend(self, fleet: Fleet, until: datetime, progress: SeedProgress | None = None) -> int:
        """Append the history's buckets from where it ends up to ``until`` (floored to a bucket), as if it had
        been seeded that long: ``fleet`` is the fleet this store was seeded from, its history ending where
        this store's does. One transaction: a crash leaves the store as it was. Returns the bucket count."""
        end = self.history_end()
        if end is None or end != fleet.timeline.end:
            raise StoreError(f"{self.path}: its history does not end where the fleet's does")
        timeline = fleet.continued_until(until)
        if not len(timeline):
            return 0
        buckets = _Buckets(fleet, self.fleet_config(), self.model_keys(), timeline, progress)
        with self.write() as conn:
            conn.executemany("INSERT INTO buckets VALUES (?, ?, ?, ?, ?, ?, ?)", buckets.rows())
            conn.executemany(
                "INSERT INTO health_days VALUES (?, ?, ?, ?, ?) ON CONFLICT (model_key, day) DO UPDATE SET"
                " good = good + excluded.good, bad = bad + excluded.bad, no_data = no_data + excluded.no_data",
                ((key, day, *counts) for (key, day), counts in buckets.days.items()),
            )
            conn.executemany(
                "UPDATE models SET total_weight = total_weight + ?, total_label_sum = total_label_sum + ?,"
                " total_prediction_sum = total_prediction_sum + ?,"
                " total_cross_entropy_sum = total_cross_entropy_sum + ?, last_bucket_start = (SELECT max(start)"
                " FROM buckets WHERE buckets.model_key = models.key) WHERE id = ?",
                ((*total, model_id) for model_id, total in buckets.totals.items()),
            )
            conn.execute(
                "UPDATE meta SET value = ? WHERE key = 'history_end'", (iso(timeline.end),)
            )
        return buckets.counted


SeedProgress = Callable[[int, int, int], None]
"""Called after each model while buckets are written: (models done, models in all, buckets so far)."""


class _Buckets:
    """A fleet's bucket rows as the store keeps them (health scored, per-day counts and totals kept on the
    side), for seeding a store or extending its history."""

    def __init__(
        self,
        fleet: Fleet,
        config: FleetConfig,
        keys: dict[str, int],
        timeline: Timeline | None,
        progress: SeedProgress | None,
    ) -> None:
        self.fleet, self.config, self.keys, self.timeline, self.progress = (
            fleet,
            config,
            keys,
            timeline,
            progress,
        )
        self.totals: dict[str, list[float]] = {}
        self.days: dict[tuple[int, int], list[int]] = {}
        self.counted = 0

    def rows(self) -> Iterator[tuple]:
        # The hot loop of seeding (~10⁶ rows): bucket_health inlined, epochs cached
        # (the fleet's timeline shares start datetimes between models).
        fleet, config, keys, days, totals, progress = (
            self.fleet,
            self.config,
            self.keys,
            self.days,
            self.totals,
            self.progress,
        )
        epochs: dict[datetime, int] = {}
        log = math.log
        models = len(fleet.registry.models)
        for done, (model_id, rows) in enumerate(fleet.all_rows(self.timeline), start=1):
            bands = config.bands_for(fleet.registry.models[model_id])
            low, high, ne_max = bands.calibration_low, bands.calibration_high, bands.ne_max
            least = bands.min_events  # fewer events than the tier asks for: no data
            key = keys[model_id]
            total_w = total_l = total_p = total_c = 0.0
            for start, weight, label_sum, prediction_sum, cross_entropy_sum in rows:
                total_w += weight
                total_l += label_sum
                total_p += prediction_sum
                total_c += cross_entropy_sum
                at = epochs.get(start)
                if at is None:
                    at = epochs[start] = int(start.timestamp())
                health = NO_DATA
                if weight > 0.0 and weight >= least:
                    rate = label_sum / weight
                    if 0.0 < rate < 1.0:
                        calibration = prediction_sum / label_sum
                        ne = (cross_entropy_sum / weight) / -(
                            rate * log(rate) + (1.0 - rate) * log(1.0 - rate)
                        )
                        health = STABLE if low <= calibration <= high and ne <= ne_max else UNSTABLE
                day = days.get((key, at // DAY_SECONDS))
                if day is None:
                    day = days[(key, at // DAY_SECONDS)] = [0, 0, 0]
                day[health] += 1
                yield (key, at, weight, label_sum, prediction_sum, cross_entropy_sum, health)
            self.counted += len(rows)
            totals[model_id] = [total_w, total_l, total_p, total_c]
            if progress is not None:
                progress(done, models, self.counted)


def count_days(conn: sqlite3.Connection, rows: list[tuple]) -> None:
    """Add newly inserted bucket rows (model_key, start, …, health) to the per-day health counts."""
    conn.executemany(
        "INSERT INTO health_days VALUES (?, ?, ?, ?, ?) ON CONFLICT (model_key, day) DO UPDATE SET"
        " good = good + excluded.good, bad = bad + excluded.bad, no_data = no_data + excluded.no_data",
        (
            (
                row[0],
                row[1] // DAY_SECONDS,
                int(row[-1] == STABLE),
                int(row[-1] == UNSTABLE),
                int(row[-1] == NO_DATA),
            )
            for row in rows
        ),
    )


def live_state(row: sqlite3.Row) -> LiveState:
    return LiveState(
        serving_model_id=row["serving_model_id"],
        traffic_share=row["traffic_share"],
        launch_phase=LaunchPhase(row["launch_phase"]),
        launch_halted=bool(row["launch_halted"]),
        experiment_ended=bool(row["experiment_ended"]),
    )


def dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
