"""`fleetdesk registry apply|diff|history`: change a running server's registry from a fleet file, and read its
history. Declarative, like ``kubectl apply``: the file says what the registry should hold, the server works out
the change, shows it, and applies all of it in one transaction or none of it.

Exit codes, the same for every ``registry`` command, so a cron job can act on them:

  0  applied, nothing to change, or (diff) no differences
  1  refused: the file is invalid, the change breaks registry rules (each violation is listed), the token may
     not make it, or (history) the model was never registered
  2  usage: bad arguments, no server address, an unusable token file
  3  the server cannot be reached, or did not confirm the change (look at ``registry history`` before retrying)
  4  (diff only) the registry differs from the file
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from fleetdesk.commands.arguments import url

if TYPE_CHECKING:
    from fleetdesk.client import FleetdeskClient
    from fleetdesk.fleets.files import RegistryFile
    from fleetdesk.wire import ModelVersion, RegistryChangeResult, TypeVersion

T = TypeVar("T")

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_DIFFERS = 4


class _Stop(Exception):
    """End the command with this exit code, its message already said."""

    def __init__(self, code: int) -> None:
        self.code = code


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "registry",
        help="apply a fleet file to a server's registry, diff it, or show a model's history",
        description="Change the registry of a running server from a fleet file (its 'models'), or read its history."
        " The token comes from $FLEETDESK_TOKEN or --token-file. Exit codes: 0 applied / nothing to change,"
        " 1 refused or invalid, 2 usage, 3 server unreachable or change not confirmed, 4 (diff) differences.",
    )
    actions = parser.add_subparsers(dest="registry_action", metavar="ACTION", required=True)
    apply = actions.add_parser(
        "apply",
        help="make the registry hold what the file says (prints the diff)",
        description="Print the change the file makes to the registry and apply it in one transaction:"
        " all of it, or nothing when any model breaks a rule.",
    )
    _file_arguments(apply)
    apply.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")
    apply.add_argument(
        "--reason",
        metavar="TEXT",
        help="why, for the audit log (default: 'fleetdesk registry apply FILE')",
    )
    apply.set_defaults(func=run_apply)
    diff = actions.add_parser(
        "diff",
        help="print what applying the file would change (exit 4 when anything would)",
        description="Print the change the file would make to the registry; change nothing.",
    )
    _file_arguments(diff)
    diff.set_defaults(func=run_diff)
    history = actions.add_parser(
        "history",
        help="every recorded change to one model, newest first",
        description="Every change to one model's registry record: version, time, who, why and the fields.",
    )
    history.add_argument(
        "model_id", metavar="MODEL", help="the model id (or type string, with --type)"
    )
    history.add_argument(
        "--type", action="store_true", help="the history of a model type's record instead"
    )
    _server_arguments(history)
    history.set_defaults(func=run_history)


def _file_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", metavar="FILE", help="fleet file (JSON with a 'models' list), or - for stdin"
    )
    parser.add_argument(
        "--prune",
        action="store_true",
        help="retire the models the file leaves out, of the teams it declares models for",
    )
    _server_arguments(parser)


def _server_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--server", type=url, metavar="URL", help="fleetdesk server to talk to")
    parser.add_argument(
        "--token-file", type=Path, metavar="PATH", help="0600 file holding the bearer token"
    )


def run_apply(args: argparse.Namespace) -> int:
    return _run(args, lambda: _apply(args, dry_run=args.dry_run))


def run_diff(args: argparse.Namespace) -> int:
    return _run(args, lambda: _apply(args, dry_run=True, only_diff=True))


def run_history(args: argparse.Namespace) -> int:
    return _run(args, lambda: _history(args))


def _apply(args: argparse.Namespace, *, dry_run: bool, only_diff: bool = False) -> int:
    from fleetdesk.client import RegistryIntent

    file = _read_file(args)
    if file.seed_only:
        _note(
            "registry apply reads the models and types sections only; "
            f"{', '.join(file.seed_only)} are read when a store is seeded"
        )
    reason = getattr(args, "reason", None) or f"fleetdesk registry apply {args.file}"
    intent = RegistryIntent.apply(
        file.models, reason, types=file.types, prune=args.prune, dry_run=dry_run
    )
    result = _call(args, lambda client: client.change_registry(intent))
    changed = [line for c in result.type_changes for line in c.lines()] + [
        line for c in result.changes for line in c.lines()
    ]
    for line in changed:
        _say(line)
    if only_diff:
        if changed:
            _note(f"{_count(result)}; nothing applied")
        return EXIT_DIFFERS if changed else EXIT_OK
    if not changed:
        _note("no changes: the registry already says this")
    elif dry_run:
        _note(f"{_count(result)} (dry run: nothing applied)")
    else:
        _note(f"{_count(result)}: applied as registry version {result.version}")
    return EXIT_OK


def _history(args: argparse.Namespace) -> int:
    if args.type:
        versions: Sequence[ModelVersion | TypeVersion] = _call(
            args, lambda client: client.type_history(args.model_id)
        ).versions
    else:
        versions = _call(args, lambda client: client.model_history(args.model_id)).versions
    for entry in versions:
        _say(
            f"v{entry.version}  {entry.at.isoformat(timespec='seconds')}  {entry.actor}"
            f"  {entry.change.kind.value}  {entry.reason}"
        )
        for line in entry.change.lines()[1:]:
            _say(line)
    return EXIT_OK


def _read_file(args: argparse.Namespace) -> RegistryFile:
    from fleetdesk.fleets import FleetFileError, parse_registry_file
    from fleetdesk.fleets.files import MAX_FLEET_FILE_BYTES
    from fleetdesk.settings.local_files import read_text_file

    source = "<stdin>" if args.file == "-" else args.file
    try:
        if args.file == "-":
            text = sys.stdin.read(MAX_FLEET_FILE_BYTES + 1)
        else:
            text = read_text_file(Path(args.file), MAX_FLEET_FILE_BYTES)
        return parse_registry_file(text, source)
    except FleetFileError as error:
        _fail(args, str(error))
        raise _Stop(EXIT_REFUSED) from None
    except (OSError, UnicodeDecodeError) as error:
        _fail(args, f"{source}: cannot read: {getattr(error, 'strerror', None) or error}")
        raise _Stop(EXIT_REFUSED) from None


def _call(args: argparse.Namespace, call: Callable[[FleetdeskClient], Awaitable[T]]) -> T:
    """One client call to the server the arguments name; _Stop with the documented exit code on failure."""
    from fleetdesk.client import (
        FleetdeskClient,
        FleetdeskError,
        NotConfirmed,
        TokenError,
        Unavailable,
        load_token,
    )
    from fleetdesk.settings.console import SettingsError, load_settings

    try:
        settings = load_settings(server_url=args.server, token_file=args.token_file)
        token = load_token(token_file=settings.token_file)
    except (SettingsError, TokenError) as error:
        _fail(args, str(error))
        raise _Stop(EXIT_USAGE) from None
    if not settings.server_url:
        _fail(args, "give --server URL (or server_url in the config file)")
        raise _Stop(EXIT_USAGE)

    async def send() -> T:
        async with FleetdeskClient(settings.server_url or "", token) as client:
            return await call(client)

    try:
        return asyncio.run(send())
    except (Unavailable, NotConfirmed) as error:
        _fail(args, error.message)
        raise _Stop(EXIT_UNREACHABLE) from None
    except FleetdeskError as error:
        problem = error.problem
        if problem is None or not problem.errors:
            _fail(args, error.message)
            raise _Stop(EXIT_REFUSED) from None
        _fail(
            args, f"refused: {problem.detail}"
        )  # then every violation, not the message's first few
        for found in problem.errors:
            _note(f"  - {'.'.join(str(part) for part in found.loc)}: {found.message}")
        raise _Stop(EXIT_REFUSED) from None


def _run(args: argparse.Namespace, work: Callable[[], int]) -> int:
    try:
        return work()
    except _Stop as stop:
        return stop.code


def _count(result: RegistryChangeResult) -> str:
    kinds = [change.kind.value for change in result.changes]
    parts = [
        f"{kinds.count(kind)} {word}"
        for kind, word in (("create", "created"), ("update", "updated"), ("retire", "retired"))
        if kind in kinds
    ]
    if result.type_changes:
        parts.append(
            f"{len(result.type_changes)} type record{'s' if len(result.type_changes) != 1 else ''}"
        )
    total = len(kinds) + len(result.type_changes)
    return f"{total} change{'s' if total != 1 else ''} ({', '.join(parts)})"


def _say(line: str) -> None:
    from fleetdesk.domain.text import sanitize

    print(sanitize(line, limit=2000))


def _note(line: str) -> None:
    from fleetdesk.domain.text import sanitize

    print(sanitize(line, limit=2000), file=sys.stderr)


def _fail(args: argparse.Namespace, message: str) -> None:
    _note(f"fleetdesk registry {args.registry_action}: {message}")
