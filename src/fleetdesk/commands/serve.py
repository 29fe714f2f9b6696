"""`fleetdesk serve`: run the reference backend over a SQLite file seeded from a fleet."""

from __future__ import annotations

import argparse
import gc
import sys
import time


def register(subparsers: argparse._SubParsersAction) -> None:
    from fleetdesk.settings.server import FLAGLESS, ServerSettings

    parser = subparsers.add_parser(
        "serve",
        allow_abbrev=False,  # --webhook-secret must not quietly mean --webhook-secret-file
        help="run the reference backend (HTTP API under /v1)",
        description=(
            "Serve the fleetdesk API. A new --db file is seeded from --fleet; an existing one is reused as is. "
            "Every /v1 request needs a bearer token (fleetdesk token create) unless --demo, which serves "
            "read-only without tokens and only on a loopback address. Every flag can also be set in the "
            "[server] table of the config file or as FLEETDESK_SERVER_<NAME>; flags win."
        ),
    )
    # One flag per setting: the settings class is the one list of what the server can be told. Values are
    # checked there (a mistake is one line naming the setting), so each flag here is plain text.
    for name, field in ServerSettings.model_fields.items():
        if name in FLAGLESS:
            continue
        flag = "--" + name.replace("_", "-")
        default = "" if field.default in (None, "", False) else f" (default {field.default})"
        if field.annotation is bool:
            parser.add_argument(
                flag, action="store_true", default=None, help=f"{field.description}{default}"
            )
        else:
            parser.add_argument(flag, metavar=name.upper(), help=f"{field.description}{default}")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from fleetdesk.domain.text import sanitize
    from fleetdesk.fleets import FleetFileError
    from fleetdesk.server.backend import Backend
    from fleetdesk.server.clock import Clock
    from fleetdesk.server.integrations.options import IntegrationError, check, configure
    from fleetdesk.server.runner import bind, is_loopback, make_server, url_of
    from fleetdesk.server.store import StoreError, is_postgres_url
    from fleetdesk.settings import locations
    from fleetdesk.settings.server import (
        FLAGLESS,
        ServerSettings,
        SettingsError,
        load_server_settings,
    )

    try:
        settings = load_server_settings(
            **{
                name: getattr(args, name)
                for name in ServerSettings.model_fields
                if name not in FLAGLESS
            }
        )
        check(settings)
    except (SettingsError, IntegrationError) as error:
        print(f"fleetdesk serve: {sanitize(str(error))}", file=sys.stderr)
        return 2
    if settings.demo and not is_loopback(settings.host):
        print(
            f"fleetdesk serve: refusing --demo on {sanitize(settings.host)}: tokenless access is for loopback only",
            file=sys.stderr,
        )
        return 2
    db_path: Path | str = settings.db or locations.data_dir() / "fleetdesk.sqlite"
    if not is_postgres_url(db_path):
        db_path = Path(db_path)
        db_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        sock = bind(settings.host, settings.port)
    except OSError as error:
        print(
            f"fleetdesk serve: cannot listen on {sanitize(settings.host)}:{settings.port}: {error.strerror or error}",
            file=sys.stderr,
        )
        return 2
    try:
        report = SeedReport()
        backend = Backend.open(
            db_path,
            settings.fleet,
            Clock(settings.now),
            demo=settings.demo,
            say=report.say,
            progress=report.seeding,
        )
    except (FleetFileError, StoreError, ValueError) as error:
        print(f"fleetdesk serve: {error}", file=sys.stderr)
        return 2
    url = url_of(sock)
    try:
        integrations = configure(backend, settings, url)
    except IntegrationError as error:
        print(f"fleetdesk serve: {error}", file=sys.stderr)
        backend.close()
        return 2
    clock = f"frozen at {settings.now.isoformat()}" if settings.now else "real UTC"
    where = backend.store.where  # a URL without its password
    print(
        f"fleetdesk serving fleet '{sanitize(backend.config.name)}' ({len(backend.registry)} models) on {url}",
        flush=True,
    )
    origin = (
        f"new, seeded from {sanitize(settings.fleet)}"
        if backend.seeded
        else "existing, reused as is"
    )
    print(
        f"  database: {where} ({origin})   clock: {clock}   API: {url}/v1   OpenAPI: {url}/v1/openapi.json"
    )
    if settings.demo:
        print(
            "  DEMO MODE: anyone on this machine can READ without a token; actions still need one."
        )
    print(
        f"  get a token: fleetdesk token create --db {where} --user YOU --role oncall --team TEAM"
    )
    print(
        "  then: export FLEETDESK_TOKEN=<token>   (never pass tokens on the command line)",
        flush=True,
    )
    print(f"  metrics source: {backend.metrics.name}   paging: {backend.paging.name}", flush=True)
    server = make_server(backend, settings.log_level)
    # What start-up made (registry, fleet config, the app) lives as long as the server. Frozen out of the
    # collector's reach, a full collection no longer walks it: unfrozen, each took 40-50 ms at 1,000 models,
    # every request in flight stalled behind it (an action p99 of 65 ms against 20 ms, measured).
    gc.collect()
    gc.freeze()
    try:
        server.run(sockets=[sock])
    finally:
        integrations.close()
        backend.close()
    return 0


class SeedReport:
    """What seeding a new database is doing, as plain lines (a service's log, not a terminal's redrawn line):
    seeding 50,000 models takes minutes, and a server silent that long looks hung."""

    EVERY = 5.0
    """Seconds between progress lines."""

    def __init__(self) -> None:
        self.started = self._said = time.monotonic()

    def say(self, doing: str) -> None:
        from fleetdesk.domain.text import sanitize

        print(f"fleetdesk serve: {sanitize(doing)}", flush=True)

    def seeding(self, done: int, total: int, buckets: int) -> None:
        now = time.monotonic()
        if done < total and now - self._said < self.EVERY:
            return
        self._said = now
        self.say(
            f"seeded {done:,} of {total:,} models ({done / total:.0%}), {buckets:,} buckets,"
            f" {now - self.started:.0f} s"
        )
