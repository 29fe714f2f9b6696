"""An incident's timeline with its notes, oldest first, times absolute and relative."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text

from fleetdesk.console.widgets.common.quiet import QuietStatic
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import IncidentDetail


def ago(moment: datetime, now: datetime) -> str:
    seconds = max(0, int((now - moment).total_seconds()))
    if seconds < 60:
        return f"{seconds}s ago"
    if seconds < 3600:
        return f"{seconds // 60}m ago"
    if seconds < 86400:
        return f"{seconds // 3600}h ago"
    return f"{seconds // 86400}d ago"


def timeline_text(incident: IncidentDetail | None, now: datetime | None, limit: int | None = None) -> Text:
    """The incident as plain Text: a heading, then one line per timeline entry."""
    text = Text()
    if incident is None:
        text.append("no open incident", style="italic")
        return text
    text.append(f"incident #{incident.id} ", style="bold")
    text.append(f"{incident.state} · {incident.severity} · {sanitize(incident.title)}")
    if incident.acknowledged_by:
        text.append(f" · acked by {sanitize(incident.acknowledged_by)}")
    if len(incident.model_ids) > 1:
        text.append(f" · {len(incident.model_ids)} models")
    entries = incident.timeline if limit is None else incident.timeline[-limit:]
    if limit is not None and len(incident.timeline) > limit:
        text.append(f"\n  … {len(incident.timeline) - limit} earlier (i: whole incident)", style="italic")
    for entry in entries:
        when = entry.at.strftime("%m-%d %H:%M")
        relative = f" ({ago(entry.at, now)})" if now is not None else ""
        text.append(f"\n  {when}{relative} ", style="dim")
        text.append(f"{entry.kind:<8} ", style="bold")
        who = sanitize(entry.actor) if entry.actor else "server"
        text.append(f"{who}: {sanitize(entry.text)}")
    return text


class IncidentTimeline(QuietStatic):
    DEFAULT_CSS = """
    IncidentTimeline { height: auto; padding: 0 1; }
    """

    def show(self, incident: IncidentDetail | None, now: datetime | None, limit: int | None = 8) -> None:
        self.show_text(timeline_text(incident, now, limit))
