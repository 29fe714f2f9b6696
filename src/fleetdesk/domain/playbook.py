"""The playbook: which actions apply to a model, why not, what they change and how they are confirmed."""

from __future__ import annotations

from enum import StrEnum


class ActionKind(StrEnum):
    ROLLBACK = "rollback"
    END_EXPERIMENT = "end-experiment"
    ESCALATE = "escalate"
    HALT_LAUNCH = "halt-launch"
    ACK = "ack"
    NOTE = "note"

    @property
    def needs_expected_state(self) -> bool:
        return self in (ActionKind.ROLLBACK, ActionKind.END_EXPERIMENT, ActionKind.HALT_LAUNCH)

    @property
    def needs_reason(self) -> bool:
        return self in (ActionKind.ROLLBACK, ActionKind.END_EXPERIMENT, ActionKind.HALT_LAUNCH, ActionKind.ESCALATE)


class EscalationTarget(StrEnum):
    OWNER = "owner"
    UPSTREAM = "upstream"
