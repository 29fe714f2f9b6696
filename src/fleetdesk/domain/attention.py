"""Attention: how badly a model needs a human, from its latest health and the alerts that fire."""

from __future__ import annotations

from collections.abc import Collection
from enum import StrEnum

from fleetdesk.domain.slo import Severity
from fleetdesk.domain.stability import Health


class Attention(StrEnum):
    """How badly a model needs a human, worst first (the fleet's sort key)."""

    PAGE = "page"  # a page-severity burn-rate alert fires
    TICKET = "ticket"  # a ticket-severity alert fires
    UNSTABLE = "unstable"  # latest bucket unstable, no alert yet
    NO_DATA = "no_data"  # latest bucket missing or undefined
    OK = "ok"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {level: rank for rank, level in enumerate(Attention)}
"""Each level's place, worst first (read for every model at every SLO pass)."""


def attention_for(health: Health, alert_severities: Collection[Severity]) -> Attention:
    if Severity.PAGE in alert_severities:
        return Attention.PAGE
    if Severity.TICKET in alert_severities:
        return Attention.TICKET
    if health is Health.UNSTABLE:
        return Attention.UNSTABLE
    if health is Health.NO_DATA:
        return Attention.NO_DATA
    return Attention.OK
