"""`fleetdesk explain MODEL_ID`: the one-sentence answer about a model, for people or machines."""

from __future__ import annotations

import argparse
import sys

from fleetdesk.commands.arguments import identifier


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="what a model is, how important, its fallback, health, SLO budget and blast radius",
        description=(
            "Print what an on-call engineer needs first about one model: its decoded type and purpose, "
            "tier and why, safe fallback, current calibration and NE against its bands, SLO error budget, "
            "burn rates and alerts, blast radius and upstream chain. Exit 2 for an unknown model or a bad fleet file."
        ),
    )
    parser.add_argument(
        "model_id",
        type=identifier,
        metavar="MODEL_ID",
        help="model id, e.g. ig_feed_late-stage_mtml.v41",
    )
    parser.add_argument(
        "--fleet", default="small", help="fixture fleet name (small, large) or fleet file path"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from fleetdesk.domain.registry import UnknownModelError
    from fleetdesk.domain.text import sanitize
    from fleetdesk.fleets import FleetFileError, load_fleet
    from fleetdesk.fleets.explanation import explain, render_text

    try:
        fleet = load_fleet(args.fleet)
        explanation = explain(fleet, args.model_id)
    except FleetFileError as error:
        print(f"fleetdesk explain: {error}", file=sys.stderr)
        return 2
    except UnknownModelError as error:
        print(f"fleetdesk explain: {sanitize(str(error))}", file=sys.stderr)
        return 2
    if args.json:
        # ASCII-only JSON: still exact for machines, and inert if it lands on a terminal.
        sys.stdout.write(
            json.dumps(explanation.model_dump(mode="json"), indent=2, ensure_ascii=True) + "\n"
        )
    else:
        sys.stdout.write(render_text(explanation))
    return 0
