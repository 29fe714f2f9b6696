"""One user intent to act on a model, holding its idempotency key for every try.

Create an ActionIntent when the engineer decides (presses the key), and send
that same object on every retry: the server runs a key at most once, so a retry
after a timeout either replays the stored result or finds the work in progress.
A preview (``as_dry_run``) gets its own key: dry runs never claim keys, and a
preview must never be mistaken for the real thing.
"""

from __future__ import annotations

import uuid

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fleetdesk.wire import ActionKind, ActionRequest, EscalationTarget


def new_idempotency_key() -> str:
    return str(uuid.uuid4())


class ActionIntent(BaseModel):
    """An action on one model, with the key that makes sending it again safe."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ActionKind
    model_id: str = Field(min_length=1)
    request: ActionRequest
    idempotency_key: str = Field(default_factory=new_idempotency_key, pattern=r"^[\x21-\x7e]{1,200}$")

    @model_validator(mode="after")
    def _complete(self) -> ActionIntent:
        if self.kind.needs_expected_state and not self.request.expected_serving_model_id:
            raise ValueError(f"{self.kind} needs expected_serving_model_id (the serving model you saw)")
        if self.kind.needs_reason and not self.request.reason.strip():
            raise ValueError(f"{self.kind} needs a reason")
        if self.kind is ActionKind.NOTE and not (self.request.text or "").strip():
            raise ValueError("a note needs text")
        return self

    @classmethod
    def rollback(cls, model_id: str, *, expected_serving_model_id: str, reason: str,
                 dry_run: bool = False) -> ActionIntent:
        """Serve the baseline instead of ``model_id``."""
        return cls._make(ActionKind.ROLLBACK, model_id, reason=reason, dry_run=dry_run,
                         expected_serving_model_id=expected_serving_model_id)

    @classmethod
    def end_experiment(cls, model_id: str, *, expected_serving_model_id: str, reason: str,
                       dry_run: bool = False) -> ActionIntent:
        """Stop traffic to an experiment; it goes back to the baseline."""
        return cls._make(ActionKind.END_EXPERIMENT, model_id, reason=reason, dry_run=dry_run,
                         expected_serving_model_id=expected_serving_model_id)

    @classmethod
    def halt_launch(cls, model_id: str, *, expected_serving_model_id: str, reason: str,
                    dry_run: bool = False) -> ActionIntent:
        """Freeze a scale-up where it is."""
        return cls._make(ActionKind.HALT_LAUNCH, model_id, reason=reason, dry_run=dry_run,
                         expected_serving_model_id=expected_serving_model_id)

    @classmethod
    def escalate(cls, model_id: str, *, reason: str, target: EscalationTarget = EscalationTarget.OWNER,
                 dry_run: bool = False) -> ActionIntent:
        """Page the owning team, or each direct upstream model's team."""
        return cls._make(ActionKind.ESCALATE, model_id, reason=reason, dry_run=dry_run, target=target)

    @classmethod
    def ack(cls, model_id: str, *, reason: str = "", dry_run: bool = False) -> ActionIntent:
        """Acknowledge the model's open incident."""
        return cls._make(ActionKind.ACK, model_id, reason=reason, dry_run=dry_run)

    @classmethod
    def note(cls, model_id: str, text: str, *, dry_run: bool = False) -> ActionIntent:
        """Attach a note to the model's incident (or to the model when none is open)."""
        return cls._make(ActionKind.NOTE, model_id, dry_run=dry_run, text=text)

    @classmethod
    def _make(cls, kind: ActionKind, model_id: str, **request: object) -> ActionIntent:
        return cls(kind=kind, model_id=model_id, request=ActionRequest.model_validate(request))

    @property
    def dry_run(self) -> bool:
        return self.request.dry_run

    def as_dry_run(self) -> ActionIntent:
        """A preview of this intent: same request with dry_run set, and its own key."""
        return ActionIntent(kind=self.kind, model_id=self.model_id,
                            request=self.request.model_copy(update={"dry_run": True}))

    def describe(self) -> str:
        """Plain words for messages, e.g. 'rollback of ig_feed_x (dry run)'."""
        return f"{self.kind} of {self.model_id}{' (dry run)' if self.dry_run else ''}"
