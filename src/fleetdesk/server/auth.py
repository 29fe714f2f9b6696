"""Bearer tokens: who is calling, with which role and team scope, and what they may do.

Tokens are random, shown once at creation, and stored only as SHA-256 hashes.
Expiry is judged by the wall clock, never by a frozen demo clock.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from datetime import timedelta

from fleetdesk.server.clock import wall_clock
from fleetdesk.server.problems import Problem
from fleetdesk.server.store import Connection, Row, Store, iso, parse_iso
from fleetdesk.server.store import tokens as tokens_table
from fleetdesk.wire import AccessRole, ProblemType, WhoAmI

TOKEN_PREFIX = "fdk_"
DEMO_USER = "demo"


@dataclass(frozen=True)
class Principal:
    """The authenticated caller (no token material kept)."""

    user: str
    role: AccessRole
    teams: tuple[str, ...]
    demo: bool = False
    token_id: int | None = None
    """The row of the token presented (None in demo mode), so access can be checked again while a stream is open."""

    def who(self) -> WhoAmI:
        return WhoAmI(user=self.user, role=self.role, teams=list(self.teams), demo=self.demo)

    def may_act_on(self, team: str) -> bool:
        return self.role is AccessRole.ADMIN or (
            self.role is AccessRole.ONCALL and team in self.teams
        )

    def require(self, permission: str, allowed: bool, what: str) -> None:
        """403 naming the missing permission unless ``allowed``."""
        if not allowed:
            scope = f" (teams: {', '.join(self.teams)})" if self.teams else ""
            raise Problem(
                403,
                ProblemType.FORBIDDEN,
                f"{self.user} ({self.role}{scope}) may not {what}: needs permission {permission}",
                missing_permission=permission,
            )

    def require_act(self, team: str, what: str) -> None:
        self.require(f"act:{team}", self.may_act_on(team), what)

    def require_admin(self, permission: str, what: str) -> None:
        self.require(permission, self.role is AccessRole.ADMIN, what)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_token(
    store: Store, user: str, role: AccessRole, teams: list[str], expires_in: timedelta | None = None
) -> str:
    """Store a new token (hashed) and return it: the only time it is ever visible."""
    return create_tokens(store, [(user, role, teams, expires_in)])[0]


def create_tokens(
    store: Store, specs: list[tuple[str, AccessRole, list[str], timedelta | None]]
) -> list[str]:
    """Several tokens in one transaction (user, role, teams, expires_in each)."""
    now = wall_clock()
    tokens = [TOKEN_PREFIX + secrets.token_urlsafe(32) for _ in specs]
    with store.write() as conn:
        tokens_table.insert(
            conn,
            [
                (
                    hash_token(token),
                    user,
                    role.value,
                    json.dumps(sorted(set(teams))),
                    iso(now),
                    None if expires_in is None else iso(now + expires_in),
                )
                for token, (user, role, teams, expires_in) in zip(tokens, specs)
            ],
        )
    return tokens


def revoke_tokens(store: Store, *, user: str | None = None, token: str | None = None) -> int:
    """Revoke by user (all of theirs) or by token value; returns how many were revoked."""
    with store.write() as conn:
        if token is not None:
            return tokens_table.revoke_hash(conn, hash_token(token))
        return tokens_table.revoke_user(conn, user)


def _unauthenticated(detail: str) -> Problem:
    return Problem(
        401,
        ProblemType.UNAUTHENTICATED,
        detail,
        headers={"WWW-Authenticate": 'Bearer realm="fleetdesk"'},
    )


def authenticate(conn: Connection, authorization: str | None, demo: bool) -> Principal:
    """The principal for an Authorization header value (or the demo viewer)."""
    if not authorization:
        if demo:
            return Principal(user=DEMO_USER, role=AccessRole.VIEWER, teams=(), demo=True)
        raise _unauthenticated(
            "missing bearer token (create one with: fleetdesk token create --role viewer ...)"
        )
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise _unauthenticated("expected 'Authorization: Bearer <token>'")
    row = tokens_table.by_hash(conn, hash_token(token))
    if row is None:
        raise _unauthenticated("unknown token")
    ended = _ended(row)
    if ended is not None:
        raise _unauthenticated(ended)
    return Principal(
        user=row["user"],
        role=AccessRole(row["role"]),
        teams=tuple(json.loads(row["teams"])),
        token_id=row["id"],
    )


def access_ended(conn: Connection, principal: Principal) -> str | None:
    """Why ``principal``'s token no longer grants access ("token revoked", "token expired"), or None while it does.

    Authentication happens once per request; a request that stays open (the event stream) asks this again.
    """
    if principal.token_id is None:
        return None  # demo mode: no token to revoke
    row = tokens_table.validity(conn, principal.token_id)
    return "token removed" if row is None else _ended(row)


def _ended(row: Row) -> str | None:
    if row["revoked"]:
        return "token revoked"
    if row["expires_at"] is not None and parse_iso(row["expires_at"]) <= wall_clock():
        return "token expired"
    return None
