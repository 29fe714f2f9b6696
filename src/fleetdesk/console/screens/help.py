"""Help: every key of the screen underneath, generated from its bindings (never a hand-kept list)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

_HIDDEN_ACTIONS = {"command_palette", "help_quit"}


class HelpScreen(ModalScreen[None]):
    """Keys of ``screen``: key, what it does, binding id (for the keymap), and why it is disabled."""

    BINDINGS = [
        Binding(
            "escape,question_mark,q", "close", "Close", id="help-close", tooltip="Close the help."
        ),
    ]

    def __init__(self, screen: Screen) -> None:
        super().__init__()
        self.target = screen

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog help"):
            yield Static(
                f"Keys: {self.target.__class__.__name__.removesuffix('Screen').lower()} view",
                classes="dialog-title",
            )
            yield Static(self._table(), id="keys")
            # Text, not markup: "[keymap]" is a markup tag to Textual and vanished.
            yield Static(
                Text("Esc closes · remap keys by id in the config file's [keymap] section"),
                classes="dialog-hint",
            )

    def _table(self) -> Table:
        table = Table(box=None, show_header=True, expand=True, padding=(0, 1))
        table.add_column("key", no_wrap=True, width=10)
        table.add_column("does", no_wrap=True, overflow="ellipsis", ratio=1)
        table.add_column("id (keymap)", no_wrap=True, width=16, overflow="ellipsis")
        reason_of = getattr(self.target, "disabled_reason", None)
        seen: set[tuple[str, str]] = set()
        # The console's keys (each has an id) before Textual's own (focus, copy, scrolling); within each, the
        # screen's first, then the app's, then the focused widget's.
        rank = {self.target: 0, self.app: 1}
        ordered = sorted(
            self.target.active_bindings.items(),
            key=lambda item: (item[1].binding.id is None, rank.get(item[1].node, 2)),
        )
        for key, active in ordered:
            binding = active.binding
            if binding.action in _HIDDEN_ACTIONS or (binding.action, key) in seen:
                continue
            seen.add((binding.action, key))
            does = Text(binding.tooltip or binding.description or binding.action)
            if not active.enabled:
                why = reason_of(binding.action) if reason_of is not None else None
                # The reason first, so a narrow terminal cuts the tooltip rather than the why.
                does = Text(f"(disabled: {why or 'not available now'}) {does.plain}", style="dim")
            style = "" if active.enabled else "dim"
            table.add_row(
                Text(self.app.get_key_display(binding), style=f"bold {style}"),
                does,
                Text(binding.id or "", style="dim"),
            )
        return table

    def action_close(self) -> None:
        self.dismiss(None)
