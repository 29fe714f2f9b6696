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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Assessment:
    """One model's derived state at some moment, ready to store."""

    model_id: str
    health: Health
    attention: Attention
    alerts: list[str]
    budget_remaining: float | None
    max_burn_rate: float | None
    slo_json: str


def refresh(conn: sqlite3.Connection, config: FleetConfig, registry: Registry, keys_by_id: dict[str, int],
            now: datetime, model_ids: Collection[str] | None = None) -> int:
    """Recompute and store derived state at ``now`` (inside a write transaction); returns models changed."""
    return apply(conn, registry, assess(conn, config, keys_by_id, now, model_ids), now)


def assess(conn: sqlite3.Connection, config: FleetConfig, keys_by_id: dict[str, int], now: datetime,
           model_ids: Collection[str] | None = None) -> list[Assessment]:
    """Derived state of the given models (all when None) at ``now``; reads only."""
    policy = config.slo
    step = config.bucket_seconds
    now_s = epoch(now)
    last_slot = now_s - now_s % step - step  # start of the most recently closed bucket
    rule_windows = {w for rule in policy.rules for w in (rule.long_window, rule.short_window)}
    # Slices with since < start + step <= now, i.e. start in (now - span - step, now - step];
    # a window shorter than a slice still covers the latest closed slice (see domain.slo).
    since = {w: now_s - max(int(w.total_seconds()), step) - step for w in rule_windows | {policy.window}}
    # One pass: each bucket falls in the newest "age class" whose threshold it exceeds;
    # a window's counts are then the sum of the classes at or above its threshold.
    thresholds = sorted({last_slot - 1, last_slot - step - 1, *since.values()}, reverse=True)
    age_class = " ".join(f"WHEN start > {t} THEN {i}" for i, t in enumerate(thresholds))
    where = f"start > {thresholds[-1]} AND start <= {now_s - step}"
    params: list[object] = []
    if model_ids is not None:
        keys = sorted({key for key in (keys_by_id.get(m) for m in model_ids) if key is not None})
        if not keys:
            return []
        where += f" AND model_key IN ({','.join('?' * len(keys))})"
        params.extend(keys)
    id_by_key = {key: model_id for model_id, key in keys_by_id.items()}
    classes = len(thresholds)
    scanned: dict[str, list[list[int]]] = {}
    for key, age, health, count in conn.execute(
        f"SELECT model_key, CASE {age_class} END AS age, health, count(*) FROM buckets WHERE {where}"
        " GROUP BY model_key, age, health", params):
        per_class = scanned.get(id_by_key[key])
        if per_class is None:
            per_class = scanned[id_by_key[key]] = [[0, 0, 0] for _ in range(classes)]
        per_class[age][health] = count
    class_of = {w: thresholds.index(t) for w, t in since.items()}
    last_class, prev_class = thresholds.index(last_slot - 1), thresholds.index(last_slot - step - 1)
    empty = [[0, 0, 0] for _ in range(classes)]

    scope = model_ids if model_ids is not None else keys_by_id.keys()
    assessments = []
    for model_id in scope:
        per_class = scanned.get(model_id, empty)
        cumulative = []
        good = bad = no_data = 0
        for good_n, bad_n, no_data_n in per_class:
            good, bad, no_data = good + good_n, bad + bad_n, no_data + no_data_n
            cumulative.append((good, bad, no_data))
        full = cumulative[class_of[policy.window]]
        counts = SliceCounts(good=full[0], bad=full[1], no_data=full[2])
        rates = {w: burn_rate(SliceCounts(good=cumulative[class_of[w]][0], bad=cumulative[class_of[w]][1]),
                              policy.objective) for w in rule_windows}
        status = status_from_counts(counts, rates, now, policy)
        latest = next((code for code, n in enumerate(per_class[last_class]) if n), None)
        if latest is None:
            latest = next((code for code, n in enumerate(per_class[prev_class]) if n), None)
        health = Health.NO_DATA if latest is None else HEALTH_BY_CODE[latest]
        long_rates = [rates[rule.long_window] for rule in policy.rules if rates[rule.long_window] is not None]
        assessments.append(Assessment(
            model_id=model_id, health=health,
            attention=attention_for(health, {alert.severity for alert in status.alerts}),
            alerts=[alert.rule for alert in status.alerts], budget_remaining=status.budget_remaining,
            max_burn_rate=max(long_rates) if long_rates else None, slo_json=status.model_dump_json(),
        ))
    return assessments


def apply(conn: sqlite3.Connection, registry: Registry, assessments: list[Assessment], now: datetime) -> int:
    """Store assessments (write transaction); transitions emit events and open, join or resolve incidents."""
    if not assessments:
        return 0
    previous: dict[str, sqlite3.Row] = {}
    ids = [a.model_id for a in assessments]
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        previous.update((row["id"], row) for row in conn.execute(
            f"SELECT id, health, attention, alerts FROM models WHERE id IN ({','.join('?' * len(chunk))})", chunk))
    updates = []
    transitions: list[tuple[Assessment, sqlite3.Row]] = []
    for item in assessments:
        updates.append((item.health.value, item.attention.value, item.attention.rank, item.budget_remaining,
                        item.max_burn_rate, dumps(item.alerts), item.slo_json, item.model_id))
        before = previous[item.model_id]
        if (before["health"], before["attention"], json.loads(before["alerts"])) != (
            item.health.value, item.attention.value, item.alerts
        ):
            transitions.append((item, before))
    conn.executemany(
        "UPDATE models SET health = ?, attention = ?, attention_rank = ?, budget_remaining = ?, max_burn_rate = ?,"
        " alerts = ?, slo = ? WHERE id = ?",
        updates,
    )
    # Upstream models first, so their incidents exist when downstream models join.
    transitions.sort(key=lambda pair: (len(registry.upstream_chain(pair[0].model_id)), pair[0].model_id))
    for item, before in transitions:
        model_id, health, attention, alert_names = item.model_id, item.health, item.attention, item.alerts
        append_event(conn, EventType.SLO_CHANGED, now, model_id, SloChangedData(
            model_id=model_id, health=health, attention=attention, budget_remaining=item.budget_remaining,
            alerts=alert_names))
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
