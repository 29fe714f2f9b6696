"""Every scenario, end to end: `fleetdesk drill --headless` with the real backend and the real console.

Each scenario is played twice, by a key script doing the right thing (the
scorecard passes) and by one doing a wrong thing (the scorecard fails and
says why). Speed 2 keeps a run short while the console still keeps up with
the live feed on a 2-core machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleetdesk.cli import main
from fleetdesk.drills.scoring import Scorecard

SCRIPTS = Path(__file__).parent / "scripts"
SPEED = "2"

WRONG = {
    "experiment-calibration-drift": ("end-experiment", "ig_feed_late-stage_mtml.x1-watch-time"),
    "launch-ne-regression": ("end-experiment", "ig_feed_late-stage_mtml.x2-long-history"),
    "foundation-model-degradation": ("rollback", "ig_feed_late-stage_mtml.x1-watch-time"),
    "stale-feed": ("rollback", "ig_reels_late-stage_dhen.x4-int8"),
    "tier0-no-fallback": ("end-experiment", "ig_reels_late-stage_dhen.x4-int8"),
}


def drill(name: str, script: str, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, Scorecard, str]:
    code = main(["drill", name, "--speed", SPEED, "--headless", "--script", str(SCRIPTS / script), "--out", str(out)])
    printed = capsys.readouterr().out
    saved = sorted(out.glob("*.json"))
    assert len(saved) == 1 and saved[0].with_suffix(".md").is_file()
    assert f"Scorecard saved: {saved[0]}" in printed
    return code, Scorecard.model_validate(json.loads(saved[0].read_text())), printed


@pytest.mark.parametrize("name", sorted(WRONG))
def test_the_right_response_passes(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, card, printed = drill(name, f"{name}.correct.json", tmp_path, capsys)
    assert card.passed, card.reasons
    assert code == 0
    assert "— PASS" in printed.splitlines()[0]
    assert card.time_to_acknowledge is not None and card.time_to_acknowledge <= card.acknowledge_within
    assert card.time_to_first_mitigation is not None
    assert all(result.met for result in card.responses)
    assert card.wrong == []
    assert all(check.ok for check in card.incidents)
    assert card.keystrokes > 10 and card.keystrokes_to_mitigation is not None


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_response_is_flagged(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, card, printed = drill(name, f"{name}.wrong.json", tmp_path, capsys)
    assert not card.passed and code == 1
    action, model_id = WRONG[name]
    assert [(w.action, w.model_id) for w in card.wrong] == [(action, model_id)]
    assert card.wrong[0].why
    assert f"wrong action: {action} on {model_id}" in printed
    assert not any(result.met for result in card.responses)
