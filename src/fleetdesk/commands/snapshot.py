"""``fleetdesk snapshot export``: a triage handoff bundle (JSON, Markdown, SVG) without opening the console."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fleetdesk.commands.arguments import identifier, url, whole

WINDOWS = ("1h", "6h", "24h", "7d", "28d")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "snapshot",
        help="export a triage handoff snapshot",
        description="Handoff snapshots: a JSON bundle the next engineer reopens with `fleetdesk open`, "
        "a Markdown summary for a chat or ticket, and a screenshot of the console screen.",
    )
    actions = parser.add_subparsers(dest="snapshot_command", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export",
        help="write a snapshot of one model (and its incident) from a server",
        description="Write NAME.json, NAME.md and NAME.svg for one model, read from the server. The token "
        "comes from $FLEETDESK_TOKEN or --token-file (mode 0600), never from the command line; tokens, "
        "Authorization headers, credentials in URLs and the [snapshot] secret_patterns of the config file are "
        "masked. Files are written atomically under the data dir's snapshots/ folder unless --out is given.",
    )
    export.add_argument(
        "--server",
        required=True,
        type=url,
        metavar="URL",
        help="fleetdesk server to read from",
    )
    export.add_argument(
        "--model",
        required=True,
        type=identifier,
        metavar="ID",
        help="the model the handoff is about",
    )
    export.add_argument(
        "--incident",
        type=whole(0, 2**63 - 1, "an incident id"),
        metavar="ID",
        help="incident to hand over (default: the model's open incident, if any)",
    )
    export.add_argument(
        "--out", type=Path, metavar="DIR", help="folder to write into (default: DATA_DIR/snapshots)"
    )
    export.add_argument(
        "--window",
        action="append",
        choices=WINDOWS,
        metavar="W",
        help=f"stability window(s) to capture, one of {', '.join(WINDOWS)}; repeatable; the first "
        "is the one shown (default: all, showing 24h)",
    )
    export.add_argument(
        "--token-file", type=Path, metavar="PATH", help="0600 file holding the bearer token"
    )
    export.add_argument(
        "--no-screenshot",
        action="store_true",
        help="skip drawing the console screen (NAME.svg); faster, e.g. for scripts",
    )
    export.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from fleetdesk.client import FleetdeskClient, FleetdeskError, load_token
    from fleetdesk.domain.text import sanitize
    from fleetdesk.settings import locations
    from fleetdesk.snapshot.atomic import AtomicWriteError
    from fleetdesk.snapshot.bundle import View
    from fleetdesk.snapshot.export import ExportError, capture, seal, write_bundle
    from fleetdesk.snapshot.redact import ConfigError, Redactor, configured_patterns
    from fleetdesk.wire import Window

    windows = (
        [Window(value) for value in args.window]
        if args.window
        else [Window.H24, *(window for window in Window if window is not Window.H24)]
    )

    async def fetch(client: FleetdeskClient):  # type: ignore[no-untyped-def]
        async with client:
            return await capture(
                client,
                args.server,
                args.model,
                incident_id=args.incident,
                windows=windows,
                view=View(window=windows[0]),
            )

    try:
        token = load_token(token_file=args.token_file)
        redactor = Redactor(
            [token.get_secret_value()] if token is not None else [],
            configured_patterns(locations.config_file()),
        )
        sealed = seal(asyncio.run(fetch(FleetdeskClient(args.server, token))), redactor)
        # The console draws the already-masked snapshot, so the screenshot cannot show a secret either.
        svg, why_not = (
            (None, "--no-screenshot was given") if args.no_screenshot else _screenshot(sealed)
        )
        bundle = write_bundle(sealed.model_copy(update={"screen_svg": svg}), redactor, args.out)
    except FleetdeskError as error:
        print(f"fleetdesk snapshot: {error.message}", file=sys.stderr)
        return 1
    except (AtomicWriteError, ExportError, ConfigError) as error:
        print(f"fleetdesk snapshot: {sanitize(str(error))}", file=sys.stderr)
        return 1
    print("snapshot written:")
    for path in bundle.paths:
        print(f"  {sanitize(str(path))}")
    if bundle.svg is None:
        print(f"  (no screenshot: {why_not})")
    return 0


def _screenshot(sealed):  # type: ignore[no-untyped-def]
    """The console's screen for the snapshot, or (None, why) when there is no console to draw it."""
    try:
        from fleetdesk.console.snapshot.app import render_svg
    except ImportError as error:
        return None, f"the console is not available here ({error.name or 'import failed'})"
    return render_svg(sealed)
