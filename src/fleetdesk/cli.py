"""The one ``fleetdesk`` command. Each subcommand lives in fleetdesk.commands.NAME.

A command module exposes ``register(subparsers)`` (cheap: no heavy imports at
module level, so ``fleetdesk --help`` and start-up stay fast) and sets
``func`` on its parser to a ``run(args) -> int`` function.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = ("explain", "fleet", "serve", "token", "console", "drill", "snapshot", "open", "rules")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fleetdesk",
        description="On-call console for a fleet of production ML models.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"fleetdesk.commands.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"fleetdesk.commands.{name}":
                raise
            continue  # not built yet
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
