"""A fallback is a claim about the baseline's health now: plans that move traffic carry it, an unhealthy target
must be acknowledged by name, a holdout needs its override, and each model is judged against its role's band."""

from __future__ import annotations

import pytest

from fleet_variants import FIXED_NOW, small_variant
from fleetdesk.client import ActionIntent, RuleViolation, UnhealthyTarget
from fleetdesk.domain.fleet import FleetFile
from fleetdesk.fleets import FleetFileError, parse_fleet_file
from fleetdesk.wire import ActionKind, Attention, Confirmation, Health, ProblemType

from .conftest import Connect

HEALTHY_BASELINE_EXPERIMENT = "ig_feed_late-stage_mtml.x1-watch-time"  # baseline v41 is stable
SICK_BASELINE_EXPERIMENT = (
    "fb_feed_late-stage_dhen.x7-integrity"  # TIER2; baseline v52 pages since 10:00
)
SICK_BASELINE = "fb_feed_late-stage_dhen.v52"
HOLDOUT = "ig_feed_late-stage_mtml.holdout-2026h2"


def _move(kind: ActionKind, model_id: str, **extra: object) -> ActionIntent:
    return ActionIntent.of(
        kind, model_id, expected_serving_model_id=model_id, reason="checking the fallback", **extra
    )


async def test_a_plan_that_moves_traffic_carries_the_targets_health(connect: Connect) -> None:
    client = await connect()
    detail = await client.model(HEALTHY_BASELINE_EXPERIMENT)
    assert detail.baseline_health is not None and detail.baseline_health.healthy
    assert detail.baseline_health.model_id == "ig_feed_late-stage_mtml.v41"
    assert (
        detail.baseline_health.calibration is not None and detail.baseline_health.bands is not None
    )
    assert detail.fallback == "safe fallback is its baseline ig_feed_late-stage_mtml.v41"
    assert detail.holdout_health is not None and detail.holdout_health.model_id == HOLDOUT
    for kind in (ActionKind.ROLLBACK, ActionKind.END_EXPERIMENT):
        option = next(o for o in detail.actions if o.kind is kind)
        assert option.target_health == detail.baseline_health and option.acknowledge_target is None
        preview = await client.perform(_move(kind, HEALTHY_BASELINE_EXPERIMENT).as_dry_run())
        assert preview.target_health is not None and preview.target_health.healthy
        assert preview.confirmation is Confirmation.PRESS and preview.warnings == []
    # Actions that move no traffic name no target.
    assert next(o for o in detail.actions if o.kind is ActionKind.HALT_LAUNCH).target_health is None


async def test_an_unhealthy_target_is_said_first_and_steps_the_confirmation_up(
    connect: Connect,
) -> None:
    client = await connect()
    detail = await client.model(SICK_BASELINE_EXPERIMENT)
    health = detail.baseline_health
    assert health is not None and not health.healthy and health.attention is Attention.PAGE
    assert (
        health.since is not None and f"{health.since:%H:%M}" == "10:00"
    )  # its NE regression (the fixture's 22:00, moved to end at noon)
    assert detail.fallback == f"baseline {SICK_BASELINE} is itself paging since 10:00: escalate"
    rollback = next(o for o in detail.actions if o.kind is ActionKind.ROLLBACK)
    assert rollback.available and rollback.acknowledge_target == SICK_BASELINE
    assert rollback.confirmation is Confirmation.ACKNOWLEDGE  # a TIER2 model, normally one key
    assert rollback.warnings[0].startswith(f"baseline {SICK_BASELINE} is paging since 10:00 (NE ")
    preview = await client.perform(
        _move(ActionKind.ROLLBACK, SICK_BASELINE_EXPERIMENT).as_dry_run()
    )
    assert (
        preview.confirmation is Confirmation.ACKNOWLEDGE
        and preview.acknowledge_target == SICK_BASELINE
    )
    assert preview.warnings[0] == rollback.warnings[0] and "unhealthy" in preview.warnings[0]


@pytest.mark.parametrize("kind", [ActionKind.ROLLBACK, ActionKind.END_EXPERIMENT])
async def test_an_unhealthy_target_is_refused_unless_acknowledged_by_name(
    connect: Connect, kind: ActionKind
) -> None:
    client = await connect()
    before = await client.model(SICK_BASELINE_EXPERIMENT)
    audits = (await client.audit()).total
    for acknowledged in (None, "ig_feed_late-stage_mtml.v41"):  # none, or another model's id
        with pytest.raises(UnhealthyTarget) as refused:
            await client.perform(
                _move(kind, SICK_BASELINE_EXPERIMENT, acknowledged_target=acknowledged)
            )
        assert refused.value.status == 409 and refused.value.problem is not None
        assert refused.value.problem.type == ProblemType.TARGET_UNHEALTHY
        assert (
            SICK_BASELINE in refused.value.message and "paging since 10:00" in refused.value.message
        )
        assert (
            refused.value.target_health is not None
            and refused.value.target_health.model_id == SICK_BASELINE
        )
    assert (await client.model(SICK_BASELINE_EXPERIMENT)).live == before.live
    assert (await client.audit()).total == audits

    result = await client.perform(
        _move(kind, SICK_BASELINE_EXPERIMENT, acknowledged_target=SICK_BASELINE)
    )
    assert result.traffic_to == SICK_BASELINE and result.target_health is not None
    record = (await client.audit(model_id=SICK_BASELINE_EXPERIMENT)).items[0]
    assert record.detail["acknowledged_target"] == SICK_BASELINE
    assert record.detail["target_health"]["attention"] == "page"
    assert record.detail["warnings"][0].startswith(f"baseline {SICK_BASELINE} is paging")


async def test_rollback_or_end_of_a_holdout_needs_an_override_and_says_what_is_lost(
    connect: Connect,
) -> None:
    client = await connect()
    detail = await client.model(HOLDOUT)
    for kind in (ActionKind.ROLLBACK, ActionKind.END_EXPERIMENT):
        option = next(o for o in detail.actions if o.kind is kind)
        assert (
            option.available
            and option.override_required
            and option.confirmation is Confirmation.ACKNOWLEDGE
        )
        preview = await client.perform(_move(kind, HOLDOUT).as_dry_run())
        lost = preview.warnings[0]
        assert lost.startswith(f"{HOLDOUT} is a holdout: ") and "ends its measurement" in lost
        assert (
            "ig_feed_late-stage_mtml.x1-watch-time, ig_feed_late-stage_mtml.x2-long-history" in lost
        )
        with pytest.raises(RuleViolation) as refused:
            await client.perform(_move(kind, HOLDOUT))
        assert refused.value.status == 422 and refused.value.problem is not None
        assert refused.value.problem.type == ProblemType.HOLDOUT_OVERRIDE_REQUIRED
    assert (await client.model(HOLDOUT)).live == detail.live
    result = await client.perform(_move(ActionKind.END_EXPERIMENT, HOLDOUT, holdout_override=True))
    assert result.summary.startswith(f"Ended holdout {HOLDOUT}")
    after = await client.model(HOLDOUT)
    assert after.live.experiment_ended and after.live.traffic_share == 0.0
    assert (await client.audit(model_id=HOLDOUT)).items[0].detail["holdout_override"] is True


async def test_a_holdout_is_judged_against_its_roles_band(
    server_factory, tmp_path, connect: Connect
) -> None:
    # The holdout lags by design: NE 0.96, above the Feed type's 0.95 and inside the holdout band's 0.98.
    lagging = {HOLDOUT: {"normalized_entropy": 0.96, "noise": 0.004}}
    with_roles = server_factory(fleet=str(small_variant(tmp_path / "roles.json", profiles=lagging)))

    def drop_role_bands(raw: dict) -> None:
        raw["role_bands"] = {}

    per_type = server_factory(
        fleet=str(small_variant(tmp_path / "types.json", profiles=lagging, change=drop_role_bands))
    )
    judged = {}
    for name, running in (("role", with_roles), ("type", per_type)):
        client = await connect(url=running.url, token=running.tokens["admin"])
        holdout, baseline = (
            await client.model(HOLDOUT),
            await client.model("ig_feed_late-stage_mtml.v41"),
        )
        judged[name] = (holdout.bands.ne_max, holdout.health, holdout.attention)
        assert baseline.bands.ne_max == 0.95  # the baseline keeps the type's band either way
    assert judged["role"] == (0.98, Health.STABLE, Attention.OK)
    assert judged["type"][:2] == (0.95, Health.UNSTABLE)


def test_a_holdout_band_tighter_than_its_baselines_is_refused_when_the_fleet_loads(
    tmp_path,
) -> None:
    raw = FleetFile.model_validate_json(
        small_variant(tmp_path / "fleet.json").read_text()
    ).model_dump(mode="json")
    raw["role_bands"] = {
        "holdout": {"*": {"calibration_low": 0.92, "calibration_high": 1.1, "ne_max": 0.95}}
    }
    with pytest.raises(FleetFileError) as refused:
        parse_fleet_file(raw, "fleet.json")
    assert (
        "role_bands.holdout.*: tighter for ig_feed_late-stage_mtml than its baseline's band"
        in str(refused.value)
    )
    assert FIXED_NOW  # the variant's history ends at the servers' frozen time
