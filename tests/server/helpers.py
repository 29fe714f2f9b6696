"""Small HTTP helpers for server tests (plain httpx against the real server)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from fleetdesk.server.embedded import EmbeddedServer

EXPERIMENT = "ig_feed_late-stage_mtml.x1-watch-time"  # ig-feed-ranking, scale-up, baseline v41
BASELINE = "ig_feed_late-stage_mtml.v41"
NO_BASELINE = "ig_tagging_late-stage_dlrm.v6"  # ig-tagging-ranking


def auth(server: EmbeddedServer, who: str, key: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {server.tokens[who]}"}
    if key is not None:
        headers["Idempotency-Key"] = key
    return headers


def act(
    server: EmbeddedServer,
    model_id: str,
    kind: str,
    body: dict[str, Any],
    who: str = "admin",
    key: str | None = "fresh",
) -> httpx.Response:
    key = uuid.uuid4().hex if key == "fresh" else key
    return httpx.post(
        f"{server.url}/v1/models/{model_id}/actions/{kind}",
        json=body,
        headers=auth(server, who, key),
        timeout=10,
    )


def get(server: EmbeddedServer, path: str, who: str = "viewer", **params: Any) -> httpx.Response:
    return httpx.get(f"{server.url}{path}", headers=auth(server, who), params=params, timeout=10)


def assert_problem(response: httpx.Response, status: int, type_suffix: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == status
    assert body["type"] == f"urn:fleetdesk:problem:{type_suffix}"
    assert body["title"] and body["detail"]
    return body
