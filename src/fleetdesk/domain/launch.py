"""Launch phases as transitions: every model moves through the same phases with the same gates, in order.

estimation → approval → preparation → scale-up → finalization → launched. A launch moves one phase forward at
a time (a skipped phase is a skipped quality gate), never back (a launch that must start over is a new model).
During scale-up the launch can be halted where it is and resumed; a halted launch changes neither its phase nor
its traffic until it is resumed. The server enforces these rules wherever a launch changes: a registry change
that moves ``launch_phase`` or ``traffic_share`` (server.registry_changes) and the halt-launch and
resume-launch actions (domain.playbook).
"""

from __future__ import annotations

from fleetdesk.domain.live import LiveState
from fleetdesk.domain.registry import LaunchPhase

PHASES: tuple[LaunchPhase, ...] = tuple(LaunchPhase)
"""The phases in launch order (the enum's declaration order is the launch's)."""


def phase_refusal(before: LaunchPhase, after: LaunchPhase) -> str | None:
    """Why a launch cannot move from ``before`` to ``after`` (None when it can: the next phase, or none)."""
    start, end = PHASES.index(before), PHASES.index(after)
    if end <= start + 1 and end >= start:
        return None
    if end < start:
        return f"{before} → {after} goes back: a launch moves forward one phase at a time"
    skipped = ", ".join(phase.value for phase in PHASES[start + 1 : end])
    return f"{before} → {after} skips {skipped}: a launch moves forward one phase at a time"


def halt_refusal(live: LiveState) -> str | None:
    """Why this launch cannot be halted now (None when it can)."""
    if live.launch_phase is not LaunchPhase.SCALE_UP:
        return f"launch phase is {live.launch_phase}, not scale-up"
    if live.launch_halted:
        return "launch already halted"
    return None


def resume_refusal(live: LiveState) -> str | None:
    """Why this launch cannot be resumed now (None when it can)."""
    if not live.launch_halted:
        return "launch is not halted"
    return None


def halted_change_refusal(
    halted_in: LaunchPhase, phase_moves: bool, traffic_moves: bool
) -> str | None:
    """Why a launch halted in ``halted_in`` cannot change now (None when neither its phase nor its traffic
    moves): a halt freezes the launch where it is until someone resumes it."""
    if not (phase_moves or traffic_moves):
        return None
    what = "phase" if phase_moves else "traffic"
    return f"the launch is halted in {halted_in}: resume it before its {what} changes"
