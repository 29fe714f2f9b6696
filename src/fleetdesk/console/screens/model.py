"""One model: registry context, stability charts, SLO, incident; playbook actions one key away."""

from __future__ import annotations

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Static
from textual.worker import Worker

from fleetdesk.console.widgets.common.footer import KeyFooter
from fleetdesk.console.screens.base import ConsoleScreen
from fleetdesk.client import ActionIntent, FleetdeskClient, FleetdeskError, NotConfirmed, StaleState
from fleetdesk.console.model_view import fetch_model_view
from fleetdesk.console.messages import ActionDone, LiveEvent, ModelLoaded, PreviewReady, SeriesLoaded
from fleetdesk.console.outcomes import explain, result_words
from fleetdesk.console.screens.confirm import ConfirmAction, Confirmed
from fleetdesk.console.widgets.common.status import StatusLine
from fleetdesk.console.widgets.model.chart import CALIBRATION, NE, StabilityChart
from fleetdesk.console.widgets.model.context import ModelContext
from fleetdesk.console.widgets.model.slo_panel import SloPanel
from fleetdesk.console.widgets.model.timeline import IncidentTimeline
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import (
    ActionEventData,
    ActionResult,
    ActionKind,
    BucketClosedData,
    EscalationTarget,
    Health,
    IncidentDetail,
    IncidentEventData,
    IncidentState,
    LaunchPhase,
    Lineage,
    ModelDetail,
    Role,
    SloChangedData,
    StabilitySeries,
    Window,
)

ACTION_KEYS: dict[str, ActionKind] = {
    "rollback": ActionKind.ROLLBACK,
    "end_experiment": ActionKind.END_EXPERIMENT,
    "escalate": ActionKind.ESCALATE,
    "halt_launch": ActionKind.HALT_LAUNCH,
    "ack": ActionKind.ACK,
    "note": ActionKind.NOTE,
}
"""Screen action name -> playbook action."""

NAVIGATION = ("open_baseline", "open_holdout", "open_upstream", "incident")
WINDOWS = list(Window)
PREVIEW_REASON = "preview"


class ModelScreen(ConsoleScreen):
    """A model's page; Esc goes back to the fleet."""

    BINDINGS = [
        Binding("escape,backspace", "back", "Back", id="back", tooltip="Back to the previous screen."),
        Binding("r", "rollback", "Rollback", id="rollback", tooltip="Roll back to the baseline: its traffic moves to the baseline."),
        Binding("e", "end_experiment", "End exp", id="end-experiment", tooltip="End this experiment: traffic goes back to its baseline."),
        Binding("x", "escalate", "Escalate", id="escalate", tooltip="Page the owning team (or the upstream team when the cause is upstream)."),
        Binding("h", "halt_launch", "Halt", id="halt-launch", tooltip="Halt this launch's scale-up where it is."),
        Binding("a", "ack", "Ack", id="ack", tooltip="Acknowledge the open incident."),
        Binding("n", "note", "Note", id="note", tooltip="Add a note to the incident (or the model)."),
        Binding("w", "next_window", "Window", id="next-window", tooltip="Next chart window: 1h, 6h, 24h, 7d, 28d."),
        *[
            Binding(str(i + 1), f"window({i})", window.value, id=f"window-{window.value}", show=False,
                    tooltip=f"Charts over the last {window.value}.")
            for i, window in enumerate(WINDOWS)
        ],
        Binding("b", "open_baseline", "Baseline", id="open-baseline", tooltip="Open the baseline model.", show=False),
        Binding("o", "open_holdout", "Holdout", id="open-holdout", tooltip="Open the holdout model.", show=False),
        Binding("u", "open_upstream", "Upstream", id="open-upstream", tooltip="Open the nearest upstream (foundation) model.", show=False),
        Binding("i", "incident", "Incident", id="open-incident", tooltip="The open incident's whole timeline and notes."),
        Binding("l", "audit", "Audit", id="audit-log", tooltip="This model's audit log."),
    ]

    def __init__(self, model_id: str, loaded: ModelLoaded | None = None, behind: bool = False) -> None:
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
        self.in_flight: dict[ActionKind, ActionIntent] = {}
        self._load_worker: Worker | None = None
        self._reload_after_load = False
        self.unconfirmed: dict[ActionKind, ActionIntent] = {}
        """Intents whose outcome is unknown (timeout): a retry sends the same one, same key."""
        self._key_states: tuple[str | None, ...] = ()
        self.previews: dict[ActionKind, ActionResult] = {}
        """The last dry run shown per action (shown again when retrying an unconfirmed one)."""

    def compose(self) -> ComposeResult:
        glyphs = self.console.glyphs
        yield Static(f"fleetdesk · model {sanitize(self.model_id, limit=80)}", id="title", markup=False)
        with VerticalScroll(id="model-body"):
            yield ModelContext(id="context")
            with Horizontal(id="charts"):
                yield StabilityChart(CALIBRATION, glyphs, id="calibration-chart")
                yield StabilityChart(NE, glyphs, id="ne-chart")
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
        self.query_one(ModelContext).show_text("loading…")
        self.reload()

    # --- data -----------------------------------------------------------------

    @work(exclusive=True, group="model-load", exit_on_error=False)
    async def load(self) -> None:
        self.post_message(await fetch_model_view(self.console, self.model_id, self.window))

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
        series = await self.console.client.stability(self.model_id, self.window)
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
        states = tuple(self.disabled_reason(action) for action in (*ACTION_KEYS, *NAVIGATION))
        if states != self._key_states:
            self._key_states = states
            self.refresh_bindings()

    def on_series_loaded(self, message: SeriesLoaded) -> None:
        self._show_series(message.series)

    def _show(self) -> None:
        if self.detail is None:
            return
        glyphs = self.console.glyphs
        self.query_one(ModelContext).show(self.detail, self.lineage, glyphs)
        self.query_one(SloPanel).show(self.detail.slo, not glyphs.braille)
        now = self.console.server_now()
        self.query_one(IncidentTimeline).show(self.incident, now)

    def _show_series(self, series: StabilitySeries) -> None:
        if series.window is not self.window:
            return  # an answer for a window the engineer has already left
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
        if self.detail is not None and self.detail.model.baseline_model_id:
            mine.add(self.detail.model.baseline_model_id)
        if isinstance(data, BucketClosedData) and data.model_id in mine:
            self.load_series()  # charts change only when a bucket closes
        elif isinstance(data, SloChangedData) and data.model_id == self.model_id:
            self.reload()
        elif isinstance(data, ActionEventData) and (
            data.result.model_id == self.model_id or any(c.model_id == self.model_id for c in data.result.changes)
        ):
            self.reload()
        elif isinstance(data, IncidentEventData) and self.model_id in data.incident.model_ids:
            self.reload()

    def refetch(self) -> None:
        self.load()

    # --- navigation -----------------------------------------------------------

    def action_next_window(self) -> None:
        self.action_window(WINDOWS.index(self.window) + 1)

    def action_window(self, index: int) -> None:
        self.window = self.console.chart_window = WINDOWS[index % len(WINDOWS)]
        self.query_one(StatusLine).say(f"charts over {self.window}")
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

    def action_audit(self) -> None:
        from fleetdesk.console.screens.audit import AuditScreen

        self.app.push_screen(AuditScreen(self.model_id))

    # --- which keys apply -----------------------------------------------------

    def disabled_reason(self, action: str) -> str | None:
        """Why a key does nothing right now, in words for the help screen and status line; None when it works."""
        detail = self.detail
        if action in ("open_baseline", "open_holdout", "open_upstream", "incident") and detail is None:
            return "still loading"
        if action == "open_baseline" and detail and not detail.model.baseline_model_id:
            return "no baseline"
        if action == "open_holdout" and detail and not detail.model.holdout_model_id:
            return "no holdout"
        if action == "open_upstream" and not (self.lineage and self.lineage.upstream):
            return "no upstream model"
        if action == "incident" and detail and not detail.open_incident_id:
            return "no open incident"
        kind = ACTION_KEYS.get(action)
        if kind is None:
            return None
        if kind in self.in_flight:
            return f"{kind} in flight"
        if not self.console.link.connected:
            return "disconnected: actions wait for the server"
        if detail is None:
            return "still loading"
        if kind in self.unconfirmed:
            return None  # retrying an unconfirmed action is always safe: the server replays its outcome
        model, live = detail.model, detail.live
        if kind is ActionKind.ROLLBACK:
            if not model.baseline_model_id:
                return "no baseline: escalate instead"
            if live.serving_model_id != model.id:
                return f"already serving {sanitize(live.serving_model_id)}"
        if kind is ActionKind.END_EXPERIMENT:
            if model.role is not Role.EXPERIMENT:
                return f"a {model.role}, not an experiment"
            if live.experiment_ended:
                return "experiment already ended"
        if kind is ActionKind.HALT_LAUNCH:
            if live.launch_phase is not LaunchPhase.SCALE_UP:
                return f"launch phase is {live.launch_phase}, not scale-up"
            if live.launch_halted:
                return "launch already halted"
        if kind is ActionKind.ACK:
            if self.incident is None or self.incident.state is IncidentState.RESOLVED:
                return "no open incident"
            if self.incident.state is IncidentState.ACKNOWLEDGED:
                return "already acknowledged"
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ACTION_KEYS and not self.console.can_act:
            return False  # read-only or a viewer: the keys are not there at all
        return None if self.disabled_reason(action) else True

    # --- actions --------------------------------------------------------------

    def action_rollback(self) -> None:
        self._begin(ActionKind.ROLLBACK)

    def action_end_experiment(self) -> None:
        self._begin(ActionKind.END_EXPERIMENT)

    def action_escalate(self) -> None:
        self._begin(ActionKind.ESCALATE)

    def action_halt_launch(self) -> None:
        self._begin(ActionKind.HALT_LAUNCH)

    def action_ack(self) -> None:
        self._begin(ActionKind.ACK)

    def action_note(self) -> None:
        self._begin(ActionKind.NOTE)

    def escalation_target(self) -> EscalationTarget:
        """Upstream when a direct upstream model is itself unhealthy (the cause is upstream), else the owner."""
        if self.lineage and any(entry.health is Health.UNSTABLE for entry in self.lineage.upstream[:1]):
            return EscalationTarget.UPSTREAM
        return EscalationTarget.OWNER

    def _intent(self, kind: ActionKind, reason: str, text: str = "", serving: str | None = None) -> ActionIntent:
        """A new intent; ``serving`` is the serving model the engineer saw (default: as shown now)."""
        assert self.detail is not None
        serving = serving or self.detail.live.serving_model_id
        if kind is ActionKind.ROLLBACK:
            return ActionIntent.rollback(self.model_id, expected_serving_model_id=serving, reason=reason)
        if kind is ActionKind.END_EXPERIMENT:
            return ActionIntent.end_experiment(self.model_id, expected_serving_model_id=serving, reason=reason)
        if kind is ActionKind.HALT_LAUNCH:
            return ActionIntent.halt_launch(self.model_id, expected_serving_model_id=serving, reason=reason)
        if kind is ActionKind.ESCALATE:
            return ActionIntent.escalate(self.model_id, reason=reason, target=self.escalation_target())
        if kind is ActionKind.ACK:
            return ActionIntent.ack(self.model_id, reason=reason)
        return ActionIntent.note(self.model_id, text or reason)

    def _begin(self, kind: ActionKind) -> None:
        """Fetch the dry run, then ask; a retry of an unconfirmed action shows its first preview again."""
        retry = self.unconfirmed.get(kind)
        if retry is not None:
            # A new dry run would judge the world after the first try may have run; the retry replays that try.
            self._set_in_flight(kind, retry, f"{kind}: retry with the same key, waiting for your confirmation")
            self.post_message(PreviewReady(retry, self.previews[kind]))
            return
        intent = self._intent(kind, PREVIEW_REASON, PREVIEW_REASON)
        self._set_in_flight(kind, intent, f"{kind}: asking the server for a dry run…")
        self.preview(intent)

    def preview(self, intent: ActionIntent) -> None:
        """Ask for the dry run in the background; the worker is named after the action kind."""
        self.run_worker(self._preview(intent), name=intent.kind.value, group=f"preview-{intent.kind}",
                        exclusive=True, exit_on_error=False)

    async def _preview(self, intent: ActionIntent) -> None:
        result = await self.console.client.perform(intent.as_dry_run())
        self.post_message(PreviewReady(intent, result))

    def on_preview_ready(self, message: PreviewReady) -> None:
        intent = message.intent
        assert self.detail is not None
        retry = intent if self.unconfirmed.get(intent.kind) is intent else None
        self.previews[intent.kind] = message.preview
        self.query_one(StatusLine).say(f"{intent.kind}: waiting for your confirmation")

        def decided(answer: Confirmed | None) -> None:
            if answer is None:
                self._clear_in_flight(intent.kind, f"{intent.kind} cancelled; nothing was sent")
                return
            if retry is not None:
                real = retry
            else:
                default = f"{intent.kind} from the console ({self.detail.model.tier})"  # type: ignore[union-attr]
                # Expect the state the engineer saw in the preview, even if a live update came in since:
                # if the world moved, the server answers 409 instead of acting on a state nobody reviewed.
                real = self._intent(intent.kind, answer.reason or default, answer.text,
                                    serving=intent.request.expected_serving_model_id)
            self._set_in_flight(intent.kind, real, f"{intent.kind} in flight…")
            self.perform(real)

        self.app.push_screen(
            ConfirmAction(intent.kind, self.model_id, self.detail.model.tier, message.preview,
                          self.console.glyphs.arrow, retry_of=retry.idempotency_key if retry else None),
            decided,
        )

    def perform(self, intent: ActionIntent) -> None:
        """Send the action in the background; one worker per action kind, never cancelling another."""
        self.run_worker(self._perform(intent), name=intent.kind.value, group=f"action-{intent.kind}",
                        exclusive=True, exit_on_error=False)

    async def _perform(self, intent: ActionIntent) -> None:
        result = await self.console.client.perform(intent)
        self.post_message(ActionDone(intent, result))

    def on_action_done(self, message: ActionDone) -> None:
        self.unconfirmed.pop(message.intent.kind, None)
        words = result_words(message.result)
        self._clear_in_flight(message.intent.kind, f"done: {words}")
        self.app.notify(words, title=f"{message.intent.kind} done", markup=False)
        self.load()

    def worker_failed(self, worker: Worker, error: BaseException) -> bool:
        """Preview and action failures go to the status line (and a notice); True when handled here."""
        previewing = worker.group.startswith("preview-")
        if not previewing and not worker.group.startswith("action-"):
            return False
        kind = ActionKind(worker.name)
        title, message = explain(error, f"{kind} dry run" if previewing else f"{kind}")
        if isinstance(error, NotConfirmed) and not previewing and kind in self.in_flight:
            self.unconfirmed[kind] = self.in_flight[kind]
        self._clear_in_flight(kind, message, warning=True)
        self.app.notify(message, title=title, severity="error", timeout=20, markup=False)
        if isinstance(error, StaleState):
            self.load()
        return True

    def _set_in_flight(self, kind: ActionKind, intent: ActionIntent, words: str) -> None:
        self.in_flight[kind] = intent
        self.query_one(StatusLine).say(words, warning=True)
        self.refresh_bindings()

    def _clear_in_flight(self, kind: ActionKind, words: str, warning: bool = False) -> None:
        self.in_flight.pop(kind, None)
        self.query_one(StatusLine).say(words, warning=warning)
        self.refresh_bindings()
