"""The SLO panel: objective, budget left, burn rate per alert window, firing alerts."""

from __future__ import annotations

from datetime import timedelta

from rich.text import Text

from fleetdesk.console.palette import palette
from fleetdesk.console.widgets.common.quiet import QuietStatic
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import PagingVerdict, Severity, SloStatus


def duration_words(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    if seconds % 86400 == 0:
        return f"{seconds // 86400}d"
    if seconds % 3600 == 0:
        return f"{seconds // 3600}h"
    return f"{seconds // 60}m"


class SloPanel(QuietStatic):
    DEFAULT_CSS = """
    SloPanel { height: auto; min-height: 6; padding: 0 1; border: round $panel-lighten-2; }
    """

    def show(self, slo: SloStatus, ascii_only: bool, paging: PagingVerdict | None = None) -> None:
        colours = palette(self.app)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("SLO ", style="bold")
        text.append(f"{slo.objective:.1%} of slices stable over {duration_words(slo.window)}\n")
        text.append("budget left ", style="bold")
        if slo.budget_remaining is None:
            text.append("no data\n")
        else:
            spent = slo.budget_remaining < 0
            text.append(
                f"{slo.budget_remaining:.0%}",
                style=f"bold {colours.get('error', '')}" if spent else "bold",
            )
            text.append(
                f"  ({slo.counts.bad} bad of {slo.counts.evaluated} slices, "
                f"{slo.budget_total:.1f} allowed)" + (" OVERSPENT" if spent else "") + "\n"
            )
        text.append("burn ", style="bold")
        text.append(
            "  ".join(
                f"{duration_words(rate.window)} "
                + ("—" if rate.rate is None else f"{rate.rate:.1f}x")
                for rate in slo.burn_rates
            )
            + "\n"
        )
        if not slo.alerts:
            text.append("alerts ", style="bold")
            text.append("none firing\n")
        for alert in slo.alerts:
            mark = ("!!" if ascii_only else "‼") if alert.severity is Severity.PAGE else "!"
            style = colours.get("error" if alert.severity is Severity.PAGE else "warning", "")
            text.append(f"{mark} {alert.severity.upper()} {alert.rule}", style=f"bold {style}")
            text.append(
                f": {alert.long_burn_rate:.1f}x / {alert.short_burn_rate:.1f}x ≥ {alert.threshold:g}x\n"
                if not ascii_only
                else f": {alert.long_burn_rate:.1f}x / {alert.short_burn_rate:.1f}x >= {alert.threshold:g}x\n"
            )
        if (
            paging is not None
        ):  # why it pages, tickets or stays quiet: the tier's policy, from the server
            reason = sanitize(paging.reason)
            text.append("why ", style="bold")
            text.append(reason.replace("≥", ">=") if ascii_only else reason)
        self.show_text(text)
