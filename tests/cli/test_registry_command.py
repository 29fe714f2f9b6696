"""`fleetdesk registry apply|diff|history` as a script runs them, against the real server: the diff it prints,
dry runs, all-or-nothing applies and the exit codes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from fleetdesk.commands.registry import (
    EXIT_DIFFERS,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
)
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.settings import locations

SMALL = locations.fleets_dir() / "small.json"
EXPERIMENT = "ig_feed_late-stage_mtml.x2-long-history"  # 2% of Feed late-stage, TIER3, no incident
BASELINE = "ig_feed_late-stage_mtml.v41"  # 93%
NEW = "ig_feed_late-stage_mtml.x3-fresh-start"


def fleetdesk(
    server: EmbeddedServer | None, *args: str, stdin: str = "", token: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["FLEETDESK_TOKEN"] = token or (server.admin_token if server else "fdk_unused")
    where = ["--server", server.url] if server is not None else []
    return subprocess.run(
        [sys.executable, "-m", "fleetdesk.cli", "registry", *args, *where],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
        env=env,
    )


def fleet_file(tmp_path: Path, change: Any = None, name: str = "fleet.json") -> Path:
    """The small fleet file, changed by ``change(models_by_id, models)``."""
    raw = json.loads(SMALL.read_text())
    if change is not None:
        change({m["id"]: m for m in raw["models"]}, raw["models"])
    path = tmp_path / name
    path.write_text(json.dumps(raw))
    return path


def ramp(by_id: dict[str, Any], models: list[Any]) -> None:
    """x2 from 2% to 5% of Feed traffic, the baseline from 93% to 90%."""
    by_id[EXPERIMENT]["traffic_share"] = 0.05
    by_id[BASELINE]["traffic_share"] = 0.90


def add_experiment(by_id: dict[str, Any], models: list[Any]) -> None:
    models.append(
        {**by_id[EXPERIMENT], "id": NEW, "traffic_share": 0.0, "purpose": "A fresh start."}
    )


def test_applying_the_seeded_file_changes_nothing(server: EmbeddedServer, tmp_path: Path) -> None:
    done = fleetdesk(server, "apply", str(fleet_file(tmp_path)))
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout == "" and "no changes" in done.stderr


def test_apply_prints_the_diff_and_applies_it(server: EmbeddedServer, tmp_path: Path) -> None:
    path = fleet_file(
        tmp_path, lambda by_id, models: (ramp(by_id, models), add_experiment(by_id, models))
    )
    done = fleetdesk(server, "apply", str(path), "--reason", "ramp x2, add x3")
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout.splitlines() == [
        f"~ {BASELINE}",
        "    traffic_share: 0.93 -> 0.9",
        f"~ {EXPERIMENT}",
        "    traffic_share: 0.02 -> 0.05",
        f"+ {NEW} (experiment, TIER3, ig_feed_late-stage_mtml)",
    ]
    assert "3 changes (1 created, 2 updated): applied as registry version 1" in done.stderr
    again = fleetdesk(server, "apply", str(path))
    assert again.returncode == EXIT_OK and again.stdout == ""
    history = fleetdesk(server, "history", EXPERIMENT)
    assert history.returncode == EXIT_OK, history.stderr
    lines = history.stdout.splitlines()
    assert lines[0].startswith("v1  ") and "admin  update  ramp x2, add x3" in lines[0]
    assert lines[1] == "    traffic_share: 0.02 -> 0.05"
    assert lines[2].startswith("v0  ") and "create  the registry as seeded" in lines[2]


def test_a_dry_run_and_diff_print_the_change_and_apply_nothing(
    server: EmbeddedServer, tmp_path: Path
) -> None:
    path = fleet_file(tmp_path, ramp)
    dry = fleetdesk(server, "apply", str(path), "--dry-run")
    assert dry.returncode == EXIT_OK, dry.stderr
    assert f"~ {EXPERIMENT}" in dry.stdout and "dry run: nothing applied" in dry.stderr
    diff = fleetdesk(server, "diff", str(path))
    assert diff.returncode == EXIT_DIFFERS and diff.stdout == dry.stdout
    same = fleetdesk(server, "diff", str(fleet_file(tmp_path, name="same.json")))
    assert same.returncode == EXIT_OK and same.stdout == ""
    assert server.backend.registry.get(EXPERIMENT).traffic_share == 0.02


def test_one_invalid_model_refuses_the_whole_apply(server: EmbeddedServer, tmp_path: Path) -> None:
    def one_bad(by_id: dict[str, Any], models: list[Any]) -> None:
        ramp(by_id, models)
        add_experiment(by_id, models)
        models[-1]["baseline_model_id"] = "ig_feed_late-stage_mtml.v99"
        models[-1]["upstream_model_ids"] = ["nowhere.fm-v1"]

    done = fleetdesk(server, "apply", str(fleet_file(tmp_path, one_bad)))
    assert done.returncode == EXIT_REFUSED
    assert f"models.{NEW}.baseline_model_id: unknown model" in done.stderr
    assert f"models.{NEW}.upstream_model_ids: unknown model" in done.stderr
    assert NEW not in server.backend.registry and server.backend.registry_version == 0
    assert (
        server.backend.registry.get(EXPERIMENT).traffic_share == 0.02
    )  # the valid part is not applied


def test_an_apply_that_skips_a_launch_phase_is_refused_naming_the_gate(
    server: EmbeddedServer, tmp_path: Path
) -> None:
    def skip(by_id: dict[str, Any], models: list[Any]) -> None:
        ramp(by_id, models)
        by_id[EXPERIMENT]["launch_phase"] = "scale-up"  # from estimation

    done = fleetdesk(server, "apply", str(fleet_file(tmp_path, skip)), "--reason", "ramp it")
    assert done.returncode == EXIT_REFUSED
    assert (
        f"models.{EXPERIMENT}.launch_phase: estimation → scale-up skips approval, preparation"
        in done.stderr
    )
    assert server.backend.registry_version == 0  # the ramp beside it is not applied either


def test_exit_codes_for_a_bad_file_a_forbidden_token_usage_and_no_server(
    server: EmbeddedServer, tmp_path: Path
) -> None:
    misspelled = fleet_file(tmp_path, lambda by_id, models: by_id[EXPERIMENT].update(tierr="TIER1"))
    bad = fleetdesk(server, "apply", str(misspelled))
    assert bad.returncode == EXIT_REFUSED and "tierr: unknown key" in bad.stderr
    viewer = fleetdesk(server, "apply", str(fleet_file(tmp_path, ramp)), token=server.viewer_token)
    assert viewer.returncode == EXIT_REFUSED and "act:ig-feed-ranking" in viewer.stderr
    assert fleetdesk(server, "apply").returncode == EXIT_USAGE
    no_server = fleetdesk(None, "apply", str(fleet_file(tmp_path, name="ok.json")))
    assert no_server.returncode == EXIT_USAGE and "--server" in no_server.stderr
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    env = dict(os.environ, FLEETDESK_TOKEN="fdk_x")
    unreachable = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetdesk.cli",
            "registry",
            "diff",
            str(fleet_file(tmp_path)),
            "--server",
            f"http://127.0.0.1:{port}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert unreachable.returncode == EXIT_UNREACHABLE, unreachable.stderr
    unknown = fleetdesk(server, "history", "ig_feed_nothing.v1")
    assert unknown.returncode == EXIT_REFUSED and "never had" in unknown.stderr


def test_apply_reads_the_file_from_stdin(server: EmbeddedServer, tmp_path: Path) -> None:
    text = fleet_file(tmp_path, ramp).read_text()
    done = fleetdesk(server, "apply", "-", stdin=text)
    assert done.returncode == EXIT_OK, done.stderr
    assert f"~ {EXPERIMENT}" in done.stdout


def test_prune_retires_what_the_file_leaves_out(server: EmbeddedServer, tmp_path: Path) -> None:
    path = fleet_file(tmp_path, add_experiment)
    fleetdesk(server, "apply", str(path))
    done = fleetdesk(server, "apply", str(fleet_file(tmp_path, name="seeded.json")), "--prune")
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout.splitlines() == [f"- {NEW}"]


def test_the_files_type_records_are_applied_with_its_models(
    server: EmbeddedServer, tmp_path: Path
) -> None:
    def typed(by_id: dict[str, Any], models: list[Any], raw: dict[str, Any]) -> None:
        raw["types"] = {
            "ig_feed_late-stage_mtml": {
                "owner_team": "ig-feed-ranking",
                "description": "Instagram Feed late-stage multi-task ranking.",
                "default_tier": "TIER3",
                "runbook_url": "https://runbooks.example/ig-feed-ranking",
                "attributes": {"launch_doc": {"kind": "text", "description": "Doc"}},
            }
        }
        by_id[EXPERIMENT]["attributes"] = {"launch_doc": "https://docs.example/x2"}

    raw = json.loads(SMALL.read_text())
    typed({m["id"]: m for m in raw["models"]}, raw["models"], raw)
    path = tmp_path / "typed.json"
    path.write_text(json.dumps(raw))
    done = fleetdesk(server, "apply", str(path))
    assert done.returncode == EXIT_OK, done.stderr
    assert (
        done.stdout.splitlines()[0] == "+ type ig_feed_late-stage_mtml (owned by ig-feed-ranking)"
    )
    assert "2 changes (1 updated, 1 type record): applied" in done.stderr
    history = fleetdesk(server, "history", "--type", "ig_feed_late-stage_mtml")
    assert history.returncode == EXIT_OK, history.stderr
    assert history.stdout.splitlines()[0].startswith("v1  ")
    assert "admin  create  fleetdesk registry apply" in history.stdout


def test_a_misspelled_section_is_refused_and_seed_only_sections_are_named(
    server: EmbeddedServer, tmp_path: Path
) -> None:
    raw = json.loads(SMALL.read_text())
    raw["typse"] = raw.pop("types", {})
    misspelled = tmp_path / "misspelled.json"
    misspelled.write_text(json.dumps(raw))
    refused = fleetdesk(server, "apply", str(misspelled))
    assert refused.returncode == EXIT_REFUSED
    assert "typse: unknown key" in refused.stderr
    seeded = fleetdesk(server, "apply", str(fleet_file(tmp_path)))
    assert seeded.returncode == EXIT_OK, seeded.stderr
    note = next(line for line in seeded.stderr.splitlines() if "sections only" in line)
    assert note.endswith(
        "; vocabulary, default_bands, bands, role_bands, pipelines, slo, history are read when a store"
        " is seeded"
    )
