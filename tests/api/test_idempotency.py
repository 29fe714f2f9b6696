"""Idempotency through the real client: one intent, one key, at most one change, whatever the network does."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from datetime import timedelta

import httpx
import pytest

from fleetdesk.client import (
    ActionIntent,
    Conflict,
    IdempotencyConflict,
    NotConfirmed,
    RetryPolicy,
)
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.server.paging import PagingError, PagingTarget
from fleetdesk.wire import ActionKind, ActionRequest, IngestBucket, Page, ProblemType

from .conftest import EXPERIMENT, NO_BASELINE, Connect
from .transports import LoseResponses, Recording

ONE_TRY = RetryPolicy(attempts=1)


async def test_missing_key_is_400_and_changes_nothing(
    server: EmbeddedServer, connect: Connect
) -> None:
    # The client always sends a key, so this request is built by hand.
    async with httpx.AsyncClient(base_url=server.url) as raw:
        response = await raw.post(
            f"/v1/models/{EXPERIMENT}/actions/note",
            json={"text": "no key"},
            headers={"Authorization": f"Bearer {server.admin_token}"},
        )
    assert response.status_code == 400
    assert response.json()["type"] == ProblemType.IDEMPOTENCY_KEY_MISSING
    assert (await (await connect("admin")).audit()).total == 0


async def test_replay_returns_the_stored_result_and_changes_once(connect: Connect) -> None:
    wire = Recording()
    client = await connect("oncall", transport=wire)
    intent = ActionIntent.of(
        ActionKind.ROLLBACK, EXPERIMENT, expected_serving_model_id=EXPERIMENT, reason="replay me"
    )
    first = await client.perform(intent)
    # Sent again (the console's retry), the same intent does not meet the moved state: it gets the stored answer.
    second = await client.perform(intent)
    assert second == first
    posts = [e for e in wire.exchanges if e.method == "POST"]
    assert [(e.key, e.status, e.replayed) for e in posts] == [
        (intent.idempotency_key, 200, False),
        (intent.idempotency_key, 200, True),
    ]
    assert (await client.audit(model_id=EXPERIMENT)).total == 1


async def test_same_key_with_a_different_body_is_refused(connect: Connect) -> None:
    client = await connect("oncall")
    first = ActionIntent.of(ActionKind.NOTE, EXPERIMENT, text="first words")
    await client.perform(first)
    altered = ActionIntent(
        kind=first.kind,
        model_id=first.model_id,
        request=ActionRequest(text="other words"),
        idempotency_key=first.idempotency_key,
    )
    with pytest.raises(IdempotencyConflict) as caught:
        await client.perform(altered)
    assert caught.value.status == 422 and not caught.value.in_progress
    assert "different request" in caught.value.message
    audit = await client.audit(model_id=EXPERIMENT)
    assert [r.detail["text"] for r in audit.items] == ["first words"]


async def test_lost_response_is_retried_with_the_same_key_and_the_action_happens_once(
    connect: Connect,
) -> None:
    network = LoseResponses(1)
    client = await connect("oncall", transport=network)
    intent = ActionIntent.of(
        ActionKind.END_EXPERIMENT,
        EXPERIMENT,
        expected_serving_model_id=EXPERIMENT,
        reason="lost answer",
    )
    result = await client.perform(
        intent
    )  # first answer lost, as after a client timeout; retried inside

    assert [r.headers["idempotency-key"] for r in network.lost] == [intent.idempotency_key]
    posts = [r for r in network.delivered if r.method == "POST"]
    assert [r.headers["idempotency-key"] for r in posts] == [intent.idempotency_key]
    audit = await client.audit(model_id=EXPERIMENT)
    assert audit.total == 1 and audit.items[0].id == result.audit_id
    assert audit.items[0].idempotency_key == intent.idempotency_key


async def test_not_confirmed_then_performing_the_same_intent_again_is_safe(
    connect: Connect,
) -> None:
    intent = ActionIntent.of(
        ActionKind.ROLLBACK,
        EXPERIMENT,
        expected_serving_model_id=EXPERIMENT,
        reason="flaky network",
    )
    flaky = await connect(
        "oncall",
        transport=LoseResponses(10),
        retry=RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.01),
    )
    with pytest.raises(NotConfirmed) as caught:
        await flaky.perform(intent)
    assert "check the audit log before retrying" in caught.value.message
    assert "safe" in caught.value.message

    healthy = await connect("oncall")
    audit = await healthy.audit(model_id=EXPERIMENT)
    assert audit.total == 1  # it did happen, once, although no answer came back
    result = await healthy.perform(intent)
    assert result.audit_id == audit.items[0].id
    assert (await healthy.audit(model_id=EXPERIMENT)).total == 1


class GatedPaging(PagingTarget):
    """A paging target that holds each delivery until the test opens the gate."""

    name = "gated"

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.delivered: list[Page] = []

    def deliver(self, page: Page) -> None:
        self.entered.set()
        if not self.gate.wait(30):
            raise PagingError("the test never opened the gate")
        self.delivered.append(page)


async def test_in_progress_key_is_409_and_a_retrying_client_gets_the_result_once_done(
    server_factory: Callable[..., EmbeddedServer], connect: Connect
) -> None:
    paging = GatedPaging()
    server = server_factory(paging=paging)
    try:
        intent = ActionIntent.of(ActionKind.ESCALATE, NO_BASELINE, reason="pages are slow today")
        first = await connect("oncall", url=server.url, token=server.oncall_token)
        running = asyncio.create_task(first.perform(intent))
        await asyncio.wait_for(asyncio.to_thread(paging.entered.wait, 10), 15)

        impatient = await connect(
            "oncall", url=server.url, token=server.oncall_token, retry=ONE_TRY
        )
        with pytest.raises(IdempotencyConflict) as caught:
            await impatient.perform(intent)
        assert caught.value.status == 409 and caught.value.in_progress

        wire = Recording()
        patient = await connect(
            "oncall",
            url=server.url,
            token=server.oncall_token,
            transport=wire,
            retry=RetryPolicy(attempts=50, base_delay=0.02, max_delay=0.1),
        )
        waiting = asyncio.create_task(patient.perform(intent))
        await asyncio.wait_for(wire.wait_for(lambda e: e.status == 409), 10)
        paging.gate.set()
        original, retried = await asyncio.wait_for(asyncio.gather(running, waiting), 15)
    finally:
        paging.gate.set()

    assert retried == original
    assert wire.exchanges[-1].replayed and wire.exchanges[-1].status == 200
    assert len(paging.delivered) == 1
    audit = await first.audit(model_id=NO_BASELINE)
    assert audit.total == 1 and audit.items[0].idempotency_key == intent.idempotency_key


async def test_ingest_replay_and_per_bucket_idempotency(connect: Connect) -> None:
    admin = await connect("admin")
    now = (await admin.info()).now
    await admin.set_clock(now + timedelta(hours=1))
    bucket = IngestBucket(
        model_id=NO_BASELINE,
        start=now,
        weight=1000,
        label_sum=50,
        prediction_sum=51,
        cross_entropy_sum=190.0,
    )
    stored = await admin.ingest([bucket], idempotency_key="ingest-batch-1")
    assert (stored.accepted, stored.unchanged) == (1, 0)
    assert await admin.ingest([bucket], idempotency_key="ingest-batch-1") == stored  # replay
    again = await admin.ingest([bucket])  # a new key, same bucket: a no-op
    assert (again.accepted, again.unchanged) == (0, 1)
    series = await admin.stability(NO_BASELINE)
    assert series.points[-1].start == now and series.points[-1].weight == 1000
    with pytest.raises(Conflict) as conflict:
        await admin.ingest([bucket.model_copy(update={"weight": 999})])
    assert conflict.value.problem is not None and conflict.value.problem.conflicts
    assert conflict.value.problem.conflicts[0].model_id == NO_BASELINE
    with pytest.raises(Conflict, match="forward"):
        await admin.set_clock(now)
