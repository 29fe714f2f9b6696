"""Identity and the server itself: who a token is, what the server runs, its clock."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from fleetdesk.domain.bounds import Moment, MomentText, Span
from fleetdesk.domain.slo import SloPolicy
from fleetdesk.wire.base import API_PREFIX, WireModel


class AccessRole(StrEnum):
    """What a token may do (not to be confused with a model's registry Role)."""

    VIEWER = "viewer"
    ONCALL = "oncall"
    ADMIN = "admin"


class WhoAmI(WireModel):
    user: str
    role: AccessRole
    teams: list[str] = Field(description="Team scope; empty for admin and viewer")
    demo: bool = Field(default=False, description="True: unauthenticated read-only demo mode")


class ServerInfo(WireModel):
    version: str
    api: str = API_PREFIX
    fleet: str
    now: Moment = Field(description="The server clock; use it, not the local clock, for 'ago'")
    clock_frozen: bool
    bucket: Span
    slo: SloPolicy
    demo: bool
    models: int


class ClockUpdate(WireModel):
    now: MomentText
