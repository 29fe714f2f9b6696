"""``fleetdesk drill``: rehearse an incident on a fixture fleet, in the real console, and get a scorecard."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "drill",
        help="run an incident drill in the console and score the response",
        description=(
            "Start an embedded backend (random loopback port, temp database) with the scenario's fleet, open the "
            "console, and replay the scenario in compressed time (one metric bucket per second by default) while "
            "you respond with the real keys. At the end the scorecard is shown and saved as JSON and Markdown. "
            "With --headless --script FILE a list of timed key presses is played instead and the scorecard is "
            "printed; exit 0 when the drill passed, 1 when it failed, 2 when it could not run."
        ),
    )
    parser.add_argument(
        "scenario", nargs="?", metavar="SCENARIO", help="scenario name (see --list) or .toml path"
    )
    parser.add_argument(
        "--list", action="store_true", help="list the shipped scenarios, one line each"
    )
    parser.add_argument(
        "--speed",
        type=_positive,
        default=1.0,
        metavar="N",
        help="metric buckets replayed per wall second (default 1)",
    )
    parser.add_argument(
        "--fleet", metavar="NAME", help="fleet name or path instead of the scenario's own"
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="folder for the scorecard files (default: DATA_DIR/drills)",
    )
    parser.add_argument(
        "--headless", action="store_true", help="no terminal: play --script under Textual's Pilot"
    )
    parser.add_argument(
        "--script",
        type=Path,
        metavar="FILE",
        help='JSON key script: [{"at": 1.5, "from": "page", "keys": "a"}, {"at": 2, "type": "text"}]',
    )
    parser.add_argument(
        "--ascii", action="store_true", default=None, help="ASCII-only boxes and charts"
    )
    parser.set_defaults(func=run)


MAX_SPEED = 3600.0
"""Buckets per wall second: an hour of hourly buckets a second is past what a human can follow."""


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= MAX_SPEED:  # also refuses inf and nan, which float() reads
        raise argparse.ArgumentTypeError(f"must be above 0 and at most {MAX_SPEED:g}")
    return value


def run(args: argparse.Namespace) -> int:
    from fleetdesk.drills.scenario import ScenarioError, load_scenario

    if args.list:
        return _list()
    if not args.scenario:
        print(
            "fleetdesk drill: name a scenario (fleetdesk drill --list shows them)", file=sys.stderr
        )
        return 2
    if args.headless != (args.script is not None):
        print("fleetdesk drill: --headless and --script go together", file=sys.stderr)
        return 2

    from fleetdesk.drills.replay import drill_fleet, plan_replay
    from fleetdesk.drills.script import load_script
    from fleetdesk.fleets import FleetFileError

    # Everything is checked before anything starts: a bad file never leaves a half-built drill.
    try:
        scenario, path = load_scenario(args.scenario)
        fleet = drill_fleet(scenario, str(path), args.fleet)
        plan = plan_replay(scenario, fleet)
        script = load_script(args.script) if args.script is not None else None
    except (ScenarioError, FleetFileError) as error:
        print(f"fleetdesk drill: {sanitize_lines(str(error))}", file=sys.stderr)
        return 2
    return _drill(args, scenario, path.stem, fleet, plan, script)


def _drill(args, scenario, name, fleet, plan, script) -> int:  # type: ignore[no-untyped-def]
    import asyncio
    import tempfile

    from fleetdesk.console.app import Backend
    from fleetdesk.console.drill.app import DrillApp
    from fleetdesk.drills.backend import BackendStartError, DrillBackend
    from fleetdesk.drills.replay import write_fleet
    from fleetdesk.drills.scoring import to_markdown
    from fleetdesk.drills.session import DrillRun
    from fleetdesk.settings import locations
    from fleetdesk.settings.console import SettingsError, load_settings

    out_dir = args.out or locations.data_dir() / "drills"
    try:
        settings = load_settings(
            ascii=args.ascii
        )  # before the backend starts: a bad setting starts nothing
    except SettingsError as error:
        print(f"fleetdesk drill: {error}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="fleetdesk-drill-") as temp:
        try:
            backend = DrillBackend.start(
                write_fleet(fleet, Path(temp) / "fleet.json"), scenario.start
            )
        except BackendStartError as error:
            print(f"fleetdesk drill: {sanitize_lines(str(error))}", file=sys.stderr)
            return 2
        with backend:
            run = DrillRun(scenario, name, plan, backend.url, backend.admin_token, args.speed)
            # The engineer signs in as on-call for every team, so every playbook action can be tried.
            console_backend = Backend(backend.url, backend.oncall_token, label=f"drill {name}")
            app = DrillApp(
                console_backend,
                run,
                out_dir=out_dir,
                settings=settings,
                conclude_by_itself=script is None,
            )
            if script is None:
                app.run()
                card = app.scorecard
            else:
                from fleetdesk.console.drill.player import play

                card = asyncio.run(play(app, script))
    if card is None:
        print(
            "fleetdesk drill: the drill was closed before its scorecard (ctrl+q); nothing saved",
            file=sys.stderr,
        )
        return 1
    if script is not None:
        sys.stdout.write(to_markdown(card) + "\n")
    else:
        print(f"Drill {'PASS' if card.passed else 'FAIL'}: {sanitize_lines(card.title)}")
        for reason in card.reasons:
            print(f"  - {sanitize_lines(reason)}")
    for saved in app.saved:
        print(f"Scorecard saved: {saved}")
    return 0 if card.passed else 1


def sanitize_lines(text: str) -> str:
    """Sanitize each line on its own, keeping the line breaks of multi-line errors."""
    from fleetdesk.domain.text import sanitize

    return "\n".join(sanitize(line) for line in text.splitlines())


def _list() -> int:
    from fleetdesk.drills.scenario import ScenarioError, list_scenarios, load_scenario

    found = list_scenarios()
    if not found:
        print("fleetdesk drill: no scenarios shipped", file=sys.stderr)
        return 2
    width = max(len(name) for name, _ in found)
    broken = 0
    for name, path in found:
        try:
            scenario, _ = load_scenario(path)
        except ScenarioError as error:
            broken += 1
            print(
                f"{name:<{width}}  (invalid: {len(error.problems)} problem(s); run it to see them)"
            )
            continue
        print(f"{name:<{width}}  {sanitize_lines(scenario.summary)}")
    return 2 if broken else 0
