"""The database behind the server: one contract (``contract.Store``), a SQLite and a PostgreSQL store.

All of fleetdesk's SQL is in this package (tests/server/test_sql_in_store.py fails on a statement
anywhere else): the rest of the server calls plain functions that take a connection (or the store) and
return rows or values. Each module holds the statements of the tables it is named after:

- ``model_rows``: the models' live and derived state (serving, health, attention, SLO, running totals),
  the fleet summary's counts and the listing order (``ORDER``);
- ``registry_log``: the models' registry records and the registry's history (versions);
- ``buckets``: model and task buckets, task totals and per-day health counts;
- ``incident_rows``: incidents, their timelines, notes, pages and shared-cause origins;
- ``audit_log``: the append-only audit records and their pages;
- ``event_log``: the event log behind ``/v1/events``;
- ``tokens``: API bearer tokens (hashes only);
- ``idempotency_keys``: the stored responses of mutating requests;
- ``outbox_rows``: the durable outbox of outbound deliveries, claimed per try where replicas share it;
- ``listing`` (internal): one page of a listing, count first.

Schema and migrations are ``sqlite_schema`` and ``postgres_schema``; the few expressions the two
dialects spell differently come from ``dialect``. The names below are what the rest of the server imports.
"""

from fleetdesk.server.store import (
    audit_log,
    buckets,
    event_log,
    idempotency_keys,
    incident_rows,
    model_rows,
    outbox_rows,
    registry_log,
    tokens,
)
from fleetdesk.server.store.contract import (
    AlreadySeeded,
    Connection,
    Row,
    Store,
    StoreError,
    StoreUnavailable,
    is_postgres_url,
)
from fleetdesk.server.store.fleet_config import FleetConfig
from fleetdesk.server.store.seeding import BucketRows, SeedProgress
from fleetdesk.server.store.sqlite_schema import MIGRATIONS, SCHEMA_VERSION
from fleetdesk.server.store.values import (
    CODE_BY_HEALTH,
    DAY_SECONDS,
    HEALTH_BY_CODE,
    NO_DATA,
    STABLE,
    UNSTABLE,
    bucket_health,
    dumps,
    epoch,
    from_epoch,
    iso,
    live_state,
    parse_iso,
)

__all__ = [
    "DAY_SECONDS",
    "CODE_BY_HEALTH",
    "HEALTH_BY_CODE",
    "MIGRATIONS",
    "NO_DATA",
    "SCHEMA_VERSION",
    "STABLE",
    "UNSTABLE",
    "AlreadySeeded",
    "BucketRows",
    "Connection",
    "FleetConfig",
    "Row",
    "SeedProgress",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "audit_log",
    "buckets",
    "bucket_health",
    "dumps",
    "event_log",
    "idempotency_keys",
    "incident_rows",
    "outbox_rows",
    "epoch",
    "from_epoch",
    "is_postgres_url",
    "iso",
    "live_state",
    "model_rows",
    "parse_iso",
    "registry_log",
    "tokens",
]
