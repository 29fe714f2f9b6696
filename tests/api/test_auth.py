"""Who may do what: role × team × action, and every way a token can be refused."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from fleetdesk.client import ActionIntent, FleetdeskError, Forbidden, RuleViolation, Unauthorized
from fleetdesk.server.auth import create_token, revoke_tokens
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.wire import AccessRole, ActionKind, IngestBucket

from .conftest import EXPERIMENT, EXPERIMENT_TEAM, OTHER_TEAM, SERVER_NOW, Connect


@pytest.fixture
def server(shared_server: EmbeddedServer) -> EmbeddedServer:
    """Permission checks come before dry runs, so the matrix runs as dry runs on one shared server."""
    return shared_server


PREVIEWS = {
    ActionKind.ROLLBACK: ActionIntent.of(
        ActionKind.ROLLBACK, EXPERIMENT, expected_serving_model_id=EXPERIMENT, reason="r"
    ),
    ActionKind.END_EXPERIMENT: ActionIntent.of(
        ActionKind.END_EXPERIMENT, EXPERIMENT, expected_serving_model_id=EXPERIMENT, reason="r"
    ),
    ActionKind.HALT_LAUNCH: ActionIntent.of(
        ActionKind.HALT_LAUNCH, EXPERIMENT, expected_serving_model_id=EXPERIMENT, reason="r"
    ),
    ActionKind.RESUME_LAUNCH: ActionIntent.of(
        ActionKind.RESUME_LAUNCH, EXPERIMENT, expected_serving_model_id=EXPERIMENT, reason="r"
    ),
    ActionKind.ESCALATE: ActionIntent.of(ActionKind.ESCALATE, EXPERIMENT, reason="r"),
    ActionKind.ACK: ActionIntent.of(ActionKind.ACK, EXPERIMENT),
    ActionKind.NOTE: ActionIntent.of(ActionKind.NOTE, EXPERIMENT, text="n"),
}
OWN = f"act:{EXPERIMENT_TEAM}"
# who -> the permission each action lacks (None: allowed)
MATRIX: dict[str, dict[ActionKind, str | None]] = {
    "viewer": {kind: ("escalate" if kind is ActionKind.ESCALATE else OWN) for kind in ActionKind},
    f"oncall:{EXPERIMENT_TEAM}": {kind: None for kind in ActionKind},
    f"oncall:{OTHER_TEAM}": {
        kind: (None if kind is ActionKind.ESCALATE else OWN) for kind in ActionKind
    },
    "admin": {kind: None for kind in ActionKind},
}


@pytest.mark.parametrize("who", list(MATRIX))
@pytest.mark.parametrize("kind", list(ActionKind))
async def test_permission_matrix(connect: Connect, who: str, kind: ActionKind) -> None:
    client = await connect(who)
    preview = PREVIEWS[kind].as_dry_run()
    missing = MATRIX[who][kind]
    if missing is None and kind is ActionKind.RESUME_LAUNCH:
        # Allowed past the permission check, the rule speaks: the shared server's launch is not halted.
        with pytest.raises(RuleViolation, match="launch is not halted"):
            await client.perform(preview)
    elif missing is None:
        result = await client.perform(preview)
        assert result.dry_run and result.action is kind
    else:
        with pytest.raises(Forbidden) as caught:
            await client.perform(preview)
        assert caught.value.status == 403 and caught.value.missing_permission == missing
        assert missing in caught.value.message


async def test_refused_real_actions_change_nothing(connect: Connect) -> None:
    for who in ("viewer", f"oncall:{OTHER_TEAM}"):
        with pytest.raises(Forbidden):
            await (await connect(who)).perform(PREVIEWS[ActionKind.ROLLBACK])
    assert (await (await connect("admin")).audit()).total == 0


async def test_everyone_reads_but_only_admin_ingests_or_moves_the_clock(connect: Connect) -> None:
    bucket = IngestBucket(
        model_id=EXPERIMENT,
        start=SERVER_NOW - timedelta(days=30),
        weight=1,
        label_sum=0.5,
        prediction_sum=0.5,
        cross_entropy_sum=0.7,
    )
    for who in ("viewer", "oncall", f"oncall:{EXPERIMENT_TEAM}"):
        client = await connect(who)
        assert (await client.fleet_summary()).total_models > 0
        with pytest.raises(Forbidden) as ingest:
            await client.ingest([bucket])
        assert ingest.value.missing_permission == "ingest"
        with pytest.raises(Forbidden) as clock:
            await client.set_clock(SERVER_NOW + timedelta(days=1))
        assert clock.value.missing_permission == "clock"


async def assert_refused(client_factory: Connect, token: str | None, says: str) -> None:
    client = await client_factory(None, token=token)
    with pytest.raises(Unauthorized) as read:
        await client.fleet_summary()
    with pytest.raises(Unauthorized):
        await client.perform(PREVIEWS[ActionKind.NOTE])
    assert read.value.status == 401 and says in read.value.message
    if token:
        for text in (str(read.value), repr(read.value), read.value.message):
            assert token not in text


async def test_missing_invalid_revoked_and_expired_tokens_are_401(
    connect: Connect, server: EmbeddedServer
) -> None:
    await assert_refused(connect, None, "missing bearer token")
    await assert_refused(connect, "fdk_not-a-real-token", "unknown token")

    revoked = create_token(server.backend.store, "leaver", AccessRole.ONCALL, [EXPERIMENT_TEAM])
    assert (await (await connect(None, token=revoked)).me()).user == "leaver"
    revoke_tokens(server.backend.store, token=revoked)
    await assert_refused(connect, revoked, "revoked")

    expired = create_token(
        server.backend.store, "old", AccessRole.ADMIN, [], expires_in=timedelta(seconds=-1)
    )
    await assert_refused(connect, expired, "expired")


async def test_the_token_never_reaches_logs_reprs_or_errors(
    connect: Connect, server: EmbeddedServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    secret = server.tokens["viewer"]
    client = await connect("viewer")
    await client.me()
    failures: list[FleetdeskError] = []
    for attempt in (client.perform(PREVIEWS[ActionKind.ROLLBACK]), client.model("no-such-model")):
        try:
            await attempt
        except FleetdeskError as error:
            failures.append(error)
    assert len(failures) == 2
    for text in [caplog.text, repr(client), *map(str, failures), *map(repr, failures)]:
        assert secret not in text
    assert "/v1/me" in caplog.text  # the exchanges were logged, just not the token
