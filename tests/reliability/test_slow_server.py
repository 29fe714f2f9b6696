"""A server whose answers arrive after the client's deadline: reads say unavailable, actions say not confirmed,
and sending the same intent again once the link is back applies it exactly once.

tests/api/test_client_failures.py covers silence and dropped connections against a raw fake server; here the
real server applies the action while a real TCP proxy holds the answer back.
"""

from __future__ import annotations

import time
from urllib.parse import urlparse

import pytest
from pydantic import SecretStr

from fleetdesk.client import (
    ActionIntent,
    ClientTimeouts,
    FleetdeskClient,
    NotConfirmed,
    RetryPolicy,
    Unavailable,
)
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.wire import ActionKind

from .delay_proxy import DelayProxy

MODEL = "ig_feed_late-stage_mtml.x1-watch-time"
DEADLINE = 1.0
TIMEOUTS = ClientTimeouts(connect=1, read=0.5, write=1, pool=1, deadline=DEADLINE)


async def test_answers_past_the_deadline_are_not_confirmed_and_a_retry_applies_once(
    server: EmbeddedServer,
) -> None:
    port = urlparse(server.url).port
    assert port is not None
    async with (
        DelayProxy(port, delay=DEADLINE * 5) as proxy,
        FleetdeskClient(
            proxy.url,
            SecretStr(server.oncall_token),
            timeouts=TIMEOUTS,
            retry=RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.05),
        ) as client,
    ):
        started = time.monotonic()
        with pytest.raises(Unavailable):
            await client.fleet_summary()
        # Slack for a loaded box; a call that waited for the held answer would take the proxy's 5 deadlines.
        assert time.monotonic() - started < 3 * DEADLINE, "a read outlived its deadline"
        intent = ActionIntent.of(ActionKind.ESCALATE, MODEL, reason="pager is slow tonight")
        started = time.monotonic()
        with pytest.raises(NotConfirmed) as caught:
            await client.perform(intent)
        assert time.monotonic() - started < 3 * DEADLINE, "an action outlived its deadline"
        assert (
            "not confirmed" in caught.value.message.lower()
            or "confirm" in caught.value.message.lower()
        )

        proxy.delay = 0
        # The server did act; only its answer was lost in the slow link.
        assert (await client.audit(model_id=MODEL)).total == 1
        result = await client.perform(intent)  # the same intent: same idempotency key
        assert result.action.value == "escalate" and not result.dry_run
        audit = await client.audit(model_id=MODEL)
        assert [record.idempotency_key for record in audit.items] == [intent.idempotency_key]
