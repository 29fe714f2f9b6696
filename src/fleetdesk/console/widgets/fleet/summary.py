"""The fleet header: models by health × tier, and how fresh the data is."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from datetime import datetime

from rich.text import Text

from fleetdesk.console.host import host
from fleetdesk.console.palette import palette
from fleetdesk.console.widgets.common.quiet import QuietStatic
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import Health, ModelRow, Tier


class FleetCounts(QuietStatic):
    """'TIER0 ✗2 ?0 ✓10 · TIER1 …' plus totals; repaints only when a count changes."""

    DEFAULT_CSS = """
    FleetCounts { height: auto; padding: 0 1; background: $surface; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._shown: tuple | None = None
        self._counted: tuple | None = None

    def show_counts(self, models: Collection[ModelRow], shown: int, version: int) -> None:
        """``version`` names the data ``models`` hold (FleetTable.data_version): they are counted again only when
        it moves, not at each filter keystroke, which changes only how many are shown (50,000 models took 7 ms
        to count)."""
        if self._counted is None or self._counted[0] != version:
            counts = Counter((m.tier, m.health) for m in models)
            open_incidents = len(
                {m.open_incident_id for m in models if m.open_incident_id is not None}
            )
            self._counted = (version, counts, open_incidents, shared_groups(models))
        _, counts, open_incidents, groups = self._counted
        key = (
            tuple(sorted(counts.items())),
            len(models),
            shown,
            open_incidents,
            groups,
            self.app.theme,
        )
        if key == self._shown:
            return
        self._shown = key
        glyphs = host(self).glyphs
        colours = palette(self.app)
        line = Text(no_wrap=False)
        line.append(f"{len(models)} models", style="bold")
        if shown != len(models):
            line.append(f" ({shown} shown)")
        line.append(f" · {open_incidents} open incident{'s' if open_incidents != 1 else ''}")
        line.append(
            f"   [{glyphs.health[Health.UNSTABLE]} unstable {glyphs.health[Health.NO_DATA]} no data "
            f"{glyphs.health[Health.STABLE]} stable]\n",
            style=colours.get("foreground-muted", ""),
        )
        for index, tier in enumerate(Tier):
            if index:
                line.append(glyphs.separator)
            line.append(f"T{tier.rank} ", style="bold")
            for health, style in (
                (Health.UNSTABLE, "error"),
                (Health.NO_DATA, "warning"),
                (Health.STABLE, "success"),
            ):
                count = counts.get((tier, health), 0)
                colour = colours.get(style, "") if count and health is not Health.STABLE else ""
                line.append(
                    f"{glyphs.health[health]}{count}", style=f"bold {colour}" if colour else ""
                )
                if health is not Health.STABLE:
                    line.append(" ")
        for incident_id, label, started, count in groups:
            line.append(
                f"\n#{incident_id} shared cause suspected: ",
                style=f"bold {colours.get('warning', '')}",
            )
            line.append(f"{sanitize(label)}, {count} models since {started:%m-%d %H:%M}")
        self.show_text(line)


def shared_groups(models: Iterable[ModelRow]) -> tuple[tuple[int, str, datetime, int], ...]:
    """(incident, surface, since, models) of each open shared-cause incident, oldest first."""
    found: dict[int, list] = {}
    for model in models:
        if (
            model.open_incident_id is not None
            and model.group_label is not None
            and model.group_started is not None
        ):
            entry = found.setdefault(
                model.open_incident_id,
                [model.open_incident_id, model.group_label, model.group_started, 0],
            )
            entry[3] += 1
    return tuple(tuple(entry) for entry in sorted(found.values(), key=lambda e: (e[2], e[0])))  # type: ignore[misc]
