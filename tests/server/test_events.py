"""Server-sent events over HTTP: live delivery, and resume from Last-Event-ID (header or query)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import httpx

from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.wire import ActionEventData, EventType, ServerEvent

from .helpers import BASELINE, act, auth, get


def _frames(response: httpx.Response) -> Iterator[dict[str, str]]:
    """Parse an SSE byte stream into frames (comments yield {'comment': ...})."""
    frame: dict[str, str] = {}
    for line in response.iter_lines():
        if line == "":
            if frame:
                yield frame
            frame = {}
        elif line.startswith(":"):
            yield {"comment": line[1:].strip()}
        else:
            field, _, value = line.partition(":")
            frame[field] = value.removeprefix(" ")


def _events(
    server: EmbeddedServer,
    headers: dict[str, str],
    params: dict[str, str],
    until_id: int,
    on_connected: threading.Event | None = None,
) -> list[ServerEvent]:
    got: list[ServerEvent] = []
    timeout = httpx.Timeout(10.0)
    with httpx.stream(
        "GET", f"{server.url}/v1/events", headers=headers, params=params, timeout=timeout
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for frame in _frames(response):
            if frame.get("comment") == "connected" and on_connected is not None:
                on_connected.set()
            if "data" not in frame:
                continue
            event = ServerEvent.model_validate_json(frame["data"])
            assert frame["id"] == str(event.id) and frame["event"] == event.type.value
            got.append(event)
            if event.id >= until_id:
                return got
    raise AssertionError("stream ended early")


def _last_id(server: EmbeddedServer) -> int:
    after = 0
    while True:
        page = get(server, "/v1/events/log", after=after, limit=500).json()
        if not page["items"]:
            return after
        after = page["last_id"]


def test_resume_from_last_event_id_replays_what_was_missed(server: EmbeddedServer) -> None:
    start = _last_id(server)
    first = act(server, BASELINE, "note", {"text": "first"}).json()
    second = act(server, BASELINE, "note", {"text": "second"}).json()
    for headers, params in (
        ({"Last-Event-ID": str(start)}, {}),
        ({}, {"last_event_id": str(start)}),
    ):
        events = _events(
            server, {**auth(server, "viewer"), **headers}, params, until_id=second["event_id"]
        )
        ids = [e.id for e in events]
        assert ids == sorted(ids) and ids[0] == start + 1
        actions = [e.payload() for e in events if e.type is EventType.ACTION]
        assert [a.audit.detail["text"] for a in actions if isinstance(a, ActionEventData)] == [
            "first",
            "second",
        ]
        assert first["event_id"] in ids
    # Resuming from the second action's id yields nothing older than it.
    later = act(server, BASELINE, "note", {"text": "third"}).json()
    events = _events(
        server,
        {**auth(server, "viewer"), "Last-Event-ID": str(second["event_id"])},
        {},
        until_id=later["event_id"],
    )
    assert min(e.id for e in events) > second["event_id"]


def test_live_stream_delivers_new_actions(server: EmbeddedServer) -> None:
    connected = threading.Event()
    result: dict[str, int] = {}

    def act_when_connected() -> None:
        assert connected.wait(10)
        result["event_id"] = act(server, BASELINE, "note", {"text": "live"}).json()["event_id"]

    worker = threading.Thread(target=act_when_connected)
    worker.start()
    # Without Last-Event-ID the stream starts at "now": we wait for the first action event.
    got: list[ServerEvent] = []
    with httpx.stream(
        "GET", f"{server.url}/v1/events", headers=auth(server, "viewer"), timeout=10
    ) as response:
        for frame in _frames(response):
            if frame.get("comment") == "connected":
                connected.set()
            if "data" in frame:
                got.append(ServerEvent.model_validate_json(frame["data"]))
                if got[-1].type is EventType.ACTION:
                    break
    worker.join(10)
    assert got[-1].id == result["event_id"]
    assert json.loads(got[-1].model_dump_json())["data"]["audit"]["detail"]["text"] == "live"


def test_events_need_a_token(server: EmbeddedServer) -> None:
    assert httpx.get(f"{server.url}/v1/events", timeout=10).status_code == 401
