"""The live feed: one async iterator of typed updates, however they arrive.

The feed reads the server-sent event stream; when it drops, it reconnects
with full-jitter backoff and ``Last-Event-ID`` so nothing is missed or
repeated. When the stream cannot be had (no such route, not an event
stream, or several failed connections in a row) it polls the event log,
which holds the same events, and tries the stream again now and then.
Connection changes arrive in the same iterator as ConnectionUpdates, so a
console just renders whatever comes next.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from enum import StrEnum
from typing import Literal, cast

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError

from fleetdesk.client._calls import Caller, read_capped
from fleetdesk.client._errors import FleetdeskError, Forbidden, Unauthorized
from fleetdesk.client._policy import ClientTimeouts, EventStreamPolicy
from fleetdesk.client._problems import error_from_problem
from fleetdesk.client._sse import SseDecoder
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import (
    API_PREFIX,
    ActionEventData,
    BucketClosedData,
    ClockEventData,
    EventPage,
    IncidentEventData,
    RegistryEventData,
    ServerEvent,
    SloChangedData,
)

EVENTS_PATH = f"{API_PREFIX}/events"
UNSUPPORTED_STATUSES = frozenset({404, 405, 406, 501})


class ConnectionState(StrEnum):
    LIVE = "live"  # reading the event stream
    RECONNECTING = "reconnecting"  # the stream dropped; trying again shortly
    POLLING = "polling"  # no stream; reading the event log every few seconds


EventData = (
    BucketClosedData
    | SloChangedData
    | IncidentEventData
    | ActionEventData
    | ClockEventData
    | RegistryEventData
)


class EventUpdate(BaseModel):
    """One server event with its data already typed."""

    model_config = ConfigDict(frozen=True)

    event: ServerEvent
    data: EventData
    via: Literal["stream", "poll"]


class ConnectionUpdate(BaseModel):
    """How the feed is connected now, in words a console can show."""

    model_config = ConfigDict(frozen=True)

    state: ConnectionState
    detail: str
    last_event_id: int | None
    malformed: int


Update = EventUpdate | ConnectionUpdate

ReadLog = Callable[[int, int], Awaitable[EventPage]]
"""Reads the event log: (after, limit) -> the events after that id (the client's ``event_log``)."""


class _NoStream(Exception):
    """The server has no usable event stream; polling is the way."""


class _Dropped(Exception):
    """The stream failed in a way a reconnect may fix."""


class EventFeed:
    """``async for update in client.events(): ...``; also exposes its counters and position."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        caller: Caller,
        read_log: ReadLog,
        policy: EventStreamPolicy,
        timeouts: ClientTimeouts,
        last_event_id: int | None,
    ) -> None:
        self._http = http
        self._caller = caller
        self._read_log = read_log
        self._policy = policy
        self._timeouts = timeouts
        self._rng = random.Random()
        self.last_event_id = last_event_id
        self.malformed = 0
        self.state: ConnectionState | None = None
        self._updates: AsyncGenerator[Update, None] = self._run()

    def __aiter__(self) -> EventFeed:
        return self

    async def __anext__(self) -> Update:
        return await self._updates.__anext__()

    async def aclose(self) -> None:
        await self._updates.aclose()

    async def _run(self) -> AsyncGenerator[Update, None]:
        failures = 0
        server_retry: float | None = None
        while True:
            decoder = SseDecoder()
            try:
                async for update in self._stream(decoder):
                    failures = 0
                    yield update
                why = "the event stream ended"
            except _NoStream as error:
                failures, why = self._policy.poll_after_failures, str(error)
            except httpx.TransportError as error:
                why = f"the event stream dropped ({type(error).__name__})"
            except _Dropped as error:
                why = f"the event stream failed ({error})"
            finally:
                self.malformed += decoder.dropped
                if decoder.retry_ms is not None:
                    server_retry = decoder.retry_ms / 1000
            failures += 1
            if failures >= self._policy.poll_after_failures:
                async for update in self._poll(why):
                    yield update
                failures = 0
                continue
            yield self._status(ConnectionState.RECONNECTING, why)
            await asyncio.sleep(self._policy.backoff(failures, self._rng, server_retry))

    async def _stream(self, decoder: SseDecoder) -> AsyncIterator[Update]:
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if self.last_event_id is not None:
            headers["Last-Event-ID"] = str(self.last_event_id)
        timeout = self._timeouts.for_stream()
        async with self._http.stream(
            "GET", EVENTS_PATH, headers=headers, timeout=timeout
        ) as response:
            if response.status_code in UNSUPPORTED_STATUSES:
                raise _NoStream(f"the server has no event stream (HTTP {response.status_code})")
            if not response.is_success:
                raise await self._refusal(response)
            content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if content_type != "text/event-stream":
                raise _NoStream(
                    f"the event stream answered with {content_type or 'no content type'}"
                )
            yield self._status(ConnectionState.LIVE, "following the live event stream")
            async for chunk in response.aiter_text():
                for message in decoder.feed(chunk):
                    update = self._accept(message.data, "stream")
                    if update is not None:
                        yield update
                self._adopt(decoder.last_event_id)

    async def _poll(self, why: str) -> AsyncIterator[Update]:
        """Follow the event log until it is time to try the stream again."""
        if self.last_event_id is None:
            # Fix "now" before saying we are polling, so nothing that happens after that is skipped.
            try:
                self.last_event_id = await self._latest_event_id()
            except (Unauthorized, Forbidden):
                raise
            except FleetdeskError:
                pass  # the loop below tries again and says what is wrong
        yield self._status(
            ConnectionState.POLLING, f"{why}; polling every {self._policy.poll_interval:g} s"
        )
        loop = asyncio.get_running_loop()
        recheck_at = loop.time() + self._policy.stream_recheck
        trouble: str | None = None
        while loop.time() < recheck_at:
            try:
                if self.last_event_id is None:
                    self.last_event_id = await self._latest_event_id()
                page = await self._read_log(self.last_event_id, self._policy.poll_batch)
            except (Unauthorized, Forbidden):
                raise
            except FleetdeskError as error:
                if error.message != trouble:
                    trouble = error.message
                    yield self._status(ConnectionState.POLLING, f"polling failed: {error.message}")
                await asyncio.sleep(self._policy.poll_interval)
                continue
            if trouble is not None:
                trouble = None
                yield self._status(ConnectionState.POLLING, "polling again")
            for event in page.items:
                update = self._accept(event.model_dump_json(), "poll")
                if update is not None:
                    yield update
            if page.last_id > (self.last_event_id or 0):
                self.last_event_id = page.last_id
            if len(page.items) < self._policy.poll_batch:
                await asyncio.sleep(self._policy.poll_interval)

    async def _latest_event_id(self) -> int:
        """The newest id in the event log: like the stream without Last-Event-ID, polling starts from now."""
        after = 0
        while True:
            page = await self._read_log(after, self._policy.poll_batch)
            if len(page.items) < self._policy.poll_batch:
                return page.last_id
            after = page.last_id

    def _adopt(self, stream_id: str) -> None:
        """Take the position the stream announced (an ``id:`` without data), as EventSource does."""
        if stream_id.isascii() and stream_id.isdigit():
            position = int(stream_id)
            if self.last_event_id is None or position > self.last_event_id:
                self.last_event_id = position

    def _accept(self, data: str, via: Literal["stream", "poll"]) -> EventUpdate | None:
        """A typed update for a new event; None for a malformed one (counted) or one already seen."""
        try:
            event = ServerEvent.model_validate_json(data)
            update = EventUpdate(event=event, data=cast(EventData, event.payload()), via=via)
        except (ValidationError, KeyError):
            self.malformed += 1
            return None
        if self.last_event_id is not None and event.id <= self.last_event_id:
            return None
        self.last_event_id = event.id
        return update

    async def _refusal(self, response: httpx.Response) -> Exception:
        """Auth failures end the feed (retrying cannot help); anything else is a drop to retry."""
        text = (await read_capped(response, "event stream", self._caller.budget)).decode(
            "utf-8", errors="replace"
        )
        content_type = response.headers.get("content-type", "")
        body = self._caller.redact(text) if "json" in content_type else None
        error = error_from_problem("event stream", response.status_code, body)
        if isinstance(error, (Unauthorized, Forbidden)):
            return error
        return _Dropped(error.message)

    def _status(self, state: ConnectionState, detail: str) -> ConnectionUpdate:
        self.state = state
        return ConnectionUpdate(
            state=state,
            detail=sanitize(detail),
            last_event_id=self.last_event_id,
            malformed=self.malformed,
        )
