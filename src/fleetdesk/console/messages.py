"""Typed messages that background workers post; handlers, not workers, touch widgets."""

from __future__ import annotations

from textual.message import Message
from textual.screen import Screen

from fleetdesk.client import ActionIntent, EventUpdate
from fleetdesk.wire import (
    ActionResult,
    AuditPage,
    IncidentDetail,
    Lineage,
    ModelDetail,
    StabilitySeries,
)


class LiveEvent(Message, bubble=False):
    """A server event from the live feed, broadcast to every screen.

    It must not bubble: a copy posted to a screen would come back to the app,
    which would broadcast it again, forever.
    """

    def __init__(self, update: EventUpdate) -> None:
        super().__init__()
        self.update = update


class LinkChanged(Message):
    """The connection state or data age changed; status lines re-read app.link."""


class ModelLoaded(Message):
    """Everything the model view shows, fetched together."""

    def __init__(
        self,
        detail: ModelDetail,
        lineage: Lineage,
        series: StabilitySeries,
        incident: IncidentDetail | None,
    ) -> None:
        super().__init__()
        self.detail = detail
        self.lineage = lineage
        self.series = series
        self.incident = incident


class ModelViewFetched(Message):
    """A model's view fetched whole, for the screen that asked to open it."""

    def __init__(self, loaded: ModelLoaded, opener: Screen) -> None:
        super().__init__()
        self.loaded = loaded
        self.opener = opener


class SeriesLoaded(Message):
    def __init__(self, series: StabilitySeries) -> None:
        super().__init__()
        self.series = series


class PreviewReady(Message):
    """The server's dry run of an intent, ready for the confirmation dialog."""

    def __init__(self, intent: ActionIntent, preview: ActionResult) -> None:
        super().__init__()
        self.intent = intent
        self.preview = preview


class ActionDone(Message):
    def __init__(self, intent: ActionIntent, result: ActionResult) -> None:
        super().__init__()
        self.intent = intent
        self.result = result


class AuditLoaded(Message):
    def __init__(self, page: AuditPage) -> None:
        super().__init__()
        self.page = page


class IncidentLoaded(Message):
    def __init__(self, incident: IncidentDetail) -> None:
        super().__init__()
        self.incident = incident
