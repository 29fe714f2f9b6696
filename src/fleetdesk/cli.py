"""The one ``fleetdesk`` command. Each subcommand lives in fleetdesk.commands.NAME.

A command module exposes ``register(subparsers)`` (cheap: no heavy imports at
module level, so ``fleetdesk --help`` and start-up stay fast) and sets
``func`` on its parser to a ``run(args) -> int`` function.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn

from fleetdesk.domain.text import sanitize

COMMANDS = (
    "explain",
    "fleet",
    "serve",
    "token",
    "console",
    "drill",
    "snapshot",
    "open",
    "rules",
    "registry",
)


class _Parser(argparse.ArgumentParser):
    """argparse, saying a usage mistake on one line (the usage itself is behind --help); subcommands inherit it."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {sanitize(message)} (see {self.prog} --help)\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or with ``only`` just that subcommand (a start-up skips the others' imports)."""
    parser = _Parser(
        prog="fleetdesk",
        description="On-call console for a fleet of production ML models.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS if only is None else (only,):
        try:
            module = importlib.import_module(f"fleetdesk.commands.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"fleetdesk.commands.{name}":
                raise
            continue  # not built yet
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    named = argv[0] if argv and argv[0] in COMMANDS else None
    try:
        args = build_parser(only=named).parse_args(argv)
    except SystemExit as done:  # --help (0) or a usage mistake (2), already said on one line
        return done.code if isinstance(done.code, int) else 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1  # whoever read the output went away (fleetdesk rules ... | head)
    except Exception as error:  # noqa: BLE001 - what no command foresaw is still one line, never a traceback
        print(f"fleetdesk {args.command}: failed: {_describe(error)}", file=sys.stderr)
        return 1


def _describe(error: Exception) -> str:
    if isinstance(error, OSError) and error.strerror:
        where = f"{error.filename}: " if error.filename else ""
        return sanitize(f"{where}{error.strerror}")
    return sanitize(
        f"{error} ({type(error).__name__})" if str(error) else type(error).__name__, 300
    )


if __name__ == "__main__":
    sys.exit(main())
