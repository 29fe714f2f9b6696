"""Schemathesis against the real server's OpenAPI, with an admin token: no 500s, every response as documented."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error, response_schema_conformance

from fleetdesk.server.embedded import EmbeddedServer

EXAMPLES = 12
"""Generated requests per operation: enough to reach every parameter shape, bounded for CI."""

NOT_FUZZED = {"GET /v1/events": "an endless SSE stream; its hostile and resume cases are in tests/api/test_events.py"}


def test_every_operation_answers_as_its_schema_says(server_factory: Callable[..., EmbeddedServer]) -> None:
    server = server_factory()
    auth = {"Authorization": f"Bearer {server.admin_token}"}
    document = httpx.get(f"{server.url}/v1/openapi.json", timeout=10).json()
    schema = schemathesis.openapi.from_dict(document)
    failures: dict[str, str] = {}
    fuzzed: list[str] = []
    started = time.monotonic()
    for result in schema.get_all_operations():
        operation = result.ok()
        label = f"{operation.method.upper()} {operation.path}"
        if label in NOT_FUZZED:
            continue
        fuzzed.append(label)

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                  phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
        def run(case: schemathesis.Case) -> None:
            case.headers = {**(case.headers or {}), **auth}
            response = case.call(base_url=server.url, timeout=10)
            case.validate_response(response, checks=[not_a_server_error, response_schema_conformance])

        try:
            run()
        except (Exception, BaseExceptionGroup) as error:  # noqa: BLE001 - collect each operation's failure
            failures[label] = str(error)[:1500]
    elapsed = time.monotonic() - started
    print(f"fuzzed {len(fuzzed)} operations x {EXAMPLES} examples in {elapsed:.1f}s; not fuzzed: {NOT_FUZZED}")
    assert len(fuzzed) >= 15, fuzzed
    assert not failures, "\n\n".join(f"{label}:\n{text}" for label, text in failures.items())


BEYOND_SQLITE = str(2**64)


@pytest.mark.parametrize("path", [
    f"/v1/models?offset={BEYOND_SQLITE}", f"/v1/audit?offset={BEYOND_SQLITE}", f"/v1/incidents?offset={BEYOND_SQLITE}",
    f"/v1/incidents/{BEYOND_SQLITE}", f"/v1/events/log?after={BEYOND_SQLITE}",
])
def test_integers_beyond_sqlite_range_are_422_not_500(shared_server: EmbeddedServer, path: str) -> None:
    response = httpx.get(shared_server.url + path, timeout=10,
                         headers={"Authorization": f"Bearer {shared_server.viewer_token}"})
    assert response.status_code == 422, response.text
    assert response.json()["type"] == "urn:fleetdesk:problem:validation"


@pytest.mark.parametrize("last_event_id", [BEYOND_SQLITE.encode(), "\u00b2".encode("latin-1"), b"-1", b"x"])
def test_unusable_last_event_id_starts_the_stream_from_now(shared_server: EmbeddedServer, last_event_id: bytes) -> None:
    headers = {b"Authorization": f"Bearer {shared_server.viewer_token}".encode(), b"Last-Event-ID": last_event_id}
    with httpx.stream("GET", f"{shared_server.url}/v1/events", headers=headers, timeout=10) as response:
        assert response.status_code == 200
        lines = response.iter_lines()
        first = next(lines, "") + next(lines, "")
    assert first.startswith("retry:") and "id:" in first, first
