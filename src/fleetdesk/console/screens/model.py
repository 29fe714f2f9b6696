"""One model: registry context, stability charts, SLO, incident; playbook actions one key away.

At 120 columns and more the record, the charts and the SLO and incident panels all show. Below the wide
breakpoint (app.tcss) the same screen answers at 80x24 without scrolling: the record in four lines, the two
charts side by side, the SLO in one line; ``p`` shows the record whole and ``i`` the incident.
"""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Static
from textual.worker import Worker

from fleetdesk.console.messages import LiveEvent, ModelLoaded, SeriesLoaded
from fleetdesk.console.model_view import fetch_model_view
from fleetdesk.console.screens.action_keys import ACTION_KEYS, ActionKeys, playbook_kind
from fleetdesk.console.widgets.common.footer import KeyFooter
from fleetdesk.console.widgets.common.status import StatusLine
from fleetdesk.console.widgets.model.chart import CALIBRATION, NE, StabilityChart
from fleetdesk.console.widgets.model.context import CompactContext, ModelContext
from fleetdesk.console.widgets.model.slo_line import SloLine
from fleetdesk.console.widgets.model.slo_panel import SloPanel
from fleetdesk.console.widgets.model.tasks import TaskList
from fleetdesk.console.widgets.model.timeline import IncidentTimeline
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import (
    ActionEventData,
    BucketClosedData,
    IncidentDetail,
    IncidentEventData,
    Lineage,
    ModelDetail,
    RegistryEventData,
    SloChangedData,
    StabilitySeries,
    Window,
)

NAVIGATION = (
    "open_baseline",
    "open_holdout",
    "open_upstream",
    "incident",
    "compare_holdout",
    "record",
)
WINDOWS = list(Window)


class ModelScreen(ActionKeys):
    """A model's page; Esc goes back to the fleet."""

    BINDINGS = [
        Binding(
            "escape,backspace", "back", "Back", id="back", tooltip="Back to the previous screen."
        ),
        *(key.binding() for key in ACTION_KEYS),
        Binding(
            "w",
            "next_window",
            "Window",
            id="next-window",
            tooltip="Next chart window: 1h, 6h, 24h, 7d, 28d.",
        ),
        *[
            Binding(
                str(i + 1),
                f"window({i})",
                window.value,
                id=f"window-{window.value}",
                show=False,
                tooltip=f"Charts over the last {window.value}.",
            )
            for i, window in enumerate(WINDOWS)
        ],
        Binding(
            "b",
            "open_baseline",
            "Baseline",
            id="open-baseline",
            tooltip="Open the baseline model.",
            show=False,
        ),
        Binding(
            "o",
            "open_holdout",
            "Holdout",
            id="open-holdout",
            tooltip="Open the holdout model.",
            show=False,
        ),
        Binding(
            "u",
            "open_upstream",
            "Upstream",
            id="open-upstream",
            tooltip="Open the nearest upstream (foundation) model.",
            show=False,
        ),
        Binding(
            "c",
            "compare_holdout",
            "Holdout overlay",
            id="compare-holdout",
            show=False,
            tooltip="Overlay the holdout on the charts as well as the baseline, with its gap as numbers (again: off).",
        ),
        Binding(
            "i",
            "incident",
            "Incident",
            id="open-incident",
            tooltip="The open incident's whole timeline and notes.",
        ),
        Binding("l", "audit", "Audit", id="audit-log", tooltip="This model's audit log."),
        Binding(
            "p",
            "record",
            "Record",
            id="model-record",
            show=False,
            tooltip="The registry record whole: purpose, justification and attributes uncut.",
        ),
        Binding(
            "t",
            "next_task",
            "Task",
            id="next-task",
            show=False,
            tooltip="Chart the next task of a multi-task model (after the last: the whole model).",
        ),
    ]

    def __init__(
        self, model_id: str, loaded: ModelLoaded | None = None, behind: bool = False
    ) -> None:
        """``loaded``: the view already fetched (see ConsoleScreen.open_model), else it is fetched on mount;
        ``behind``: live events came while it was fetched, so it is fetched again once shown."""
        super().__init__()
        self.model_id = model_id
        self.window: Window = loaded.series.window if loaded else self.console.chart_window
        self._loaded = loaded
        self._behind = behind
        self.detail: ModelDetail | None = None
        self.lineage: Lineage | None = None
        self.series: StabilitySeries | None = None
        self.incident: IncidentDetail | None = None
        self._load_worker: Worker | None = None
        self._reload_after_load = False
        self._key_states: tuple[str | None, ...] = ()
        self.compare_holdout = False
        """The charts overlay the holdout as well as the baseline."""

    def compose(self) -> ComposeResult:
        glyphs = self.console.glyphs
        yield Static(
            f"fleetdesk · model {sanitize(self.model_id, limit=80)}", id="title", markup=False
        )
        with VerticalScroll(id="model-body"):
            yield ModelContext(id="context")
            yield CompactContext(id="compact-context")
            yield TaskList(id="tasks")
            with Horizontal(id="charts"):
                yield StabilityChart(CALIBRATION, glyphs, id="calibration-chart")
                yield StabilityChart(NE, glyphs, id="ne-chart")
            yield SloLine(id="slo-line")
            with Horizontal(id="lower"):
                yield SloPanel(id="slo")
                with Vertical(id="incident-box"):
                    yield IncidentTimeline(id="incident")
        yield StatusLine(id="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        if self._loaded is not None:
            self.on_model_loaded(self._loaded)
            self._loaded = None
            if self._behind:
                self.reload()
            return
        for context in (self.query_one(ModelContext), self.query_one(CompactContext)):
            context.show_text("loading…")
        self.reload()

    # --- data -----------------------------------------------------------------

    @work(exclusive=True, group="model-load", exit_on_error=False)
    async def load(self) -> None:
        self.post_message(
            await fetch_model_view(self.console, self.model_id, self.window, self.compare_holdout)
        )

    def reload(self) -> None:
        """Load again for a live update; a load in flight finishes first, then one more runs.

        Cancelling it instead (an exclusive restart) starves the page while
        updates come faster than a load takes, as in a compressed drill.
        """
        if self._load_worker is not None and not self._load_worker.is_finished:
            self._reload_after_load = True
            return
        self._load_worker = self.load()

    @work(exclusive=True, group="series-load", exit_on_error=False)
    async def load_series(self) -> None:
        series = await self.console.client.stability(
            self.model_id, self.window, self.compare_holdout, self.query_one(TaskList).chosen
        )
        self.post_message(SeriesLoaded(series))

    def on_model_loaded(self, message: ModelLoaded) -> None:
        if self._reload_after_load:
            self._reload_after_load = False
            self.call_later(self.reload)
        self.detail, self.lineage, self.incident = message.detail, message.lineage, message.incident
        self.console.data_arrived()
        self._show()
        self._show_series(message.series)
        self._refresh_keys()

    def _refresh_keys(self) -> None:
        """Re-check the keys (and so redraw the footer) only when one of them changed state."""
        states = (
            *(self.why_not(key.kind) for key in ACTION_KEYS),
            *map(self.disabled_reason, NAVIGATION),
        )
        if states != self._key_states:
            self._key_states = states
            self.refresh_bindings()

    def on_series_loaded(self, message: SeriesLoaded) -> None:
        self._show_series(message.series)

    def _show(self) -> None:
        if self.detail is None:
            return
        glyphs = self.console.glyphs
        # Both forms are kept current (one is hidden by the breakpoint), so a resize shows the other at once.
        self.query_one(ModelContext).show(self.detail, self.lineage, glyphs)
        self.query_one(CompactContext).show(self.detail, self.lineage, glyphs)
        self.query_one(SloPanel).show(self.detail.slo, not glyphs.braille, self.detail.paging)
        self.query_one(SloLine).show(self.detail, not glyphs.braille)
        self.query_one(TaskList).show(self.detail.tasks, glyphs)
        now = self.console.server_now()
        self.query_one(IncidentTimeline).show(self.incident, now)

    def _show_series(self, series: StabilitySeries) -> None:
        if series.window is not self.window or series.task != self.query_one(TaskList).chosen:
            return  # an answer for a window (or task) the engineer has already left
        self.series = series
        for chart in self.query(StabilityChart):
            chart.set_series(series)

    def restyle(self) -> None:
        self.call_after_refresh(self._restyle)

    def _restyle(self) -> None:
        self._show()
        for chart in self.query(StabilityChart):
            chart.restyle()

    def on_live_event(self, message: LiveEvent) -> None:
        data = message.update.data
        mine = {self.model_id}
        if self.detail is not None:
            mine.update(
                m
                for m in (self.detail.model.baseline_model_id, self.detail.model.holdout_model_id)
                if m
            )
        if isinstance(data, BucketClosedData) and data.model_id in mine:
            self.load_series()  # charts change only when a bucket closes
            if data.model_id == self.model_id and self.detail is not None and self.detail.tasks:
                self.reload()  # so do its tasks' verdicts, even when the model's own stays the same
        elif isinstance(data, SloChangedData) and data.model_id == self.model_id:
            self.reload()
        elif isinstance(data, ActionEventData) and (
            data.result.model_id == self.model_id
            or any(c.model_id == self.model_id for c in data.result.changes)
        ):
            self.reload()
        elif isinstance(data, IncidentEventData) and self.model_id in data.incident.model_ids:
            self.reload()
        elif isinstance(data, RegistryEventData) and (
            (data.change is not None and data.change.model_id in mine)
            or (
                data.type_change is not None
                and self.detail is not None
                and data.type_change.type == self.detail.model.type
            )
        ):
            self.reload()  # its record (tier, purpose, baseline), its baseline's, or its type's changed

    def refetch(self) -> None:
        self.load()

    # --- navigation -----------------------------------------------------------

    def action_next_window(self) -> None:
        self.action_window(WINDOWS.index(self.window) + 1)

    def action_window(self, index: int) -> None:
        self.window = self.console.chart_window = WINDOWS[index % len(WINDOWS)]
        self.query_one(StatusLine).say(f"charts over {self.window}")
        self.load_series()

    def action_next_task(self) -> None:
        self.query_one(TaskList).choose_next(self.console.glyphs)

    def on_task_list_chosen(self, message: TaskList.Chosen) -> None:
        self.query_one(StatusLine).say(f"charts show {message.task or 'the whole model'}")
        self.load_series()

    def action_compare_holdout(self) -> None:
        """Overlay the holdout too (its buckets are fetched only while overlaid: a 28-day series is ~300 KB)."""
        self.compare_holdout = not self.compare_holdout
        for chart in self.query(StabilityChart):
            chart.show_holdout(self.compare_holdout)
        self.query_one(StatusLine).say(
            "charts overlay the holdout too"
            if self.compare_holdout
            else "charts overlay the baseline only"
        )
        if self.compare_holdout:
            self.load_series()

    def _open(self, model_id: str | None) -> None:
        if model_id:
            self.open_model(model_id)

    def action_open_baseline(self) -> None:
        self._open(self.detail.model.baseline_model_id if self.detail else None)

    def action_open_holdout(self) -> None:
        self._open(self.detail.model.holdout_model_id if self.detail else None)

    def action_open_upstream(self) -> None:
        self._open(self.lineage.upstream[0].id if self.lineage and self.lineage.upstream else None)

    def action_incident(self) -> None:
        from fleetdesk.console.screens.incident import IncidentScreen

        if self.detail and self.detail.open_incident_id:
            self.app.push_screen(IncidentScreen(self.detail.open_incident_id))

    def action_record(self) -> None:
        from fleetdesk.console.screens.record import RecordScreen

        if self.detail is not None:
            self.app.push_screen(RecordScreen(self.detail, self.lineage, self.console.glyphs))

    def action_audit(self) -> None:
        from fleetdesk.console.screens.audit import AuditScreen

        self.app.push_screen(AuditScreen(self.model_id))

    # --- which keys apply -----------------------------------------------------

    def disabled_reason(self, action: str) -> str | None:
        """Why a key does nothing right now, in words for the help screen and status line; None when it works."""
        kind = playbook_kind(action)
        if kind is not None:
            return self.why_not(kind)
        detail = self.detail
        if action in NAVIGATION and detail is None:
            return "still loading"
        if action == "open_baseline" and detail and not detail.model.baseline_model_id:
            return "no baseline"
        if (
            action in ("open_holdout", "compare_holdout")
            and detail
            and not detail.model.holdout_model_id
        ):
            return "no holdout"
        if action == "open_upstream" and not (self.lineage and self.lineage.upstream):
            return "no upstream model"
        if action == "incident" and detail and not detail.open_incident_id:
            return "no open incident"
        if action == "next_task" and not (detail and detail.tasks):
            return "not a multi-task model"
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if playbook_kind(action, parameters) is not None:
            return super().check_action(action, parameters)
        return None if self.disabled_reason(action) else True
