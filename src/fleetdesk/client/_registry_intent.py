"""One intended registry change (a model created, updated or retired, a type record put or retired, or a
declarative apply), with its idempotency key.

Every kind is sent the same way (``client.change_registry(intent)``): the intent knows its route and body, so a
retry resends the same body under the same key and the server applies it at most once.
"""

from __future__ import annotations

import uuid
from enum import StrEnum
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field

from fleetdesk.domain.registry import Model
from fleetdesk.domain.type_record import ModelTypeRecord
from fleetdesk.wire import API_PREFIX, ModelRetire, ModelWrite, RegistryApply, TypeWrite


class RegistryWrite(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    RETIRE = "retire"
    PUT_TYPE = "put-type"
    RETIRE_TYPE = "retire-type"
    APPLY = "apply"


class RegistryIntent(BaseModel):
    """A registry change to send, and the key that makes sending it again safe."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: RegistryWrite
    model_id: str | None = Field(default=None, description="The model changed (not for apply)")
    type_string: str | None = Field(default=None, description="The type whose record is changed")
    request: ModelWrite | ModelRetire | TypeWrite | RegistryApply
    idempotency_key: str = Field(
        default_factory=lambda: str(uuid.uuid4()), pattern=r"^[\x21-\x7e]{1,200}$"
    )

    @classmethod
    def create(cls, model: Model, reason: str, dry_run: bool = False) -> RegistryIntent:
        return cls(
            kind=RegistryWrite.CREATE,
            model_id=model.id,
            request=ModelWrite(model=model, reason=reason, dry_run=dry_run),
        )

    @classmethod
    def update(cls, model: Model, reason: str, dry_run: bool = False) -> RegistryIntent:
        return cls(
            kind=RegistryWrite.UPDATE,
            model_id=model.id,
            request=ModelWrite(model=model, reason=reason, dry_run=dry_run),
        )

    @classmethod
    def retire(cls, model_id: str, reason: str, dry_run: bool = False) -> RegistryIntent:
        return cls(
            kind=RegistryWrite.RETIRE,
            model_id=model_id,
            request=ModelRetire(reason=reason, dry_run=dry_run),
        )

    @classmethod
    def put_type(
        cls, type_string: str, record: ModelTypeRecord, reason: str, dry_run: bool = False
    ) -> RegistryIntent:
        return cls(
            kind=RegistryWrite.PUT_TYPE,
            type_string=type_string,
            request=TypeWrite(record=record, reason=reason, dry_run=dry_run),
        )

    @classmethod
    def retire_type(cls, type_string: str, reason: str, dry_run: bool = False) -> RegistryIntent:
        return cls(
            kind=RegistryWrite.RETIRE_TYPE,
            type_string=type_string,
            request=ModelRetire(reason=reason, dry_run=dry_run),
        )

    @classmethod
    def apply(
        cls,
        models: list[Model],
        reason: str,
        *,
        types: dict[str, ModelTypeRecord] | None = None,
        prune: bool = False,
        dry_run: bool = False,
    ) -> RegistryIntent:
        return cls(
            kind=RegistryWrite.APPLY,
            request=RegistryApply(
                models=models, types=types or {}, reason=reason, prune=prune, dry_run=dry_run
            ),
        )

    @property
    def method(self) -> str:
        return "PUT" if self.kind in (RegistryWrite.UPDATE, RegistryWrite.PUT_TYPE) else "POST"

    @property
    def path(self) -> str:
        base = f"{API_PREFIX}/registry"
        if self.kind is RegistryWrite.APPLY:
            return f"{base}/apply"
        if self.kind is RegistryWrite.CREATE:
            return f"{base}/models"
        if self.kind in (RegistryWrite.PUT_TYPE, RegistryWrite.RETIRE_TYPE):
            segment = quote(self.type_string or "", safe="")
            retire = self.kind is RegistryWrite.RETIRE_TYPE
            return f"{base}/types/{segment}" + ("/retire" if retire else "")
        segment = quote(self.model_id or "", safe="")
        return f"{base}/models/{segment}" + ("/retire" if self.kind is RegistryWrite.RETIRE else "")

    def describe(self) -> str:
        """Plain words for messages, e.g. 'registry update of ig_feed_x (dry run)'."""
        what = (
            "registry apply"
            if self.model_id is None
            else f"registry {self.kind} of {self.model_id}"
        )
        return what + (" (dry run)" if self.request.dry_run else "")
