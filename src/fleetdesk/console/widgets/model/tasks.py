"""A multi-task model's tasks: one line each with its health, calibration and NE, and which one the charts show.

A multi-task model is judged per task and its health is its worst task's, so the engineer needs to see which
task is the bad one before reading a chart; the charts follow the chosen task (or the model as a whole, whose
sums mix tasks with different base rates). A model judged as one series has no tasks and this panel is hidden.
"""

from __future__ import annotations

from rich.text import Text
from textual.message import Message

from fleetdesk.console.glyphs import Glyphs
from fleetdesk.console.palette import palette
from fleetdesk.console.widgets.common.quiet import QuietStatic
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import Health, TaskHealth

HEALTH_STYLE = {
    Health.STABLE: "success",
    Health.UNSTABLE: "warning",
    Health.NO_DATA: "foreground-muted",
}
"""Theme variable per task health (as ATTENTION_STYLE for a model)."""

HEALTH_WORDS = {Health.STABLE: "stable", Health.UNSTABLE: "unstable", Health.NO_DATA: "no data"}


class TaskList(QuietStatic):
    """The tasks of the shown model, the charted one marked; ``choose_next`` steps the charts through them."""

    DEFAULT_CSS = """
    TaskList { height: auto; padding: 0 1; display: none; }
    TaskList.-tasks { display: block; }
    """

    class Chosen(Message):
        """The charts should show this task (None: the model as a whole)."""

        def __init__(self, task: str | None) -> None:
            super().__init__()
            self.task = task

    def __init__(self, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self.tasks: list[TaskHealth] = []
        self.chosen: str | None = None
        """The task the charts show; None: the model as a whole."""

    def show(self, tasks: list[TaskHealth], glyphs: Glyphs) -> None:
        self.tasks = tasks
        if self.chosen not in {task.task for task in tasks}:
            self.chosen = None
        self.set_class(bool(tasks), "-tasks")
        colours = palette(self.app)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("tasks", style="bold")
        text.append(f"  model health is its worst task · charts: {self._charted()} · t: next\n")
        width = max((len(task.task) for task in tasks), default=0)
        for task in tasks:
            mark = ">" if task.task == self.chosen else " "
            text.append(f"{mark} {sanitize(task.task, 40):<{width}}  ")
            style = colours.get(HEALTH_STYLE[task.health], "")
            words = f"{glyphs.health[task.health]} {HEALTH_WORDS[task.health]}"
            text.append(
                f"{words:<10}", style=f"bold {style}" if task.health is Health.UNSTABLE else style
            )
            text.append(
                f"  cal {_number(task.calibration, glyphs)}"
                f"  NE {_number(task.normalized_entropy, glyphs)}\n"
            )
        text.rstrip()
        self.show_text(text)

    def choose_next(self, glyphs: Glyphs) -> None:
        """Chart the next task; after the last, the model as a whole again."""
        if not self.tasks:
            return
        names: list[str | None] = [None, *(task.task for task in self.tasks)]
        self.chosen = names[(names.index(self.chosen) + 1) % len(names)]
        self.show(self.tasks, glyphs)
        self.post_message(self.Chosen(self.chosen))

    def _charted(self) -> str:
        return "whole model" if self.chosen is None else sanitize(self.chosen, 40)


def _number(value: float | None, glyphs: Glyphs) -> str:
    return glyphs.missing if value is None else f"{value:.2f}"
