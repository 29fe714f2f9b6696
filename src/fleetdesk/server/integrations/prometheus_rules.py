"""Prometheus rules generated from the fleet: stability recording rules and SLO burn-rate alerts.

The server exports per-model *additive* stability sums as counters (per task,
with a ``task`` label, for a multi-task model). Recording rules sum their
increases first and divide after, per model and task, so calibration and NE
over a window are ratios of window sums (never averages of ratios), exactly as
the domain computes them; a multi-task model's slice is judged by its worst
task. A window with no events, no positives or no negatives
records nothing: it is no data, never healthy and never violating.

Burn-rate alerts follow the multi-window practice of SLO generators (sloth,
pyrra): a per-model "slice unstable" indicator (0/1) over the slice length,
its mean over each alert window divided by the allowed bad share is the burn
rate, and an alert fires when both its long and short window burn at or above
the threshold.

Every alert follows the fleet's tier-aware monitoring policy (fleetdesk.domain.policy): each tier's objective
sets its allowed bad share, its rules page (severity critical), open a ticket (warning) or are off, a ticket
that waits for working hours carries ``hold="working-hours"`` and the owning team's ``timezone`` (the
Alertmanager example holds it until then), and a slice with fewer events than its tier asks for records
nothing (no data).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Annotated, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field

from fleetdesk.domain.policy import MonitoringPolicy
from fleetdesk.domain.registry import Model, Tier
from fleetdesk.domain.slo import BurnRateRule, Severity, SloPolicy
from fleetdesk.domain.stability import HealthBands
from fleetdesk.domain.tasks import UNSTABLE_SHARE

METRIC_PREFIX = "fleetdesk_stability"
COUNTERS = {
    "events": f"{METRIC_PREFIX}_events_total",
    "label_sum": f"{METRIC_PREFIX}_label_sum_total",
    "prediction_sum": f"{METRIC_PREFIX}_prediction_sum_total",
    "cross_entropy_sum": f"{METRIC_PREFIX}_cross_entropy_sum_total",
}
"""The server's /metrics counters, by the stability sum they carry."""

MODEL_LABELS = ("model_id", "model_type", "tier")
TASK_LABEL = "task"
"""A multi-task model's counters carry it (one series per task); a single-task model's have none."""
_BY = f"by ({', '.join(MODEL_LABELS)})"
_BY_TASK = f"by ({', '.join((*MODEL_LABELS, TASK_LABEL))})"

ALERT_SEVERITY = {Severity.PAGE: "critical", Severity.TICKET: "warning"}
"""Alertmanager severity label for each burn-rate rule severity."""

DEFAULT_SERVER_URL = "http://127.0.0.1:8787"
HELD = "working-hours"
"""The ``hold`` label of a ticket that waits for the owning team's working hours."""

V = TypeVar("V")


def console_command(server_url: str, model_id: str) -> str:
    """The shell command an engineer pastes to open the console on this model (alert annotations)."""
    return f"fleetdesk console --server {server_url}  # then open {model_id}"


class RecordingRule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    record: str
    expr: str


class AlertingRule(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    alert: str
    expr: str
    for_: str | None = Field(default=None, alias="for")
    labels: dict[str, str]
    annotations: dict[str, str]


class RuleGroup(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    rules: list[Annotated[RecordingRule | AlertingRule, Field(union_mode="left_to_right")]]


class RuleFile(BaseModel):
    """A Prometheus rule file (the format `promtool check rules` reads)."""

    model_config = ConfigDict(extra="forbid")

    groups: list[RuleGroup]

    def to_yaml(self, header: str = "") -> str:
        data = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        return header + yaml.dump(
            data, Dumper=_BlockDumper, sort_keys=False, width=100, allow_unicode=True
        )


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line strings (PromQL) as literal blocks so the file reads like hand-written rules."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str_representer)


def duration(value: timedelta) -> str:
    """A Prometheus duration string for a timedelta (largest exact unit: 28d, 6h, 5m, 90s)."""
    seconds = int(value.total_seconds())
    if seconds <= 0 or seconds != value.total_seconds():
        raise ValueError(f"duration must be a positive whole number of seconds, not {value}")
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def sum_record(sum_name: str, window: timedelta) -> str:
    return f"model:{COUNTERS[sum_name].removesuffix('_total')}:increase{duration(window)}"


def background_rate_record(window: timedelta) -> str:
    return f"model:fleetdesk_background_rate:ratio{duration(window)}"


def calibration_record(window: timedelta) -> str:
    return f"model:fleetdesk_calibration:ratio{duration(window)}"


def ne_record(window: timedelta) -> str:
    return f"model:fleetdesk_normalized_entropy:ratio{duration(window)}"


def slice_unstable_record(slice_length: timedelta) -> str:
    return f"model:fleetdesk_slice_unstable:bool{duration(slice_length)}"


def task_slice_unstable_record(slice_length: timedelta) -> str:
    """Per model and task (a single-task model's has no task label)."""
    return f"model_task:fleetdesk_slice_unstable:bool{duration(slice_length)}"


def burn_rate_record(window: timedelta) -> str:
    return f"model:fleetdesk_slo_burn_rate:ratio{duration(window)}"


BUDGET_REMAINING_RECORD = "model:fleetdesk_slo_error_budget_remaining:ratio"


def stability_rules(window: timedelta) -> list[RecordingRule]:
    """Calibration and NE over ``window`` from summed counter increases (sum first, divide after), per model and
    per task of a multi-task model (its records carry the task label)."""
    w = duration(window)
    rules = [
        RecordingRule(
            record=sum_record(name, window), expr=f"sum {_BY_TASK} (increase({counter}[{w}]))"
        )
        for name, counter in COUNTERS.items()
    ]
    events, labels = sum_record("events", window), sum_record("label_sum", window)
    predictions, cross_entropy = (
        sum_record("prediction_sum", window),
        sum_record("cross_entropy_sum", window),
    )
    rate = background_rate_record(window)
    # Only a background rate strictly inside (0, 1) defines NE; filtering on it
    # makes an empty or one-sided window record nothing (no data), not 0 or NaN.
    defined = f"({rate} > 0 < 1)"
    rules += [
        RecordingRule(record=rate, expr=f"{labels}\n/\n({events} > 0)\n"),
        RecordingRule(
            record=calibration_record(window),
            expr=f"{predictions}\n/\n{labels}\nand\n{defined}\n",
        ),
        RecordingRule(
            record=ne_record(window),
            expr=(
                f"({cross_entropy} / {events})\n"
                f"/\n"
                f"-(\n"
                f"    {defined} * ln({rate})\n"
                f"  + (1 - {rate}) * ln(1 - {rate})\n"
                f")\n"
            ),
        ),
    ]
    return rules


_RE2_SPECIAL = re.compile(r"([\\.+*?()|\[\]{}^$])")


def _promql_regex_literal(text: str) -> str:
    """``text`` matched literally by a PromQL regex matcher: RE2-escaped, then escaped for a PromQL string."""
    return _RE2_SPECIAL.sub(r"\\\1", text).replace("\\", "\\\\").replace('"', '\\"')


def _type_selector(types: list[str], exclude: bool) -> str:
    pattern = "|".join(_promql_regex_literal(t) for t in sorted(types))
    return f'{{model_type{"!~" if exclude else "=~"}"{pattern}"}}' if types else ""


def _tier_selector(tiers: Iterable[Tier]) -> str:
    """A label matcher for these tiers; empty when they are every tier."""
    chosen = sorted(set(tiers), key=lambda tier: tier.rank)
    if len(chosen) == len(Tier):
        return ""
    return f'tier=~"{"|".join(chosen)}"'


def _with(selector: str, matcher: str) -> str:
    """A {…} selector with one more matcher."""
    if not matcher:
        return selector
    return f"{{{matcher}}}" if not selector else f"{selector[:-1]},{matcher}}}"


def _by_value(values: dict[Tier, V]) -> list[tuple[V, list[Tier]]]:
    """Tiers grouped by a per-tier value, most critical group first."""
    groups: dict[V, list[Tier]] = defaultdict(list)
    for tier in Tier:
        groups[values[tier]].append(tier)
    return sorted(groups.items(), key=lambda item: item[1][0].rank)


def slice_rules(
    policy: SloPolicy,
    default_bands: HealthBands,
    bands: dict[str, HealthBands],
    monitoring: MonitoringPolicy | None = None,
    task_weights: Mapping[str, Mapping[str, float]] | None = None,
) -> list[RecordingRule]:
    """The 0/1 "slice unstable" indicator per model and task, one term per distinct set of bands (a slice with
    fewer events than its tier's minimum has none: no data), then per model, as fleetdesk.domain.tasks judges
    it: by its worst task (the max over its tasks with data), or for a type with ``task_weights`` (type →
    task → weight) unstable when its unstable tasks carry at least half the weight of its tasks with data."""
    by_bands: dict[HealthBands, list[str]] = defaultdict(list)
    for type_string, type_bands in bands.items():
        if type_bands != default_bands:
            by_bands[type_bands].append(type_string)
    groups: list[tuple[HealthBands, str]] = [
        (type_bands, _type_selector(types, exclude=False))
        for type_bands, types in sorted(by_bands.items(), key=lambda item: sorted(item[1]))
    ]
    groups.insert(
        0,
        (default_bands, _type_selector([t for ts in by_bands.values() for t in ts], exclude=True)),
    )
    calibration, ne = calibration_record(policy.slice), ne_record(policy.slice)
    # One rule joined with `or` (selectors are disjoint): one record name must have one rule.
    terms = [
        f"(\n"
        f"    ({calibration}{selector} < bool {group_bands.calibration_low!r})\n"
        f"  + ({calibration}{selector} > bool {group_bands.calibration_high!r})\n"
        f"  + ({ne}{selector} > bool {group_bands.ne_max!r})\n"
        f") > bool 0\n"
        for group_bands, selector in groups
    ]
    expr = "or\n".join(terms)
    least = {
        tier: (monitoring or MonitoringPolicy()).tier(tier).min_events_per_slice for tier in Tier
    }
    if any(least.values()):
        events = sum_record("events", policy.slice)
        enough = "\n  or\n".join(
            f"  {events}{_with('', _tier_selector(tiers))} >= {minimum!r}"
            for minimum, tiers in _by_value(least)
        )
        expr = f"(\n{expr})\nand\n(\n{enough}\n)\n"
    per_task = task_slice_unstable_record(policy.slice)
    weighted = dict(sorted((task_weights or {}).items()))
    model_terms = [f"max {_BY} ({per_task}{_type_selector(list(weighted), exclude=True)})\n"]
    model_terms += [
        _weighted_verdict(per_task, type_string, weights)
        for type_string, weights in weighted.items()
    ]
    return [
        RecordingRule(record=per_task, expr=expr),
        RecordingRule(record=slice_unstable_record(policy.slice), expr="or\n".join(model_terms)),
    ]


def _weighted_verdict(per_task: str, type_string: str, weights: Mapping[str, float]) -> str:
    """1 when the unstable tasks of a model of this type carry at least UNSTABLE_SHARE of the weight of its
    tasks with data (tasks without data have no per-task series); none when no task of positive weight has."""
    selector = _type_selector([type_string], exclude=False)
    # A task name is a plain lowercase word (domain.tasks.TaskName): nothing to escape.
    series = [
        (per_task + _with(selector, 'task="' + task + '"'), weight)
        for task, weight in sorted(weights.items())
    ]
    unstable = "\n    or\n".join(f"    {one} * {weight!r}" for one, weight in series)
    judged = "\n    or\n".join(f"    {one} * 0 + {weight!r}" for one, weight in series)
    return (
        f"(\n  sum {_BY} (\n{unstable}\n  )\n  /\n"
        f"  (sum {_BY} (\n{judged}\n  ) > 0)\n"
        f") >= bool {UNSTABLE_SHARE!r}\n"
    )


def _windows(policy: SloPolicy) -> list[timedelta]:
    return sorted({w for rule in policy.rules for w in (rule.long_window, rule.short_window)})


def burn_rate_rules(
    policy: SloPolicy, monitoring: MonitoringPolicy | None = None
) -> list[RecordingRule]:
    """Burn rate per alert window: bad share of evaluated slices over the allowed bad share (each tier's
    objective its own)."""
    monitoring = monitoring or MonitoringPolicy()
    objectives = {tier: monitoring.slo_for(tier, policy).objective for tier in Tier}
    groups = _by_value(objectives)
    indicator = slice_unstable_record(policy.slice)

    def over(window: timedelta, prefix: str = "") -> str:
        return "\nor\n".join(
            f"{prefix}avg_over_time({indicator}{_with('', _tier_selector(tiers))}[{duration(window)}])"
            f" / {1.0 - objective:.10g}"
            for objective, tiers in groups
        ) + ("\n" if len(groups) > 1 else "")

    rules = [
        RecordingRule(record=burn_rate_record(window), expr=over(window))
        for window in _windows(policy)
    ]
    rules.append(RecordingRule(record=BUDGET_REMAINING_RECORD, expr=over(policy.window, "1 - ")))
    return rules


def _alert_name(rule: BurnRateRule) -> str:
    words = re.split(r"[^A-Za-z0-9]+", rule.name)
    return "FleetdeskStabilityBurnRate" + "".join(w[:1].upper() + w[1:] for w in words if w)


def burn_rate_alerts(
    policy: SloPolicy,
    server_url: str = DEFAULT_SERVER_URL,
    monitoring: MonitoringPolicy | None = None,
    models: Iterable[Model] = (),
) -> list[AlertingRule]:
    """Multi-window alerts per burn-rate rule, one per group of tiers the policy treats alike (pages, tickets,
    held tickets per team time zone); a tier for which the rule is off has none. ``models``: the fleet, whose
    owning teams' time zones held tickets follow."""
    monitoring = monitoring or MonitoringPolicy()
    by_zone: dict[str, list[str]] = defaultdict(
        list
    )  # model ids by time zone, default zone left out
    for model in models:
        zone = monitoring.team_timezones.get(model.owner_team, monitoring.default_timezone)
        if zone != monitoring.default_timezone:
            by_zone[zone].append(model.id)
    alerts = []
    for rule in policy.rules:
        handling: dict[Tier, tuple[Severity, bool] | None] = {}
        for tier in Tier:
            severity = monitoring.tier(tier).severity_of(rule.name)
            held = (
                severity is Severity.TICKET and monitoring.tier(tier).tickets_wait_for_working_hours
            )
            handling[tier] = None if severity is None else (severity, held)
        for how, tiers in _by_value(handling):
            if how is None:
                continue
            severity, held = how
            selector = _with("", _tier_selector(tiers))
            if not held:
                alerts.append(_alert(policy, rule, severity, selector, {}, server_url))
                continue
            others = sorted(model_id for ids in by_zone.values() for model_id in ids)
            zones = [(monitoring.default_timezone, f'model_id!~"{_ids(others)}"' if others else "")]
            zones += [(zone, f'model_id=~"{_ids(ids)}"') for zone, ids in sorted(by_zone.items())]
            for zone, matcher in zones:
                alerts.append(
                    _alert(
                        policy,
                        rule,
                        severity,
                        _with(selector, matcher),
                        {"hold": HELD, "timezone": zone},
                        server_url,
                    )
                )
    return alerts


def _ids(model_ids: list[str]) -> str:
    return "|".join(_promql_regex_literal(model_id) for model_id in sorted(model_ids))


def _alert(
    policy: SloPolicy,
    rule: BurnRateRule,
    severity: Severity,
    selector: str,
    extra: dict[str, str],
    server_url: str,
) -> AlertingRule:
    long_w, short_w = duration(rule.long_window), duration(rule.short_window)
    threshold = f"{rule.threshold!r}"
    verb = "pages" if severity is Severity.PAGE else "ticket"
    return AlertingRule(
        alert=_alert_name(rule),
        expr=(
            f"{burn_rate_record(rule.long_window)}{selector} >= {threshold}\n"
            f"and\n"
            f"{burn_rate_record(rule.short_window)} >= {threshold}\n"
        ),
        labels={
            "severity": ALERT_SEVERITY[severity],
            "slo_rule": rule.name,
            "long_window": long_w,
            "short_window": short_w,
            **extra,
        },
        annotations={
            "summary": (
                "{{ $labels.model_id }} ({{ $labels.tier }}) burns its stability error budget "
                f"at {threshold}x or more over {long_w} and {short_w}"
            ),
            "description": (
                "Model {{ $labels.model_id }} of type {{ $labels.model_type }} ({{ $labels.tier }}) "
                f"is outside its calibration/NE bands in more than {threshold}x the share of "
                f"{duration(policy.slice)} slices its tier's objective allows; "
                f'burn rate {{{{ $value | printf "%.3g" }}}} over {long_w}.'
            ),
            # The console's and explain's words (domain.policy.PagingVerdict.reason).
            "policy": (
                f"{verb}: {{{{ $labels.tier }}}} policy, {rule.name}"
                f' {{{{ $value | printf "%.3g" }}}}x ≥ {rule.threshold:.3g}x'
                + (f", held for working hours ({extra['timezone']})" if extra else "")
            ),
            "console": console_command(server_url, "{{ $labels.model_id }}"),
        },
    )


LEADER_GAUGE = "fleetdesk_leader"
"""1 on the replica that closes slots, recomputes SLOs and opens incidents (fleetdesk.server.prom)."""


def leader_alert(server_url: str = DEFAULT_SERVER_URL) -> AlertingRule:
    """Not one replica leading, for two minutes (a takeover takes seconds): with none, no slot closes, no SLO is
    recomputed and no incident opens, for any model, while every replica still answers; two would be a bug.
    Its value is how many lead, 0 when no replica is scraped at all."""
    return AlertingRule(
        alert="FleetdeskLeaderNotOne",
        expr=f"sum({LEADER_GAUGE}) != 1\nor\nabsent({LEADER_GAUGE}) - 1\n",
        for_="2m",
        labels={"severity": ALERT_SEVERITY[Severity.PAGE]},
        annotations={
            "summary": "{{ $value }} fleetdesk replicas lead, not 1",
            "description": (
                "One fleetdesk replica at a time closes slots, recomputes SLOs and opens incidents. With none,"
                " no model's stability is judged and no incident opens, though every replica still answers:"
                " check each replica's database connection and logs (fleetdesk_leader on each /metrics)."
            ),
            "console": f"fleetdesk console --server {server_url}",
        },
    )


def recording_rule_file(policy: SloPolicy) -> RuleFile:
    """Stability recording rules for the SLO's slice length."""
    return RuleFile(
        groups=[RuleGroup(name="fleetdesk-stability", rules=list(stability_rules(policy.slice)))]
    )


def alert_rule_file(
    policy: SloPolicy,
    default_bands: HealthBands,
    bands: dict[str, HealthBands],
    server_url: str = DEFAULT_SERVER_URL,
    monitoring: MonitoringPolicy | None = None,
    models: Iterable[Model] = (),
    task_weights: Mapping[str, Mapping[str, float]] | None = None,
) -> RuleFile:
    """Slice health, burn rates and multi-window burn-rate alerts by tier policy (needs the recording rules
    too); ``models`` are the fleet's, whose teams' time zones held tickets follow; ``task_weights`` the
    declared task weights per type (slice_rules)."""
    return RuleFile(
        groups=[
            RuleGroup(
                name="fleetdesk-slo",
                rules=[
                    *slice_rules(policy, default_bands, bands, monitoring, task_weights),
                    *burn_rate_rules(policy, monitoring),
                    *burn_rate_alerts(policy, server_url, monitoring, models),
                ],
            ),
            RuleGroup(name="fleetdesk-replicas", rules=[leader_alert(server_url)]),
        ]
    )
