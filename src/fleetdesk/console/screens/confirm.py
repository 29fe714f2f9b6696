"""Confirming a playbook action: the server's dry run, then the confirmation the server asks for.

``Confirmation.TYPE_ID`` needs the model typed (its variant, the part after its type, or the whole id)
and a reason; ``Confirmation.PRESS`` needs ``y`` (the reason is optional). ``Confirmation.ACKNOWLEDGE``,
the strongest, is TYPE_ID plus ticking what the warnings say: moving traffic onto an unhealthy baseline
(the request then names it), or ending a holdout's measurement. The server's warnings come first, above
the dry run. A note needs its text.

A dialog that asks for something opens on the first field to fill in, so the first key typed (or pasted)
lands there; the hint says what to type. A ``y`` dialog opens on Cancel, so Enter never confirms by
accident. Tab moves between the fields only (never onto the scrolling body), and moves before the next key
is read: on a slow link a burst like ``Tab`` + a reason arrives at once, and the reason must land in the
field Tab moved to. Esc cancels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Static

from fleetdesk.console.host import host
from fleetdesk.console.outcomes import live_state_words
from fleetdesk.console.typed_ahead import TypedKey
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import ActionOption, ActionResult, Confirmation, Tier


def strict(option: ActionOption) -> bool:
    """The model id must be typed and a reason given."""
    return option.confirmation in (Confirmation.TYPE_ID, Confirmation.ACKNOWLEDGE)


def variant(model_id: str, model_type: str) -> str:
    """What tells the model apart among its type's models (``v23`` of ``ig_reels_late-stage_dhen.v23``):
    enough to type to show which model is meant (the title names it whole), without typing all 28
    characters of the id at 2am. An id that does not start with its type is typed whole."""
    if model_type and model_id.startswith(model_type + ".") and len(model_id) > len(model_type) + 1:
        return model_id[len(model_type) + 1 :]
    return model_id


FIELDS = ("text", "acknowledge-target", "holdout-override", "typed-id", "reason")
"""The dialog's fields in the order they are shown (and Tab goes)."""


@dataclass(frozen=True)
class Confirmed:
    reason: str
    text: str
    acknowledged_target: str | None = None
    """The unhealthy target the engineer ticked to move traffic to anyway."""
    holdout_override: bool = False


def stepped_up(option: ActionOption, preview: ActionResult) -> ActionOption:
    """The option as the dry run found things: a target that turned unhealthy since the model was loaded
    steps the confirmation up here too (the dry run is the fresher of the two)."""
    if preview.confirmation is None:
        return option
    return option.model_copy(
        update={
            "confirmation": preview.confirmation,
            "acknowledge_target": preview.acknowledge_target,
            "override_required": preview.override_required,
            "warnings": preview.warnings,
            "target_health": preview.target_health,
        }
    )


def warnings_text(warnings: list[str]) -> Text:
    """The server's warnings, worst first: what to weigh before anything else in the dialog."""
    text = Text()
    for index, warning in enumerate(warnings):
        text.append(("\n" if index else "") + "! ", style="bold")
        text.append(sanitize(warning, limit=600))
    return text


def preview_text(preview: ActionResult, arrow: str) -> Text:
    """What would change, how much traffic moves, who gets paged: plain Text from server data."""
    text = Text()
    text.append("Server dry run: ", style="bold")
    text.append(sanitize(preview.summary) + "\n")
    if preview.target_health is not None:
        health = preview.target_health
        text.append("Target health: ", style="bold")
        text.append(
            ("" if health.healthy else "UNHEALTHY: ") + sanitize(health.summary, limit=300) + "\n"
        )
    if preview.changes:
        text.append("Changes:\n", style="bold")
        for change in preview.changes:
            text.append(f"  {sanitize(change.model_id)}: {live_state_words(change.before)}\n")
            text.append(f"    {arrow} {live_state_words(change.after)}\n")
    else:
        text.append("Changes: no model changes state\n", style="bold")
    text.append("Traffic moved: ", style="bold")
    if preview.traffic_moved:
        to = f" to {sanitize(preview.traffic_to)}" if preview.traffic_to else ""
        text.append(f"{preview.traffic_moved:.0%}{to}\n")
    else:
        text.append("none\n")
    text.append("Pages: ", style="bold")
    if preview.pages:
        text.append(
            ", ".join(f"{sanitize(p.team)} ({sanitize(p.rotation)})" for p in preview.pages)
        )
    else:
        text.append("nobody is paged")
    return text


class ConfirmAction(ModalScreen[Confirmed | None]):
    """One action's preview and confirmation."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="confirm-cancel", tooltip="Do nothing and close."),
        Binding("y", "confirm", "Confirm", id="confirm-yes", tooltip="Confirm (TIER2-TIER4 only)."),
        # Priority: the app moves the focus itself before it reads the next key, instead of handing Tab to
        # the focused field while the keys after it are already on their way to that same field.
        Binding(
            "tab", "app.focus_next", "Next field", id="confirm-next", show=False, priority=True
        ),
        Binding(
            "shift+tab",
            "app.focus_previous",
            "Previous field",
            id="confirm-previous",
            show=False,
            priority=True,
        ),
        Binding("pageup", "scroll_body(-1)", "Scroll up", id="confirm-scroll-up", show=False),
        Binding("pagedown", "scroll_body(1)", "Scroll down", id="confirm-scroll-down", show=False),
    ]
    AUTO_FOCUS = "#cancel"
    """A dialog with nothing to fill in opens on Cancel; one with fields opens on its first (on_mount)."""

    def __init__(
        self,
        option: ActionOption,
        question: str,
        model_id: str,
        tier: Tier,
        preview: ActionResult,
        arrow: str,
        retry_of: str | None = None,
        model_type: str = "",
        typed_ahead: Sequence[TypedKey] = (),
    ) -> None:
        super().__init__()
        option = stepped_up(option, preview)
        self.option = option
        self.kind = option.kind
        self.question = question
        self.model_id = model_id
        self.tier = tier
        self.preview = preview
        self.arrow = arrow
        self.retry_of = retry_of
        self.typed = variant(model_id, model_type)
        """What the engineer types to confirm (the whole id is accepted too)."""
        self.typed_ahead = typed_ahead
        """Keys typed while the dry run was on its way: read, in order, once the first field has the focus."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog confirm"):
            title = self.question.format(id=sanitize(self.model_id))
            yield Static(Text(f"{title}  ({self.tier})"), classes="dialog-title")
            # Not focusable: Tab landed on it and nothing looked focused; PgUp/PgDn scroll it instead.
            with VerticalScroll(classes="dialog-body", can_focus=False):
                if self.retry_of:
                    yield Static(
                        Text(
                            "Retrying an action that was not confirmed: the same idempotency key is sent, "
                            "so it cannot run twice. Check the audit log (l) first."
                        ),
                        classes="warning",
                    )
                if self.option.warnings:
                    yield Static(
                        warnings_text(self.option.warnings), id="warnings", classes="warning"
                    )
                yield Static(preview_text(self.preview, self.arrow), id="preview")
            # The fields stay on screen below the scrolling preview: the field that has the focus is never
            # below the fold, and scrolling to it never pushes the warnings out of sight.
            with Vertical(classes="dialog-fields"):
                if self.option.text_required and not self.retry_of:
                    yield Static("Note text (required):")
                    yield Input(
                        id="text", placeholder="what you saw or did", max_length=10000, compact=True
                    )
                if self.option.acknowledge_target and not self.retry_of:
                    yield Checkbox(
                        Text(
                            "Move traffic onto the unhealthy "
                            f"{sanitize(self.option.acknowledge_target, limit=80)}"
                        ),
                        id="acknowledge-target",
                        compact=True,
                    )
                if self.option.override_required and not self.retry_of:
                    yield Checkbox(
                        Text("End the holdout's measurement anyway (override)"),
                        id="holdout-override",
                        compact=True,
                    )
                if strict(self.option):
                    typed = sanitize(self.typed)
                    yield Static(Text(f"{self.tier}: type {typed} to confirm (or the whole id):"))
                    yield Input(id="typed-id", placeholder=typed, compact=True)
                if not self.retry_of and not self.option.text_required:
                    needed = "required" if strict(self.option) else "optional"
                    yield Static(f"Reason ({needed}):")
                    yield Input(
                        id="reason",
                        placeholder="why, for the audit log",
                        max_length=2000,
                        compact=True,
                    )
            hint = self._hint()
            yield Static(hint, classes="dialog-hint", id="hint")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel", variant="primary", compact=True)
                yield Button("Confirm", id="confirm", variant="error", disabled=True, compact=True)

    def _hint(self) -> str:
        """What to do, key by key, in the order of the fields."""
        steps = []
        if not self.retry_of and self.option.text_required:
            steps.append("type the note")
        if not self.retry_of and (self.option.acknowledge_target or self.option.override_required):
            steps.append("Space ticks the box")
        if strict(self.option):
            steps.append(f"type {sanitize(self.typed)}")
            if not self.retry_of and not self.option.text_required:
                steps.append("a reason")
        if not steps:
            return "Press y to confirm, Esc to cancel."
        hint = ", Tab, ".join(steps) + ", then Enter. Esc cancels."
        return hint[0].upper() + hint[1:]

    def on_mount(self) -> None:
        # Toasts sit at the bottom right, where this dialog has its fields and buttons (all of it at 80x24),
        # and an error stays 20-30 s. The engineer has moved on to this decision; the preview says how
        # things stand now.
        self.app.clear_notifications()
        self._changed()
        first = next(
            (self.query_one(f"#{name}") for name in FIELDS if self.query(f"#{name}")), None
        )
        if first is not None and (strict(self.option) or self.option.text_required):
            first.focus()
        host(self).type_again(self.typed_ahead)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_body)

    def _fit_body(self) -> None:
        """Give the scrolling preview only the rows the fields, hint and buttons leave: Textual does not shrink
        an auto-height body inside an auto-height dialog, so a long preview pushed the buttons off 80x24."""
        dialog = self.query_one(".dialog")
        body = self.query_one(".dialog-body", VerticalScroll)
        others = sum(child.outer_size.height for child in dialog.children if child is not body)
        room = max(self.size.height - dialog.styles.gutter.height - others, 3)
        if body.styles.max_height is None or body.styles.max_height.value != room:
            body.styles.max_height = room

    def action_scroll_body(self, pages: int) -> None:
        body = self.query_one(".dialog-body", VerticalScroll)
        if pages < 0:
            body.scroll_page_up(animate=False)
        else:
            body.scroll_page_down(animate=False)

    def _value(self, widget_id: str) -> str:
        found = self.query(f"#{widget_id}")
        return found.first(Input).value if found else ""

    def _ticked(self, widget_id: str) -> bool:
        found = self.query(f"#{widget_id}")
        return bool(found) and found.first(Checkbox).value

    def _valid(self) -> bool:
        if self.option.text_required and not self.retry_of and not self._value("text").strip():
            return False
        if (
            not self.retry_of
            and self.option.acknowledge_target
            and not self._ticked("acknowledge-target")
        ):
            return False
        if (
            not self.retry_of
            and self.option.override_required
            and not self._ticked("holdout-override")
        ):
            return False
        if strict(self.option):
            if self._value("typed-id").strip() not in (self.typed, self.model_id):
                return False
            if (
                not self.retry_of
                and not self.option.text_required
                and not self._value("reason").strip()
            ):
                return False
        return True

    @on(Input.Changed)
    @on(Checkbox.Changed)
    def _changed(self) -> None:
        self.query_one("#confirm", Button).disabled = not self._valid()

    @on(Input.Submitted)
    def _submitted(self) -> None:
        if self._valid():
            self._finish()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "confirm" and self._valid():
            self._finish()
        elif event.button.id == "cancel":
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_confirm(self) -> None:
        if not strict(self.option) and self._valid():
            self._finish()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "confirm":
            return None if strict(self.option) or self.option.text_required else True
        return True

    def _finish(self) -> None:
        acknowledged = (
            self.option.acknowledge_target if self._ticked("acknowledge-target") else None
        )
        self.dismiss(
            Confirmed(
                reason=self._value("reason").strip(),
                text=self._value("text").strip(),
                acknowledged_target=acknowledged,
                holdout_override=self._ticked("holdout-override"),
            )
        )
