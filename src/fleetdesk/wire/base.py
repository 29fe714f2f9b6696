"""What every wire schema shares: frozen, and built on first use."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from fleetdesk.domain.bounds import FINITE

API_PREFIX = "/v1"
IDEMPOTENCY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
PROBLEM_CONTENT_TYPE = "application/problem+json"

LAZY = ConfigDict(defer_build=True)
"""Schemas are built on first use, not at import: the console starts before it needs most of them."""


class WireModel(BaseModel):
    """A request or response body: immutable once parsed."""

    model_config = ConfigDict(frozen=True, **FINITE, **LAZY)
