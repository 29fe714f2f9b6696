"""The SQLite schema as versioned migrations (``PRAGMA user_version`` holds the version reached)."""

from __future__ import annotations

from fleetdesk.server.store.registry_log import REGISTRY_AS_SEEDED as _REGISTRY_AS_SEEDED

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
-- The fleet list's whole worst-first order (model_rows.ORDER), so that each page the console loads is a walk
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

_SCHEMA_V7 = """
-- Incremental blob I/O (sqlite3_blob_open; Python's Connection.blobopen) rewrites a TEXT value in place and
-- fires no trigger. SQLite refuses it for a column that is in an index, so every audit column is in one (id is
-- the key; actor, model_id and at had theirs already).
CREATE INDEX audit_log_sealed
ON audit_log (role, action, reason, before, after, idempotency_key, incident_id, detail);
"""

_SCHEMA_V8 = (
    """
-- The registry's history: every change set is a version (0 is the registry as seeded), and every model it
-- created, updated or retired has its record as of that version (NULL: retired), and so has every type record.
-- The registry as of a time is, per model, its newest record at or before that time's version. Only
-- server/store/registry_log.py uses them.
CREATE TABLE registry_versions (
    version INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX registry_versions_by_time ON registry_versions (at);
CREATE TABLE model_versions (
    model_id TEXT NOT NULL,
    version INTEGER NOT NULL REFERENCES registry_versions (version),
    kind TEXT NOT NULL,
    record TEXT,
    PRIMARY KEY (model_id, version)
);
CREATE INDEX model_versions_by_version ON model_versions (version);
CREATE TABLE type_versions (
    type TEXT NOT NULL,
    version INTEGER NOT NULL REFERENCES registry_versions (version),
    record TEXT,
    PRIMARY KEY (type, version)
);
-- What the registry said is evidence in a post-mortem: like the audit log, its history is append-only.
CREATE TRIGGER registry_versions_no_update BEFORE UPDATE ON registry_versions
BEGIN SELECT RAISE(ABORT, 'the registry history is append-only'); END;
CREATE TRIGGER registry_versions_no_delete BEFORE DELETE ON registry_versions
BEGIN SELECT RAISE(ABORT, 'the registry history is append-only'); END;
CREATE TRIGGER registry_versions_no_replace BEFORE INSERT ON registry_versions
WHEN EXISTS (SELECT 1 FROM registry_versions WHERE version = NEW.version)
BEGIN SELECT RAISE(ABORT, 'the registry history is append-only'); END;
CREATE TRIGGER model_versions_no_update BEFORE UPDATE ON model_versions
BEGIN SELECT RAISE(ABORT, 'the registry history is append-only'); END;
CREATE TRIGGER model_versions_no_delete BEFORE DELETE ON model_versions
BEGIN SELECT RAISE(ABORT, 'the registry history is append-only'); END;
CREATE TRIGGER model_versions_no_replace BEFORE INSERT ON model_versions
WHEN EXISTS (SELECT 1 FROM model_versions WHERE model_id = NEW.model_id AND version = NEW.version)
BEGIN SELECT RAISE(ABORT, 'the registry history is append-only'); END;
CREATE TRIGGER type_versions_no_update BEFORE UPDATE ON type_versions
BEGIN SELECT RAISE(ABORT, 'the registry history is append-only'); END;
CREATE TRIGGER type_versions_no_delete BEFORE DELETE ON type_versions
BEGIN SELECT RAISE(ABORT, 'the registry history is append-only'); END;
CREATE TRIGGER type_versions_no_replace BEFORE INSERT ON type_versions
WHEN EXISTS (SELECT 1 FROM type_versions WHERE type = NEW.type AND version = NEW.version)
BEGIN SELECT RAISE(ABORT, 'the registry history is append-only'); END;
"""
    + _REGISTRY_AS_SEEDED
    + """
INSERT INTO type_versions (type, version, record)
SELECT t.key, 0, t.value FROM meta, json_each(meta.value, '$.types') AS t
WHERE meta.key = 'fleet' AND EXISTS (SELECT 1 FROM registry_versions WHERE version = 0);
"""
)
_SCHEMA_V9 = """
-- A multi-task model's buckets per task, beside its combined series in buckets (the sum over its tasks, judged
-- by its worst task), and its running totals per task for /metrics. Only server/task_buckets.py writes them.
CREATE TABLE task_buckets (
    model_key INTEGER NOT NULL,
    task TEXT NOT NULL,
    start INTEGER NOT NULL,
    weight REAL NOT NULL,
    label_sum REAL NOT NULL,
    prediction_sum REAL NOT NULL,
    cross_entropy_sum REAL NOT NULL,
    health INTEGER NOT NULL,
    PRIMARY KEY (model_key, task, start)
) WITHOUT ROWID;
CREATE TABLE task_totals (
    model_key INTEGER NOT NULL,
    task TEXT NOT NULL,
    total_weight REAL NOT NULL,
    total_label_sum REAL NOT NULL,
    total_prediction_sum REAL NOT NULL,
    total_cross_entropy_sum REAL NOT NULL,
    PRIMARY KEY (model_key, task)
) WITHOUT ROWID;
"""

_SCHEMA_V10 = """
-- The fleet summary's counts, kept by the models table's own triggers so that no write can forget them: the
-- summary counted every model twice per request (63 ms at 50,000 models; on PostgreSQL a heap scan each time
-- the SLO pass's updates had cleared its visibility map, 352 ms). Rows whose count fell to 0 stay.
CREATE TABLE model_counts (
    health TEXT NOT NULL,
    tier TEXT NOT NULL,
    attention TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (health, tier, attention)
) WITHOUT ROWID;
INSERT INTO model_counts SELECT health, tier, attention, count(*) FROM models GROUP BY health, tier, attention;
CREATE TRIGGER model_counts_insert AFTER INSERT ON models BEGIN
    INSERT INTO model_counts VALUES (NEW.health, NEW.tier, NEW.attention, 1)
    ON CONFLICT (health, tier, attention) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER model_counts_delete AFTER DELETE ON models BEGIN
    UPDATE model_counts SET n = n - 1
    WHERE health = OLD.health AND tier = OLD.tier AND attention = OLD.attention;
END;
CREATE TRIGGER model_counts_update AFTER UPDATE OF health, tier, attention ON models
WHEN OLD.health != NEW.health OR OLD.tier != NEW.tier OR OLD.attention != NEW.attention BEGIN
    UPDATE model_counts SET n = n - 1
    WHERE health = OLD.health AND tier = OLD.tier AND attention = OLD.attention;
    INSERT INTO model_counts VALUES (NEW.health, NEW.tier, NEW.attention, 1)
    ON CONFLICT (health, tier, attention) DO UPDATE SET n = n + 1;
END;
DROP INDEX models_health_tier;
DROP INDEX models_attention;
"""

_SCHEMA_V11 = """
-- Every bucket an ingest stores, in commit order, for the SLO pass (see slo_board.add_arrivals): the leader
-- counts each one stored since its counts were taken into them, since a bucket is never replaced, instead of
-- counting again every model that ingested. When every model's bucket arrives a little after its slot
-- closes, that was every model at every slot close. The pass deletes what it has counted in, and notes how
-- far in meta, so that a replica whose counts predate a deletion counts again. AUTOINCREMENT: a sequence
-- number is never reused once the log has been emptied.
CREATE TABLE ingest_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    model_key INTEGER NOT NULL,
    start INTEGER NOT NULL,
    health INTEGER NOT NULL
);
INSERT INTO meta VALUES ('ingest_log_forgotten', '0');
"""

_SCHEMA_V12 = """
-- The sums of a model's newest bucket (the one at last_bucket_start), kept with the row wherever that moves:
-- a page of the fleet read them from the buckets, one lookup per model, a quarter of loading 50,000 models.
ALTER TABLE models ADD COLUMN last_weight REAL;
ALTER TABLE models ADD COLUMN last_label_sum REAL;
ALTER TABLE models ADD COLUMN last_prediction_sum REAL;
ALTER TABLE models ADD COLUMN last_cross_entropy_sum REAL;
UPDATE models SET (last_weight, last_label_sum, last_prediction_sum, last_cross_entropy_sum) = (
    SELECT weight, label_sum, prediction_sum, cross_entropy_sum FROM buckets
    WHERE buckets.model_key = models.key AND buckets.start = models.last_bucket_start
) WHERE last_bucket_start IS NOT NULL;
"""

_SCHEMA_V13 = """
-- The outbox of outbound deliveries (Alertmanager pages, webhooks) becomes one of the store's tables, as on
-- PostgreSQL. Servers before this version made it themselves in the same file (IF NOT EXISTS keeps their rows).
CREATE TABLE IF NOT EXISTS integration_outbox (
    id INTEGER PRIMARY KEY,
    target TEXT NOT NULL,
    kind TEXT NOT NULL,
    about_id INTEGER,
    incident_id INTEGER,
    model_id TEXT NOT NULL,
    description TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    last_error TEXT,
    delivered_at TEXT
);
CREATE INDEX IF NOT EXISTS integration_outbox_due
    ON integration_outbox (target, next_attempt_at) WHERE delivered_at IS NULL;
-- One follow-up (a page's withdrawal) per delivery, however many replicas sweep for them at once.
CREATE UNIQUE INDEX IF NOT EXISTS integration_outbox_follow_up
    ON integration_outbox (about_id) WHERE about_id IS NOT NULL;
"""

_SCHEMA_V14 = """
-- The registry's history sealed against incremental blob I/O as the audit log is (see 7): every column of its
-- three tables in an index (the keys and registry_versions.at had theirs already).
CREATE INDEX registry_versions_sealed ON registry_versions (actor, reason);
CREATE INDEX model_versions_sealed ON model_versions (kind, record);
CREATE INDEX type_versions_sealed ON type_versions (record);
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
    (7, "every audit column indexed, so blob I/O cannot rewrite a record in place", _SCHEMA_V7),
    (
        8,
        "registry versions, so the registry can be read as of a time and changes diffed",
        _SCHEMA_V8,
    ),
    (9, "a multi-task model's buckets and totals per task", _SCHEMA_V9),
    (10, "the fleet summary's counts kept beside the models by triggers", _SCHEMA_V10),
    (
        11,
        "a log of the buckets ingest stores, so a slot close counts in only what arrived",
        _SCHEMA_V11,
    ),
    (
        12,
        "the newest bucket's sums on its model's row, so listing the fleet looks up no bucket per model",
        _SCHEMA_V12,
    ),
    (13, "the outbox of outbound deliveries is a table of the store", _SCHEMA_V13),
    (14, "the registry history sealed against blob I/O, as the audit log is", _SCHEMA_V14),
    # PostgreSQL's 15 makes its model_counts triggers statement-level: there, updating one row many times in a
    # transaction grows slower with each time. SQLite updates rows in place; the same number keeps naming the
    # same schema on both stores.
    (15, "nothing to do: the fleet summary's counts already follow at row speed here", "SELECT 1;"),
]
"""(version, why, SQL). Append only; a released migration is never edited."""

SCHEMA_VERSION = MIGRATIONS[-1][0]
