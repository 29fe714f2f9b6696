"""One API call: deadline, bounded retries, and turning any outcome into a value or a typed error.

Retries are only for requests that are safe to repeat: reads, and changes that
carry an Idempotency-Key (the server replays the stored result for a key it has
seen, so a repeated change cannot happen twice). A change without a key is
never repeated.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

import httpx
from pydantic import BaseModel, SecretStr, TypeAdapter, ValidationError

from fleetdesk.client._errors import (
    BadResponse,
    FleetdeskError,
    IdempotencyConflict,
    NotConfirmed,
    Unavailable,
)
from fleetdesk.client._policy import ClientTimeouts, RetryPolicy
from fleetdesk.client._problems import error_from_problem

T = TypeVar("T")

log = logging.getLogger("fleetdesk.client")

RETRY_STATUSES = frozenset({502, 503, 504})
REDACTED = "**********"
MAX_ANSWER_BYTES = 32 * 1024 * 1024
"""Most bytes of answers a client holds at once, all its concurrent calls together: a page of 1,000 models is
about 1 MB, 500 events a few. Without it a server (or anything at its address) could send gigabytes into memory,
and parsing them costs several times more; per call alone, a dozen calls at once would each take the cap."""


class AnswerBudget:
    """Bytes being read into memory right now, across a client's concurrent calls."""

    def __init__(self, limit: int = MAX_ANSWER_BYTES) -> None:
        self.limit = limit
        self.held = 0


class BearerAuth(httpx.Auth):
    """Adds the bearer token at send time, so it lives in no default header and no repr."""

    def __init__(self, token: SecretStr) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request):  # type: ignore[no-untyped-def]
        request.headers["Authorization"] = f"Bearer {self._token.get_secret_value()}"
        yield request

    def __repr__(self) -> str:
        return f"BearerAuth(token={REDACTED!r})"


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def adapter(shape: type[T]) -> TypeAdapter[T]:
    """The validator for a response model, built once per model."""
    found = _ADAPTERS.get(shape)
    if found is None:
        found = _ADAPTERS[shape] = TypeAdapter(shape)
    return found


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """What to send, and the model its answer must validate as."""

    method: str
    path: str
    shape: type[T]
    params: Mapping[str, Any] | None = None
    body: BaseModel | None = None
    idempotency_key: str | None = None
    what: str = ""

    @property
    def changes_state(self) -> bool:
        return self.method not in ("GET", "HEAD", "OPTIONS")

    @property
    def repeatable(self) -> bool:
        return not self.changes_state or self.idempotency_key is not None

    @property
    def label(self) -> str:
        return self.what or f"{self.method} {self.path}"


class Caller:
    """Runs Calls over one httpx.AsyncClient under the client's timeouts and retry policy."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        timeouts: ClientTimeouts,
        retry: RetryPolicy,
        token: SecretStr | None,
        rng: random.Random | None = None,
    ) -> None:
        self._http = http
        self._timeouts = timeouts
        self._retry = retry
        self._token = token
        self._rng = rng or random.Random()
        self.budget = AnswerBudget()

    def redact(self, text: str) -> str:
        """``text`` with the token (should a server ever echo it) replaced."""
        if self._token is not None:
            secret = self._token.get_secret_value()
            if secret:
                text = text.replace(secret, REDACTED)
        return text

    async def run(self, call: Call[T]) -> T:
        """Send ``call`` (retrying when safe) and return its parsed answer, or raise a FleetdeskError."""
        loop = asyncio.get_running_loop()
        give_up_at = loop.time() + self._timeouts.deadline
        maybe_delivered = sending = False
        try:
            async with asyncio.timeout_at(give_up_at):
                failures = 0
                while True:
                    sending = True
                    server_hint: float | None = None
                    try:
                        response, body = await self._send(call)
                    except httpx.TransportError as error:
                        sending = False
                        maybe_delivered = maybe_delivered or not _never_sent(error)
                        failure = self._transport_failure(call, error, maybe_delivered)
                    else:
                        sending = False
                        maybe_delivered = True
                        outcome = self._read(call, response, body)
                        if not isinstance(outcome, FleetdeskError):
                            return cast(T, outcome)
                        if not _worth_retrying(call, response, outcome):
                            raise outcome
                        failure = outcome
                        server_hint = _retry_after(response)
                    failures += 1
                    if not call.repeatable or failures >= self._retry.attempts:
                        raise _settled(call, failure)
                    pause = self._retry.backoff(failures, self._rng)
                    if server_hint is not None:
                        pause = max(
                            pause, server_hint
                        )  # the server knows when it can answer; never sooner
                    if loop.time() + pause >= give_up_at:
                        raise _settled(call, failure)
                    log.debug(
                        "try %d of %s failed, retrying in %.2f s: %s",
                        failures,
                        call.label,
                        pause,
                        failure.message,
                    )
                    await asyncio.sleep(pause)
        except TimeoutError:
            raise self._deadline_failure(call, maybe_delivered or sending) from None

    async def _send(self, call: Call[Any]) -> tuple[httpx.Response, bytes]:
        headers = {"Accept": "application/json"}
        content: bytes | None = None
        if call.body is not None:
            headers["Content-Type"] = "application/json"
            content = call.body.model_dump_json().encode()
        if call.idempotency_key is not None:
            headers["Idempotency-Key"] = call.idempotency_key
        request = self._http.build_request(
            call.method, call.path, params=call.params, content=content, headers=headers
        )
        response = await self._http.send(request, stream=True)
        try:
            return response, await read_capped(response, call.label, self.budget)
        finally:
            await response.aclose()

    def _read(self, call: Call[Any], response: httpx.Response, body: bytes) -> object:
        """The parsed body of a success, or the error the response stands for."""
        text_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        is_json = text_type == "application/json" or text_type.endswith("+json")
        if response.is_success:
            if not is_json:
                return BadResponse(
                    f"{call.label}: expected JSON but the server sent {text_type or 'no content type'}"
                    f" (HTTP {response.status_code}); is the address a fleetdesk server?",
                    status=response.status_code,
                )
            try:
                return adapter(call.shape).validate_json(self.redact(_text(body)))
            except ValidationError as error:
                return BadResponse(
                    f"{call.label}: the answer does not match this client's schema ({_first(error)})",
                    status=response.status_code,
                )
        return error_from_problem(
            call.label, response.status_code, self.redact(_text(body)) if is_json else None
        )

    def _transport_failure(
        self, call: Call[Any], error: httpx.TransportError, maybe_delivered: bool
    ) -> FleetdeskError:
        reason = self.redact(str(error)) or type(error).__name__
        if call.changes_state and maybe_delivered:
            return _not_confirmed(
                call, f"the connection failed after sending ({type(error).__name__})"
            )
        if isinstance(error, httpx.TimeoutException):
            return Unavailable(
                f"{call.label}: the server did not answer in time ({type(error).__name__})"
            )
        return Unavailable(f"{call.label}: cannot reach the server ({reason})")

    def _deadline_failure(self, call: Call[Any], maybe_delivered: bool) -> FleetdeskError:
        seconds = f"{self._timeouts.deadline:g} s"
        if call.changes_state and maybe_delivered:
            return _not_confirmed(call, f"no answer within {seconds}")
        return Unavailable(f"{call.label}: no answer within {seconds}")


async def read_capped(response: httpx.Response, label: str, budget: AnswerBudget) -> bytes:
    """The body of a streamed response, refused (BadResponse) once the budget's bytes in memory would pass its limit."""
    declared = response.headers.get("content-length", "")
    too_big = BadResponse(
        f"{label}: the answer is larger than {budget.limit // 2**20} MiB, far more than a"
        " fleetdesk server sends; is the address a fleetdesk server?",
        status=response.status_code,
    )
    if declared.isascii() and declared.isdigit() and int(declared) > budget.limit:
        raise too_big
    body = bytearray()
    try:
        async for (
            chunk
        ) in response.aiter_bytes():  # decoded bytes, so a compressed bomb is held to the cap too
            budget.held += len(chunk)
            body += chunk
            if budget.held > budget.limit:
                raise too_big
        return bytes(body)
    finally:
        budget.held -= len(body)


def _text(body: bytes) -> str:
    return body.decode("utf-8", errors="replace")  # JSON is UTF-8 (RFC 8259)


def _not_confirmed(call: Call[Any], why: str) -> NotConfirmed:
    again = (
        " Sending the same action again is safe: it reuses its idempotency key."
        if call.idempotency_key is not None
        else ""
    )
    return NotConfirmed(
        f"{call.label} not confirmed: {why}; check the audit log before retrying.{again}"
    )


def _settled(call: Call[Any], failure: FleetdeskError) -> FleetdeskError:
    """The error to give up with: a change a gateway may have passed on (502, 504) is not confirmed."""
    if call.changes_state and failure.status in (502, 504):
        return _not_confirmed(call, f"a gateway answered HTTP {failure.status}")
    return failure


def _never_sent(error: httpx.TransportError) -> bool:
    """True when the request cannot have reached the server (no connection was made)."""
    return isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout))


def _worth_retrying(call: Call[Any], response: httpx.Response, error: FleetdeskError) -> bool:
    if not call.repeatable:
        return False
    if response.status_code in RETRY_STATUSES:
        return True
    # Our own earlier attempt may still be running on the server: wait for its stored result.
    return isinstance(error, IdempotencyConflict) and error.in_progress


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds from a Retry-After header in its delta-seconds form (the only form our server sends)."""
    value = response.headers.get("retry-after", "").strip()
    return float(value) if value.isascii() and value.isdigit() else None


def _first(error: ValidationError) -> str:
    details = error.errors(include_url=False, include_input=False)
    if not details:
        return "invalid"
    first = details[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "body"
    more = f" and {len(details) - 1} more" if len(details) > 1 else ""
    return f"{where}: {first.get('msg', 'invalid')}{more}"
