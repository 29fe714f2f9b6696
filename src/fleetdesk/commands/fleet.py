"""`fleetdesk fleet generate|validate`: make seeded fleet files and check fleet files."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from fleetdesk.commands.arguments import name, whole

MAX_MODELS = 100_000
"""Twice the largest fleet benchmarked (50,000); a generated fleet is built in memory, file and history."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "fleet",
        help="generate a seeded fleet file, or validate one",
        description="Generate deterministic fleet files (same models and seed, same file) and validate fleet files.",
    )
    actions = parser.add_subparsers(dest="fleet_action", metavar="ACTION", required=True)
    generate = actions.add_parser(
        "generate",
        help="write a generated fleet file",
        description="Write a valid fleet of exactly N models with 32 days of metric history recipe.",
    )
    generate.add_argument(
        "--models",
        type=whole(4, MAX_MODELS),
        required=True,
        metavar="N",
        help=f"number of models (4 to {MAX_MODELS:,})",
    )
    generate.add_argument(
        "--seed", type=whole(0, 2**63 - 1), default=0, metavar="S", help="random seed (default 0)"
    )
    generate.add_argument(
        "--name", type=name, default=None, help="fleet name (default: generated-N-seedS)"
    )
    generate.add_argument(
        "--out", required=True, metavar="FILE", help="where to write the JSON fleet file"
    )
    generate.set_defaults(func=run_generate)
    validate = actions.add_parser(
        "validate",
        help="check a fleet file and list every problem",
        description="Load a fleet file (or 'small'/'large') with full validation; exit 1 listing all problems.",
    )
    validate.add_argument("fleet", metavar="PATH", help="fleet file path, or small / large")
    validate.set_defaults(func=run_validate)


def run_generate(args: argparse.Namespace) -> int:
    from fleetdesk.domain.text import sanitize
    from fleetdesk.fleets import FleetFileError, build_fleet
    from fleetdesk.fleets.generator import generate_fleet

    out = Path(args.out)
    file = generate_fleet(args.models, args.seed, name=args.name)
    try:
        build_fleet(file, out)  # a generator bug must not produce a file that fails to load
    except FleetFileError as error:
        print(f"fleetdesk fleet generate: generated fleet is invalid: {error}", file=sys.stderr)
        return 1
    temporary = out.with_name(f".{out.name}.tmp")
    try:
        temporary.write_text(file.model_dump_json(indent=1) + "\n", encoding="utf-8")
        os.replace(temporary, out)
    except OSError as error:
        print(
            f"fleetdesk fleet generate: cannot write {sanitize(str(out))}: {sanitize(str(error))}",
            file=sys.stderr,
        )
        return 1
    print(f"wrote {sanitize(str(out))}: fleet {sanitize(file.name)!r}, {len(file.models)} models")
    return 0


def run_validate(args: argparse.Namespace) -> int:
    from fleetdesk.domain.text import sanitize
    from fleetdesk.fleets import FleetFileError, load_fleet

    try:
        fleet = load_fleet(args.fleet)
    except FleetFileError as error:
        print(f"fleetdesk fleet validate: {error}", file=sys.stderr)
        return 1
    history = fleet.file.history
    print(
        f"ok: {sanitize(str(fleet.source))}: fleet {sanitize(fleet.name)!r}, {len(fleet.registry)} models,"
        f" {len(fleet.timeline)} buckets of {history.bucket} each from {history.start.isoformat()}"
        f" to {history.end.isoformat()}, {len(history.incidents)} incident(s)"
    )
    return 0
