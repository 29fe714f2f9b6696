"""The one-sentence answer about a model: what it is, how important, the fallback, its health.

``explain`` assembles everything an on-call engineer asks first about a paging
model into one ``Explanation`` (the ``fleetdesk explain --json`` schema);
``render_text`` prints it as a short paragraph plus aligned detail lines that
read the same on a terminal and piped to a file (no colour, no box art).
"""

from __future__ import annotations

import textwrap
from datetime import datetime, timedelta

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from fleetdesk.domain import playbook
from fleetdesk.domain.attention import attention_for
from fleetdesk.domain.live import LiveState
from fleetdesk.domain.playbook import Neighbour, TargetHealth
from fleetdesk.domain.policy import PagingVerdict
from fleetdesk.domain.registry import AttributeValue, LaunchPhase, Role, Tier
from fleetdesk.domain.slo import SliceHealth, SloStatus, evaluate
from fleetdesk.domain.stability import Health, HealthBands, StabilityBucket, merge
from fleetdesk.domain.synthetic import bucket_from_row
from fleetdesk.domain.text import sanitize
from fleetdesk.domain.type_record import ModelTypeRecord
from fleetdesk.fleets.files import Fleet

RECENT_WINDOW = timedelta(hours=24)
WRAP = 78


class StabilityReading(BaseModel):
    """Calibration and NE over one window, with the health they give against the bands."""

    model_config = ConfigDict(frozen=True)

    start: AwareDatetime | None = Field(
        description="First bucket in the window; None when there is none"
    )
    end: AwareDatetime | None
    buckets: int
    calibration: float | None
    normalized_entropy: float | None
    health: Health


class UpstreamModel(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    role: Role
    tier: Tier
    health: Health = Field(
        description="Health of its latest bucket if that bucket is current, else no data"
    )


class Explanation(BaseModel):
    """What `fleetdesk explain` knows about one model at one moment."""

    model_config = ConfigDict(frozen=True)

    model_id: str
    as_of: AwareDatetime = Field(description="The moment evaluated: the end of the fleet's history")
    summary: str = Field(description="The one-paragraph answer, plain text")
    type: str
    type_description: str
    funnel_stage: str
    purpose: str
    role: Role
    launch_phase: LaunchPhase
    traffic_share: float
    tier: Tier
    tier_justification: str
    owner_team: str
    oncall_rotation: str
    fallback_model_id: str | None = Field(
        description="The baseline to roll back to; None: escalate"
    )
    fallback: str
    fallback_health: TargetHealth | None = Field(
        default=None, description="The baseline's own health now"
    )
    holdout_model_id: str | None
    bands: HealthBands
    latest: StabilityReading
    last_24h: StabilityReading
    slo: SloStatus
    paging: PagingVerdict = Field(
        description="Why it pages, tickets or stays quiet: its tier's policy"
    )
    type_record: ModelTypeRecord | None = Field(
        default=None, description="Its type's record (owner, description, runbook, attributes)"
    )
    attributes: dict[str, AttributeValue] = Field(default_factory=dict)
    slo_slice: timedelta
    downstream_total: int
    blast_radius: dict[Tier, int]
    upstream: list[UpstreamModel]


def explain(fleet: Fleet, model_id: str) -> Explanation:
    """Build the explanation (UnknownModelError with suggestions for an unknown id)."""
    registry = fleet.registry
    model = registry.get(model_id)
    vocabulary = fleet.file.vocabulary
    model_type = vocabulary.parse(model.type)
    now = fleet.file.history.end
    bands = fleet.bands_for(model_id)
    buckets = list(fleet.buckets(model_id))
    latest = _reading([b for b in buckets if b.start + fleet.timeline.bucket == now], bands)
    last_24h = _reading([b for b in buckets if b.start >= now - RECENT_WINDOW], bands)
    slices = [SliceHealth(start=b.start, health=bands.health(b)) for b in buckets]
    slo = evaluate(slices, now, fleet.file.policy.slo_for(model.tier, fleet.file.slo))
    escalate = f"escalate to {model.owner_team} ({model.oncall_rotation})"
    fallback_health = None
    if model.baseline_model_id is not None:
        fallback_id: str | None = model.baseline_model_id
        fallback_health = _target_health(fleet, model.baseline_model_id, now)
        fallback = f"roll back to baseline {model.baseline_model_id}"
        if not fallback_health.healthy:
            # The same words as the console and the handoff (domain.playbook), with whom to page.
            fallback = f"none: {playbook.fallback_words(model, fallback_health).removesuffix(': escalate')}: {escalate}"
    else:
        fallback_id = None
        fallback = f"none: {escalate}"
    upstream = [
        UpstreamModel(id=up.id, role=up.role, tier=up.tier, health=_current_health(fleet, up.id))
        for up in registry.upstream_chain(model_id)
    ]
    blast = registry.blast_radius(model_id)
    blank = Explanation(
        model_id=model.id,
        as_of=now,
        summary="",
        type=model.type,
        type_description=vocabulary.describe(model_type),
        funnel_stage=str(vocabulary.stage(model_type)),
        purpose=model.purpose,
        role=model.role,
        launch_phase=model.launch_phase,
        traffic_share=model.traffic_share,
        tier=model.tier,
        tier_justification=model.tier_justification,
        owner_team=model.owner_team,
        oncall_rotation=model.oncall_rotation,
        fallback_model_id=fallback_id,
        fallback=fallback,
        fallback_health=fallback_health,
        holdout_model_id=model.holdout_model_id,
        bands=bands,
        latest=latest,
        last_24h=last_24h,
        slo=slo,
        paging=fleet.file.policy.verdict(model, slo),
        type_record=fleet.file.types.get(model.type),
        attributes=model.attributes,
        slo_slice=fleet.file.slo.slice,
        downstream_total=sum(blast.values()),
        blast_radius=blast,
        upstream=upstream,
    )
    return blank.model_copy(update={"summary": summarize(blank)})


def _reading(buckets: list[StabilityBucket], bands: HealthBands) -> StabilityReading:
    sums = merge(buckets)
    return StabilityReading(
        start=buckets[0].start if buckets else None,
        end=buckets[-1].start if buckets else None,
        buckets=len(buckets),
        calibration=sums.calibration,
        normalized_entropy=sums.normalized_entropy,
        health=bands.health(sums),
    )


def _target_health(fleet: Fleet, model_id: str, now: datetime) -> TargetHealth:
    """A baseline's health at the end of the history, as the server would judge it (no incidents: a file has none)."""
    model = fleet.model(model_id)
    bands = fleet.bands_for(model_id)
    buckets = list(fleet.buckets(model_id))
    latest = _reading([b for b in buckets if b.start + fleet.timeline.bucket == now], bands)
    slo = evaluate(
        [SliceHealth(start=b.start, health=bands.health(b)) for b in buckets],
        now,
        fleet.file.policy.slo_for(model.tier, fleet.file.slo),
    )
    stable = [b.start for b in buckets if bands.health(b) is Health.STABLE]
    since = None
    if latest.health is not Health.STABLE:
        since = (
            stable[-1] + fleet.timeline.bucket
            if stable
            else (buckets[0].start if buckets else None)
        )
    neighbour = Neighbour(
        model=model,
        live=LiveState(
            serving_model_id=model.id,
            traffic_share=model.traffic_share,
            launch_phase=model.launch_phase,
        ),
        health=latest.health,
        attention=attention_for(latest.health, {a.severity for a in slo.alerts}),
        calibration=latest.calibration,
        normalized_entropy=latest.normalized_entropy,
        bands=bands,
        alerts=tuple(a.rule for a in slo.alerts),
        budget_remaining=slo.budget_remaining,
        since=since,
    )
    return playbook.target_health(neighbour, "baseline", now)


def _current_health(fleet: Fleet, model_id: str) -> Health:
    """Health of the bucket that closed at the history's end; no data if it is missing."""
    rows = fleet.rows(model_id)
    if not rows or rows[-1].start + fleet.timeline.bucket != fleet.file.history.end:
        return Health.NO_DATA
    return fleet.bands_for(model_id).health(bucket_from_row(rows[-1]))


def duration(span: timedelta) -> str:
    """'28d', '6h', '5m', '1h30m': how on-call people write windows."""
    minutes = int(span.total_seconds() // 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    text = "".join(
        f"{value}{unit}" for value, unit in ((days, "d"), (hours, "h"), (minutes, "m")) if value
    )
    return text or "0m"


def _utc(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else "never"


def _percent(share: float) -> str:
    return f"{share * 100:.3g}%"


def _budget(remaining: float) -> str:
    return f"{_percent(remaining)} left" + (" (overspent)" if remaining < 0 else "")


def _signals(reading: StabilityReading) -> str:
    if reading.calibration is None or reading.normalized_entropy is None:
        return "no data"
    return f"calibration {reading.calibration:.3f}, NE {reading.normalized_entropy:.3f}"


_HEALTH_WORD = {Health.STABLE: "stable", Health.UNSTABLE: "UNSTABLE", Health.NO_DATA: "NO DATA"}


def _role_phrase(e: Explanation) -> str:
    if e.role is Role.FOUNDATION:
        return "foundation model"
    if e.role is Role.BASELINE:
        return f"production baseline serving {_percent(e.traffic_share)} of traffic"
    if e.role is Role.HOLDOUT:
        return f"holdout on {_percent(e.traffic_share)} of traffic"
    return f"experiment in {e.launch_phase} on {_percent(e.traffic_share)} of traffic"


def _slo_phrase(slo: SloStatus) -> str:
    if slo.budget_remaining is None:
        return "SLO: no evaluated slices yet"
    return f"SLO error budget {_budget(slo.budget_remaining)} over {duration(slo.window)}"


def _alerts_phrase(e: Explanation) -> str:
    if not e.slo.alerts:
        return "no burn-rate alert"
    return f"burn-rate alerts firing: {', '.join(a.rule for a in e.slo.alerts)} ({e.paging.reason})"


def _blast_phrase(e: Explanation) -> str:
    if not e.downstream_total:
        return "nothing downstream"
    tiers = ", ".join(f"{tier} {count}" for tier, count in e.blast_radius.items() if count)
    return f"{e.downstream_total} downstream models ({tiers})"


def _now_phrase(e: Explanation) -> str:
    if e.latest.health is Health.NO_DATA:
        since = f"last bucket {_utc(e.last_24h.end)}" if e.last_24h.end else "no bucket in 24h"
        return f"NO DATA in the latest bucket ({since})"
    return f"{_HEALTH_WORD[e.latest.health]} in the latest bucket ({_signals(e.latest)})"


def summarize(e: Explanation) -> str:
    """The one-paragraph answer: what, how important and why, fallback, health, blast radius."""
    sentences = [
        f"{e.model_id} is a {e.tier} {_role_phrase(e)} for {e.type_description}.",
        e.purpose.rstrip(".") + ".",
        f"{e.tier} because: {e.tier_justification.rstrip('.')}."
        if e.tier_justification.strip()
        else f"{e.tier}: low stakes, no business-impact justification required.",
        f"Safe fallback: {e.fallback}."
        if e.fallback_health is None or e.fallback_health.healthy
        else f"Fallback: {e.fallback.removeprefix('none: ')} instead of rolling back.",
        f"Now {_now_phrase(e)}; {_slo_phrase(e.slo)}; {_alerts_phrase(e)}.",
        f"Blast radius: {_blast_phrase(e)}.",
    ]
    troubled = [up for up in e.upstream if up.health is not Health.STABLE]
    if e.upstream:
        chain = " <- ".join(up.id for up in e.upstream)
        sentences.append(f"Upstream: {chain}.")
    if troubled and e.latest.health is not Health.STABLE:
        names = ", ".join(f"{up.id} ({_HEALTH_WORD[up.health]})" for up in troubled)
        sentences.append(f"Look upstream first: {names}.")
    return " ".join(sanitize(sentence) for sentence in sentences)


def render_text(e: Explanation) -> str:
    """The summary paragraph, then one aligned line per fact; plain, sanitized text."""
    bands = e.bands
    slo = e.slo
    counts = slo.counts
    rates = ", ".join(
        f"{duration(rate.window)} {'-' if rate.rate is None else f'{rate.rate:.3g}x'}"
        for rate in slo.burn_rates
    )
    alerts = (
        "; ".join(
            f"{a.rule} ({a.severity}): {a.long_burn_rate:.3g}x and {a.short_burn_rate:.3g}x >= {a.threshold:g}x"
            for a in slo.alerts
        )
        or "none"
    )
    upstream = "; ".join(
        f"{up.id} ({up.role}, {up.tier}, {_HEALTH_WORD[up.health]})" for up in e.upstream
    )
    tier_line = f"{e.tier}: {e.tier_justification}" if e.tier_justification.strip() else str(e.tier)
    rows = [
        ("model", e.model_id),
        ("type", f"{e.type} = {e.type_description}"),
        ("stage", e.funnel_stage),
        ("purpose", e.purpose),
        ("role", f"{e.role}, {e.launch_phase}, {_percent(e.traffic_share)} of traffic"),
        ("tier", tier_line),
        ("owner", f"{e.owner_team} (on call: {e.oncall_rotation})"),
        *(
            [
                ("type owner", f"{e.type_record.owner_team}: {e.type_record.description}"),
                ("runbook", e.type_record.runbook_url),
            ]
            if e.type_record is not None
            else []
        ),
        *(
            [("tasks", _tasks_words(e.type_record))]
            if e.type_record is not None and e.type_record.tasks
            else []
        ),
        *(
            [("attributes", ", ".join(f"{k}={v}" for k, v in sorted(e.attributes.items())))]
            if e.attributes
            else []
        ),
        ("fallback", e.fallback),
        ("holdout", e.holdout_model_id or "none"),
        (
            "bands",
            f"calibration {bands.calibration_low:g}-{bands.calibration_high:g}, NE <= {bands.ne_max:g}",
        ),
        (
            "latest",
            f"{_utc(e.latest.start)}: {_signals(e.latest)}: {_HEALTH_WORD[e.latest.health]}",
        ),
        (
            "last 24h",
            f"{e.last_24h.buckets} buckets: {_signals(e.last_24h)}: {_HEALTH_WORD[e.last_24h.health]}",
        ),
        (
            "slo",
            f"{_percent(slo.objective)} of {duration(e.slo_slice)} slices good over {duration(slo.window)}: "
            + (
                f"budget {_budget(slo.budget_remaining)}"
                if slo.budget_remaining is not None
                else "no data"
            )
            + f" ({counts.bad} bad, {counts.good} good, {counts.no_data} no data)",
        ),
        ("burn rates", rates),
        ("alerts", alerts),
        ("paging", e.paging.reason),
        ("downstream", _blast_phrase(e)),
        ("upstream", upstream or "none"),
        ("as of", f"{_utc(e.as_of)} (end of the fleet's metric history)"),
    ]
    width = max(len(label) for label, _ in rows) + 2
    lines = textwrap.wrap(e.summary, WRAP, break_on_hyphens=False) + [""]
    for label, value in rows:
        lines += textwrap.wrap(
            sanitize(value),
            WRAP,
            initial_indent=label.ljust(width),
            subsequent_indent=" " * width,
            break_on_hyphens=False,
        ) or [label]
    return "\n".join(lines) + "\n"


def _tasks_words(record: ModelTypeRecord) -> str:
    weights = record.task_weights
    if weights is None:
        return ", ".join(record.tasks) + " (each judged; the model is its worst)"
    return (
        ", ".join(f"{task} {weights[task]:g}" for task in record.tasks)
        + " (each judged; the model is unstable when unstable tasks carry half the weight)"
    )
