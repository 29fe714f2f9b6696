"""How long the client waits and how it retries: every limit explicit, none implied."""

from __future__ import annotations

import random

import httpx
from pydantic import BaseModel, ConfigDict, Field, model_validator

from fleetdesk.domain.bounds import FINITE


class ClientTimeouts(BaseModel):
    """Seconds. ``deadline`` bounds a whole call, retries and backoff included."""

    model_config = ConfigDict(frozen=True, extra="forbid", **FINITE)

    connect: float = Field(default=2.0, gt=0.0, description="Opening a TCP connection")
    read: float = Field(default=10.0, gt=0.0, description="Between bytes of a response")
    write: float = Field(default=10.0, gt=0.0, description="Between bytes of a request")
    pool: float = Field(default=2.0, gt=0.0, description="Waiting for a free pooled connection")
    deadline: float = Field(default=15.0, gt=0.0, description="A whole call, all attempts included")
    stream_idle: float = Field(
        default=45.0,
        gt=0.0,
        description="Silence on the event stream before it counts as dropped (the server sends heartbeats)",
    )

    def for_httpx(self) -> httpx.Timeout:
        return httpx.Timeout(connect=self.connect, read=self.read, write=self.write, pool=self.pool)

    def for_stream(self) -> httpx.Timeout:
        return httpx.Timeout(
            connect=self.connect, read=self.stream_idle, write=self.write, pool=self.pool
        )


class RetryPolicy(BaseModel):
    """Bounded retries with full-jitter exponential backoff (AWS architecture blog, 2015)."""

    model_config = ConfigDict(frozen=True, extra="forbid", **FINITE)

    attempts: int = Field(default=4, ge=1, description="Tries per call, the first included")
    base_delay: float = Field(default=0.1, ge=0.0)
    max_delay: float = Field(default=2.0, ge=0.0)

    @model_validator(mode="after")
    def _ordered(self) -> RetryPolicy:
        if self.base_delay > self.max_delay:
            raise ValueError("base_delay must not exceed max_delay")
        return self

    def backoff(self, failures: int, rng: random.Random) -> float:
        """Sleep before the next try after ``failures`` failed tries: uniform in [0, min(cap, base·2^n))."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** (failures - 1))
        return rng.uniform(0.0, ceiling)


class EventStreamPolicy(BaseModel):
    """How the live feed reconnects, and when it gives up on the stream and polls instead."""

    model_config = ConfigDict(frozen=True, extra="forbid", **FINITE)

    reconnect_base: float = Field(
        default=0.5, ge=0.0, description="First reconnect backoff ceiling, seconds"
    )
    reconnect_max: float = Field(
        default=15.0, ge=0.0, description="Largest reconnect backoff ceiling, seconds"
    )
    poll_after_failures: int = Field(
        default=3,
        ge=1,
        description="Consecutive failed stream connections before falling back to polling",
    )
    poll_interval: float = Field(
        default=2.0, gt=0.0, description="Seconds between polls of the event log"
    )
    poll_batch: int = Field(
        default=500, ge=1, le=500, description="Events fetched per poll (the server allows 500)"
    )
    stream_recheck: float = Field(
        default=60.0,
        gt=0.0,
        description="While polling, seconds between attempts to get the stream back",
    )

    def backoff(
        self, failures: int, rng: random.Random, server_retry: float | None = None
    ) -> float:
        """Full-jitter reconnect delay; the server's ``retry:`` hint sets the base when given."""
        base = self.reconnect_base if server_retry is None else server_retry
        ceiling = min(self.reconnect_max, base * 2 ** max(failures - 1, 0))
        return rng.uniform(0.0, ceiling)
