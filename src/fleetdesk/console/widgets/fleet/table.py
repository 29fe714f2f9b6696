"""The fleet table: every model, worst first, one row per model keyed by its id."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from fleetdesk.console.palette import palette
from fleetdesk.console.fleet_filter import haystack, matches
from fleetdesk.console.glyphs import ATTENTION_STYLE, Glyphs
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import ModelSummary


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    width: int | None
    priority: int
    """Lower stays longer when the terminal is narrow."""


COLUMNS: tuple[Column, ...] = (
    Column("health", "health", 10, 0),
    Column("budget", "budget", 6, 1),
    Column("calibration", "cal", 5, 1),
    Column("ne", "NE", 5, 1),
    Column("tier", "tier", 5, 0),
    Column("id", "model", None, 0),
    Column("incident", "inc", 5, 3),
    Column("type", "type", 24, 2),
    Column("role", "role", 10, 4),
    Column("owner", "owner", 16, 5),
)

_MIN_ID_WIDTH = 34
_MAX_ID_WIDTH = 48
_CHROME = 2  # the vertical scrollbar


def sort_key(model: ModelSummary) -> tuple[int, int, float, str]:
    """Worst first: attention, then tier (TIER0 first), then least budget left, then id."""
    budget = model.budget_remaining if model.budget_remaining is not None else math.inf
    return (model.attention.rank, model.tier.rank, budget, model.id)


def budget_text(budget: float | None) -> str:
    return "—" if budget is None else f"{budget:.0%}"


def signal_text(value: float | None) -> str:
    """A calibration or NE value of the latest bucket; '—' when it has no data."""
    return "—" if value is None else f"{value:.2f}"


def columns_for(width: int) -> list[Column]:
    """The columns that fit ``width`` cells, dropping the least important first; the id takes what is left."""
    chosen = [c for c in COLUMNS if c.key != "id"]
    for priority in sorted({c.priority for c in COLUMNS}, reverse=True):
        if _fixed_width(chosen) + _MIN_ID_WIDTH + 2 <= width or priority == 0:
            break
        chosen = [c for c in chosen if c.priority != priority]
    id_width = max(_MIN_ID_WIDTH, min(_MAX_ID_WIDTH, width - _fixed_width(chosen) - 2))
    chosen.append(Column("id", "model", id_width, 0))
    return sorted(chosen, key=lambda c: [k.key for k in COLUMNS].index(c.key))


def _fixed_width(columns: list[Column]) -> int:
    return sum((c.width or 0) + 2 for c in columns) + _CHROME


class FleetTable(DataTable):
    """All models as rows keyed by model id; updates touch only the cells that changed."""

    DEFAULT_CSS = """
    FleetTable { height: 1fr; }
    """

    class Opened(Message):
        """The engineer chose a model (Enter)."""

        def __init__(self, model_id: str) -> None:
            super().__init__()
            self.model_id = model_id

    def __init__(self, glyphs: Glyphs, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self.glyphs = glyphs
        self.models: dict[str, ModelSummary] = {}
        self._haystacks: dict[str, str] = {}
        self._cells: dict[str, dict[str, Text]] = {}
        self._columns: list[Column] = []
        self._words: list[str] = []
        self._shown: list[str] = []
        self._rebuild_pending = False

    # --- data -----------------------------------------------------------------

    def set_models(self, models: list[ModelSummary]) -> None:
        """Replace the whole fleet (a full refresh): rows change only where the data did."""
        fresh = {model.id: model for model in models}
        if fresh.keys() == self.models.keys() and all(
            sort_key(fresh[i]) == sort_key(self.models[i]) for i in fresh
        ):
            for model in models:
                self.update_model(model)
            return
        self.models = fresh
        self._haystacks = {i: haystack(m) for i, m in fresh.items()}
        self._cells = {}
        self._rebuild()

    def update_model(self, model: ModelSummary) -> None:
        """One model changed: re-sort when its place moved, else set only the cells that differ."""
        old = self.models.get(model.id)
        self.models[model.id] = model
        self._haystacks[model.id] = haystack(model)
        if old is None or sort_key(old) != sort_key(model) or self._visibility_changed(model):
            self._cells.pop(model.id, None)
            self._schedule_rebuild()
            return
        if model.id not in self._shown:
            return
        new = self._render_cells(model)
        before = self._cells.get(model.id, {})
        with self.app.batch_update():
            for column in self._columns:
                if before.get(column.key) != new[column.key]:
                    self.update_cell(model.id, column.key, new[column.key])
        self._cells[model.id] = new

    def _visibility_changed(self, model: ModelSummary) -> bool:
        visible = matches(model, self._words, self._haystacks[model.id])
        return visible != (model.id in self._shown)

    def set_filter(self, words: list[str]) -> None:
        if words != self._words:
            self._words = words
            self._rebuild()

    @property
    def shown_ids(self) -> list[str]:
        return list(self._shown)

    def restyle(self) -> None:
        """Re-render every cell (the theme or glyphs changed)."""
        self._cells = {}
        self._rebuild()

    # --- drawing --------------------------------------------------------------

    def on_resize(self) -> None:
        if columns_for(self.size.width) != self._columns:
            self._rebuild()

    def _schedule_rebuild(self) -> None:
        """Coalesce a burst of re-sorts (many events at once) into one rebuild."""
        if not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_later(self._rebuild)

    def _rebuild(self) -> None:
        """Lay out columns for the width and refill rows in order, keeping the cursor on its model."""
        self._rebuild_pending = False
        current = self._current_id()
        columns = columns_for(self.size.width or 120)
        ordered = sorted(self.models.values(), key=sort_key)
        self._shown = [m.id for m in ordered if matches(m, self._words, self._haystacks[m.id])]
        with self.app.batch_update():
            if columns != self._columns or not self.columns:
                self.clear(columns=True)
                self._columns = columns
                for column in columns:
                    self.add_column(column.label, key=column.key, width=column.width)
            else:
                self.clear()
            for model_id in self._shown:
                cells = self._cells.get(model_id) or self._render_cells(self.models[model_id])
                self._cells[model_id] = cells
                self.add_row(*(cells[c.key] for c in self._columns), key=model_id)
            if current in self._shown:
                self.move_cursor(row=self._shown.index(current), animate=False, scroll=True)

    def _current_id(self) -> str | None:
        if not self._shown or self.row_count == 0:
            return None
        row = min(self.cursor_row, len(self._shown) - 1)
        return self._shown[row] if row >= 0 else None

    def _render_cells(self, model: ModelSummary) -> dict[str, Text]:
        colours = palette(self.app)
        attention_style = colours.get(ATTENTION_STYLE[model.attention], "")
        budget_style = colours.get("error", "") if (model.budget_remaining or 0) < 0 else ""
        incident = f"#{model.open_incident_id}" if model.open_incident_id is not None else ""
        return {
            "health": Text(self.glyphs.attention[model.attention], style=attention_style, no_wrap=True),
            "budget": Text(f"{budget_text(model.budget_remaining):>5}", style=budget_style),
            "calibration": Text(f"{signal_text(model.calibration):>5}"),
            "ne": Text(f"{signal_text(model.normalized_entropy):>5}"),
            "tier": Text(model.tier.value, style="bold" if model.tier.rank <= 1 else ""),
            "id": Text(sanitize(model.id), no_wrap=True, overflow="ellipsis"),
            "incident": Text(incident),
            "type": Text(sanitize(f"{model.surface} · {model.stage}"), no_wrap=True, overflow="ellipsis"),
            "role": Text(model.role.value),
            "owner": Text(sanitize(model.owner_team), no_wrap=True, overflow="ellipsis"),
        }

    # --- keys -----------------------------------------------------------------

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.Opened(event.row_key.value))

    def selected_id(self) -> str | None:
        return self._current_id()
