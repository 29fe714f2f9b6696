"""Revoking or expiring a token ends the access it already has: an open event stream ends within seconds and
receives nothing after it, whichever the role and however the token stopped being valid; a token that is still
valid keeps its stream (so the test sees the difference)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

import httpx
import pytest
from pydantic import SecretStr

from fleetdesk.client import FleetdeskClient, Unauthorized
from fleetdesk.client._events import ConnectionUpdate, EventUpdate
from fleetdesk.server.auth import create_token
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.server.routes.events import ACCESS_CHECK_SECONDS
from fleetdesk.server.store import Store
from fleetdesk.wire import AccessRole

MODEL = "ig_feed_late-stage_mtml.v41"
TEAM = "ig-feed-ranking"
ENDS_WITHIN = ACCESS_CHECK_SECONDS + 3.0
EXPIRES_IN = timedelta(seconds=4)


@dataclass
class Stream:
    """One open /v1/events stream of one token, read in a thread: every line with when it came."""

    name: str
    token: str
    lines: list[tuple[float, str]] = field(default_factory=list)
    cut_at: float | None = None
    """When the token stopped granting access: its revocation committed, or its expiry passed."""
    ended_at: float | None = None
    opened: threading.Event = field(default_factory=threading.Event)

    def follow(self, url: str) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        try:
            with httpx.stream("GET", f"{url}/v1/events", headers=headers, timeout=60) as response:
                assert response.status_code == 200, response.read()
                for line in response.iter_lines():
                    self.lines.append((time.monotonic(), line))
                    if line.startswith(": connected"):
                        self.opened.set()
        finally:
            self.ended_at = time.monotonic()
            self.opened.set()

    def data_after(self, moment: float) -> list[str]:
        return [line for at, line in self.lines if at >= moment and line.startswith("data:")]


def _revoke_user(server: EmbeddedServer, user: str, _token: str) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetdesk.cli",
            "token",
            "revoke",
            "--db",
            str(server.db_path),
            "--user",
            user,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def _revoke_token(server: EmbeddedServer, _user: str, token: str) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetdesk.cli",
            "token",
            "revoke",
            "--db",
            str(server.db_path),
            "--token-stdin",
        ],
        input=token + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def _note(server: EmbeddedServer, text: str) -> None:
    response = httpx.post(
        f"{server.url}/v1/models/{MODEL}/actions/note",
        json={"text": text},
        timeout=10,
        headers={
            "Authorization": f"Bearer {server.admin_token}",
            "Idempotency-Key": uuid.uuid4().hex,
        },
    )
    assert response.status_code == 200, response.text


ROLES = {
    "viewer": (AccessRole.VIEWER, []),
    "oncall": (AccessRole.ONCALL, [TEAM]),
    "admin": (AccessRole.ADMIN, []),
}


def test_revoked_and_expired_tokens_lose_their_open_streams(server: EmbeddedServer) -> None:
    store = Store(server.db_path)
    # Each member of the class: a role, and the way its token stops granting access.
    ways = {"revoked by user": _revoke_user, "revoked by token": _revoke_token, "expired": None}
    streams: dict[tuple[str, str], Stream] = {}
    try:
        for role_name, (role, teams) in ROLES.items():
            for way in ways:
                user = f"{role_name}-{way.replace(' ', '-')}"
                created_at = time.monotonic()
                token = create_token(
                    store, user, role, teams, EXPIRES_IN if way == "expired" else None
                )
                streams[(user, way)] = Stream(user, token)
                if way == "expired":
                    streams[(user, way)].cut_at = created_at + EXPIRES_IN.total_seconds()
        keeper = Stream("still valid", create_token(store, "keeper", AccessRole.VIEWER, []))
    finally:
        store.close()
    threads = [
        threading.Thread(target=s.follow, args=(server.url,), daemon=True)
        for s in [*streams.values(), keeper]
    ]
    for thread in threads:
        thread.start()
    for stream in [*streams.values(), keeper]:
        assert stream.opened.wait(15) and stream.ended_at is None, stream.name
    for (user, way), stream in streams.items():
        revoke = ways[way]
        if revoke is not None:
            revoke(server, user, stream.token)
            stream.cut_at = time.monotonic()
    secret = f"incident notes are not for revoked eyes {uuid.uuid4().hex}"
    _note(server, secret)
    deadline = max(s.cut_at or 0 for s in streams.values()) + ENDS_WITHIN + 5
    while any(s.ended_at is None for s in streams.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    for (user, way), stream in streams.items():
        assert stream.cut_at is not None
        assert stream.ended_at is not None, (
            f"{user}: stream still open {time.monotonic() - stream.cut_at:.1f} s after"
        )
        assert stream.ended_at - stream.cut_at <= ENDS_WITHIN, (
            user,
            stream.ended_at - stream.cut_at,
        )
        got = [line for line in stream.data_after(0) if secret in line]
        if way != "expired":
            assert not got, f"{user} received an event after its token was revoked"
        assert any(
            line.startswith((": token revoked", ": token expired")) for _, line in stream.lines
        ), stream.lines
    # The control: a valid token's stream stays open and receives the note.
    give_up = time.monotonic() + 10
    while not any(secret in line for line in keeper.data_after(0)) and time.monotonic() < give_up:
        time.sleep(0.05)
    assert keeper.ended_at is None and any(secret in line for line in keeper.data_after(0))
    print(
        "revoked/expired streams ended after: "
        + ", ".join(
            f"{user} {max(stream.ended_at - stream.cut_at, 0):.1f}s"
            for (user, _), stream in streams.items()
            if stream.ended_at is not None and stream.cut_at is not None
        )
    )


async def test_the_client_feed_reports_the_revocation_as_not_signed_in(
    server: EmbeddedServer,
) -> None:
    store = Store(server.db_path)
    try:
        token = create_token(store, "mallory", AccessRole.VIEWER, [])
    finally:
        store.close()
    async with FleetdeskClient(server.url, SecretStr(token)) as client:
        feed = client.events()
        first = await asyncio.wait_for(feed.__anext__(), 15)
        assert isinstance(first, ConnectionUpdate) and first.state == "live"
        await asyncio.to_thread(_revoke_user, server, "mallory", token)
        await asyncio.to_thread(_note, server, "after the revocation")
        updates: list[object] = []
        with pytest.raises(Unauthorized) as refused:
            async with asyncio.timeout(
                ENDS_WITHIN + 10
            ):  # the stream ends, the reconnect is refused
                async for update in feed:
                    updates.append(update)
        assert not [u for u in updates if isinstance(u, EventUpdate)], updates
        assert "token revoked" in refused.value.message
