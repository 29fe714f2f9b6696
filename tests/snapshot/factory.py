"""Hand-built snapshots for the tests that need no server (format, redaction, Markdown, files)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fleetdesk.domain.model_type import FunnelStage
from fleetdesk.domain.slo import ActiveAlert, BurnRate, SliceCounts, SloPolicy, SloStatus
from fleetdesk.snapshot.bundle import ServerRef, Snapshot, View
from fleetdesk.wire import (
    AccessRole,
    Attention,
    AuditRecord,
    DecodedType,
    FleetSummary,
    Health,
    HealthBands,
    IncidentDetail,
    IncidentState,
    LaunchPhase,
    Lineage,
    LineageEntry,
    LiveState,
    Model,
    ModelDetail,
    ModelSummary,
    Note,
    Role,
    ServerInfo,
    Severity,
    StabilityPoint,
    StabilitySeries,
    Tier,
    TimelineEntry,
    Window,
)

NOW = datetime(2026, 12, 3, 6, 0, tzinfo=UTC)
MODEL_ID = "ig_feed_late_mtml_exp7"
BASELINE_ID = "ig_feed_late_mtml_base"


def live(serving: str = MODEL_ID, share: float = 0.1) -> LiveState:
    return LiveState(
        serving_model_id=serving, traffic_share=share, launch_phase=LaunchPhase.SCALE_UP
    )


def point(hour: int, calibration: float) -> StabilityPoint:
    weight, labels = 1000.0, 100.0
    bands = HealthBands(calibration_low=0.9, calibration_high=1.1, ne_max=0.95)
    sums = dict(
        weight=weight,
        label_sum=labels,
        prediction_sum=labels * calibration,
        cross_entropy_sum=300.0,
    )
    from fleetdesk.domain.stability import StabilitySums

    return StabilityPoint(
        start=NOW - timedelta(hours=24 - hour), health=bands.health(StabilitySums(**sums)), **sums
    )


def snapshot(
    note: str = "next: watch NE after rollback; page ranking-infra if it stays high",
    reason: str = "NE regression after launch",
    audit_records: int = 2,
) -> Snapshot:
    bands = HealthBands(calibration_low=0.9, calibration_high=1.1, ne_max=0.95)
    model = Model(
        id=MODEL_ID,
        type="ig_feed_late_mtml",
        role=Role.EXPERIMENT,
        tier=Tier.TIER1,
        tier_justification="ranks the Instagram feed for every user",
        owner_team="feed-ranking",
        oncall_rotation="feed-ranking-oncall",
        baseline_model_id=BASELINE_ID,
        traffic_share=0.1,
        launch_phase=LaunchPhase.SCALE_UP,
        upstream_model_ids=("fm_core_v3",),
        purpose="Ranks feed posts late in the funnel.",
        created_at=NOW - timedelta(days=30),
        updated_at=NOW - timedelta(days=1),
    )
    slo = SloStatus(
        objective=0.99,
        window=timedelta(days=28),
        evaluated_at=NOW,
        counts=SliceCounts(good=600, bad=12, no_data=3),
        budget_total=6.12,
        budget_remaining=-0.96,
        burn_rates=[BurnRate(window=timedelta(hours=1), rate=100.0)],
        alerts=[
            ActiveAlert(
                rule="page-fast",
                severity=Severity.PAGE,
                long_burn_rate=100.0,
                short_burn_rate=100.0,
                threshold=14.4,
            )
        ],
    )
    detail = ModelDetail(
        model=model,
        decoded=DecodedType(
            type="ig_feed_late_mtml",
            app="ig",
            surface="feed",
            position="late",
            architecture="mtml",
            app_label="Instagram",
            surface_label="Feed",
            position_label="late-stage ranking",
            architecture_label="multi-task multi-label",
            stage=FunnelStage.LATE_STAGE_RANKING,
            description="Instagram · Feed · late (late-stage ranking) · multi-task multi-label",
        ),
        live=live(BASELINE_ID, 0.0),
        health=Health.UNSTABLE,
        attention=Attention.PAGE,
        bands=bands,
        slo=slo,
        open_incident_id=7,
        last_bucket_start=NOW - timedelta(hours=1),
    )
    points = [point(hour, 1.0 if hour < 20 else 1.4) for hour in range(24)]
    series = StabilitySeries(
        model_id=MODEL_ID,
        window=Window.H24,
        start=NOW - timedelta(hours=24),
        end=NOW,
        bucket=timedelta(hours=1),
        bands=bands,
        points=points,
        baseline_model_id=BASELINE_ID,
        baseline_points=[point(hour, 1.0) for hour in range(24)],
    )
    upstream = LineageEntry(
        id="fm_core_v3",
        type="ig_all_all_fm",
        tier=Tier.TIER0,
        role=Role.FOUNDATION,
        owner_team="foundation",
        health=Health.STABLE,
        attention=Attention.OK,
    )
    lineage = Lineage(
        model_id=MODEL_ID,
        upstream=[upstream],
        downstream=[],
        blast_radius={tier: 0 for tier in Tier},
    )
    incident = IncidentDetail(
        id=7,
        model_id=MODEL_ID,
        model_ids=[MODEL_ID],
        state=IncidentState.ACKNOWLEDGED,
        severity=Severity.PAGE,
        title="ig_feed_late_mtml_exp7 unstable: calibration 1.40",
        opened_at=NOW - timedelta(hours=4),
        updated_at=NOW - timedelta(hours=1),
        acknowledged_at=NOW - timedelta(hours=3),
        acknowledged_by="alice",
        timeline=[
            TimelineEntry(
                id=1,
                incident_id=7,
                at=NOW - timedelta(hours=4),
                kind="opened",
                model_id=MODEL_ID,
                actor=None,
                text="page-fast firing",
            ),
            TimelineEntry(
                id=2,
                incident_id=7,
                at=NOW - timedelta(hours=2),
                kind="note",
                model_id=MODEL_ID,
                actor="alice",
                text=note,
            ),
        ],
        notes=[
            Note(
                id=1,
                model_id=MODEL_ID,
                incident_id=7,
                author="alice",
                at=NOW - timedelta(hours=2),
                text=note,
            )
        ],
    )
    audit = [
        AuditRecord(
            id=index + 1,
            at=NOW - timedelta(hours=3, minutes=-index),
            actor="alice",
            role=AccessRole.ONCALL,
            action="rollback" if index == 0 else "note",
            model_id=MODEL_ID,
            reason=reason,
            before=live(),
            after=live(BASELINE_ID, 0.0),
            idempotency_key=f"key-{index}",
            incident_id=7,
            detail={"text": note} if index else {},
        )
        for index in range(audit_records)
    ]
    summary = ModelSummary(
        id=MODEL_ID,
        type="ig_feed_late_mtml",
        app="ig",
        surface="feed",
        stage=FunnelStage.LATE_STAGE_RANKING,
        tier=Tier.TIER1,
        role=Role.EXPERIMENT,
        owner_team="feed-ranking",
        oncall_rotation="feed-ranking-oncall",
        baseline_model_id=BASELINE_ID,
        health=Health.UNSTABLE,
        attention=Attention.PAGE,
        live=live(BASELINE_ID, 0.0),
        budget_remaining=-0.96,
        max_burn_rate=100.0,
        alerts=["page-fast"],
        open_incident_id=7,
        last_bucket_start=NOW - timedelta(hours=1),
        purpose="Ranks feed posts late in the funnel.",
    )
    fleet = FleetSummary(
        evaluated_at=NOW,
        total_models=2,
        counts={health: {tier: 0 for tier in Tier} for health in Health},
        attention={attention: 0 for attention in Attention},
        open_incidents=1,
        worst=[summary],
    )
    info = ServerInfo(
        version="0.1.0",
        fleet="small",
        now=NOW,
        clock_frozen=True,
        bucket=timedelta(hours=1),
        slo=SloPolicy(),
        demo=False,
        models=2,
    )
    return Snapshot(
        exported_by="alice",
        exported_at=NOW,
        fleetdesk_version="0.1.0",
        server=ServerRef(url="https://fleetdesk.example:8443", info=info),
        model_id=MODEL_ID,
        model=detail,
        lineage=lineage,
        stability=[series],
        incident=incident,
        audit=audit,
        fleet=fleet,
        models=[summary],
        view=View(window=Window.H24),
    )
