"""Per-model derived state: latest health, SLO status, attention; kept in the models table.

Requests never recompute SLOs from raw sums: bucket health is scored once at
ingest, and this module turns bucket health into per-model window counts and
SLO state. A full recount reads per-day health counts for the whole days in
each window and only the buckets of its two partial days: at start-up, and
for the models an ingest stores buckets of (which it judges then). When a slice
closes, the backend instead advances the counts it holds: each window gains the
buckets stored since (the ingest log, see add_arrivals) and the slice that
entered, and loses the one that left, a few point lookups per model.
Transitions open, join or resolve incidents and emit ``slo.changed``.

A bucket is reported a little after its slot closes. Judged in between, a model
would look as if its latest slice had no data: the short burn windows empty, a
page drops to a ticket, and comes back when the bucket arrives (a flash on the
console, an "alert fires" line on the incident every hour). So a slot close
leaves a model whose latest bucket has not arrived yet, but whose previous one
has, as it was (``awaiting``); the ingest of its bucket judges it, once. A bucket
missing for a whole slot more is a gap, judged as no data.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from fleetdesk.domain.attention import Attention, attention_for
from fleetdesk.domain.registry import Registry, Tier
from fleetdesk.domain.slo import (
    Severity,
    SliceCounts,
    SloPolicy,
    SloStatus,
    burn_rate,
    status_from_counts,
)
from fleetdesk.domain.stability import Health
from fleetdesk.server import incidents
from fleetdesk.server.store import (
    DAY_SECONDS,
    HEALTH_BY_CODE,
    Connection,
    FleetConfig,
    Row,
    buckets,
    dumps,
    epoch,
    event_log,
    iso,
    model_rows,
)
from fleetdesk.wire import EventType, SloChangedData


def slot_index(now: datetime, config: FleetConfig) -> int:
    """Which bucket slot ``now`` is in; derived state is stale when this moves."""
    return epoch(now) // config.bucket_seconds


Counts = dict[int, list[int]]
"""Per window span (seconds): [good, bad, no_data] slices counted in it."""


@dataclass(frozen=True)
class Windows:
    """The SLO windows at one moment, in bucket terms."""

    step: int
    now_s: int
    span_of: dict[timedelta, int]  # each policy window -> its span (at least one slice)

    @property
    def last_slot(self) -> int:
        """Start of the most recently closed bucket."""
        return self.now_s - self.now_s % self.step - self.step

    @property
    def spans(self) -> list[int]:
        return sorted(set(self.span_of.values()))

    def since(self, span: int) -> int:
        """A window counts the slices with since < start + step <= now, i.e. start in (since - step, now - step]."""
        return self.now_s - span - self.step


def windows_at(config: FleetConfig, now: datetime) -> Windows:
    policy = config.slo
    step = config.bucket_seconds
    every = {w for rule in policy.rules for w in (rule.long_window, rule.short_window)} | {
        policy.window
    }
    # A window shorter than a slice still covers the latest closed slice (see domain.slo).
    return Windows(
        step=step, now_s=epoch(now), span_of={w: max(int(w.total_seconds()), step) for w in every}
    )


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
    reason: str
    """Why it pages, tickets or stays quiet, by its tier's policy (domain.policy.PagingVerdict.reason)."""


def refresh(
    conn: Connection,
    config: FleetConfig,
    registry: Registry,
    keys_by_id: dict[str, int],
    now: datetime,
    model_ids: Collection[str] | None = None,
) -> int:
    """Recompute and store derived state at ``now`` (inside a write transaction); returns models changed."""
    return apply(
        conn,
        registry,
        assess(conn, config, registry, keys_by_id, now, model_ids),
        now,
        config.bucket_seconds,
    )


def assess(
    conn: Connection,
    config: FleetConfig,
    registry: Registry,
    keys_by_id: dict[str, int],
    now: datetime,
    model_ids: Collection[str] | None = None,
) -> list[Assessment]:
    """Derived state of the given models (all when None) at ``now``, from a scan of their buckets.

    Over the whole fleet (a slot close), models still awaiting their latest bucket are left out.
    """
    windows = windows_at(config, now)
    scope = list(keys_by_id) if model_ids is None else sorted(set(model_ids))
    latest, waiting = latest_state(conn, keys_by_id, windows, scope)
    if model_ids is None:
        scope = [m for m in scope if m not in waiting]
    counts = scan_counts(conn, keys_by_id, windows, None if model_ids is None else scope)
    return assess_from(config, registry, now, windows, counts, latest, scope)


def _keys(keys_by_id: dict[str, int], model_ids: list[str] | None) -> list[int] | None:
    """The bucket keys of these models (of every model when None)."""
    return None if model_ids is None else [keys_by_id[m] for m in model_ids if m in keys_by_id]


def scan_counts(
    conn: Connection,
    keys_by_id: dict[str, int],
    windows: Windows,
    model_ids: list[str] | None = None,
) -> dict[str, Counts]:
    """Window counts recounted from the store (all models when ``model_ids`` is None).

    Whole UTC days inside a window come from the per-day counts; only the buckets
    of its partial first and last day are read, by primary-key range per model.
    """
    step, high = windows.step, windows.now_s - windows.step
    keys = _keys(keys_by_id, model_ids)
    id_by_key = {key: model_id for model_id, key in keys_by_id.items()}
    spans = windows.spans
    result: dict[str, Counts] = {
        model_id: {span: [0, 0, 0] for span in spans}
        for model_id in (keys_by_id if model_ids is None else model_ids)
    }
    use_days = DAY_SECONDS % step == 0
    # Every window that uses days ends with the same partial day (today's buckets so far): read it once.
    edge_counts: dict[tuple[int, int], list[Row]] = {}
    for span in spans:
        low = windows.since(span)  # the window holds starts in (low, high]
        first_day, last_day = low // DAY_SECONDS + 1, (high + step) // DAY_SECONDS - 1
        edges = [(low, high)]
        if use_days and first_day <= last_day:
            edges = [(low, first_day * DAY_SECONDS - 1), ((last_day + 1) * DAY_SECONDS - 1, high)]
            for key, good, bad, no_data in buckets.day_counts(conn, first_day, last_day, keys):
                counts = result[id_by_key[key]][span]
                counts[0] += good
                counts[1] += bad
                counts[2] += no_data
        for after, upto in edges:
            if upto <= after:
                continue
            if (after, upto) not in edge_counts:
                edge_counts[after, upto] = buckets.health_counts(conn, after, upto, keys)
            for key, health, count in edge_counts[after, upto]:
                result[id_by_key[key]][span][health] += count
    return result


def add_arrivals(
    counts: dict[str, Counts], keys_by_id: dict[str, int], windows: Windows, arrived: Iterable[Row]
) -> None:
    """Count buckets stored since ``counts`` were taken at ``windows`` (model_key, start, health each) into
    every window that holds them: a bucket is never replaced, so one stored is one more slice. One starting
    after the windows' latest slot is left to ``advance_counts``, which reads the slots that enter."""
    id_by_key = {key: model_id for model_id, key in keys_by_id.items()}
    high = windows.now_s - windows.step
    since = {span: windows.since(span) for span in windows.spans}
    for key, start, health in arrived:
        model_counts = counts.get(id_by_key.get(key, ""))
        if model_counts is None or start > high:
            continue
        for span, low in since.items():
            if start > low:
                model_counts[span][health] += 1


def advance_counts(
    conn: Connection,
    keys_by_id: dict[str, int],
    counts: dict[str, Counts],
    before: Windows,
    after: Windows,
) -> None:
    """Move window counts to a later moment: add the slices that entered each window, remove those that left.

    Touches a handful of buckets per model (point lookups) instead of scanning every window again.
    """
    step = after.step
    entering_range = (before.now_s - step, after.now_s - step)
    changes: dict[int, list[tuple[int, int]]] = {}  # start -> [(span, +1 or -1)]

    def aligned(low: int, high: int) -> range:  # aligned starts in (low, high]
        first = low - low % step + step
        return range(first, high + 1, step)

    for span in after.spans:
        for start in aligned(*entering_range):
            changes.setdefault(start, []).append((span, 1))
        for start in aligned(before.since(span), after.since(span)):
            changes.setdefault(start, []).append((span, -1))
    if not changes:
        return
    id_by_key = {key: model_id for model_id, key in keys_by_id.items()}
    starts = sorted(changes)
    for key, start, health in buckets.health_at(conn, starts, None):
        model_counts = counts.get(id_by_key[key])
        if model_counts is None:
            continue
        for span, sign in changes[start]:
            model_counts[span][health] += sign


def latest_health(
    conn: Connection, keys_by_id: dict[str, int], windows: Windows, model_ids: list[str]
) -> dict[str, Health]:
    """Health of each model's latest closed bucket (one bucket late is tolerated); no data otherwise."""
    return latest_state(conn, keys_by_id, windows, model_ids)[0]


def latest_state(
    conn: Connection, keys_by_id: dict[str, int], windows: Windows, model_ids: list[str]
) -> tuple[dict[str, Health], set[str]]:
    """``latest_health``, and the models awaiting their latest bucket (the previous one is in, it is not yet)."""
    last = windows.last_slot
    id_by_key = {key: model_id for model_id, key in keys_by_id.items()}
    found: dict[str, dict[int, int]] = {}
    for key, start, health in buckets.health_at(
        conn, [last, last - windows.step], _keys(keys_by_id, model_ids)
    ):
        found.setdefault(id_by_key[key], {})[start] = health
    result = {}
    waiting = set()
    for model_id in model_ids:
        slots = found.get(model_id, {})
        code = slots.get(last, slots.get(last - windows.step))
        result[model_id] = Health.NO_DATA if code is None else HEALTH_BY_CODE[code]
        if last not in slots and last - windows.step in slots:
            waiting.add(model_id)
    return result, waiting


def assess_from(
    config: FleetConfig,
    registry: Registry,
    now: datetime,
    windows: Windows,
    counts: dict[str, Counts],
    latest: dict[str, Health],
    model_ids: list[str],
) -> list[Assessment]:
    """Each model judged by its tier's SLO: its objective, and its rules paging or ticketing (domain.policy)."""
    by_tier = {tier: config.policy.slo_for(tier, config.slo) for tier in Tier}
    # Models of one tier with the same window counts get the same status (most healthy models: every slice
    # of every window good), so each distinct one is built and serialized once per pass.
    statuses: dict[
        tuple[Tier, tuple[tuple[int, ...], ...]], tuple[SloStatus, str, float | None]
    ] = {}
    # The verdict's reason depends on the status, the tier and the owner team's time zone only.
    reasons: dict[tuple[Tier, tuple[tuple[int, ...], ...], str], str] = {}
    assessments = []
    for model_id in model_ids:
        model = registry.models[model_id]
        model_counts = counts[model_id]
        key = (model.tier, tuple(map(tuple, model_counts.values())))
        found = statuses.get(key)
        if found is None:
            found = statuses[key] = _status(by_tier[model.tier], windows, model_counts, now)
        status, slo_json, max_burn_rate = found
        reason_key = (*key, model.owner_team)
        reason = reasons.get(reason_key)
        if reason is None:
            reason = reasons[reason_key] = config.policy.verdict(model, status).reason
        health = latest[model_id]
        assessments.append(
            Assessment(
                model_id=model_id,
                health=health,
                attention=attention_for(health, {alert.severity for alert in status.alerts}),
                alerts=[alert.rule for alert in status.alerts],
                budget_remaining=status.budget_remaining,
                max_burn_rate=max_burn_rate,
                slo_json=slo_json,
                reason=reason,
            )
        )
    return assessments


def _status(
    policy: SloPolicy, windows: Windows, model_counts: Counts, now: datetime
) -> tuple[SloStatus, str, float | None]:
    """A model's SLO status from its window counts, as JSON too, and its worst long-window burn rate."""
    rule_windows = {w for rule in policy.rules for w in (rule.long_window, rule.short_window)}
    full = model_counts[windows.span_of[policy.window]]
    status = status_from_counts(
        SliceCounts(good=full[0], bad=full[1], no_data=full[2]),
        {
            w: burn_rate(
                SliceCounts(
                    good=model_counts[windows.span_of[w]][0],
                    bad=model_counts[windows.span_of[w]][1],
                ),
                policy.objective,
            )
            for w in rule_windows
        },
        now,
        policy,
    )
    rates = {item.window: item.rate for item in status.burn_rates}
    long_rates = [
        rate for rule in policy.rules if (rate := rates.get(rule.long_window)) is not None
    ]
    return status, status.model_dump_json(), max(long_rates) if long_rates else None


_CALM = (Attention.OK, Attention.NO_DATA)
"""A model in one of these resolves its incident if the incident's other members are clear too."""

_MOMENT = re.compile(r'"evaluated_at":"[^"]*"')
"""The one field of a stored SLO status that moves with the clock alone."""


def _unchanged(stored: Row, item: Assessment, timeless: dict[str, str]) -> bool:
    """The model's stored judgement is the assessment's, but for the moment it was evaluated at.
    ``timeless`` keeps each fresh status without its moment (most models share a few)."""
    fresh = timeless.get(item.slo_json)
    if fresh is None:
        fresh = timeless[item.slo_json] = _MOMENT.sub("", item.slo_json)
    return (
        stored["health"] == item.health.value
        and stored["attention"] == item.attention.value
        and stored["budget_remaining"] == item.budget_remaining
        and stored["max_burn_rate"] == item.max_burn_rate
        and json.loads(stored["alerts"]) == item.alerts
        and stored["slo"] is not None
        and _MOMENT.sub("", stored["slo"]) == fresh
    )


def apply(
    conn: Connection,
    registry: Registry,
    assessments: list[Assessment],
    now: datetime,
    step: int,
) -> int:
    """Store assessments (write transaction); transitions emit events and open, join or resolve incidents."""
    if not assessments:
        return 0
    previous = model_rows.judgements(conn, [a.model_id for a in assessments])
    updates = []
    transitions: list[tuple[Assessment, Row]] = []
    timeless: dict[str, str] = {}
    for item in assessments:
        before = previous[item.model_id]
        if _unchanged(before, item, timeless):
            # Not written again: a full recount (at start-up, for a new leader, after a registry change) finds
            # most of the fleet as it was, and rewriting a row costs more than judging it (on PostgreSQL a new
            # row version and an entry in each index). Its stored status holds now: views._current.
            continue
        updates.append(
            (
                item.health.value,
                item.attention.value,
                item.attention.rank,
                item.budget_remaining,
                item.max_burn_rate,
                dumps(item.alerts),
                item.slo_json,
                item.model_id,
            )
        )
        if (before["health"], before["attention"], json.loads(before["alerts"])) != (
            item.health.value,
            item.attention.value,
            item.alerts,
        ):
            transitions.append((item, before))
    model_rows.set_judgement(conn, updates)
    # Upstream models first, so their incidents exist when downstream models join.
    transitions.sort(
        key=lambda pair: (len(registry.upstream_chain(pair[0].model_id)), pair[0].model_id)
    )
    # Most models that turn ok or quiet have no incident: one query finds those that do. A model gains one
    # only through its own transition; each found is read again at its turn, since resolving an incident on
    # the way releases its other members (50,000 single reads were 9 s of a first start at 50,000 models).
    with_incident = model_rows.open_incident_ids(
        conn,
        [item.model_id for item, _ in transitions if item.attention in _CALM],
    )
    # The SLO events are written together (a first start at 50,000 models has 50,000 of them), those so far
    # before each incident change, so that the log keeps the order things happened in.
    changed: list[tuple[str, str, str | None, str]] = []

    def record_changed() -> None:
        event_log.append_many(conn, changed)
        changed.clear()

    for item, before in transitions:
        model_id, health, attention, alert_names = (
            item.model_id,
            item.health,
            item.attention,
            item.alerts,
        )
        changed.append(
            (
                EventType.SLO_CHANGED.value,
                iso(now),
                model_id,
                SloChangedData(
                    model_id=model_id,
                    health=health,
                    attention=attention,
                    budget_remaining=item.budget_remaining,
                    alerts=alert_names,
                ).model_dump_json(),
            )
        )
        was = Attention(before["attention"])
        if attention is Attention.PAGE and was is not Attention.PAGE:
            record_changed()
            incidents.open_or_join(conn, registry, model_id, Severity.PAGE, item.reason, now, step)
        elif health is Health.UNSTABLE and before["health"] != Health.UNSTABLE:
            # A burn its tier's policy tickets (a TIER4 bad hour) says so; otherwise the bucket alone.
            why = (
                item.reason
                if attention is Attention.TICKET
                else "latest bucket unstable (calibration or NE outside its band)"
            )
            record_changed()
            incidents.open_or_join(conn, registry, model_id, Severity.TICKET, why, now, step)
        elif attention in _CALM and model_id in with_incident:
            incident_id = model_rows.open_incident_id(conn, model_id)
            if incident_id is not None:
                record_changed()
                incidents.resolve_if_clear(conn, incident_id, now)
    record_changed()
    return len(transitions)
