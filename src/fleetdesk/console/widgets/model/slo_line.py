"""The SLO in one line, for 80x24: budget left, the worst burn, the alert that fires, the open incident."""

from __future__ import annotations

from rich.text import Text

from fleetdesk.console.palette import palette
from fleetdesk.console.widgets.common.quiet import QuietStatic
from fleetdesk.console.widgets.model.slo_panel import duration_words
from fleetdesk.wire import ModelDetail, Severity


class SloLine(QuietStatic):
    """``SLO budget 42% · worst burn 14.9x/1h · ‼ PAGE page-fast · incident #3 [i]``: what decides tonight
    first, so the 80-column line cuts the least of it (the objective is in the wide layout's panel)."""

    DEFAULT_CSS = """
    SloLine { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def show(self, detail: ModelDetail, ascii_only: bool) -> None:
        slo = detail.slo
        colours = palette(self.app)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("SLO ", style="bold")
        if slo.budget_remaining is None:
            text.append("budget: no data")
        else:
            spent = slo.budget_remaining < 0
            text.append(
                f"budget {slo.budget_remaining:.0%}",
                style=f"bold {colours.get('error', '')}" if spent else "bold",
            )
        rated = [rate for rate in slo.burn_rates if rate.rate is not None]
        if rated:
            worst = max(rated, key=lambda rate: rate.rate or 0.0)
            text.append(f" · worst burn {worst.rate:.1f}x/{duration_words(worst.window)}")
        # The page outranks a ticket: the line names the alert that decides what happens tonight.
        alerts = sorted(slo.alerts, key=lambda alert: alert.severity is not Severity.PAGE)
        if alerts:
            alert = alerts[0]
            paging = alert.severity is Severity.PAGE
            mark = ("!!" if ascii_only else "‼") if paging else "!"
            style = colours.get("error" if paging else "warning", "")
            text.append(" · ")
            text.append(f"{mark} {alert.severity.upper()} {alert.rule}", style=f"bold {style}")
        else:
            text.append(" · no alert firing")
        if detail.open_incident_id is not None:
            text.append(f" · incident #{detail.open_incident_id} [i]")
        self.show_text(text)
