"""Idempotency-Key over HTTP: missing, replay, reuse with another body, in progress; dry runs claim nothing."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx

from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.server.paging import PagingTarget
from fleetdesk.wire import Page

from .helpers import BASELINE, EXPERIMENT, act, assert_problem, get

ROLLBACK = {"reason": "calibration off", "expected_serving_model_id": EXPERIMENT}


def _audit(server: EmbeddedServer, **params: str) -> list[dict]:
    return get(server, "/v1/audit", **params).json()["items"]


def test_missing_key_is_400_and_changes_nothing(server: EmbeddedServer) -> None:
    assert_problem(
        act(server, EXPERIMENT, "rollback", ROLLBACK, key=None), 400, "idempotency-key-missing"
    )
    assert _audit(server) == []


def test_replay_returns_the_stored_response_and_acts_once(server: EmbeddedServer) -> None:
    first = act(server, EXPERIMENT, "rollback", ROLLBACK, key="intent-1")
    assert first.status_code == 200, first.text
    again = act(server, EXPERIMENT, "rollback", ROLLBACK, key="intent-1")
    assert again.status_code == 200
    assert again.content == first.content
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    records = _audit(server, model_id=EXPERIMENT)
    assert [(r["action"], r["idempotency_key"]) for r in records] == [("rollback", "intent-1")]
    assert first.json()["audit_id"] == records[0]["id"]


def test_same_key_with_another_body_is_422(server: EmbeddedServer) -> None:
    assert act(server, EXPERIMENT, "note", {"text": "looking"}, key="k").status_code == 200
    assert_problem(
        act(server, EXPERIMENT, "note", {"text": "other"}, key="k"), 422, "idempotency-key-reused"
    )
    assert_problem(
        act(server, BASELINE, "note", {"text": "looking"}, key="k"), 422, "idempotency-key-reused"
    )
    assert len(_audit(server)) == 1


def test_keys_are_scoped_to_the_caller(server: EmbeddedServer) -> None:
    assert (
        act(server, EXPERIMENT, "note", {"text": "a"}, who="admin", key="shared").status_code == 200
    )
    response = act(server, EXPERIMENT, "note", {"text": "b"}, who="oncall", key="shared")
    assert response.status_code == 200 and "idempotent-replayed" not in response.headers


def test_dry_run_needs_a_key_claims_none_and_changes_nothing(server: EmbeddedServer) -> None:
    before = get(server, f"/v1/models/{EXPERIMENT}").json()["live"]
    keyless = act(server, EXPERIMENT, "rollback", {**ROLLBACK, "dry_run": True}, key=None)
    assert_problem(keyless, 400, "idempotency-key-missing")  # a write, as the OpenAPI document says
    preview = act(server, EXPERIMENT, "rollback", {**ROLLBACK, "dry_run": True})
    assert preview.status_code == 200, preview.text
    plan = preview.json()
    assert (
        plan["dry_run"] is True and plan["audit_id"] is None and plan["summary"].startswith("Would")
    )
    assert plan["changes"][0]["before"] == before
    assert plan["changes"][0]["after"]["serving_model_id"] == BASELINE
    assert get(server, f"/v1/models/{EXPERIMENT}").json()["live"] == before
    assert _audit(server) == []
    # The same key used on a dry run is still free for the real action.
    assert (
        act(server, EXPERIMENT, "rollback", {**ROLLBACK, "dry_run": True}, key="k").status_code
        == 200
    )
    done = act(server, EXPERIMENT, "rollback", ROLLBACK, key="k")
    assert done.status_code == 200 and done.json()["changes"] == plan["changes"]


def test_failed_requests_claim_no_key(server: EmbeddedServer) -> None:
    stale = {"reason": "x", "expected_serving_model_id": BASELINE}
    assert_problem(act(server, EXPERIMENT, "rollback", stale, key="k"), 409, "stale-state")
    assert act(server, EXPERIMENT, "rollback", ROLLBACK, key="k").status_code == 200


class _HeldPager(PagingTarget):
    """A paging target that holds each delivery until the test lets it go."""

    name = "held"

    def __init__(self) -> None:
        self.delivering = threading.Event()
        self.release = threading.Event()

    def deliver(self, page: Page) -> None:
        self.delivering.set()
        assert self.release.wait(10)


def test_same_key_while_in_progress_is_409_then_replays(server_factory) -> None:  # noqa: ANN001
    pager = _HeldPager()
    server = server_factory(paging=pager)
    body = {"reason": "need help", "target": "owner"}
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(act, server, EXPERIMENT, "escalate", body, "admin", "esc-1")
        assert pager.delivering.wait(10)
        busy = act(server, EXPERIMENT, "escalate", body, key="esc-1")
        assert_problem(busy, 409, "idempotency-key-in-progress")
        assert busy.headers["retry-after"] == "1"
        pager.release.set()
        assert first.result().status_code == 200
    replay = act(server, EXPERIMENT, "escalate", body, key="esc-1")
    assert replay.status_code == 200 and replay.headers["idempotent-replayed"] == "true"
    assert replay.json()["pages"][0]["delivered_via"] == "held"
    assert len(_audit(server, action="escalate")) == 1


def test_two_conflicting_actions_one_wins_the_other_gets_409(server: EmbeddedServer) -> None:
    barrier = threading.Barrier(2)

    def race(kind: str) -> httpx.Response:
        barrier.wait()
        return act(
            server, EXPERIMENT, kind, {"reason": "race", "expected_serving_model_id": EXPERIMENT}
        )

    with ThreadPoolExecutor(2) as pool:
        responses = list(pool.map(race, ["rollback", "end-experiment"]))
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200, 409], [r.text for r in responses]
    loser = next(r for r in responses if r.status_code == 409)
    assert loser.json()["current"]["serving_model_id"] == BASELINE
    changes = [
        r
        for r in _audit(server, model_id=EXPERIMENT)
        if r["action"] in ("rollback", "end-experiment")
    ]
    assert len(changes) == 1
