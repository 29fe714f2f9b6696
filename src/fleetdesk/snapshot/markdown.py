"""The Markdown summary of a snapshot, for a chat message or a ticket.

It answers, in order: what is wrong, what was done, what is still open, and
the next steps the last engineer left in notes. Every value from data is
sanitized (no control characters, escape sequences or bidi tricks) and then
either escaped as Markdown text or set in a code span, so a note cannot
inject links, images, HTML or headings into the reader's ticket.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from fleetdesk.domain.text import sanitize
from fleetdesk.snapshot.bundle import Snapshot
from fleetdesk.wire import AuditRecord, IncidentState, StabilitySeries

# ASCII punctuation with an inline meaning in CommonMark/GFM, '&' for entities, '#' and '+' to be safe.
# '-' and '.' stay readable: data never starts a line here, so they cannot open a list or a rule.
_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~&])")
_TEXT_LIMIT = 2000


def text(value: object, limit: int = _TEXT_LIMIT) -> str:
    """Data as inert Markdown text."""
    return _SPECIAL.sub(r"\\\1", sanitize(str(value), limit))


def code(value: object) -> str:
    """Data as a Markdown code span (ids, URLs): literal, with a fence longer than any backtick run inside."""
    safe = sanitize(str(value), 300)
    longest = max((len(run) for run in re.findall(r"`+", safe)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if safe.startswith("`") or safe.endswith("`") or not safe.strip() else ""
    return f"{fence}{pad}{safe}{pad}{fence}"


def when(moment: datetime) -> str:
    """A timestamp in UTC, to the second (readers are in other time zones)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _percent(value: float | None) -> str:
    return "no data" if value is None else f"{value * 100:.1f}%"


def _ratio(value: float | None) -> str:
    return "no data" if value is None else f"{value:.3f}"


def _duration(span: timedelta) -> str:
    hours = span.total_seconds() / 3600
    return f"{hours / 24:g} days" if hours >= 24 and hours % 24 == 0 else f"{hours:g} h"


def render(snapshot: Snapshot, files: str = "") -> str:
    """The Markdown summary; ``files`` names the bundle's JSON file for the closing 'open it with' line."""
    lines: list[str] = []
    detail, model = snapshot.model, snapshot.model.model
    lines += [
        f"# Handoff: {code(model.id)} ({text(model.tier.value)}, {text(detail.attention.value)})",
        "",
        f"Snapshot by **{text(snapshot.exported_by, 100)}** at {when(snapshot.exported_at)} (server clock), "
        f"from {code(snapshot.server.url)} (fleet {text(snapshot.server.info.fleet, 100)}).",
        "",
        "## What is wrong",
        "",
        *_wrong(snapshot),
        "",
        "## What was done",
        "",
        *(_done(snapshot) or ["- Nothing yet: no action is recorded in the audit log."]),
        "",
        "## What is still open",
        "",
        *_open(snapshot),
        "",
        "## Next steps (from notes)",
        "",
        *(_notes(snapshot) or ["- No notes were left. Read the timeline below and decide."]),
    ]
    if snapshot.incident is not None and snapshot.incident.timeline:
        lines += ["", f"## Timeline of incident {text(snapshot.incident.id)}", ""]
        for entry in snapshot.incident.timeline:
            who = text(entry.actor, 100) if entry.actor else "server"
            repeated = (
                f" ({entry.repeats} times, last {when(entry.last_at)})"
                if entry.repeats > 1 and entry.last_at is not None
                else ""
            )
            lines.append(
                f"- {when(entry.at)} {text(entry.kind, 40)} by {who}: {text(entry.text)}{repeated}"
            )
    lines += ["", "---", ""]
    masked = sum(snapshot.redactions.values())
    if masked:
        lines.append(f"{masked} secret(s) were masked as \\[REDACTED\\] before export.")
    if files:
        lines.append(
            f"Full snapshot: {code(files)}. Reopen it read-only with {code('fleetdesk open ' + files)}."
        )
    return "\n".join(lines).rstrip("\n") + "\n"


def _wrong(snapshot: Snapshot) -> list[str]:
    detail, model, slo = snapshot.model, snapshot.model.model, snapshot.model.slo
    lines = [
        f"- {code(model.id)} is {text(detail.decoded.description)}: {text(model.purpose)}",
        f"- Tier {text(model.tier.value)}"
        + (f" ({text(model.tier_justification)})" if model.tier_justification else "")
        + f"; role {text(model.role.value)}; owner {text(model.owner_team, 100)}, on call {text(model.oncall_rotation, 100)}.",
        f"- Fallback: {_fallback(snapshot)}.",
        f"- Health of the latest bucket: **{text(detail.health.value)}**.",
        f"- SLO: objective {_percent(slo.objective)} of slices stable over {_duration(slo.window)}; "
        f"error budget left {_percent(slo.budget_remaining)} "
        f"(good {slo.counts.good}, bad {slo.counts.bad}, no data {slo.counts.no_data}).",
    ]
    for alert in slo.alerts:
        lines.append(
            f"- Alert firing: {text(alert.rule, 100)} ({text(alert.severity.value)}): burn rate "
            f"{alert.long_burn_rate:.1f}x long / {alert.short_burn_rate:.1f}x short, threshold {alert.threshold:g}x."
        )
    series = snapshot.series(snapshot.view.window) or (
        snapshot.stability[0] if snapshot.stability else None
    )
    if series is not None:
        lines.append(_latest(series))
    if snapshot.lineage.upstream:
        first = snapshot.lineage.upstream[0]
        lines.append(
            f"- Upstream: {code(first.id)} ({text(first.tier.value)}, {text(first.health.value)}, "
            f"owner {text(first.owner_team, 100)}); a degraded upstream can be the cause."
        )
    radius = {tier: count for tier, count in snapshot.lineage.blast_radius.items() if count}
    if radius:
        counted = ", ".join(
            f"{text(tier.value)}: {count}" for tier, count in sorted(radius.items())
        )
        lines.append(f"- Blast radius downstream: {counted}.")
    incident = snapshot.incident
    if incident is not None:
        lines.append(
            f"- Incident {text(incident.id)} ({text(incident.severity.value)}, {text(incident.state.value)}) "
            f"opened {when(incident.opened_at)}: {text(incident.title)}"
        )
        if incident.group is not None:
            lines.append(
                f"- Shared cause suspected: {len(incident.model_ids)} models of {text(incident.group.label)} "
                f"turned unstable together, since {when(incident.group.started_at)}."
            )
    return lines


def _fallback(snapshot: Snapshot) -> str:
    """The server's words for the fallback (its health included); older snapshots only knew the registry."""
    detail = snapshot.model
    if detail.fallback:
        health = detail.baseline_health
        said = text(detail.fallback)
        return (
            f"**{said}** ({text(health.summary)})"
            if health is not None and not health.healthy
            else said
        )
    baseline = detail.model.baseline_model_id
    return (
        f"baseline {code(baseline)} (its health was not recorded in this snapshot)"
        if baseline
        else "no baseline to fall back to: escalate instead"
    )


def _latest(series: StabilitySeries) -> str:
    bands = series.bands
    shown = f"- Over the last {text(series.window.value)}:"
    latest = next(
        (point for point in reversed(series.points) if point.calibration is not None), None
    )
    if latest is None:
        return f"{shown} no bucket with data."
    unstable = sum(1 for point in series.points if point.health.value == "unstable")
    return (
        f"{shown} {unstable} of {len(series.points)} buckets unstable; latest with data "
        f"({when(latest.start)}): calibration {_ratio(latest.calibration)} "
        f"(healthy {bands.calibration_low:g} to {bands.calibration_high:g}), "
        f"NE {_ratio(latest.normalized_entropy)} (healthy up to {bands.ne_max:g})."
    )


def _done(snapshot: Snapshot) -> list[str]:
    lines = []
    for record in sorted(snapshot.audit, key=lambda item: (item.at, item.id)):
        lines.append(
            f"- {when(record.at)} {text(record.actor, 100)} ({text(record.role.value)}): "
            f"**{text(record.action, 40)}**{_change(record)}"
            + (f"; reason: {text(record.reason)}" if record.reason else "")
        )
    return lines


def _change(record: AuditRecord) -> str:
    before, after = record.before, record.after
    if before is None or after is None or before == after:
        return ""
    parts = []
    if before.serving_model_id != after.serving_model_id:
        parts.append(f"serving {code(before.serving_model_id)} to {code(after.serving_model_id)}")
    if before.traffic_share != after.traffic_share:
        parts.append(f"traffic {_percent(before.traffic_share)} to {_percent(after.traffic_share)}")
    if before.launch_halted != after.launch_halted:
        parts.append("launch halted")
    if before.experiment_ended != after.experiment_ended:
        parts.append("experiment ended")
    return f" ({'; '.join(parts)})" if parts else ""


def _open(snapshot: Snapshot) -> list[str]:
    detail, incident = snapshot.model, snapshot.incident
    live = detail.live
    lines = []
    if incident is None:
        lines.append("- No incident is attached to this snapshot.")
    elif incident.state is IncidentState.RESOLVED:
        lines.append(f"- Incident {text(incident.id)} is resolved.")
    else:
        state = (
            f"acknowledged by {text(incident.acknowledged_by or 'someone', 100)}"
            if incident.state is IncidentState.ACKNOWLEDGED
            else "open and NOT acknowledged"
        )
        lines.append(f"- Incident {text(incident.id)} is {state}.")
        others = [model_id for model_id in incident.model_ids if model_id != detail.model.id]
        if others:
            lines.append(
                f"- Also in the incident: {', '.join(code(model_id) for model_id in others)}."
            )
    serving = "itself" if live.serving_model_id == detail.model.id else code(live.serving_model_id)
    lines.append(
        f"- Traffic: {_percent(live.traffic_share)} share, served by {serving}; launch phase "
        f"{text(live.launch_phase.value)}{', halted' if live.launch_halted else ''}"
        f"{', experiment ended' if live.experiment_ended else ''}."
    )
    if detail.slo.alerts:
        lines.append(f"- {len(detail.slo.alerts)} alert(s) still firing at export.")
    return lines


def _notes(snapshot: Snapshot) -> list[str]:
    """Incident notes, and notes left on the model outside any incident (kept only in the audit log)."""
    notes = [
        (note.at, note.author, note.text)
        for note in (snapshot.incident.notes if snapshot.incident else [])
    ]
    notes += [
        (record.at, record.actor, record.detail["text"])
        for record in snapshot.audit
        if record.action == "note"
        and record.incident_id is None
        and isinstance(record.detail.get("text"), str)
    ]
    return [
        f"- {when(at)} {text(author, 100)}: {text(body)}"
        for at, author, body in sorted(notes, key=lambda n: n[0])
    ]
