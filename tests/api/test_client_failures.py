"""The client against things that are not a healthy fleetdesk server.

Dead ports, HTML pages, garbage, dropped connections and silence: each must
surface as the right typed error, quickly, with a plain sanitized message and
never the token.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time

import pytest
from pydantic import SecretStr

from fleetdesk.client import (
    ActionIntent,
    BadResponse,
    ClientTimeouts,
    FleetdeskClient,
    FleetdeskError,
    InvalidAddress,
    NotConfirmed,
    RetryPolicy,
    ServerError,
    Unauthorized,
    Unavailable,
)
from fleetdesk.wire import ActionKind

from .rawserver import Handler, RawRequest, RawServer, answer, response

SECRET = "fd_TOPSECRET_4242_token"
TOKEN = SecretStr(SECRET)
FAST = ClientTimeouts(connect=0.5, read=0.5, write=0.5, pool=0.5, deadline=1.5)
QUICK_RETRY = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.05)


def client_for(url: str, **kwargs: object) -> FleetdeskClient:
    return FleetdeskClient(
        url,
        TOKEN,
        timeouts=kwargs.pop("timeouts", FAST),  # type: ignore[arg-type]
        retry=kwargs.pop("retry", QUICK_RETRY),
        **kwargs,
    )  # type: ignore[arg-type]


def rollback() -> ActionIntent:
    return ActionIntent.of(
        ActionKind.ROLLBACK, "ig_feed_x", expected_serving_model_id="ig_feed_x", reason="test"
    )


def assert_no_token(error: BaseException) -> None:
    for text in (str(error), repr(error), getattr(error, "message", "")):
        assert SECRET not in text
    problem = getattr(error, "problem", None)
    if problem is not None:
        assert SECRET not in problem.model_dump_json()


def dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_dead_port_is_unavailable_quickly_for_reads_and_actions() -> None:
    url = f"http://127.0.0.1:{dead_port()}"
    async with client_for(url) as client:
        started = time.monotonic()
        with pytest.raises(Unavailable) as read_error:
            await client.fleet_summary()
        # Refused connections are not slow: retries with small backoff only.
        assert time.monotonic() - started < FAST.deadline
        assert "cannot reach the server" in read_error.value.message
        # Nothing was sent, so the action is known not to have happened: Unavailable, not NotConfirmed.
        with pytest.raises(Unavailable):
            await client.perform(rollback())
        assert_no_token(read_error.value)


@pytest.mark.parametrize(
    ("content_type", "body", "says"),
    [
        ("text/html", "<html><body>Welcome to nginx!</body></html>", "text/html"),
        ("application/json", "{not json at all", "schema"),
        ("application/json", '{"evaluated_at": "yesterday"}', "evaluated_at"),
        ("", "\x00\x01garbage\x1b[2J", "no content type"),
    ],
)
async def test_not_our_json_is_bad_response(content_type: str, body: str, says: str) -> None:
    async with RawServer(answer(200, content_type, body)) as raw, client_for(raw.url) as client:
        with pytest.raises(BadResponse) as caught:
            await client.fleet_summary()
    assert says in caught.value.message
    assert "\x1b" not in caught.value.message
    assert len(raw.requests) == 1  # a wrong answer is not retried


async def test_html_error_page_is_bad_response_and_plain_500_is_server_error() -> None:
    async with (
        RawServer(answer(404, "text/html", "<h1>Not Found</h1>")) as raw,
        client_for(raw.url) as client,
    ):
        with pytest.raises(BadResponse, match="fleetdesk server"):
            await client.model("anything")
    async with RawServer(answer(500, "text/plain", "oops")) as raw, client_for(raw.url) as client:
        with pytest.raises(ServerError):
            await client.fleet_summary()
    assert len(raw.requests) == 1  # 500 is not a transient status


async def test_gateway_errors_are_retried_within_bounds() -> None:
    async with RawServer(answer(503, "text/plain", "busy")) as raw, client_for(raw.url) as client:
        with pytest.raises(ServerError):
            await client.fleet_summary()
    assert len(raw.requests) == QUICK_RETRY.attempts


async def test_dropped_connection_on_an_action_is_not_confirmed_and_retries_reuse_the_key() -> None:
    async def hang_up(request: RawRequest, writer: asyncio.StreamWriter) -> None:
        writer.close()

    intent = rollback()
    async with RawServer(hang_up) as raw, client_for(raw.url) as client:
        with pytest.raises(NotConfirmed) as caught:
            await client.perform(intent)
        assert "check the audit log before retrying" in caught.value.message
        with pytest.raises(Unavailable):
            await client.fleet_summary()
    posts = [r for r in raw.requests if r.method == "POST"]
    assert len(posts) == QUICK_RETRY.attempts
    assert {r.headers["idempotency-key"] for r in posts} == {intent.idempotency_key}
    assert all(r.headers["authorization"] == f"Bearer {SECRET}" for r in raw.requests)
    assert_no_token(caught.value)


async def test_silence_hits_the_deadline() -> None:
    async def never(request: RawRequest, writer: asyncio.StreamWriter) -> None:
        await asyncio.Event().wait()

    timeouts = ClientTimeouts(connect=0.5, read=5.0, write=0.5, pool=0.5, deadline=0.4)
    async with RawServer(never) as raw, client_for(raw.url, timeouts=timeouts) as client:
        started = time.monotonic()
        with pytest.raises(Unavailable, match=r"no answer within 0\.4 s"):
            await client.fleet_summary()
        with pytest.raises(NotConfirmed, match=r"no answer within 0\.4 s"):
            await client.perform(rollback())
        assert time.monotonic() - started < 2.0


async def test_token_echoed_by_a_server_never_reaches_errors_or_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def echo(request: RawRequest, writer: asyncio.StreamWriter) -> None:
        said = request.headers.get("authorization", "")
        body = (
            '{"type": "urn:fleetdesk:problem:unauthenticated", "title": "Unauthorized", "status": 401,'
            f' "detail": "bad token {said} \\u001b[31mred"}}'
        )
        writer.write(response(401, "application/problem+json", body))

    caplog.set_level(logging.DEBUG)
    async with RawServer(echo) as raw, client_for(raw.url) as client:
        assert SECRET not in repr(client)
        with pytest.raises(Unauthorized) as caught:
            await client.me()
    assert "bad token Bearer **********" in caught.value.message
    assert "\\x1b[31mred" in caught.value.message  # escape shown literally, never interpreted
    assert_no_token(caught.value)
    assert SECRET not in caplog.text
    assert caplog.text  # httpx/httpcore did log the exchange


async def test_errors_share_one_base_with_a_sanitized_message() -> None:
    async with RawServer(answer(200, "text/html", "x")) as raw, client_for(raw.url) as client:
        with pytest.raises(FleetdeskError) as caught:
            await client.info()
    assert caught.value.message == str(caught.value)
    assert repr(caught.value).startswith("BadResponse(")


async def test_client_refuses_a_plain_string_token() -> None:
    with pytest.raises(TypeError, match="SecretStr"):
        FleetdeskClient("http://127.0.0.1:1", SECRET)  # type: ignore[arg-type]


async def test_retry_after_is_honoured_and_bounded_by_the_deadline() -> None:
    def busy_for(seconds: int) -> Handler:
        return answer(503, "text/plain", "busy", extra=f"Retry-After: {seconds}\r\n")

    patient = ClientTimeouts(connect=0.5, read=0.5, write=0.5, pool=0.5, deadline=10)
    async with RawServer(busy_for(1)) as raw, client_for(raw.url, timeouts=patient) as client:
        started = time.monotonic()
        with pytest.raises(ServerError):
            await client.fleet_summary()
    assert len(raw.requests) == QUICK_RETRY.attempts
    assert (
        time.monotonic() - started >= 2.0
    )  # two waits of a second, not the 0.05 s backoff ceiling

    async with RawServer(busy_for(5)) as raw, client_for(raw.url) as client:
        started = time.monotonic()
        with pytest.raises(ServerError):
            await client.fleet_summary()
    # Waiting 5 s cannot fit the 1.5 s deadline: the client gives up at once instead of sleeping into it.
    assert len(raw.requests) == 1
    assert time.monotonic() - started < 1.0


async def test_gateway_timeout_on_an_action_is_not_confirmed() -> None:
    intent = rollback()
    async with (
        RawServer(answer(504, "text/html", "<h1>Gateway Timeout</h1>")) as raw,
        client_for(raw.url) as client,
    ):
        with pytest.raises(NotConfirmed, match="HTTP 504"):
            await client.perform(intent)
        with pytest.raises(ServerError):
            await client.fleet_summary()  # a read that failed is just a failure
    posts = [r for r in raw.requests if r.method == "POST"]
    assert len(posts) == QUICK_RETRY.attempts
    assert {r.headers["idempotency-key"] for r in posts} == {intent.idempotency_key}


@pytest.mark.parametrize("address", ["127.0.0.1:8787", "ftp://127.0.0.1", "http://", "http://[::1"])
def test_server_address_must_be_an_http_url(address: str) -> None:
    with pytest.raises(InvalidAddress, match="http://HOST:PORT"):
        FleetdeskClient(address, TOKEN)


def test_server_address_must_not_carry_credentials() -> None:
    with pytest.raises(InvalidAddress, match="credentials") as caught:
        FleetdeskClient(f"http://admin:{SECRET}@127.0.0.1:1", TOKEN)
    assert SECRET not in str(caught.value) and isinstance(caught.value, ValueError)
