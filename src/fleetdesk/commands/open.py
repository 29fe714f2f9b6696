"""``fleetdesk open FILE.json``: reopen a handoff snapshot in the console, read-only."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fleetdesk.commands.arguments import identifier


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "open",
        help="reopen a triage handoff snapshot, read-only",
        description="Open a snapshot written by `fleetdesk snapshot export` (or `s` in the console) in the console, "
        "on frozen data: the same fleet, model and incident screens, no action keys, and a banner saying whose "
        "snapshot it is and from when. Older snapshot versions open; a newer, corrupted or truncated file is "
        "refused with the reason (exit 2).",
    )
    parser.add_argument("file", type=Path, metavar="FILE.json", help="the snapshot's JSON file")
    parser.add_argument(
        "--summary",
        action="store_true",
        help="print the check result and the Markdown summary instead of opening the console",
    )
    parser.add_argument(
        "--theme", type=identifier, help="theme name (see the command palette, ctrl+p)"
    )
    parser.add_argument(
        "--ascii", action="store_true", default=None, help="ASCII-only boxes and charts"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from fleetdesk.domain.text import sanitize
    from fleetdesk.settings.console import SettingsError, load_settings
    from fleetdesk.snapshot import markdown
    from fleetdesk.snapshot.reopen import SnapshotError, load_snapshot

    try:
        # Settings first: a bad config file is said alone, before anything about the snapshot.
        settings = None if args.summary else load_settings(theme=args.theme, ascii=args.ascii)
        reopened = load_snapshot(args.file)
    except (SettingsError, SnapshotError) as error:
        print(f"fleetdesk open: {error}", file=sys.stderr)
        return 2
    snapshot = reopened.snapshot
    if reopened.migrated:
        print(
            f"fleetdesk open: a version {reopened.file_version} snapshot, read as version "
            f"{snapshot.schema_version} (the file is unchanged)",
            file=sys.stderr,
        )
    if settings is None:
        print(
            f"valid snapshot (schema version {reopened.file_version}) of {sanitize(snapshot.model_id)} "
            f"by {sanitize(snapshot.exported_by)} at {markdown.when(snapshot.exported_at)}"
        )
        print()
        print(markdown.render(snapshot, files=sanitize(args.file.name)), end="")
        return 0
    from fleetdesk.console.snapshot.app import SnapshotConsole
    from fleetdesk.settings.console import load_settings

    SnapshotConsole(snapshot, settings).run()
    return 0
