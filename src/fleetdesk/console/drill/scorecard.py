"""The drill scorecard at the end of a drill in the console: plain text (never markup), and where it was saved."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from fleetdesk.console.widgets.common.footer import KeyFooter
from fleetdesk.domain.text import sanitize
from fleetdesk.drills.scoring import Scorecard, to_markdown


class ScorecardScreen(ModalScreen[None]):
    """The scorecard, as plain text (never markup), with where it was saved."""

    DEFAULT_CSS = """
    ScorecardScreen { align: center middle; }
    ScorecardScreen > VerticalScroll { width: 100%; max-width: 110; height: 100%; border: round $accent; }
    ScorecardScreen #verdict { text-style: bold; padding: 0 1; }
    ScorecardScreen #verdict.-fail { background: $error; color: $text; }
    ScorecardScreen #verdict.-pass { background: $success; color: $text; }
    ScorecardScreen #card { padding: 0 1; }
    """
    BINDINGS = [
        Binding("escape", "close", "Close", id="close-scorecard", tooltip="Close the scorecard and end the drill."),
        Binding("q", "close", "Close", id="close-scorecard-q", tooltip="Close the scorecard and end the drill.",
                show=False),
    ]

    def __init__(self, card: Scorecard, saved: list[Path]) -> None:
        super().__init__()
        self.card = card
        self.saved = saved

    def compose(self) -> ComposeResult:
        verdict = "PASS" if self.card.passed else "FAIL"
        with VerticalScroll():
            yield Static(Text(f"Drill {verdict}: {sanitize(self.card.title)}"), id="verdict",
                         classes="-pass" if self.card.passed else "-fail")
            saved = "".join(f"\nSaved: {sanitize(str(path))}" for path in self.saved)
            yield Static(Text(to_markdown(self.card) + saved), id="card")
        yield KeyFooter()

    def action_close(self) -> None:
        self.dismiss(None)
