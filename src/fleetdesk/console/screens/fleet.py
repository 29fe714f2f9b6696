"""The start screen: every model, worst first, filterable as you type."""

from __future__ import annotations

import asyncio
from collections import deque

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Input, Static

from fleetdesk.client import FleetdeskClient, FleetdeskError, PageRequest
from fleetdesk.console.fleet_filter import split
from fleetdesk.console.messages import LiveEvent
from fleetdesk.console.screens.base import ConsoleScreen
from fleetdesk.console.widgets.common.footer import KeyFooter
from fleetdesk.console.widgets.common.status import StatusLine
from fleetdesk.console.widgets.fleet.row import grouped, shared
from fleetdesk.console.widgets.fleet.summary import FleetCounts
from fleetdesk.console.widgets.fleet.table import FleetTable
from fleetdesk.wire import (
    Attention,
    BucketClosedData,
    IncidentEventData,
    IncidentState,
    ModelRow,
    ModelRows,
    RegistryEventData,
    SloChangedData,
    Tier,
)

PAGE_SIZE = 5000
"""Rows a page of the fleet brings: 50,000 models in 11 calls (with the first page)."""
PAGES_AHEAD = 2
"""Pages asked for while one is read: the server builds the next while the console reads one."""
FIRST_PAGE = 100
"""The first load starts with this many (more than a tall terminal's screenful): the worst models show at once."""


def ask_first_page(client: FleetdeskClient) -> asyncio.Task[ModelRows]:
    """The fleet's first page, asked for before the fleet screen is built: building it takes tens of ms at
    start, which the request overlaps instead of following. The screen's first poll takes the answer."""
    return asyncio.create_task(client.fleet_rows(page=PageRequest(limit=FIRST_PAGE)))


class FleetScreen(ConsoleScreen):
    """All models; Enter opens one."""

    AUTO_FOCUS = "FleetTable"

    class Fetched(Message):
        """Models fetched, worst first: the whole fleet, or the first page of the first load."""

        def __init__(self, rows: list[ModelRow], total: int, complete: bool = True) -> None:
            super().__init__()
            self.rows = rows
            self.total = total
            self.complete = complete

    BINDINGS = [
        # A priority binding runs as the app reads the key, before it hands the keys behind it to the table:
        # over a slow link "/" and the words typed after it arrive in one read, and all belong in the filter.
        Binding(
            "slash",
            "filter",
            "Filter",
            id="filter",
            priority=True,
            tooltip="Filter as you type: id, type words, team, t0-t4, page/ticket/unstable/ok.",
        ),
        Binding(
            "escape",
            "clear_filter",
            "Clear",
            id="clear-filter",
            tooltip="Clear the filter and go back to the table.",
        ),
        Binding(
            "enter", "open", "Open", id="open-model", tooltip="Open the selected model.", show=True
        ),
        Binding(
            "p",
            "worst_page",
            "Worst page",
            id="worst-page",
            tooltip="Move the cursor to the worst paging model (clearing a filter that hides it).",
        ),
        *[
            Binding(
                str(n + 1),
                f"tier({n})",
                f"TIER{n}",
                id=f"tier-{n}",
                show=False,
                tooltip=f"Show only TIER{n} models (press again for all).",
            )
            for n in range(5)
        ],
        Binding(
            "R",
            "reload",
            "Reload",
            id="reload",
            tooltip="Fetch the whole fleet again now.",
            show=False,
        ),
    ]

    def __init__(self, first_page: asyncio.Task[ModelRows] | None = None) -> None:
        super().__init__()
        self._first_page = first_page
        """The first page, already asked for (ask_first_page)."""
        self._tier: Tier | None = None
        self._loaded = False
        self._counts_pending = False
        self._pending: dict[str, ModelRow] = {}
        """Live changes that arrived while another screen was on top."""
        self._pending_fleet: list[ModelRow] | None = None
        self._first_page_shown = asyncio.Event()
        self._poll_timer: Timer | None = None
        self._refetch_pending = False
        """A registry change asked for the fleet again; one fetch answers a burst of them."""

    def compose(self) -> ComposeResult:
        glyphs = self.console.glyphs
        yield Static("fleetdesk · fleet", id="title")
        yield FleetCounts(id="counts")
        with Horizontal(id="filter-bar"):
            yield Static("/", id="filter-label")
            yield Input(
                placeholder="filter: id, type words, team, t0-t4, page/unstable/ok", id="filter"
            )
        yield FleetTable(glyphs, hold_seconds=self.console.settings.cursor_hold_seconds, id="fleet")
        yield StatusLine(id="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#filter-bar").display = False
        self.query_one(FleetTable).focus()
        self.query_one(StatusLine).say("loading the fleet…")
        self.poll_fleet()

    def on_unmount(self) -> None:
        if self._first_page is not None:  # the console closed before its first poll took it
            self._first_page.cancel()

    # --- data -----------------------------------------------------------------

    @work(exclusive=True, group="fleet-poll", exit_on_error=False)
    async def poll_fleet(self) -> None:
        """Fetch every model, page by page; the next poll is scheduled when this one has finished."""
        client = self.console.client
        rows: list[ModelRow] = []
        first_load = not self._loaded
        ahead: deque[asyncio.Task[ModelRows]] = deque()
        asked: int | None = None  # the offset the next page asked for starts at
        try:
            while True:
                if self._first_page is not None:
                    first, self._first_page = self._first_page, None
                    page = await first
                elif ahead:
                    page = await ahead.popleft()
                else:
                    limit = FIRST_PAGE if first_load else PAGE_SIZE
                    page = await client.fleet_rows(page=PageRequest(limit=limit))
                asked = len(page.rows) if asked is None else asked
                more = bool(page.rows) and len(rows) + len(page.rows) < page.total
                while more and len(ahead) < PAGES_AHEAD and asked < page.total:
                    # Asked for before this page becomes rows (and, the first time, is painted): the server
                    # builds the next pages meanwhile, and always has one to build.
                    ahead.append(
                        asyncio.create_task(
                            client.fleet_rows(page=PageRequest(offset=asked, limit=PAGE_SIZE))
                        )
                    )
                    asked += PAGE_SIZE
                rows.extend(map(shared, page.rows))
                if not more:
                    break
                if first_load and len(rows) == len(page.rows):
                    self.post_message(self.Fetched(list(rows), page.total, complete=False))
                    # Parsing the next page blocks the loop for a while: let the worst models paint first.
                    await self._first_page_shown.wait()
        except FleetdeskError:
            self.console.read_failed()
            raise
        finally:
            for task in ahead:  # a newer poll replaced this one, or a page failed
                task.cancel()
            self._schedule_next_poll()
        self.post_message(self.Fetched(rows, len(rows)))

    def _schedule_next_poll(self) -> None:
        # One timer at a time: a poll started out of turn (a reload, a registry change) replaces the next one
        # instead of starting a second chain of polls.
        if self._poll_timer is not None:
            self._poll_timer.stop()
        self._poll_timer = self.set_timer(self.console.settings.poll_seconds, self._next_poll)

    def _next_poll(self) -> None:
        if isinstance(self.app.screen, ModalScreen):
            # Paused while a dialog is open: the engineer is deciding on the data they see.
            self._schedule_next_poll()
            return
        self.poll_fleet()

    def _refetch_once(self) -> None:
        self._refetch_pending = False
        self.poll_fleet()

    def on_fleet_screen_fetched(self, message: Fetched) -> None:
        self.call_after_refresh(self.console.start_live)
        if not message.complete:
            if not self._loaded and self.app.screen is self:
                self.query_one(FleetTable).set_models(message.rows)
                self.query_one(StatusLine).say(
                    f"loading the fleet… {len(message.rows)} of {message.total}"
                )
                self.call_after_refresh(self._first_page_shown.set)
            else:
                self._first_page_shown.set()
            return
        self.console.data_arrived()
        if self.app.screen is not self:
            # Hidden under another screen: painting here would repaint that screen too. Apply on return.
            self._pending_fleet, self._pending = message.rows, {}
            return
        table = self.query_one(FleetTable)
        table.set_models(message.rows)
        if not self._loaded:
            self.query_one(StatusLine).say("")
        self._loaded = True
        self._show_counts()

    def on_screen_resume(self) -> None:
        if self._pending_fleet is not None:
            self.post_message(self.Fetched(self._pending_fleet, len(self._pending_fleet)))
            self._pending_fleet = None
        table = self.query_one(FleetTable)
        for row in self._pending.values():
            table.update_model(row)
        if self._pending:
            self._schedule_counts()
        self._pending = {}

    def _current(self, model_id: str) -> ModelRow | None:
        """A model as last known, changes not yet drawn included."""
        return self._pending.get(model_id) or self.query_one(FleetTable).models.get(model_id)

    def on_live_event(self, message: LiveEvent) -> None:
        # Actions change a model's live serving state, which the fleet view does not show: their SLO and
        # incident events, which it does, follow as their own events. A closed bucket brings the row's
        # calibration and NE at once (not at the next poll, up to half a minute after the page).
        data = message.update.data
        if isinstance(data, RegistryEventData):
            # A model created, retired, or changed in what the row shows or where it sorts (its tier): the
            # fleet is fetched again, once for a whole apply's burst of events.
            if not self._refetch_pending:
                self._refetch_pending = True
                self.call_later(self._refetch_once)
            return
        changed: list[ModelRow] = []
        if isinstance(data, BucketClosedData) and (row := self._current(data.model_id)) is not None:
            changed.append(
                row._replace(
                    health=data.health,
                    calibration=data.calibration,
                    normalized_entropy=data.normalized_entropy,
                )
            )
        elif isinstance(data, SloChangedData) and (row := self._current(data.model_id)) is not None:
            changed.append(
                row._replace(
                    health=data.health,
                    attention=data.attention,
                    budget_remaining=data.budget_remaining,
                )
            )
        elif isinstance(data, IncidentEventData):
            incident = data.incident
            open_id = incident.id if incident.state is not IncidentState.RESOLVED else None
            for model_id in incident.model_ids:
                row = self._current(model_id)
                if row is not None and (open_id is not None or row.open_incident_id == incident.id):
                    changed.append(
                        row._replace(
                            open_incident_id=open_id,
                            **grouped(incident.group if open_id is not None else None),
                        )
                    )
        if self.app.screen is not self:
            self._pending.update((row.id, row) for row in changed)
            return
        table = self.query_one(FleetTable)
        for row in changed:
            table.update_model(row)
        if changed:
            self._schedule_counts()

    def _schedule_counts(self) -> None:
        """Recount once per burst of events, not once per event (1,200 models a count)."""
        if not self._counts_pending:
            self._counts_pending = True
            self.call_later(self._show_counts)

    def restyle(self) -> None:
        self.call_after_refresh(self.query_one(FleetTable).restyle)

    def _show_counts(self) -> None:
        self._counts_pending = False
        table = self.query_one(FleetTable)
        table.settle()  # a re-sort the table has scheduled happens first: the count is of the rows drawn
        self.query_one(FleetCounts).show_counts(
            table.models.values(), table.row_count, version=table.data_version
        )

    # --- filter ---------------------------------------------------------------

    def _words(self) -> list[str]:
        words = split(self.query_one("#filter", Input).value)
        if self._tier is not None:
            words.append(f"t{self._tier.rank}")
        return words

    @on(Input.Changed, "#filter")
    def _filter_changed(self) -> None:
        self.query_one(FleetTable).set_filter(self._words())
        self._show_counts()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.query_one(FleetTable).focus()

    def action_filter(self) -> None:
        self.query_one("#filter-bar").display = True
        # At once (focus() would wait behind the keys already queued: those typed right after "/").
        self.set_focus(self.query_one("#filter", Input))

    def action_clear_filter(self) -> None:
        field = self.query_one("#filter", Input)
        field.value = ""
        self._tier = None
        self.query_one("#filter-bar").display = False
        self.query_one(FleetTable).set_filter(self._words())
        self.query_one(FleetTable).focus()
        self._show_counts()
        self.refresh_bindings()  # Esc no longer clears anything (the focus may not have moved to say so)

    def action_tier(self, rank: int) -> None:
        tier = Tier(f"TIER{rank}")
        self._tier = None if self._tier is tier else tier
        self.query_one(FleetTable).set_filter(self._words())
        self._show_counts()
        label = f"only {tier}" if self._tier else "all tiers"
        self.query_one(StatusLine).say(label)

    def action_reload(self) -> None:
        self.poll_fleet()

    def refetch(self) -> None:
        self.poll_fleet()

    def action_open(self) -> None:
        model_id = self.query_one(FleetTable).selected_id()
        if model_id is not None:
            self.open_model(model_id)

    def on_fleet_table_opened(self, message: FleetTable.Opened) -> None:
        self.open_model(message.model_id)

    def on_fleet_table_new_worst_page(self, message: FleetTable.NewWorstPage) -> None:
        where = (
            "Enter opens it" if message.followed else "p goes to it"
        )  # the cursor is on it, or stayed
        model = self.query_one(FleetTable).models.get(message.model_id)
        what = "ticket" if model is not None and model.attention is Attention.TICKET else "page"
        self.query_one(StatusLine).say(f"new {what}: {message.model_id} ({where})", warning=True)

    def action_worst_page(self) -> None:
        table = self.query_one(FleetTable)
        worst = table.worst_page()
        if worst is None:
            self.query_one(StatusLine).say("nothing is paging")
            return
        if not table.select(worst):  # hidden by the filter: the page matters more than the filter
            self.action_clear_filter()
            table.select(worst)
        table.focus()
        self.query_one(StatusLine).say(f"worst page: {worst} (Enter opens it)")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_filter" and self.is_mounted:
            return bool(
                self.query_one("#filter", Input).value
                or self._tier
                or self.query_one("#filter-bar").display
            )
        return True
