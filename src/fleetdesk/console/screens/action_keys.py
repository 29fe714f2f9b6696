"""The playbook's keys on a model screen: one path for every action kind, from the key to what happened.

Whether an action applies, why not, and how it is confirmed come from the server with the model
(``ModelDetail.actions``, built by fleetdesk.domain.playbook); the console only adds what it alone knows:
the action is already in flight, the link is down, the model is still loading. A key asks the server
for a dry run, shows it in the confirmation dialog the server's level asks for, then sends the action
with the idempotency key of that decision; an action whose outcome is unknown is retried with the same
key, so it can never run twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.actions import parse
from textual.binding import Binding
from textual.worker import Worker

from fleetdesk.client import ActionIntent, NotConfirmed, StaleState, UnhealthyTarget
from fleetdesk.console.messages import ActionDone, PreviewReady
from fleetdesk.console.outcomes import explain, result_words
from fleetdesk.console.screens.base import ConsoleScreen
from fleetdesk.console.screens.confirm import ConfirmAction, Confirmed
from fleetdesk.console.typed_ahead import TypedKey
from fleetdesk.console.widgets.common.status import StatusLine
from fleetdesk.wire import ActionKind, ActionOption, ActionResult, IncidentDetail, ModelDetail

PREVIEW_REASON = "preview"
PREVIEW_GROUP = "preview-"
ACTION_GROUP = "action-"
WORKER_GROUPS = (PREVIEW_GROUP, ACTION_GROUP)
"""Worker group prefixes of an action's dry run and of the action itself (one worker per kind)."""


@dataclass(frozen=True)
class ActionKey:
    """How one action kind looks on the screen."""

    kind: ActionKind
    key: str
    label: str
    tooltip: str
    question: str
    """The confirmation dialog's title; ``{id}`` is the model id."""

    def binding(self) -> Binding:
        return Binding(
            self.key,
            f"act('{self.kind.value}')",
            self.label,
            id=self.kind.value,
            tooltip=self.tooltip,
            # Priority: the app runs it before it reads the next key, so keys typed straight after it (the
            # id, the reason) are already held for its dialog (ActionKeys.on_key), not taken as this screen's.
            priority=True,
        )


ACTION_KEYS = (
    ActionKey(
        ActionKind.ROLLBACK,
        "r",
        "Rollback",
        "Roll back to the baseline: its traffic moves to the baseline.",
        "Roll back {id} to its baseline?",
    ),
    ActionKey(
        ActionKind.END_EXPERIMENT,
        "e",
        "End exp",
        "End this experiment: traffic goes back to its baseline.",
        "End the experiment {id}?",
    ),
    ActionKey(
        ActionKind.ESCALATE,
        "x",
        "Escalate",
        "Page the owning team (or the upstream team when the cause is upstream).",
        "Escalate {id}?",
    ),
    ActionKey(
        ActionKind.HALT_LAUNCH,
        "h",
        "Halt",
        "Halt this launch's scale-up where it is.",
        "Halt the launch of {id}?",
    ),
    ActionKey(
        ActionKind.RESUME_LAUNCH,
        "H",
        "Resume",
        "Resume this halted launch's scale-up.",
        "Resume the launch of {id}?",
    ),
    ActionKey(
        ActionKind.ACK,
        "a",
        "Ack",
        "Acknowledge the open incident.",
        "Acknowledge the incident on {id}?",
    ),
    ActionKey(
        ActionKind.NOTE,
        "n",
        "Note",
        "Add a note to the incident (or the model).",
        "Add a note to {id}?",
    ),
)
QUESTIONS = {key.kind: key.question for key in ACTION_KEYS}


def playbook_kind(action: str, parameters: tuple[object, ...] = ()) -> ActionKind | None:
    """The action kind a screen action stands for: ``act('rollback')``, or ("act", ("rollback",))."""
    if not parameters and "(" in action:
        _, action, parameters = parse(action)
    if action != "act" or len(parameters) != 1:
        return None
    try:
        return ActionKind(str(parameters[0]))
    except ValueError:
        return None


class ActionKeys(ConsoleScreen):
    """A screen with the playbook's keys for one model (``detail`` and ``incident`` as last loaded)."""

    detail: ModelDetail | None
    incident: IncidentDetail | None

    def __init__(self) -> None:
        super().__init__()
        self.in_flight: dict[ActionKind, ActionIntent] = {}
        self.unconfirmed: dict[ActionKind, ActionIntent] = {}
        """Intents whose outcome is unknown (timeout): a retry sends the same one, same key."""
        self.previews: dict[ActionKind, ActionResult] = {}
        """The last dry run shown per action (shown again when retrying an unconfirmed one)."""
        self.typed_ahead: list[TypedKey] | None = None
        """Keys typed while a dry run is on its way (None when none is): they are its dialog's."""

    def load(self) -> object:
        """Fetch the model again (after an action, or when the world moved)."""
        raise NotImplementedError

    # --- which keys apply -----------------------------------------------------

    def option(self, kind: ActionKind) -> ActionOption | None:
        """The server's word on ``kind`` for this model, as last loaded."""
        if self.detail is None:
            return None
        return next((option for option in self.detail.actions if option.kind is kind), None)

    def why_not(self, kind: ActionKind) -> str | None:
        """Why the key for ``kind`` does nothing now, in words for the help screen; None when it works."""
        if kind in self.in_flight:
            return f"{kind} in flight"
        if not self.console.link.connected:
            return "disconnected: actions wait for the server"
        if self.detail is None:
            return "still loading"
        if kind in self.unconfirmed:
            return None  # retrying an unconfirmed action is always safe: the server replays its outcome
        option = self.option(kind)
        if option is None:
            return "the server does not offer this action"
        return None if option.available else option.reason or "not available now"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        kind = playbook_kind(action, parameters)
        if kind is None:
            return True
        if not self.console.can_act:
            return False  # read-only or a viewer: the keys are not there at all
        return None if self.why_not(kind) else True

    # --- one path for every kind ---------------------------------------------

    def action_act(self, kind: str) -> None:
        """Fetch the dry run, then ask; a retry of an unconfirmed action shows its first preview again."""
        action = ActionKind(kind)
        retry = self.unconfirmed.get(action)
        if retry is not None:
            # A new dry run would judge the world after the first try may have run; the retry replays that try.
            self._set_in_flight(
                action, retry, f"{action}: retry with the same key, waiting for your confirmation"
            )
            self.post_message(PreviewReady(retry, self.previews[action]))
            return
        intent = self._intent(action, PREVIEW_REASON, PREVIEW_REASON)
        self.typed_ahead = []
        self._set_in_flight(action, intent, f"{action}: asking the server for a dry run…")
        self.run_worker(
            self._preview(intent),
            name=action.value,
            group=f"{PREVIEW_GROUP}{action}",
            exclusive=True,
            exit_on_error=False,
        )

    def on_key(self, event: events.Key) -> None:
        """Hold the keys typed while a dry run is on its way: on a slow link the engineer types the id and
        the reason straight after the action key, and they are the dialog's. Taken as this screen's keys, a
        "2" switched the chart window and an "r" asked for a rollback. Esc still goes back."""
        if self.typed_ahead is not None and event.key != "escape":
            self.typed_ahead.append(TypedKey(event.key, event.character))
            event.stop()
            event.prevent_default()

    def _intent(
        self,
        kind: ActionKind,
        reason: str,
        text: str = "",
        serving: str | None = None,
        answer: Confirmed | None = None,
    ) -> ActionIntent:
        """A new intent; ``serving`` is the serving model the engineer saw (default: as shown now); ``answer``
        carries what the engineer explicitly accepted in the dialog."""
        assert self.detail is not None
        option = self.option(kind)
        fields: dict[str, object] = {"reason": reason}
        if answer is not None and answer.acknowledged_target:
            fields["acknowledged_target"] = answer.acknowledged_target
        if answer is not None and answer.holdout_override:
            fields["holdout_override"] = True
        if kind.needs_expected_state:
            fields["expected_serving_model_id"] = serving or self.detail.live.serving_model_id
        if option is not None and option.target is not None:
            fields["target"] = option.target
        if kind.needs_text:
            fields = {"text": text or reason}
        return ActionIntent.of(kind, self.detail.model.id, **fields)

    async def _preview(self, intent: ActionIntent) -> None:
        result = await self.console.client.perform(intent.as_dry_run())
        self.post_message(PreviewReady(intent, result))

    def on_preview_ready(self, message: PreviewReady) -> None:
        intent = message.intent
        detail = self.detail
        option = self.option(intent.kind)
        assert detail is not None and option is not None
        retry = intent if self.unconfirmed.get(intent.kind) is intent else None
        typed_ahead, self.typed_ahead = self.typed_ahead or [], None
        self.previews[intent.kind] = message.preview
        self.query_one(StatusLine).say(f"{intent.kind}: waiting for your confirmation")

        def decided(answer: Confirmed | None) -> None:
            if answer is None:
                self._clear_in_flight(intent.kind, f"{intent.kind} cancelled; nothing was sent")
                return
            if retry is not None:
                real = retry
            else:
                default = f"{intent.kind} from the console ({detail.model.tier})"
                # Expect the state the engineer saw in the preview, even if a live update came in since:
                # if the world moved, the server answers 409 instead of acting on a state nobody reviewed.
                real = self._intent(
                    intent.kind,
                    answer.reason or default,
                    answer.text,
                    serving=intent.request.expected_serving_model_id,
                    answer=answer,
                )
            self._set_in_flight(intent.kind, real, f"{intent.kind} in flight…")
            self.run_worker(
                self._perform(real),
                name=real.kind.value,
                group=f"{ACTION_GROUP}{real.kind}",
                exclusive=True,
                exit_on_error=False,
            )

        question = QUESTIONS[intent.kind]
        self.app.push_screen(
            ConfirmAction(
                option,
                question,
                detail.model.id,
                detail.model.tier,
                message.preview,
                self.console.glyphs.arrow,
                retry_of=retry.idempotency_key if retry else None,
                model_type=detail.model.type,
                typed_ahead=typed_ahead,
            ),
            decided,
        )

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
        previewing = worker.group.startswith(PREVIEW_GROUP)
        if not previewing and not worker.group.startswith(ACTION_GROUP):
            return False
        kind = ActionKind(worker.name)
        title, message = explain(error, f"{kind} dry run" if previewing else f"{kind}")
        if previewing:
            self.typed_ahead = (
                None  # typed for a dialog that will not open: dropped, as the notice says why
            )
        if isinstance(error, NotConfirmed) and not previewing and kind in self.in_flight:
            self.unconfirmed[kind] = self.in_flight[kind]
        self._clear_in_flight(kind, message, warning=True)
        self.app.notify(message, title=title, severity="error", timeout=20, markup=False)
        if isinstance(error, StaleState | UnhealthyTarget):
            self.load()  # the world moved: show it as it is now
        return True

    def _set_in_flight(self, kind: ActionKind, intent: ActionIntent, words: str) -> None:
        self.in_flight[kind] = intent
        self.query_one(StatusLine).say(words, warning=True)
        self.refresh_bindings()

    def _clear_in_flight(self, kind: ActionKind, words: str, warning: bool = False) -> None:
        self.in_flight.pop(kind, None)
        self.query_one(StatusLine).say(words, warning=warning)
        self.refresh_bindings()
