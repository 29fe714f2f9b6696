"""The fleet table: every model, worst first, one row per model keyed by its id.

A Line API widget: it keeps the models and the order, and draws only the rows on screen, so a
10,000-model fleet costs no more to show, filter or scroll than a screenful (a DataTable keeps row
objects and measures every cell of every row)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from rich.segment import Segment
from rich.text import Text
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from fleetdesk.console.fleet_filter import haystack, matches, narrow, wider_filters
from fleetdesk.console.glyphs import ATTENTION_STYLE, Glyphs
from fleetdesk.console.palette import palette
from fleetdesk.console.widgets.fleet.fitted_ids import fit_ids
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import Attention, ModelRow


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    width: int
    """The id's is whatever the others leave (``columns_for``)."""
    priority: int
    """Lower stays longer when the terminal is narrow."""


COLUMNS: tuple[Column, ...] = (
    Column("health", "health", 10, 0),
    Column("budget", "budget", 6, 1),
    Column("calibration", "cal", 5, 1),
    Column("ne", "NE", 5, 1),
    Column("tier", "tier", 5, 0),
    Column("id", "model", 0, 0),
    Column("incident", "inc", 5, 3),
    Column("type", "type", 24, 2),
    Column("role", "role", 10, 4),
    Column("owner", "owner", 16, 5),
)

_MIN_ID_WIDTH = 34
_CHROME = 2  # the vertical scrollbar
_DRAWN_ROWS_KEPT = 1000
_MATCHES_KEPT = 16
"""Filters whose results are kept (a typed filter's keystrokes and its words so far)."""
CALLS_FOR_SOMEONE = frozenset({Attention.PAGE, Attention.TICKET})
"""What the cursor follows to the top: an incident the tier's policy pages for, or, for a lower tier (a TIER3
experiment's incident is a ticket), the ticket it raises instead; pages sort above tickets."""
"""Rows whose cells and line stay cached for scrolling back and for diffing updates."""


def sort_key(model: ModelRow) -> tuple[int, int, float, str]:
    """Worst first: attention, then tier (TIER0 first), then least budget left, then id."""
    budget = model.budget_remaining if model.budget_remaining is not None else math.inf
    return (model.attention.rank, model.tier.rank, budget, model.id)


def budget_text(budget: float | None, missing: str = "—") -> str:
    if budget is None:
        return missing
    # An objective close to 1 can overspend a budget by many orders of magnitude: keep the cell narrow.
    return (
        f"{budget:.0%}"
        if abs(budget) < 10
        else f"{budget * 100:.0e}%".replace("e+0", "e").replace("e+", "e")
    )


def signal_text(value: float | None, missing: str = "—") -> str:
    """A calibration or NE value of the latest bucket, at most 6 wide; ``missing`` when it has no data."""
    if value is None:
        return missing
    return (
        f"{value:.2f}"
        if abs(value) < 1000
        else f"{value:.1e}".replace("e+0", "e").replace("e+", "e")
    )


def columns_for(width: int) -> list[Column]:
    """The columns that fit ``width`` cells, dropping the least important first; the id takes all that is
    left (fitted ids keep rows apart at any width, so a wider id column only shows more of each)."""
    chosen = [c for c in COLUMNS if c.key != "id"]
    for priority in sorted({c.priority for c in COLUMNS}, reverse=True):
        if _fixed_width(chosen) + _MIN_ID_WIDTH + 2 <= width or priority == 0:
            break
        chosen = [c for c in chosen if c.priority != priority]
    id_width = max(_MIN_ID_WIDTH, width - _fixed_width(chosen) - 2)
    chosen.append(Column("id", "model", id_width, 0))
    return sorted(chosen, key=lambda c: [k.key for k in COLUMNS].index(c.key))


def _fixed_width(columns: list[Column]) -> int:
    return sum(c.width + 2 for c in columns) + _CHROME


class FleetTable(ScrollView, can_focus=True):
    """All models as rows keyed by model id, a header line on top; updates redraw only the cells that changed."""

    COMPONENT_CLASSES = {"fleet-table--header", "fleet-table--cursor"}

    DEFAULT_CSS = """
    FleetTable {
        height: 1fr;
        background: $surface;
        color: $foreground;
        & > .fleet-table--header { text-style: bold; background: $panel; color: $foreground; }
        &:ansi > .fleet-table--header { background: ansi_bright_blue; color: ansi_default; }
        & > .fleet-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        &:focus {
            background-tint: $foreground 5%;
            & > .fleet-table--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
            & > .fleet-table--header { background-tint: $foreground 5%; }
        }
    }
    """

    BINDINGS = [
        Binding(
            "enter",
            "select",
            "Open",
            id="table-open",
            show=False,
            tooltip="Open the model under the cursor.",
        ),
        Binding(
            "up", "cursor(-1)", "Up", id="table-up", show=False, tooltip="Move to the model above."
        ),
        Binding(
            "down",
            "cursor(1)",
            "Down",
            id="table-down",
            show=False,
            tooltip="Move to the model below.",
        ),
        Binding(
            "pageup",
            "page(-1)",
            "Page up",
            id="table-page-up",
            show=False,
            tooltip="One screen up.",
        ),
        Binding(
            "pagedown",
            "page(1)",
            "Page down",
            id="table-page-down",
            show=False,
            tooltip="One screen down.",
        ),
        Binding("home", "first", "First", id="table-first", show=False, tooltip="The worst model."),
        Binding("end", "last", "Last", id="table-last", show=False, tooltip="The last model."),
    ]

    cursor_row: reactive[int] = reactive(0)
    """Index of the selected model in ``shown_ids``."""

    class Opened(Message):
        """The engineer chose a model (Enter, or a click on the selected row)."""

        def __init__(self, model_id: str) -> None:
            super().__init__()
            self.model_id = model_id

    class NewWorstPage(Message):
        """A model that pages (or raised a ticket) became the worst of the fleet; ``followed`` when the cursor
        moved onto it."""

        def __init__(self, model_id: str, followed: bool) -> None:
            super().__init__()
            self.model_id = model_id
            self.followed = followed

    def __init__(self, glyphs: Glyphs, *, hold_seconds: float = 5.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.glyphs = glyphs
        self.hold_seconds = hold_seconds
        """After the engineer moves the cursor, a new page at the top leaves it where it is this long."""
        self._moved_at = -math.inf
        """time.monotonic() of the engineer's last cursor move."""
        self._worst: str | None = None
        """The worst model of the whole fleet (filter or not) when the order was last made."""
        self.models: dict[str, ModelRow] = {}
        self.columns: list[Column] = []
        self._haystacks: dict[str, str] = {}
        self._cells: dict[str, dict[str, Text]] = {}
        self._lines: dict[str, Strip] = {}
        """Each shown row drawn once, without the row's background: scrolling reuses it."""
        self._words: list[str] = []
        self._ordered: list[str] | None = None
        """Every model id, worst first; kept while no model moves, so a filter keystroke does not sort."""
        self._shown: list[str] = []
        self._matches: dict[tuple[str, ...], list[str]] = {}
        """What recent filters showed of the current order and data: a keystroke that narrows one (another
        letter, another word) scans what it showed instead of the whole fleet (50,000 models at 50k)."""
        self._rows: dict[str, int] = {}
        self._rebuild_pending = False
        self._fitted: dict[str, str] = {}
        """Each model's id as it fits the id column, no two alike (see fitted_ids)."""
        self._fitted_for: tuple[int, int] | None = None
        """(id column width, fleet version) the fitted ids were made for."""
        self._fleet_version = 0
        """Bumped whenever a model id comes or goes."""
        self.data_version = 0
        """Bumped whenever any model changes: what the counts are of."""

    # --- data -----------------------------------------------------------------

    def set_models(self, models: list[ModelRow]) -> None:
        """Replace the whole fleet (a full refresh): rows change only where the data did."""
        fresh = {model.id: model for model in models}
        if fresh.keys() == self.models.keys() and all(
            sort_key(fresh[i]) == sort_key(self.models[i]) for i in fresh
        ):
            for model in models:
                self.update_model(model)
            return
        if fresh.keys() != self.models.keys():
            self._fleet_version += 1
        self.data_version += 1
        self.models = fresh
        self._haystacks = {i: haystack(m) for i, m in fresh.items()}
        self._ordered = None
        self._matches = {}
        self._forget_drawn()
        self._rebuild()

    def update_model(self, model: ModelRow) -> None:
        """One model changed: re-sort when its place moved, else redraw only the cells that differ."""
        old = self.models.get(model.id)
        if old == model:
            return
        self.models[model.id] = model
        self.data_version += 1
        self._haystacks[model.id] = haystack(model)
        self._matches = {}  # its words may match differently now
        if old is None:
            self._fleet_version += 1
        if old is None or sort_key(old) != sort_key(model) or self._visibility_changed(model):
            self._forget(model.id)
            self._ordered = None
            self._schedule_rebuild()
            return
        before = self._cells.get(model.id)
        self._forget(model.id)
        row = self._rows.get(model.id)
        if row is None:
            return
        if before is None:  # not drawn lately: the whole line, if it is on screen
            self.refresh_line(row + 1)
            return
        new = self._cells_of(model.id)
        x = 0
        for column in self.columns:
            width = column.width + 2
            if before[column.key] != new[column.key]:
                self.refresh(
                    Region(x - self.scroll_offset.x, row + 1 - self.scroll_offset.y, width, 1)
                )
            x += width

    def _forget(self, model_id: str) -> None:
        self._cells.pop(model_id, None)
        self._lines.pop(model_id, None)

    def _forget_drawn(self) -> None:
        self._cells = {}
        self._lines = {}

    def _visibility_changed(self, model: ModelRow) -> bool:
        visible = matches(model, self._words, self._haystacks[model.id])
        return visible != (model.id in self._rows)

    def set_filter(self, words: list[str]) -> None:
        if words != self._words:
            self._words = words
            self._rebuild()

    @property
    def shown_ids(self) -> list[str]:
        return list(self._shown)

    @property
    def row_count(self) -> int:
        return len(self._shown)

    def get_row(self, model_id: str) -> list[Text]:
        """The cells of a model's row, in column order."""
        cells = self._cells_of(model_id)
        return [cells[column.key] for column in self.columns]

    def restyle(self) -> None:
        """Re-render every cell (the theme or glyphs changed)."""
        self._forget_drawn()
        self.refresh()

    # --- layout ---------------------------------------------------------------

    def on_resize(self) -> None:
        if columns_for(self.size.width) != self.columns:
            self._rebuild()

    def _schedule_rebuild(self) -> None:
        """Coalesce a burst of re-sorts (many events at once) into one rebuild."""
        if not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_later(self.settle)

    def settle(self) -> None:
        """Do a scheduled re-sort now (once): what is counted is then what is drawn."""
        if self._rebuild_pending:
            self._rebuild()

    def _rebuild(self) -> None:
        """Lay out columns for the width and put the rows in order, keeping the cursor on its model."""
        self._rebuild_pending = False
        current = self.selected_id()
        columns = columns_for(self.size.width or 120)
        if columns != self.columns:
            self.columns = columns
            self._forget_drawn()
        self._fit_ids()
        new_page = None
        if self._ordered is None:
            self._ordered = [m.id for m in sorted(self.models.values(), key=sort_key)]
            worst = self._ordered[0] if self._ordered else None
            if (
                worst != self._worst
                and self._worst is not None
                and worst is not None
                and self.models[worst].attention in CALLS_FOR_SOMEONE
            ):
                new_page = worst
            self._worst = worst
        self._shown = self._filtered(self._ordered)
        self._rows = {model_id: row for row, model_id in enumerate(self._shown)}
        self.virtual_size = Size(sum(c.width + 2 for c in columns), len(self._shown) + 1)
        row = min(self.cursor_row, max(len(self._shown) - 1, 0))
        if current is not None:
            row = self._rows.get(current, row)
        # The cursor follows a new worst page (Enter then opens what pages), unless the engineer has just
        # put it somewhere: then it stays, and the screen says where the page is.
        followed = new_page is not None and new_page in self._rows and not self.recently_moved()
        if followed and new_page is not None:
            row = self._rows[new_page]
        self.move_cursor(row=row)
        self.refresh()
        if new_page is not None:
            self.post_message(self.NewWorstPage(new_page, followed))

    def _filtered(self, ordered: list[str]) -> list[str]:
        """The ids the filter shows, in order; from a wider filter's result when one is at hand."""
        words = tuple(self._words)
        if (known := self._matches.get(words)) is not None:
            return known
        candidates = next(
            (self._matches[w] for w in wider_filters(self._words) if w in self._matches), ordered
        )
        shown = narrow(self._words, candidates, self.models, self._haystacks)
        if len(self._matches) >= _MATCHES_KEPT:
            del self._matches[next(iter(self._matches))]  # the oldest
        self._matches[words] = shown
        return shown

    def _fit_ids(self) -> None:
        """Fit every id to the id column once per width and fleet (not per filter keystroke)."""
        width = next(c.width for c in self.columns if c.key == "id")
        if self._fitted_for == (width, self._fleet_version):
            return
        self._fitted_for = (width, self._fleet_version)
        types: dict[str, str] = {}  # many models share a type: each is sanitized once
        fitted = fit_ids(
            {
                i: (sanitize(m.id), types.get(m.type) or types.setdefault(m.type, sanitize(m.type)))
                for i, m in self.models.items()
            },
            width,
            self.glyphs.ellipsis,
        )
        if fitted != self._fitted:
            changed = [i for i, text in fitted.items() if self._fitted.get(i) != text]
            self._fitted = fitted
            for model_id in changed:
                self._forget(model_id)

    def shown_id(self, model_id: str) -> str:
        """The model's id as its row shows it."""
        return self._fitted.get(model_id) or sanitize(model_id)

    # --- cursor ---------------------------------------------------------------

    def selected_id(self) -> str | None:
        if not self._shown:
            return None
        return self._shown[min(self.cursor_row, len(self._shown) - 1)]

    def recently_moved(self) -> bool:
        """The engineer moved the cursor within the last ``hold_seconds``."""
        return time.monotonic() - self._moved_at < self.hold_seconds

    def worst_page(self) -> str | None:
        """The worst model that pages (else the worst ticket), shown or not."""
        if self._ordered is None:
            self._rebuild()
        ordered = self._ordered or []
        return next((i for i in ordered if self.models[i].attention in CALLS_FOR_SOMEONE), None)

    def select(self, model_id: str) -> bool:
        """Put the cursor on a shown model, as the engineer's own move; False when the model is not shown."""
        row = self._rows.get(model_id)
        if row is None:
            return False
        self._moved()
        self.move_cursor(row=row)
        return True

    def _moved(self) -> None:
        self._moved_at = time.monotonic()

    def move_cursor(self, *, row: int) -> None:
        """Select row ``row`` (clamped) and scroll it into view."""
        self.cursor_row = max(0, min(row, len(self._shown) - 1))
        page = max(self.scrollable_content_region.height - 1, 1)
        if self.cursor_row < self.scroll_offset.y:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= self.scroll_offset.y + page:
            self.scroll_to(y=self.cursor_row - page + 1, animate=False, immediate=True)

    def watch_cursor_row(self, old: int, new: int) -> None:
        for row in (old, new):
            self.refresh_line(row + 1)

    def action_cursor(self, step: int) -> None:
        self._moved()
        self.move_cursor(row=self.cursor_row + step)

    def action_page(self, step: int) -> None:
        self._moved()
        self.move_cursor(
            row=self.cursor_row + step * max(self.scrollable_content_region.height - 1, 1)
        )

    def action_first(self) -> None:
        self._moved()
        self.move_cursor(row=0)

    def action_last(self) -> None:
        self._moved()
        self.move_cursor(row=len(self._shown) - 1)

    def action_select(self) -> None:
        model_id = self.selected_id()
        if model_id is not None:
            self.post_message(self.Opened(model_id))

    def on_click(self, event: Click) -> None:
        row = event.y - 1 + self.scroll_offset.y
        if event.y < 1 or row >= len(self._shown):
            return
        if row == self.cursor_row:
            self.action_select()
        else:
            self._moved()
            self.move_cursor(row=row)

    # --- drawing --------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if y == 0:
            labels = [Text(f" {c.label:<{c.width}} ") for c in self.columns]
            line = self._strip(Text.assemble(*labels))
            style = self.get_component_rich_style("fleet-table--header")
        else:
            row = y - 1 + self.scroll_offset.y
            if row >= len(self._shown):
                return Strip.blank(width, self.rich_style)
            model_id = self._shown[row]
            cached = self._lines.get(model_id)
            if cached is None:
                cached = self._lines[model_id] = self._row_strip(model_id)
            line = cached
            style = self.rich_style
            if row == self.cursor_row:
                # The cursor's colours win over the cells' own, so the selected row reads as one bar.
                cursor = style + self.get_component_rich_style("fleet-table--cursor")
                line = Strip(Segment.apply_style(line, post_style=cursor), line.cell_length)
                style = cursor
        scroll_x = self.scroll_offset.x
        return (
            line.crop(scroll_x, scroll_x + width)
            .apply_style(style)
            .adjust_cell_length(width, style)
        )

    def _row_strip(self, model_id: str) -> Strip:
        cells = self._cells_of(model_id)
        parts: list[Text] = []
        for column in self.columns:
            parts.extend((Text(" "), self._fit(cells[column.key], column.width), Text(" ")))
        return self._strip(Text.assemble(*parts))

    def _fit(self, cell: Text, width: int) -> Text:
        """The cell cut to ``width`` with this glyph set's ellipsis (Rich's own is always "…"), padded."""
        cell = cell.copy()
        if cell.cell_len > width:
            ellipsis = self.glyphs.ellipsis
            cell.truncate(max(width - len(ellipsis), 0), overflow="crop")
            cell.append(ellipsis[:width])
        cell.truncate(width, overflow="crop", pad=True)
        return cell

    def _strip(self, text: Text) -> Strip:
        return Strip(list(text.render(self.app.console)), text.cell_len)

    def _cells_of(self, model_id: str) -> dict[str, Text]:
        cells = self._cells.get(model_id)
        if cells is None:
            if len(self._cells) >= _DRAWN_ROWS_KEPT:
                self._forget_drawn()  # scrolled through a big fleet: keep memory flat
            cells = self._cells[model_id] = self._render_cells(self.models[model_id])
        return cells

    def _render_cells(self, model: ModelRow) -> dict[str, Text]:
        colours = palette(self.app)
        attention_style = colours.get(ATTENTION_STYLE[model.attention], "")
        budget_style = colours.get("error", "") if (model.budget_remaining or 0) < 0 else ""
        incident = f"#{model.open_incident_id}" if model.open_incident_id is not None else ""
        missing = self.glyphs.missing
        return {
            "health": Text(
                self.glyphs.attention[model.attention], style=attention_style, no_wrap=True
            ),
            "budget": Text(
                f"{budget_text(model.budget_remaining, missing):>5}", style=budget_style
            ),
            "calibration": Text(f"{signal_text(model.calibration, missing):>5}"),
            "ne": Text(f"{signal_text(model.normalized_entropy, missing):>5}"),
            "tier": Text(model.tier.value, style="bold" if model.tier.rank <= 1 else ""),
            "id": Text(self.shown_id(model.id), no_wrap=True),
            "incident": Text(incident),
            "type": Text(
                sanitize(f"{model.surface}{self.glyphs.separator}{model.stage}"), no_wrap=True
            ),
            "role": Text(model.role.value),
            "owner": Text(sanitize(model.owner_team), no_wrap=True),
        }
