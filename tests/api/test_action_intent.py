"""Action intents: complete before they are sent, one key per intent, a fresh key per preview."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from fleetdesk.client import ActionIntent
from fleetdesk.wire import ActionKind, ActionRequest, EscalationTarget


def test_each_intent_gets_its_own_key_and_keeps_it() -> None:
    first = ActionIntent.of(ActionKind.ROLLBACK, "m", expected_serving_model_id="m", reason="r")
    second = ActionIntent.of(ActionKind.ROLLBACK, "m", expected_serving_model_id="m", reason="r")
    assert first.idempotency_key != second.idempotency_key
    assert first.model_copy().idempotency_key == first.idempotency_key
    with pytest.raises(ValidationError):
        first.idempotency_key = "other"  # type: ignore[misc]


def test_preview_is_a_dry_run_with_a_different_key() -> None:
    intent = ActionIntent.of(
        ActionKind.END_EXPERIMENT, "m", expected_serving_model_id="m", reason="r"
    )
    preview = intent.as_dry_run()
    assert preview.dry_run and not intent.dry_run
    assert preview.idempotency_key != intent.idempotency_key
    assert preview.request.model_dump(exclude={"dry_run"}) == intent.request.model_dump(
        exclude={"dry_run"}
    )
    assert preview.describe() == "end-experiment of m (dry run)"


@pytest.mark.parametrize(
    ("kind", "request_fields", "complaint"),
    [
        (ActionKind.ROLLBACK, {"reason": "r"}, "expected_serving_model_id"),
        (ActionKind.HALT_LAUNCH, {"expected_serving_model_id": "m"}, "needs a reason"),
        (ActionKind.ESCALATE, {"reason": "  "}, "needs a reason"),
        (ActionKind.NOTE, {"text": ""}, "needs text"),
    ],
)
def test_incomplete_intents_are_refused_before_sending(
    kind: ActionKind, request_fields: dict, complaint: str
) -> None:
    with pytest.raises(ValidationError, match=complaint):
        ActionIntent(kind=kind, model_id="m", request=ActionRequest(**request_fields))


def test_builders_fill_the_request() -> None:
    escalate = ActionIntent.of(
        ActionKind.ESCALATE, "m", reason="upstream broke", target=EscalationTarget.UPSTREAM
    )
    assert escalate.request.target is EscalationTarget.UPSTREAM
    note = ActionIntent.of(ActionKind.NOTE, "m", text="looking at it")
    assert note.kind is ActionKind.NOTE and note.request.text == "looking at it"
    assert ActionIntent.of(ActionKind.ACK, "m").request.reason == ""


def test_key_must_be_printable_ascii() -> None:
    with pytest.raises(ValidationError):
        ActionIntent(
            kind=ActionKind.ACK, model_id="m", request=ActionRequest(), idempotency_key="has space"
        )
