"""Bearer-token auth: 401 for missing/invalid/expired/revoked tokens, 403 naming the missing permission."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from fleetdesk.server.auth import create_token, revoke_tokens
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.wire import AccessRole

from .helpers import EXPERIMENT, act, assert_problem, get

HALT = {"reason": "bad numbers", "expected_serving_model_id": EXPERIMENT, "dry_run": True}


def _me(server: EmbeddedServer, token: str | None) -> httpx.Response:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return httpx.get(f"{server.url}/v1/me", headers=headers)


def test_missing_unknown_expired_and_revoked_tokens_get_401(server: EmbeddedServer) -> None:
    store = server.backend.store
    expired = create_token(store, "eve", AccessRole.ADMIN, [], expires_in=timedelta(seconds=-1))
    revoked = create_token(store, "rex", AccessRole.ADMIN, [])
    assert _me(server, revoked).status_code == 200
    assert revoke_tokens(store, user="rex") == 1
    for token, reason in (
        (None, "missing"),
        ("fdk_not-a-token", "unknown"),
        (expired, "expired"),
        (revoked, "revoked"),
    ):
        response = _me(server, token)
        body = assert_problem(response, 401, "unauthenticated")
        assert reason in body["detail"]
        assert response.headers["www-authenticate"].startswith("Bearer")
        if token:
            assert token not in response.text


def test_whoami_reports_role_and_teams(server: EmbeddedServer) -> None:
    who = _me(server, server.tokens["oncall:ig-feed-ranking"]).json()
    assert who == {
        "user": "oncall-ig-feed-ranking",
        "role": "oncall",
        "teams": ["ig-feed-ranking"],
        "demo": False,
    }


@pytest.mark.parametrize(
    ("who", "kind", "allowed", "missing"),
    [
        ("viewer", "halt-launch", False, "act:ig-feed-ranking"),
        ("viewer", "escalate", False, "escalate"),
        ("oncall:ig-reels-ranking", "halt-launch", False, "act:ig-feed-ranking"),
        ("oncall:ig-reels-ranking", "escalate", True, None),
        ("oncall:ig-feed-ranking", "halt-launch", True, None),
        ("admin", "halt-launch", True, None),
    ],
)
def test_role_and_team_decide_who_may_act(
    server: EmbeddedServer, who: str, kind: str, allowed: bool, missing: str | None
) -> None:
    body = HALT if kind == "halt-launch" else {"reason": "bad numbers", "dry_run": True}
    response = act(server, EXPERIMENT, kind, body, who=who)
    if allowed:
        assert response.status_code == 200, response.text
    else:
        assert assert_problem(response, 403, "forbidden")["missing_permission"] == missing


def test_only_admin_moves_the_clock(server: EmbeddedServer) -> None:
    response = httpx.put(
        f"{server.url}/v1/clock",
        json={"now": "2027-01-01T00:00:00Z"},
        headers={"Authorization": f"Bearer {server.tokens['oncall']}", "Idempotency-Key": "k"},
    )
    assert assert_problem(response, 403, "forbidden")["missing_permission"] == "clock"


def test_demo_mode_reads_without_token_but_never_acts(server_factory) -> None:  # noqa: ANN001
    demo = server_factory(demo=True)
    assert get(demo, "/v1/fleet/summary").status_code == 200
    assert httpx.get(f"{demo.url}/v1/me").json()["demo"] is True
    response = httpx.post(
        f"{demo.url}/v1/models/{EXPERIMENT}/actions/halt-launch",
        json=HALT,
        headers={"Idempotency-Key": "k"},
    )
    assert assert_problem(response, 403, "forbidden")["missing_permission"] == "act:ig-feed-ranking"
