"""Every error is RFC 9457 problem+json, and a 500 tells the client nothing internal."""

from __future__ import annotations

import httpx

from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.server.store import Store

from .helpers import assert_problem, auth, get


def test_unknown_model_is_a_problem_with_suggestions(server: EmbeddedServer) -> None:
    body = assert_problem(get(server, "/v1/models/ig_feed_late-stage_mtml.v4"), 404, "not-found")
    assert body["instance"] == "/v1/models/ig_feed_late-stage_mtml.v4"
    assert "ig_feed_late-stage_mtml.v41" in body["suggestions"]


def test_unknown_route_and_wrong_method_are_problems(server: EmbeddedServer) -> None:
    assert_problem(get(server, "/v1/nothing-here"), 404, "not-found")
    response = httpx.delete(f"{server.url}/v1/models", headers=auth(server, "admin"))
    assert_problem(response, 405, "method-not-allowed")


def test_validation_errors_list_each_bad_input(server: EmbeddedServer) -> None:
    body = assert_problem(get(server, "/v1/models", tier="TIER9", limit=0), 422, "validation")
    locations = {tuple(error["loc"]) for error in body["errors"]}
    assert ("query", "tier", 0) in locations and ("query", "limit") in locations
    response = httpx.post(
        f"{server.url}/v1/models/ig_feed_late-stage_mtml.v41/actions/note",
        content=b"{not json",
        headers={**auth(server, "admin", "k"), "content-type": "application/json"},
    )
    assert_problem(response, 422, "validation")


def test_a_server_fault_is_a_500_problem_without_internals(server: EmbeddedServer) -> None:
    # Break the database under the running server: a real fault, not a simulated one.
    other = Store(server.db_path)  # another process's connection
    other.connection().execute("ALTER TABLE incidents RENAME TO incidents_gone")
    other.close()
    response = get(server, "/v1/incidents")
    body = assert_problem(response, 500, "internal")
    text = response.text
    leaks = (
        "Traceback",
        "sqlite",
        "psycopg",
        "incidents_gone",
        "File ",
        str(server.db_path),
        ".py",
    )
    for leak in leaks:
        assert leak not in text
    assert body["detail"] == "the server failed to handle this request; it has been logged"


def test_openapi_is_served_under_v1_and_names_problem_bodies(server: EmbeddedServer) -> None:
    document = httpx.get(f"{server.url}/v1/openapi.json").json()
    assert "/v1/models/{model_id}/actions/{kind}" in document["paths"]
    assert "ProblemDetails" in document["components"]["schemas"]
