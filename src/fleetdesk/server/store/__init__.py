"""The database behind the server: one contract (``contract.Store``), a SQLite and a PostgreSQL store.

Only this package writes SQL schema; the names below are what the rest of the server imports.
"""

from fleetdesk.server.store import (
    event_log,
    idempotency_keys,
    outbox_rows,
    registry_log,
    tokens,
)
from fleetdesk.server.store.contract import (
    Connection,
    Row,
    Store,
    StoreError,
    StoreUnavailable,
    is_postgres_url,
)
from fleetdesk.server.store.dialect import Dialect
from fleetdesk.server.store.fleet_config import FleetConfig
from fleetdesk.server.store.seeding import BucketRows, SeedProgress, add_task_totals, count_days
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
    "BucketRows",
    "Connection",
    "Dialect",
    "FleetConfig",
    "Row",
    "SeedProgress",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "add_task_totals",
    "bucket_health",
    "count_days",
    "dumps",
    "event_log",
    "idempotency_keys",
    "outbox_rows",
    "epoch",
    "from_epoch",
    "is_postgres_url",
    "iso",
    "live_state",
    "parse_iso",
    "registry_log",
    "tokens",
]
