"""Keystrokes from the page to the mitigation, counted in headless drills against the goals of issue 18.

Each script is the shortest path an engineer at 80x24 would take: the cursor is already on the page, so
Enter opens it; the action key; its confirmation. A console that needs one key more (the cursor no longer
follows the page, a dialog that opens on Cancel again, a burst that lands in the wrong field) does not
mitigate with these keys: the scorecard fails, or counts more keys than the goal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleetdesk.cli import main
from fleetdesk.drills.scoring import Scorecard

SCRIPTS = Path(__file__).parent / "scripts"

GOALS = {
    # TIER3: Enter, e, y (its confirmation is one key).
    "experiment-calibration-drift": 5,
    # TIER0: Enter, x, the variant (v23), Tab, a reason, Enter.
    "tier0-no-fallback": 15,
}


@pytest.mark.parametrize("name", sorted(GOALS))
def test_the_mitigation_takes_no_more_keys_than_its_goal(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "drill",
            name,
            "--speed",
            "2",
            "--headless",
            "--script",
            str(SCRIPTS / f"{name}.fewest-keys.json"),
            "--out",
            str(tmp_path),
        ]
    )
    capsys.readouterr()
    (saved,) = tmp_path.glob("*.json")
    card = Scorecard.model_validate(json.loads(saved.read_text()))
    assert card.passed and code == 0, card.reasons
    assert card.keystrokes_to_mitigation is not None
    assert card.keystrokes_to_mitigation <= GOALS[name], (
        f"{card.keystrokes_to_mitigation} keys to the mitigation, goal {GOALS[name]}"
    )
