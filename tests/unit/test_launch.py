"""The launch transition rule: every pair of phases, allowed only one step forward; halt and resume."""

from __future__ import annotations

import itertools

import pytest

from fleetdesk.domain.launch import (
    PHASES,
    halt_refusal,
    halted_change_refusal,
    phase_refusal,
    resume_refusal,
)
from fleetdesk.domain.live import LiveState
from fleetdesk.domain.registry import LaunchPhase

ORDER = [
    LaunchPhase.ESTIMATION,
    LaunchPhase.APPROVAL,
    LaunchPhase.PREPARATION,
    LaunchPhase.SCALE_UP,
    LaunchPhase.FINALIZATION,
    LaunchPhase.LAUNCHED,
]
ALLOWED = {(a, a) for a in ORDER} | set(itertools.pairwise(ORDER))


def test_the_phases_are_in_launch_order() -> None:
    assert list(PHASES) == ORDER


@pytest.mark.parametrize(("before", "after"), sorted(ALLOWED))
def test_staying_or_one_step_forward_is_allowed(before: LaunchPhase, after: LaunchPhase) -> None:
    assert phase_refusal(before, after) is None


@pytest.mark.parametrize(
    ("before", "after"),
    [pair for pair in itertools.product(ORDER, ORDER) if pair not in ALLOWED],
)
def test_every_other_move_is_refused(before: LaunchPhase, after: LaunchPhase) -> None:
    why_not = phase_refusal(before, after)
    assert why_not is not None and why_not.startswith(f"{before} → {after} ")
    if ORDER.index(after) > ORDER.index(before):
        skipped = ORDER[ORDER.index(before) + 1 : ORDER.index(after)]
        assert f"skips {', '.join(skipped)}:" in why_not
    else:
        assert "goes back" in why_not


def test_a_skip_names_the_gate_it_skips() -> None:
    assert phase_refusal(LaunchPhase.PREPARATION, LaunchPhase.FINALIZATION) == (
        "preparation → finalization skips scale-up: a launch moves forward one phase at a time"
    )


def live(phase: LaunchPhase, halted: bool = False) -> LiveState:
    return LiveState(
        serving_model_id="m", traffic_share=0.03, launch_phase=phase, launch_halted=halted
    )


@pytest.mark.parametrize("phase", ORDER)
def test_only_a_running_scale_up_can_be_halted(phase: LaunchPhase) -> None:
    why_not = halt_refusal(live(phase))
    if phase is LaunchPhase.SCALE_UP:
        assert why_not is None
        assert halt_refusal(live(phase, halted=True)) == "launch already halted"
    else:
        assert why_not == f"launch phase is {phase}, not scale-up"


def test_only_a_halted_launch_can_be_resumed() -> None:
    assert resume_refusal(live(LaunchPhase.SCALE_UP, halted=True)) is None
    assert resume_refusal(live(LaunchPhase.SCALE_UP)) == "launch is not halted"


def test_a_halted_launch_keeps_its_phase_and_traffic() -> None:
    scale_up = LaunchPhase.SCALE_UP
    assert halted_change_refusal(scale_up, phase_moves=False, traffic_moves=False) is None
    assert "before its phase changes" in (halted_change_refusal(scale_up, True, False) or "")
    assert "before its traffic changes" in (halted_change_refusal(scale_up, False, True) or "")
