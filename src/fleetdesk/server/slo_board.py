"""Per-model derived state: latest health, SLO status, attention; kept in the models table.

Requests never recompute SLOs from raw sums: bucket health is scored once at
ingest, and this module turns bucket health into per-model SLO state with one
grouped scan of the buckets table (every window counted in the same pass),
for all models when a slice closes, or for the models a batch touched.
Transitions open, join or resolve incidents and emit ``slo.changed``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection
from datetime import datetime

from fleetdesk.domain.registry import Registry
from fleetdesk.domain.slo import Severity, SliceCounts, burn_rate, status_from_counts
from fleetdesk.domain.stability import Health
from fleetdesk.server import incidents
from fleetdesk.server.events import append_event
from fleetdesk.server.store import HEALTH_BY_CODE, FleetConfig, dumps, epoch
from fleetdesk.wire import Attention, EventType, SloChangedData


def slot_index(now: datetime, config: FleetConfig) -> int:
    """Which bucket slot ``now`` is in; derived state is stale when this moves."""
    return epoch(now) // config.bucket_seconds


def attention_for(health: Health, alert_severities: Collection[Severity]) -> Attention:
    if Severity.PAGE in alert_severities:
        return Attention.PAGE
    if Severity.TICKET in alert_severities:
        return Attention.TICKET
    if health is Health.UNSTABLE:
        return Attention.UNSTABLE
    if health is Health.NO_DATA:
        return Attention.NO_DATA
    return Attention.OK


def refresh(conn: sqlite3.Connection, config: FleetConfig, registry: Registry, now: datetime,
            model_ids: Collection[str] | None = None) -> int:
    """Recompute derived state at ``now`` (inside a write transaction); returns how many models changed."""
    policy = config.slo
    step = config.bucket_seconds
    now_s = epoch(now)
    last_slot = now_s - now_s % step - step  # start of the most recently closed bucket
    rule_windows = {w for rule in policy.rules for w in (rule.long_window, rule.short_window)}
    # A window shorter than a slice still covers the latest closed slice (see domain.slo).
    effective = {w: max(int(w.total_seconds()), step) for w in rule_windows | {policy.window}}
    spans = sorted(set(effective.values()))
    columns = []
    params: list[object] = []
    for span in spans:
        since = now_s - span - step  # slices with since < start + step <= now
        columns.append("sum(start > ? AND health = 0), sum(start > ? AND health = 1)")
        params.extend((since, since))
    full_since = now_s - effective[policy.window] - step
    columns.append("sum(start > ? AND health = 2)")
    params.append(full_since)
    columns.append("max(CASE WHEN start = ? THEN health + 1 ELSE 0 END)")
    columns.append("max(CASE WHEN start = ? THEN health + 1 ELSE 0 END)")
    params.extend((last_slot, last_slot - step))
    where = "start > ? AND start <= ?"
    params.extend((now_s - spans[-1] - step, now_s - step))
    if model_ids is not None:
        ids = sorted(set(model_ids))
        if not ids:
            return 0
        where += f" AND model_id IN ({','.join('?' * len(ids))})"
        params.extend(ids)
    scanned = {row[0]: row[1:] for row in conn.execute(
        f"SELECT model_id, {', '.join(columns)} FROM buckets WHERE {where} GROUP BY model_id", params)}

    scope = model_ids if model_ids is not None else registry.models.keys()
    previous = {row["id"]: row for row in conn.execute(
        "SELECT id, health, attention, alerts, open_incident_id FROM models"
        + ("" if model_ids is None else f" WHERE id IN ({','.join('?' * len(set(scope)))})"),
        () if model_ids is None else sorted(set(scope)))}

    updates = []
    transitions: list[tuple[str, Health, Attention, list[str], float | None, sqlite3.Row]] = []
    empty = (0,) * (2 * len(spans) + 3)
    for model_id in scope:
        values = scanned.get(model_id, empty)
        by_span = {span: SliceCounts(good=values[2 * i] or 0, bad=values[2 * i + 1] or 0)
                   for i, span in enumerate(spans)}
        offset = 2 * len(spans)
        full = by_span[effective[policy.window]]
        counts = SliceCounts(good=full.good, bad=full.bad, no_data=values[offset] or 0)
        rates = {w: burn_rate(by_span[effective[w]], policy.objective) for w in rule_windows}
        status = status_from_counts(counts, rates, now, policy)
        latest = values[offset + 1] or values[offset + 2]
        health = HEALTH_BY_CODE[latest - 1] if latest else Health.NO_DATA
        alert_names = [alert.rule for alert in status.alerts]
        attention = attention_for(health, {alert.severity for alert in status.alerts})
        long_rates = [rates[rule.long_window] for rule in policy.rules if rates[rule.long_window] is not None]
        max_burn = max(long_rates) if long_rates else None
        updates.append((health.value, attention.value, attention.rank, status.budget_remaining, max_burn,
                        dumps(alert_names), status.model_dump_json(), model_id))
        before = previous[model_id]
        if (before["health"], before["attention"], json.loads(before["alerts"])) != (
            health.value, attention.value, alert_names
        ):
            transitions.append((model_id, health, attention, alert_names, status.budget_remaining, before))
    conn.executemany(
        "UPDATE models SET health = ?, attention = ?, attention_rank = ?, budget_remaining = ?, max_burn_rate = ?,"
        " alerts = ?, slo = ? WHERE id = ?",
        updates,
    )
    # Upstream models first, so their incidents exist when downstream models join.
    transitions.sort(key=lambda item: (len(registry.upstream_chain(item[0])), item[0]))
    for model_id, health, attention, alert_names, budget, before in transitions:
        append_event(conn, EventType.SLO_CHANGED, now, model_id, SloChangedData(
            model_id=model_id, health=health, attention=attention, budget_remaining=budget, alerts=alert_names))
        was = Attention(before["attention"])
        if attention is Attention.PAGE and was is not Attention.PAGE:
            incidents.open_or_join(conn, registry, model_id, Severity.PAGE,
                                   f"page alert fires ({', '.join(alert_names)})", now)
        elif health is Health.UNSTABLE and before["health"] != Health.UNSTABLE:
            incidents.open_or_join(conn, registry, model_id, Severity.TICKET,
                                   "latest bucket unstable (calibration or NE outside its band)", now)
        elif attention in (Attention.OK, Attention.NO_DATA):
            incident_id = incidents.open_incident_id(conn, model_id)
            if incident_id is not None:
                incidents.resolve_if_clear(conn, incident_id, now)
    return len(transitions)
