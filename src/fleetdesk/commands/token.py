"""`fleetdesk token create|revoke|list`: manage API bearer tokens in a server's database."""

from __future__ import annotations

import argparse
import re
import sys
from datetime import timedelta

from fleetdesk.commands.arguments import name
from fleetdesk.domain.text import sanitize

_DURATION = re.compile(r"^(\d{1,7})([mhd])$")
LONGEST_TOKEN = timedelta(days=3650)
"""Ten years: a token meant to outlive that should not expire at all (leave --expires-in out)."""


def _duration(text: str) -> timedelta:
    match = _DURATION.match(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(
            f"expected a duration like 90m, 12h or 30d, not {sanitize(repr(text), 40)}"
        )
    amount, unit = int(match.group(1)), match.group(2)
    span = {
        "m": timedelta(minutes=amount),
        "h": timedelta(hours=amount),
        "d": timedelta(days=amount),
    }[unit]
    if not timedelta(minutes=1) <= span <= LONGEST_TOKEN:
        # 0m would make a token that is expired before anyone uses it.
        raise argparse.ArgumentTypeError(f"must be from 1m to {LONGEST_TOKEN.days}d, not {text}")
    return span


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "token",
        help="create, revoke or list API tokens",
        description="Manage bearer tokens (stored hashed) in a server database.",
    )
    actions = parser.add_subparsers(dest="token_command", metavar="ACTION", required=True)

    create = actions.add_parser("create", help="create a token and print it once on stdout")
    create.add_argument(
        "--db", required=True, help="the server's database: a SQLite file, or a postgresql:// URL"
    )
    create.add_argument(
        "--user", required=True, type=name, help="who the token is for (shown in the audit log)"
    )
    create.add_argument("--role", required=True, choices=("viewer", "oncall", "admin"))
    create.add_argument(
        "--team", action="append", type=name, default=[], help="team scope for oncall (repeatable)"
    )
    create.add_argument("--expires-in", type=_duration, help="e.g. 12h or 30d (default: never)")
    create.set_defaults(func=run_create)

    revoke = actions.add_parser(
        "revoke", help="revoke every token of a user, or one token read from stdin"
    )
    revoke.add_argument(
        "--db", required=True, help="the server's database: a SQLite file, or a postgresql:// URL"
    )
    which = revoke.add_mutually_exclusive_group(required=True)
    which.add_argument("--user", type=name, help="revoke all of this user's tokens")
    which.add_argument(
        "--token-stdin", action="store_true", help="read the token to revoke from stdin"
    )
    revoke.set_defaults(func=run_revoke)

    listing = actions.add_parser("list", help="list tokens (never their values)")
    listing.add_argument(
        "--db", required=True, help="the server's database: a SQLite file, or a postgresql:// URL"
    )
    listing.set_defaults(func=run_list)


def _store(path: str):  # noqa: ANN202 - keeps the heavy import lazy
    from fleetdesk.server.store import Store, StoreError

    try:
        store = Store(path)
        store.migrate()
    except StoreError as error:
        # --db names a directory, another kind of file, a URL that does not parse...: a usage mistake
        print(f"fleetdesk token: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    return store


def run_create(args: argparse.Namespace) -> int:
    from fleetdesk.server.auth import create_token
    from fleetdesk.wire import AccessRole

    role = AccessRole(args.role)
    if role is AccessRole.ONCALL and not args.team:
        print("fleetdesk token create: an oncall token needs at least one --team", file=sys.stderr)
        return 2
    store = _store(args.db)
    try:
        token = create_token(store, args.user, role, args.team, args.expires_in)
    finally:
        store.close()
    scope = f" for team(s) {', '.join(args.team)}" if args.team else ""
    expiry = f", expires in {args.expires_in}" if args.expires_in else ""
    print(
        f"created {role.value} token for {args.user}{scope}{expiry}; it is shown once, store it now:",
        file=sys.stderr,
    )
    print(token)
    return 0


def run_revoke(args: argparse.Namespace) -> int:
    from fleetdesk.server.auth import revoke_tokens

    store = _store(args.db)
    try:
        if args.token_stdin:
            line = sys.stdin.readline(
                4096
            )  # a token is under 100 characters: never read an endless line
            if len(line) >= 4096:
                print(
                    "fleetdesk token revoke: stdin holds no token (its first line is over 4096 characters)",
                    file=sys.stderr,
                )
                return 2
            count = revoke_tokens(store, token=line.strip())
        else:
            count = revoke_tokens(store, user=args.user)
    finally:
        store.close()
    print(f"revoked {count} token(s)", file=sys.stderr)
    return 0 if count else 1


def run_list(args: argparse.Namespace) -> int:
    import json

    from fleetdesk.domain.text import sanitize
    from fleetdesk.server.store import tokens

    store = _store(args.db)
    try:
        rows = tokens.every(store.connection())
    finally:
        store.close()
    for row in rows:
        teams = ",".join(json.loads(row["teams"])) or "-"
        state = (
            "revoked"
            if row["revoked"]
            else f"expires {row['expires_at']}"
            if row["expires_at"]
            else "active"
        )
        print(sanitize(f"{row['id']:>4}  {row['user']:<20} {row['role']:<7} {teams:<30} {state}"))
    return 0
