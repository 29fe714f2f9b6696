"""The example Alertmanager configuration, routed by the fleet's monitoring policy.

Critical alerts (a tier's paging rules, TIER0/TIER1 escalations) page around the clock; warnings open
tickets; a ticket the policy holds for working hours (``hold="working-hours"``, see prometheus_rules) goes
to the ticket receiver only inside its owning team's working hours, in the team's own time zone: one route
and one time interval per time zone the fleet's teams are in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import yaml

from fleetdesk.domain.policy import MonitoringPolicy, Weekday
from fleetdesk.domain.registry import Model
from fleetdesk.server.integrations.prometheus_rules import HELD

PAGER, TICKETS = "pager", "tickets"
_DAY_NAMES = {
    Weekday.MON: "monday",
    Weekday.TUE: "tuesday",
    Weekday.WED: "wednesday",
    Weekday.THU: "thursday",
    Weekday.FRI: "friday",
    Weekday.SAT: "saturday",
    Weekday.SUN: "sunday",
}


def interval_name(zone: str) -> str:
    """'working-hours-america-new-york' for America/New_York."""
    return "working-hours-" + re.sub(r"[^a-z0-9]+", "-", zone.lower()).strip("-")


def zones_in_use(monitoring: MonitoringPolicy, models: Iterable[Model]) -> list[str]:
    """Every time zone an owning team of the fleet is in, the default one first."""
    zones = {
        monitoring.team_timezones.get(m.owner_team, monitoring.default_timezone) for m in models
    }
    return [monitoring.default_timezone] + sorted(zones - {monitoring.default_timezone})


def routing_config(monitoring: MonitoringPolicy, models: Iterable[Model]) -> dict[str, Any]:
    """The configuration as a plain document (what `amtool check-config` reads)."""
    hours = monitoring.working_hours
    zones = zones_in_use(monitoring, models)
    held_routes = [
        {
            "matchers": ['severity="warning"', f'hold="{HELD}"', f'timezone="{zone}"'],
            "receiver": TICKETS,
            "active_time_intervals": [interval_name(zone)],
        }
        for zone in zones
    ]
    return {
        "route": {
            "receiver": TICKETS,
            "group_by": ["alertname", "team", "model_id"],
            "group_wait": "30s",
            "group_interval": "5m",
            "repeat_interval": "4h",
            "routes": [
                {"matchers": ['severity="critical"'], "receiver": PAGER, "repeat_interval": "1h"},
                *held_routes,
                {"matchers": ['severity="warning"'], "receiver": TICKETS},
                {"matchers": ['severity="info"'], "receiver": TICKETS, "repeat_interval": "24h"},
            ],
        },
        "time_intervals": [
            {
                "name": interval_name(zone),
                "time_intervals": [
                    {
                        "weekdays": [_DAY_NAMES[day] for day in hours.days],
                        "times": [
                            {
                                "start_time": hours.start.strftime("%H:%M"),
                                "end_time": hours.end.strftime("%H:%M"),
                            }
                        ],
                        "location": zone,
                    }
                ],
            }
            for zone in zones
        ],
        "receivers": [
            {"name": PAGER, "webhook_configs": [{"url": "http://127.0.0.1:9000/pager"}]},
            {"name": TICKETS, "webhook_configs": [{"url": "http://127.0.0.1:9000/tickets"}]},
        ],
    }


HEADER = """\
# Example Alertmanager routing for fleetdesk: escalations from `fleetdesk serve
# --alertmanager-url` (alertname FleetdeskEscalation) and the generated SLO
# burn-rate alerts both carry model_id, model_type, tier and severity labels;
# escalations also carry team. Critical pages around the clock; a ticket the
# tier policy holds for working hours (hold="working-hours") reaches the ticket
# receiver only inside its team's working hours, in its time zone. Replace the
# receivers with your pager and ticket integrations.
"""


def routing_yaml(monitoring: MonitoringPolicy, models: Iterable[Model], header: str = "") -> str:
    return (
        header
        + HEADER
        + yaml.safe_dump(routing_config(monitoring, models), sort_keys=False, width=100)
    )
