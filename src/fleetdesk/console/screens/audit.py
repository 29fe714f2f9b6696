"""A model's audit log, newest first: who did what, when, why, and what changed."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from fleetdesk.client import PageRequest
from fleetdesk.console.messages import AuditLoaded, LiveEvent
from fleetdesk.console.outcomes import live_state_words
from fleetdesk.console.screens.base import ConsoleScreen
from fleetdesk.console.widgets.common.footer import KeyFooter
from fleetdesk.console.widgets.common.status import StatusLine
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import ActionEventData, AuditRecord, RegistryEventData

AUDIT_PAGE = 200


def change_words(record: AuditRecord) -> str:
    fields = record.detail.get("fields")
    if (
        isinstance(fields, list) and fields
    ):  # a registry change: the record's fields, before and after
        return "; ".join(
            f"{f.get('field')}: {f.get('before')} -> {f.get('after')}"
            for f in fields
            if isinstance(f, dict)
        )
    if record.before is None or record.after is None or record.before == record.after:
        return ""
    return f"{live_state_words(record.before)} -> {live_state_words(record.after)}"


_COLUMNS = (
    ("when", "at"),
    ("actor", "actor"),
    ("action", "action"),
    ("reason", "reason"),
    ("change", "change"),
)


def _cells(record: AuditRecord) -> tuple[Text, ...]:
    return (
        Text(f"{record.at:%m-%d %H:%M:%S}"),
        Text(f"{sanitize(record.actor)} ({record.role})"),
        Text(record.action),
        Text(sanitize(record.reason, limit=60)),
        Text(sanitize(change_words(record), limit=80)),
    )


class AuditScreen(ConsoleScreen):
    BINDINGS = [
        Binding(
            "escape,backspace", "back", "Back", id="back", tooltip="Back to the previous screen."
        ),
        Binding("R", "reload", "Reload", id="reload", tooltip="Fetch the audit log again."),
    ]

    def __init__(self, model_id: str) -> None:
        super().__init__()
        self.model_id = model_id
        self.records: list[AuditRecord] = []

    def compose(self) -> ComposeResult:
        yield Static(
            Text(f"fleetdesk · audit log · {sanitize(self.model_id, limit=80)}"), id="title"
        )
        yield DataTable(id="audit", cursor_type="row")
        yield StatusLine(id="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._set_columns([])
        self.load()

    def _set_columns(self, rows: list[tuple[Text, ...]]) -> None:
        """Columns as wide as the widest cell of this page (or the header).

        Set before the rows, never left to DataTable's own measuring: that runs when the table next idles,
        and a paint in between (under load) caches the cells at their header widths for good (Textual's
        cell cache is not keyed by width), so "admin (admin)" stayed "admin".
        """
        table = self.query_one(DataTable)
        table.clear(columns=True)
        for index, (label, key) in enumerate(_COLUMNS):
            width = max([len(label), *(row[index].cell_len for row in rows)])
            table.add_column(label, key=key, width=width)

    @work(exclusive=True, group="audit-load", exit_on_error=False)
    async def load(self) -> None:
        page = await self.console.client.audit(
            model_id=self.model_id, page=PageRequest(limit=AUDIT_PAGE)
        )
        self.post_message(AuditLoaded(page))

    def on_audit_loaded(self, message: AuditLoaded) -> None:
        self.records = list(message.page.items)
        rows = [_cells(record) for record in self.records]
        self._set_columns(rows)
        table = self.query_one(DataTable)
        for record, row in zip(self.records, rows, strict=True):
            table.add_row(*row, key=str(record.id))
        if not self.records:
            self.query_one(StatusLine).say("no audit records for this model yet")
        else:
            self.query_one(StatusLine).say(f"{message.page.total} record(s)")

    def on_live_event(self, message: LiveEvent) -> None:
        data = message.update.data
        if isinstance(data, ActionEventData) and data.audit.model_id == self.model_id:
            self.load()
        elif (
            isinstance(data, RegistryEventData)
            and data.change is not None
            and data.change.model_id == self.model_id
        ):
            self.load()

    def action_reload(self) -> None:
        self.load()
