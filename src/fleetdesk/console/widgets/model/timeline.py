"""An incident's timeline with its notes, oldest first, times absolute and relative.

What people did (actions, acks, notes) is drawn bold; what the server said is dim, and a server line the
server repeated (``repeats``) is one line with its count and the last time, so at 2am the actions and
notes are what the eye finds.
"""

from __future__ import annotations

from datetime import datetime

from rich.text import Text

from fleetdesk.console.widgets.common.quiet import QuietStatic
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import IncidentDetail, TimelineEntry

PERSON_KINDS = frozenset({"action", "ack", "note"})


def ago(moment: datetime, now: datetime) -> str:
    seconds = max(0, int((now - moment).total_seconds()))
    if seconds < 60:
        return f"{seconds}s ago"
    if seconds < 3600:
        return f"{seconds // 60}m ago"
    if seconds < 86400:
        return f"{seconds // 3600}h ago"
    return f"{seconds // 86400}d ago"


def timeline_text(
    incident: IncidentDetail | None,
    now: datetime | None,
    limit: int | None = None,
    between: Text | None = None,
) -> Text:
    """The incident as plain Text: a heading, ``between`` (its members, say), then one line per timeline entry."""
    text = Text()
    if incident is None:
        text.append("no open incident", style="italic")
        return text
    text.append(f"incident #{incident.id} ", style="bold")
    text.append(f"{incident.state} · {incident.severity} · {sanitize(incident.title)}")
    if incident.acknowledged_by:
        text.append(f" · acked by {sanitize(incident.acknowledged_by)}")
    if incident.group is not None:
        text.append(f" · since {incident.group.started_at:%m-%d %H:%M}")
    if len(incident.model_ids) > 1:
        text.append(f" · {len(incident.model_ids)} models")
    if between is not None:
        text.append("\n")
        text.append_text(between)
        text.append("\ntimeline", style="bold")
    entries = incident.timeline if limit is None else incident.timeline[-limit:]
    if limit is not None and len(incident.timeline) > limit:
        text.append(
            f"\n  … {len(incident.timeline) - limit} earlier (i: whole incident)", style="italic"
        )
    for entry in entries:
        entry_line(text, entry, now)
    return text


def entry_line(text: Text, entry: TimelineEntry, now: datetime | None) -> None:
    """One timeline entry on its own line: a person's bold, the server's dim, repeats counted."""
    when = entry.at.strftime("%m-%d %H:%M")
    relative = f" ({ago(entry.at, now)})" if now is not None else ""
    person = entry.kind in PERSON_KINDS
    text.append(f"\n  {when}{relative} ", style="dim")
    text.append(f"{entry.kind:<8} ", style="bold" if person else "")
    who = sanitize(entry.actor) if entry.actor else "server"
    text.append(f"{who}: {sanitize(entry.text)}", style="bold" if person else "dim")
    if entry.repeats > 1:
        last = f", last {entry.last_at:%H:%M}" if entry.last_at is not None else ""
        text.append(f"  ({entry.repeats} times{last})", style="bold")


class IncidentTimeline(QuietStatic):
    DEFAULT_CSS = """
    IncidentTimeline { height: auto; padding: 0 1; }
    """

    def show(
        self, incident: IncidentDetail | None, now: datetime | None, limit: int | None = 8
    ) -> None:
        self.show_text(timeline_text(incident, now, limit))
