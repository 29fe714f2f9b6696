"""A model's registry record read whole: the model view cuts long data-borne text to keep the charts on screen."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from fleetdesk.console.glyphs import Glyphs
from fleetdesk.console.widgets.model.context import ModelContext
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import Lineage, ModelDetail


class RecordScreen(ModalScreen[None]):
    """Every field of the record uncut, in a body that scrolls; Esc closes."""

    BINDINGS = [
        Binding("escape,p,q", "close", "Close", id="record-close", tooltip="Close the record."),
    ]
    AUTO_FOCUS = "#record-body"  # arrows and page keys scroll a long purpose

    def __init__(self, detail: ModelDetail, lineage: Lineage | None, glyphs: Glyphs) -> None:
        super().__init__()
        self.detail = detail
        self.lineage = lineage
        self.glyphs = glyphs

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog record", id="record-body"):
            yield Static(
                f"Record: {sanitize(self.detail.model.id, limit=80)}",
                classes="dialog-title",
                markup=False,
            )
            yield ModelContext(id="record")
            yield Static("Esc closes · arrows and PgUp/PgDn scroll", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one(ModelContext).show(self.detail, self.lineage, self.glyphs, whole=True)

    def action_close(self) -> None:
        self.dismiss(None)
