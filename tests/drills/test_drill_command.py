"""`fleetdesk drill` argument handling: listing, and refusing to start on a bad scenario or script."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetdesk.cli import main
from fleetdesk.drills.scenario import list_scenarios


def test_list_prints_one_line_per_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["drill", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [name for name, _ in list_scenarios()]
    assert all(len(line.split(None, 1)[1]) > 20 for line in lines)


def test_a_malformed_scenario_never_starts_a_drill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text((list_scenarios()[0][1]).read_text().replace('kind = "', 'kind = "x', 1))
    assert main(["drill", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert (
        f"{bad}: invalid scenario: injections[0].kind: Input should be" in err
        and err.count("\n") == 1
    )
    assert not (tmp_path / "out").exists()


def test_a_scenario_naming_models_the_fleet_lacks_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, path = list_scenarios()[0]
    assert main(["drill", name, "--fleet", "large", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown model" in err and "in fleet 'small'" in err and str(path) in err


def test_headless_needs_a_script_and_a_valid_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = list_scenarios()[0][0]
    assert main(["drill", name, "--headless"]) == 2
    assert "--headless and --script go together" in capsys.readouterr().err
    script = tmp_path / "keys.json"
    script.write_text('[{"at": "soon", "keys": "a"}]')
    assert main(["drill", name, "--headless", "--script", str(script)]) == 2
    err = capsys.readouterr().err
    assert f"{script}: invalid key script: [0].at: Input should be a valid number" in err
