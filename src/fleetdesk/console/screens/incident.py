"""An incident's whole timeline, its members and their state, and its notes."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from fleetdesk.console.glyphs import Glyphs
from fleetdesk.console.messages import IncidentLoaded, LiveEvent
from fleetdesk.console.screens.base import ConsoleScreen
from fleetdesk.console.widgets.common.footer import KeyFooter
from fleetdesk.console.widgets.common.status import StatusLine
from fleetdesk.console.widgets.model.timeline import timeline_text
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import IncidentDetail, IncidentEventData


def members_text(incident: IncidentDetail, glyphs: Glyphs) -> Text:
    """Every model of the incident with its state now, worst first (the heading above says what groups them)."""
    text = Text(f"members ({len(incident.members)})", style="bold")
    for member in sorted(
        incident.members, key=lambda m: (m.attention.rank, m.tier.rank, m.model_id)
    ):
        joined = f"  joined {member.joined_at:%H:%M}" if member.joined_at is not None else ""
        left = "" if member.open else "  (no longer in it)"
        text.append(f"\n  {glyphs.attention[member.attention]:<10} {member.tier.value}  ")
        text.append(sanitize(member.model_id), style="bold")
        text.append(f"  {member.stage}  {sanitize(member.owner_team)}{joined}{left}", style="dim")
    return text


class IncidentScreen(ConsoleScreen):
    BINDINGS = [
        Binding(
            "escape,backspace", "back", "Back", id="back", tooltip="Back to the previous screen."
        ),
        Binding("R", "reload", "Reload", id="reload", tooltip="Fetch the incident again."),
    ]

    def __init__(self, incident_id: int) -> None:
        super().__init__()
        self.incident_id = incident_id

    def compose(self) -> ComposeResult:
        yield Static(f"fleetdesk · incident #{self.incident_id}", id="title")
        with VerticalScroll(id="incident-body"):
            yield Static(id="timeline")
            yield Static(id="notes")
        yield StatusLine(id="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.load()

    @work(exclusive=True, group="incident-load", exit_on_error=False)
    async def load(self) -> None:
        incident = await self.console.client.incident(self.incident_id)
        self.post_message(IncidentLoaded(incident))

    def on_incident_loaded(self, message: IncidentLoaded) -> None:
        incident = message.incident
        now = self.console.server_now()
        # Who is in it and how each stands, before the story of how it got there.
        # (A handoff from before incidents listed their members has none to show.)
        members = members_text(incident, self.console.glyphs) if incident.members else None
        self.query_one("#timeline", Static).update(timeline_text(incident, now, between=members))
        notes = Text("\nnotes\n", style="bold")
        if not incident.notes:
            notes.append("  none\n", style="italic")
        for note in incident.notes:
            notes.append(f"  {note.at:%m-%d %H:%M} ", style="dim")
            notes.append(f"{sanitize(note.author)}: {sanitize(note.text)}\n")
        self.query_one("#notes", Static).update(notes)

    def on_live_event(self, message: LiveEvent) -> None:
        data = message.update.data
        if isinstance(data, IncidentEventData) and data.incident.id == self.incident_id:
            self.load()

    def action_reload(self) -> None:
        self.load()
