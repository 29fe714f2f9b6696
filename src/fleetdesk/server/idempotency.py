"""Idempotency keys: a mutating request runs once per (caller, key); retries get the stored answer.

The key is claimed in the same transaction as the change and its audit record,
with the response already stored, in state ``in_progress``; after-commit work
(delivering pages) runs, then the key is marked ``done``. So a retry during
that window gets 409, a retry afterwards replays the stored response, and a
crash can never leave a change without its key (or a key without its change).
Requests that fail (4xx) claim nothing: a retry is judged afresh.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fleetdesk.server.backend import Backend
from fleetdesk.server.problems import Problem
from fleetdesk.server.store import Connection, idempotency_keys, iso
from fleetdesk.wire import IDEMPOTENCY_HEADER, ProblemType

KEY_PATTERN = r"^[\x21-\x7e]{1,200}$"
"""1-200 printable ASCII characters, no spaces (also the pattern in the OpenAPI document)."""
_KEY = re.compile(KEY_PATTERN)

AfterCommit = Callable[[], None]
Work = Callable[[Connection], tuple[int, str, AfterCommit | None]]


@dataclass(frozen=True)
class Outcome:
    status: int
    body: str
    replayed: bool


def require_key(value: str | None) -> str:
    if value is None or not value.strip():
        raise Problem(
            400,
            ProblemType.IDEMPOTENCY_KEY_MISSING,
            f"this request changes state and needs an {IDEMPOTENCY_HEADER} header"
            " (a fresh random value per intent, reused on retries)",
            title="Idempotency-Key required",
        )
    if not _KEY.match(value):
        raise Problem(
            400,
            ProblemType.BAD_REQUEST,
            f"{IDEMPOTENCY_HEADER} must be 1-200 printable ASCII characters without spaces",
        )
    return value


def request_hash(method: str, path: str, body: Any) -> str:
    """Fingerprint of what was asked: same method, path and JSON body (key order ignored)."""
    canonical = json.dumps([method.upper(), path, body], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def run_once(backend: Backend, actor: str, key: str, fingerprint: str, work: Work) -> Outcome:
    """Replay the stored outcome for this key, or do ``work`` and store its outcome with the change."""
    after_commit: AfterCommit | None = None
    with backend.write() as conn:
        row = idempotency_keys.find(conn, actor, key)
        if row is not None:
            if row["request_hash"] != fingerprint:
                raise Problem(
                    422,
                    ProblemType.IDEMPOTENCY_KEY_REUSED,
                    f"{IDEMPOTENCY_HEADER} {key!r} was already used for a different request;"
                    " use a new key for a new intent",
                    title="Idempotency-Key reused",
                )
            if row["state"] == "in_progress":
                raise Problem(
                    409,
                    ProblemType.IDEMPOTENCY_KEY_IN_PROGRESS,
                    f"the request with {IDEMPOTENCY_HEADER} {key!r} is still being processed;"
                    " retry shortly to get its result",
                    title="Request in progress",
                    headers={"Retry-After": "1"},
                )
            return Outcome(status=row["status"], body=row["body"], replayed=True)
        status, body, after_commit = work(conn)
        # Without after-commit work the request is done at commit: one fsync, not two.
        state = "done" if after_commit is None else "in_progress"
        idempotency_keys.claim(
            conn, actor, key, fingerprint, state, status, body, iso(backend.clock.now())
        )
    if after_commit is None:
        return Outcome(status=status, body=body, replayed=False)
    try:
        after_commit()
    finally:
        with backend.write() as conn:
            idempotency_keys.finish(conn, actor, key)
    return Outcome(status=status, body=body, replayed=False)
