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
    # The judgement drills: an unhealthy fallback, a holdout, one cause on one surface, acknowledge only.
    "unhealthy-fallback": ("end-experiment", "ig_reels_late-stage_dhen.x4-int8"),
    "holdout-lag": ("rollback", "ig_feed_late-stage_mtml.holdout-2026h2"),
    "surface-shared-cause": ("escalate", "ig_feed_sourcing_two-tower.v9"),
    "acknowledge-only": ("escalate", "ig_tagging_late-stage_dlrm.v6"),
}
WHY = {  # what the scorecard must say about the wrong action
    "unhealthy-fallback": "its baseline v23 is itself paging",
    "holdout-lag": "ends the 2026h2 measurement for good",
    "surface-shared-cause": "escalate-pipeline was already done (escalate on ig_feed_late-stage_mtml.v41",
    "acknowledge-only": "paging policy follows the tier",
}
ALREADY_RIGHT_BEFORE_THE_WRONG = {
    "surface-shared-cause"
}  # the wrong is doing the right thing a second time
NOTHING_TO_MITIGATE = {"acknowledge-only"}  # acknowledging is the whole answer


def drill(
    name: str, script: str, out: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, Scorecard, str]:
    code = main(
        [
            "drill",
            name,
            "--speed",
            SPEED,
            "--headless",
            "--script",
            str(SCRIPTS / script),
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr().out
    saved = sorted(out.glob("*.json"))
    assert len(saved) == 1 and saved[0].with_suffix(".md").is_file()
    assert f"Scorecard saved: {saved[0]}" in printed
    return code, Scorecard.model_validate(json.loads(saved[0].read_text())), printed


@pytest.mark.parametrize("name", sorted(WRONG))
def test_the_right_response_passes(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, card, printed = drill(name, f"{name}.correct.json", tmp_path, capsys)
    assert card.passed, card.reasons
    assert code == 0
    assert "— PASS" in printed.splitlines()[0]
    assert (
        card.time_to_acknowledge is not None and card.time_to_acknowledge <= card.acknowledge_within
    )
    assert all(result.met for result in card.responses)
    assert card.wrong == []
    assert all(check.ok for check in card.incidents) and all(check.ok for check in card.quiet)
    assert card.keystrokes > 10
    if name in NOTHING_TO_MITIGATE:
        assert card.responses == [] and card.time_to_first_mitigation is None
    else:
        assert (
            card.time_to_first_mitigation is not None and card.keystrokes_to_mitigation is not None
        )


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_response_is_flagged(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, card, printed = drill(name, f"{name}.wrong.json", tmp_path, capsys)
    assert not card.passed and code == 1
    action, model_id = WRONG[name]
    assert [(w.action, w.model_id) for w in card.wrong] == [(action, model_id)]
    assert card.wrong[0].why and WHY.get(name, "") in card.wrong[0].why
    assert f"wrong action: {action} on {model_id}" in printed
    assert WHY.get(name, "") in printed  # the reason is on the scorecard
    assert any(result.met for result in card.responses) == (name in ALREADY_RIGHT_BEFORE_THE_WRONG)


def test_a_holdout_that_lags_by_design_stays_quiet_and_a_seeded_incident_is_not_the_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # unhealthy-fallback seeds a paging baseline (v23) before the drill: the page is the experiment's, later.
    _, card, _ = drill(
        "unhealthy-fallback", "unhealthy-fallback.correct.json", tmp_path / "fallback", capsys
    )
    assert (
        card.first_page is not None and card.first_page >= 1.0
    )  # x4 pages at +2h (tick 3), not at the start
    _, card, _ = drill("holdout-lag", "holdout-lag.correct.json", tmp_path / "holdout", capsys)
    assert [(q.model_id, q.ok) for q in card.quiet] == [
        ("ig_feed_late-stage_mtml.holdout-2026h2", True)
    ]
    _, card, _ = drill(
        "acknowledge-only", "acknowledge-only.correct.json", tmp_path / "ack", capsys
    )
    assert card.first_page == 0.0  # its incident was already open when the drill began
    assert [a.action for a in card.ungraded] == ["note"]
