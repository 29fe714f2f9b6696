"""Action rules at the HTTP level: registry checks, stale state, audit and timeline records."""

from __future__ import annotations

from fleetdesk.server.embedded import EmbeddedServer

from .helpers import BASELINE, EXPERIMENT, NO_BASELINE, act, assert_problem, get


def test_rollback_without_baseline_says_escalate_instead(server: EmbeddedServer) -> None:
    body = assert_problem(
        act(
            server,
            NO_BASELINE,
            "rollback",
            {"reason": "x", "expected_serving_model_id": NO_BASELINE},
        ),
        422,
        "action-not-allowed",
    )
    assert (
        "no baseline: escalate instead" in body["detail"] and body["suggested_action"] == "escalate"
    )


def test_rules_on_roles_and_phases(server: EmbeddedServer) -> None:
    expected = {"reason": "x", "expected_serving_model_id": BASELINE}
    assert (
        "nothing to end"
        in assert_problem(
            act(server, BASELINE, "end-experiment", expected), 422, "action-not-allowed"
        )["detail"]
    )
    assert (
        "scale-up"
        in assert_problem(
            act(server, BASELINE, "halt-launch", expected), 422, "action-not-allowed"
        )["detail"]
    )
    assert_problem(
        act(server, EXPERIMENT, "halt-launch", {"expected_serving_model_id": EXPERIMENT}),
        422,
        "validation",
    )  # no reason
    assert_problem(
        act(server, EXPERIMENT, "halt-launch", {"reason": "x"}), 422, "validation"
    )  # no expected state
    no_upstream = act(server, NO_BASELINE, "escalate", {"reason": "x", "target": "upstream"})
    assert "no upstream model" in assert_problem(no_upstream, 422, "action-not-allowed")["detail"]
    assert_problem(act(server, EXPERIMENT, "note", {"text": "  "}), 422, "validation")


def test_halt_launch_records_audit_and_timeline(server: EmbeddedServer) -> None:
    response = act(
        server,
        EXPERIMENT,
        "halt-launch",
        {"reason": "NE regression", "expected_serving_model_id": EXPERIMENT},
        who="oncall",
    )
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["changes"][0]["after"]["launch_halted"] is True
    audit = get(server, "/v1/audit", model_id=EXPERIMENT).json()["items"][0]
    assert (audit["actor"], audit["role"], audit["action"], audit["reason"]) == (
        "oncall",
        "oncall",
        "halt-launch",
        "NE regression",
    )
    assert audit["before"]["launch_halted"] is False and audit["after"]["launch_halted"] is True
    if result["incident_id"] is not None:
        timeline = get(server, f"/v1/incidents/{result['incident_id']}").json()["timeline"]
        assert timeline[-1]["audit_id"] == audit["id"] and timeline[-1]["actor"] == "oncall"
    again = act(
        server, EXPERIMENT, "halt-launch", {"reason": "x", "expected_serving_model_id": EXPERIMENT}
    )
    assert "already halted" in assert_problem(again, 422, "action-not-allowed")["detail"]


def test_ack_needs_an_open_incident_and_happens_once(server: EmbeddedServer) -> None:
    assert (
        "no open incident"
        in assert_problem(act(server, NO_BASELINE, "ack", {}), 422, "action-not-allowed")["detail"]
    )
    paging = get(server, "/v1/models", sort="worst", limit=1).json()["items"][0]
    assert paging["open_incident_id"] is not None
    assert act(server, paging["id"], "ack", {"reason": "on it"}).status_code == 200
    incident = get(server, f"/v1/incidents/{paging['open_incident_id']}").json()
    assert incident["state"] == "acknowledged" and incident["acknowledged_by"] == "admin"
    body = assert_problem(act(server, paging["id"], "ack", {}), 409, "already-acknowledged")
    assert body["incident"]["acknowledged_by"] == "admin"


def test_note_without_incident_is_a_model_note(server: EmbeddedServer) -> None:
    result = act(server, NO_BASELINE, "note", {"text": "checked dashboards"}).json()
    assert result["incident_id"] is None
    audit = get(server, "/v1/audit", model_id=NO_BASELINE, action="note").json()["items"]
    assert audit[0]["detail"]["text"] == "checked dashboards"
