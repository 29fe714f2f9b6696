"""The drill scorecard at the end of a drill in the console: the scorecard's Markdown page, rendered, and where
it was saved.

``drills.scoring.to_markdown`` is the one form of the scorecard (saved, printed by headless drills, shown
here); it escapes every data value, so a model id or a note cannot open a link, a code span or a table cell
here either. Links are not followed.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from fleetdesk.console.widgets.common.footer import KeyFooter
from fleetdesk.domain.text import sanitize
from fleetdesk.drills.scoring import Scorecard, to_markdown


class ScorecardScreen(ModalScreen[None]):
    """The scorecard, rendered from its Markdown page, with where it was saved."""

    DEFAULT_CSS = """
    ScorecardScreen { align: center middle; }
    ScorecardScreen > VerticalScroll { width: 100%; max-width: 110; height: 100%; border: round $accent; }
    ScorecardScreen #card { padding: 0 1; }
    /* The page's title says PASS or FAIL; its colour says it too. */
    ScorecardScreen #card MarkdownH1 { margin: 0 0 1 0; text-style: bold; color: $text; }
    ScorecardScreen.-pass #card MarkdownH1 { background: $success; }
    ScorecardScreen.-fail #card MarkdownH1 { background: $error; }
    ScorecardScreen #card MarkdownH2 { margin: 1 0 0 0; }
    ScorecardScreen #saved { padding: 0 1; color: $foreground-muted; }
    """
    BINDINGS = [
        Binding(
            "escape",
            "close",
            "Close",
            id="close-scorecard",
            tooltip="Close the scorecard and end the drill.",
        ),
        Binding(
            "q",
            "close",
            "Close",
            id="close-scorecard-q",
            tooltip="Close the scorecard and end the drill.",
            show=False,
        ),
    ]

    def __init__(self, card: Scorecard, saved: list[Path]) -> None:
        super().__init__(classes="-pass" if card.passed else "-fail")
        self.card = card
        self.saved = saved

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(to_markdown(self.card), id="card", open_links=False)
            if self.saved:
                yield Static(
                    Text("\n".join(f"Saved: {sanitize(str(path))}" for path in self.saved)),
                    id="saved",
                )
        yield KeyFooter()

    def action_close(self) -> None:
        self.dismiss(None)
