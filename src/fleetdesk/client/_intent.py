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

from fleetdesk.wire import ActionKind, ActionRequest


def new_idempotency_key() -> str:
    return str(uuid.uuid4())


class ActionIntent(BaseModel):
    """An action on one model, with the key that makes sending it again safe."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ActionKind
    model_id: str = Field(min_length=1)
    request: ActionRequest
    idempotency_key: str = Field(
        default_factory=new_idempotency_key, pattern=r"^[\x21-\x7e]{1,200}$"
    )

    @model_validator(mode="after")
    def _complete(self) -> ActionIntent:
        if self.kind.needs_expected_state and not self.request.expected_serving_model_id:
            raise ValueError(
                f"{self.kind} needs expected_serving_model_id (the serving model you saw)"
            )
        if self.kind.needs_reason and not self.request.reason.strip():
            raise ValueError(f"{self.kind} needs a reason")
        if self.kind is ActionKind.NOTE and not (self.request.text or "").strip():
            raise ValueError("a note needs text")
        return self

    @classmethod
    def of(cls, kind: ActionKind | str, model_id: str, **request: object) -> ActionIntent:
        """A new intent to do ``kind`` to ``model_id``; ``request`` holds the ActionRequest fields
        (reason, expected_serving_model_id, target, text, dry_run)."""
        return cls(
            kind=ActionKind(kind), model_id=model_id, request=ActionRequest.model_validate(request)
        )

    @property
    def dry_run(self) -> bool:
        return self.request.dry_run

    def as_dry_run(self) -> ActionIntent:
        """A preview of this intent: same request with dry_run set, and its own key."""
        return ActionIntent(
            kind=self.kind,
            model_id=self.model_id,
            request=self.request.model_copy(update={"dry_run": True}),
        )

    def describe(self) -> str:
        """Plain words for messages, e.g. 'rollback of ig_feed_x (dry run)'."""
        return f"{self.kind} of {self.model_id}{' (dry run)' if self.dry_run else ''}"
