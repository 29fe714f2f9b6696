"""The generic webhook: a loopback receiver checks the HMAC-SHA256 signature and timestamp of each page."""

from __future__ import annotations

import hashlib
import hmac
import json
import queue
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import SecretStr

from fleetdesk.client import ActionIntent, FleetdeskClient, RetryPolicy
from fleetdesk.server import incidents
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.server.integrations.options import attach_paging
from fleetdesk.server.integrations.outbox import RetryBackoff
from fleetdesk.server.integrations.webhook import (
    DELIVERY_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    WebhookTarget,
    verify_signature,
)
from fleetdesk.wire import ActionKind

SECRET = b"receiver-and-fleetdesk-share-this"
MODEL = "ig_stories_tray_mtml.v30"


class Received:
    def __init__(self, headers: dict[str, str], body: bytes) -> None:
        self.headers = headers
        self.body = body


class Receiver:
    """A loopback HTTP receiver that answers with the queued statuses (then 204) and records every request."""

    def __init__(self) -> None:
        self.requests: queue.Queue[Received] = queue.Queue()
        self.statuses: list[int] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.put(Received({k: v for k, v in self.headers.items()}, body))
                self.send_response(receiver.statuses.pop(0) if receiver.statuses else 204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/page"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def next(self, deadline: float = 10.0) -> Received:
        return self.requests.get(timeout=deadline)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiver = Receiver()
    receiver.thread.start()
    yield receiver
    receiver.server.shutdown()
    receiver.server.server_close()


def independent_signature(timestamp: str, body: bytes) -> str:
    """The receiver's own computation (not fleetdesk's code): HMAC-SHA256 over 'timestamp.body'."""
    return "sha256=" + hmac.new(SECRET, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


async def test_webhook_pages_and_resolves_are_signed_and_a_refused_one_is_retried(
    small_server: EmbeddedServer, receiver: Receiver
) -> None:
    receiver.statuses = [503]  # the receiver refuses the first try
    target = WebhookTarget(
        receiver.url, SECRET, small_server.url, backoff=RetryBackoff(base_delay=0.2, max_delay=0.5)
    )
    attach_paging(small_server.backend, target)
    try:
        async with FleetdeskClient(
            small_server.url, SecretStr(small_server.oncall_token), retry=RetryPolicy(attempts=1)
        ) as client:
            result = await client.perform(
                ActionIntent.of(ActionKind.ESCALATE, MODEL, reason="calibration 1.3 and rising")
            )
        tries = [receiver.next(), receiver.next()]
        # The model is stable, so its incident resolves when checked; the receiver then hears "resolve".
        assert result.incident_id is not None
        backend = small_server.backend
        with backend.write() as conn:
            assert incidents.resolve_if_clear(conn, result.incident_id, backend.clock.now())
        resolve = receiver.next()
    finally:
        target.close()
    for received in (*tries, resolve):
        timestamp = received.headers[TIMESTAMP_HEADER]
        assert abs(time.time() - int(timestamp)) < 60
        assert received.headers[SIGNATURE_HEADER] == independent_signature(timestamp, received.body)
        assert verify_signature(
            SECRET, timestamp, received.body, received.headers[SIGNATURE_HEADER]
        )
        assert not verify_signature(
            b"another secret", timestamp, received.body, received.headers[SIGNATURE_HEADER]
        )
        assert not verify_signature(
            SECRET, timestamp, received.body + b" ", received.headers[SIGNATURE_HEADER]
        )
        assert not verify_signature(
            SECRET,
            str(int(timestamp) - 3600),
            received.body,
            independent_signature(str(int(timestamp) - 3600), received.body),
        )
    assert tries[0].headers[DELIVERY_HEADER] == tries[1].headers[DELIVERY_HEADER], (
        "a retry keeps its delivery id"
    )
    event = json.loads(tries[1].body)
    assert event["event"] == "page"
    assert event["model_id"] == MODEL
    assert event["tier"] == "TIER1"
    assert event["reason"] == "calibration 1.3 and rising"
    assert event["incident_id"] == result.incident_id
    withdrawn = json.loads(resolve.body)
    assert withdrawn["event"] == "resolve"
    assert withdrawn["incident_id"] == result.incident_id and withdrawn["model_id"] == MODEL
    assert resolve.headers[DELIVERY_HEADER] != tries[0].headers[DELIVERY_HEADER]
    assert SECRET.decode() not in repr(target)
