"""`fleetdesk serve`: run the reference backend over a SQLite file seeded from a fleet."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime

from fleetdesk.commands.arguments import port


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the reference backend (HTTP API under /v1)",
        description=(
            "Serve the fleetdesk API. A new --db file is seeded from --fleet; an existing one is reused as is. "
            "Every /v1 request needs a bearer token (fleetdesk token create) unless --demo, which serves "
            "read-only without tokens and only on a loopback address."
        ),
    )
    parser.add_argument("--fleet", default="small", help="fleet to seed a new database from: small, large or a path")
    parser.add_argument("--db", help="SQLite file (default: fleetdesk.sqlite in the XDG data dir)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=port, default=8787, help="port (0: any free port; default 8787)")
    parser.add_argument("--now", type=_aware_time, help="freeze the server clock at this ISO 8601 time (tests, demos)")
    parser.add_argument("--demo", action="store_true", help="read-only access without tokens (loopback only)")
    parser.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"))
    from fleetdesk.server.integrations.options import add_arguments as add_integration_arguments

    add_integration_arguments(parser)
    parser.set_defaults(func=run)


def _aware_time(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError("give a UTC offset, e.g. 2026-01-15T12:00:00+00:00")
    from fleetdesk.domain.bounds import EARLIEST, LATEST

    if not EARLIEST <= moment < LATEST:
        raise argparse.ArgumentTypeError(f"must be from {EARLIEST.year} up to {LATEST.year} (UTC), like every time")
    return moment


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from fleetdesk.settings import locations
    from fleetdesk.fleets import FleetFileError
    from fleetdesk.server.backend import Backend
    from fleetdesk.server.clock import Clock
    from fleetdesk.server.runner import bind, is_loopback, make_server, url_of
    from fleetdesk.server.store import StoreError

    from fleetdesk.domain.text import sanitize

    if args.demo and not is_loopback(args.host):
        print(f"fleetdesk serve: refusing --demo on {sanitize(args.host)}: tokenless access is for loopback only",
              file=sys.stderr)
        return 2
    from fleetdesk.server.integrations.options import IntegrationError, check, configure

    try:
        check(args)
    except IntegrationError as error:
        print(f"fleetdesk serve: {error}", file=sys.stderr)
        return 2
    db_path = Path(args.db) if args.db else locations.data_dir() / "fleetdesk.sqlite"
    db_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        sock = bind(args.host, args.port)
    except OSError as error:
        print(f"fleetdesk serve: cannot listen on {sanitize(args.host)}:{args.port}: {error.strerror or error}",
              file=sys.stderr)
        return 2
    try:
        backend = Backend.open(db_path, args.fleet, Clock(args.now), demo=args.demo)
    except (FleetFileError, StoreError, ValueError) as error:
        print(f"fleetdesk serve: {error}", file=sys.stderr)
        return 2
    url = url_of(sock)
    try:
        integrations = configure(backend, args, url)
    except IntegrationError as error:
        print(f"fleetdesk serve: {error}", file=sys.stderr)
        backend.close()
        return 2
    clock = f"frozen at {args.now.isoformat()}" if args.now else "real UTC"
    where = sanitize(str(db_path))
    print(f"fleetdesk serving fleet '{sanitize(backend.config.name)}' ({len(backend.registry)} models) on {url}",
          flush=True)
    origin = f"new, seeded from {sanitize(args.fleet)}" if backend.seeded else "existing, reused as is"
    print(f"  database: {where} ({origin})   clock: {clock}   API: {url}/v1   OpenAPI: {url}/v1/openapi.json")
    if args.demo:
        print("  DEMO MODE: anyone on this machine can READ without a token; actions still need one.")
    print(f"  get a token: fleetdesk token create --db {where} --user YOU --role oncall --team TEAM")
    print("  then: export FLEETDESK_TOKEN=<token>   (never pass tokens on the command line)", flush=True)
    print(f"  metrics source: {backend.metrics.name}   paging: {backend.paging.name}", flush=True)
    server = make_server(backend, args.log_level)
    try:
        server.run(sockets=[sock])
    finally:
        integrations.close()
        backend.close()
    return 0
