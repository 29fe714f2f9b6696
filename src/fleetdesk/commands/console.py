"""``fleetdesk console``: the on-call console, against a server or an embedded demo backend."""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import TextIO

from fleetdesk.commands.arguments import identifier, url


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "console",
        help="open the on-call console",
        description="Open the on-call console. With --fleet NAME an embedded reference backend is started on a "
        "random loopback port (demo data); with --server URL the token comes from $FLEETDESK_TOKEN or "
        "--token-file (mode 0600). Settings also come from the config file; flags win.",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--server", type=url, metavar="URL", help="fleetdesk server to talk to")
    where.add_argument(
        "--fleet",
        metavar="NAME",
        help="start an embedded backend with this fixture fleet (e.g. small)",
    )
    parser.add_argument(
        "--token-file", type=Path, metavar="PATH", help="0600 file holding the bearer token"
    )
    parser.add_argument(
        "--theme", type=identifier, help="theme name (see the command palette, ctrl+p)"
    )
    parser.add_argument(
        "--ascii", action="store_true", default=None, help="ASCII-only boxes and charts"
    )
    parser.add_argument(
        "--read-only", action="store_true", default=None, help="hide every action key"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # The cyclic collector is off until the fleet's first page has painted (_collector_back_on). Start-up
    # makes a few hundred thousand objects that live all session (pydantic schemas, Textual's CSS and widgets),
    # and the collector walked them again and again before the first paint, for nothing: about 70 ms of CPU,
    # an eighth of the start (tests/bench/bench_console_fleet.py). Seeding runs with it on.
    gc.disable()
    report = StartReport(sys.stderr) if args.fleet else None
    if report is not None:
        report.say(
            f"starting the embedded backend for fleet {args.fleet!r}"
        )  # before anything heavy is imported

    from pydantic import SecretStr

    from fleetdesk.client import FleetdeskError, load_token
    from fleetdesk.console.app import Backend, FleetdeskApp
    from fleetdesk.settings.console import SettingsError, load_settings

    try:
        settings = load_settings(
            server_url=args.server,
            token_file=args.token_file,
            theme=args.theme,
            ascii=args.ascii if args.ascii else (True if _ascii_terminal() else None),
            read_only=args.read_only,
        )
    except SettingsError as error:
        print(f"fleetdesk console: {error}", file=sys.stderr)
        return 2
    embedded = None
    try:
        if report is not None:
            from fleetdesk.server.embedded import start_embedded

            # The fleet's store is seeded once and kept in the cache dir: later starts copy it.
            gc.enable()
            embedded = start_embedded(
                fleet=args.fleet, cached=True, say=report.say, progress=report.seeding
            )
            gc.disable()
            report.done()
            # The demo signs in as on-call for every team, so every playbook action can be tried.
            backend = Backend(
                embedded.url, SecretStr(embedded.oncall_token), label=f"embedded {args.fleet}"
            )
        elif settings.server_url:
            backend = Backend(settings.server_url, load_token(token_file=settings.token_file))
        else:
            print(
                "fleetdesk console: give --server URL (or server_url in the config file) or --fleet NAME",
                file=sys.stderr,
            )
            return 2
        FleetdeskApp(backend, settings, on_started=_collector_back_on).run()
    except FleetdeskError as error:
        print(f"fleetdesk console: {error.message}", file=sys.stderr)
        return 1
    finally:
        if embedded is not None:
            embedded.stop()
    return 0


def _collector_back_on() -> None:
    gc.freeze()  # what start-up made lives all session: no collection needs to walk it again
    gc.enable()


class StartReport:
    """What the embedded start is doing and how far it is, on one line of the terminal until the console opens
    (seeding the large fleet takes seconds; a blank screen said nothing)."""

    EVERY = 0.1
    """Seconds between progress redraws."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self.started = time.monotonic()
        self._drawn = 0.0
        self._width = 0

    def say(self, doing: str) -> None:
        self._write(f"fleetdesk: {doing}", final=True)

    def seeding(self, done: int, total: int, buckets: int) -> None:
        now = time.monotonic()
        if done < total and now - self._drawn < self.EVERY:
            return
        self._drawn = now
        line = f"fleetdesk: writing buckets: {done:,} of {total:,} models, {buckets:,} buckets ({done / total:.0%})"
        if self.live or done == total:
            self._write(line, final=done == total)

    def done(self) -> None:
        self._write(
            f"fleetdesk: backend ready in {time.monotonic() - self.started:.1f} s; opening the console",
            final=True,
        )

    def _write(self, line: str, final: bool) -> None:
        if self.live:
            # One line, rewritten in place; the console's screen replaces it when it opens.
            self.stream.write("\r" + line.ljust(self._width)[: max(self._width, len(line))])
            self._width = len(line)
            if final:
                self.stream.write("\n")
                self._width = 0
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def _ascii_terminal() -> bool:
    """Box and braille glyphs need a UTF-8 terminal; fall back to ASCII otherwise."""
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    return bool(encoding) and encoding != "utf8"
