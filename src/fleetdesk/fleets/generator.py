"""A seeded generator of realistic fleet files, for the large fixture and scaling runs.

The same (models, seed) always yields the same file. The fleet is built the
way a real one grows: every app/surface/position slot has a production
baseline, usually a holdout and a queue of experiments sharing its traffic;
foundation models feed the ranking and retrieval models of their app; tiers
follow the slot's business stake, with the stake written as the justification.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from fleetdesk.domain.fleet import (
    FleetFile,
    IncidentKind,
    MetricHistory,
    MetricIncident,
    MetricProfile,
    PipelineRotation,
)
from fleetdesk.domain.model_type import FunnelStage, Position, Vocabulary
from fleetdesk.domain.registry import LaunchPhase, Model, Role, Tier
from fleetdesk.domain.stability import HealthBands

DEFAULT_END = datetime(2026, 11, 30, tzinfo=UTC)
HISTORY_DAYS = 32  # a 28-day SLO window plus a few days of lead-in
BUCKET = timedelta(hours=1)

VOCABULARY = Vocabulary(
    apps={"ig": "Instagram", "fb": "Facebook", "th": "Threads"},
    surfaces={
        "feed": "Feed",
        "stories": "Stories",
        "reels": "Reels",
        "explore": "Explore",
        "video": "Video tab",
        "groups": "Groups",
        "comments": "Comments",
        "notifications": "Notifications",
        "tagging": "Tagging (people suggestions)",
        "marketplace-search": "Marketplace search",
        "cross-surface": "Cross-surface (shared foundation)",
    },
    positions={
        "sourcing": Position(label="retrieval", stage=FunnelStage.SOURCING),
        "early-stage": Position(label="early-stage", stage=FunnelStage.EARLY_STAGE_RANKING),
        "late-stage": Position(label="late-stage", stage=FunnelStage.LATE_STAGE_RANKING),
        "tray": Position(label="tray", stage=FunnelStage.LATE_STAGE_RANKING),
    },
    architectures={
        "mtml": "multi-task multi-label",
        "dhen": "DHEN (deep hierarchical ensemble network)",
        "two-tower": "two-tower retrieval",
        "dlrm": "DLRM (deep learning recommendation model)",
        "transformer": "sequence transformer",
    },
)

DEFAULT_BANDS = HealthBands(calibration_low=0.9, calibration_high=1.1, ne_max=0.95)
HOLDOUT_BANDS = HealthBands(calibration_low=0.88, calibration_high=1.12, ne_max=0.98)
# Retrieval NE sits close to 1 by nature; notification labels are sparse and bursty.
SOURCING_BANDS = HealthBands(calibration_low=0.85, calibration_high=1.15, ne_max=0.98)
NOTIFICATION_BANDS = HealthBands(calibration_low=0.85, calibration_high=1.15, ne_max=0.95)


@dataclass(frozen=True)
class Surface:
    """What a surface ranks and what it is worth to its app."""

    items: str
    stake: str  # what the whole surface is worth, a noun phrase: "40% of Instagram ad revenue"
    importance: float  # 0..1, drives tiers and traffic volume
    base_rate: float
    positions: tuple[str, ...] = ("sourcing", "early-stage", "late-stage")


SURFACES: dict[str, dict[str, Surface]] = {
    "ig": {
        "feed": Surface("posts", "40% of Instagram ad revenue", 1.0, 0.035),
        "reels": Surface("reels", "25% of Instagram ad revenue", 0.85, 0.06),
        "stories": Surface(
            "stories", "20% of Instagram ad revenue", 0.7, 0.05, ("sourcing", "early-stage", "tray")
        ),
        "explore": Surface("posts", "8% of Instagram ad revenue", 0.45, 0.04),
        "comments": Surface("comments", "15% of Instagram time spent", 0.25, 0.08),
        "notifications": Surface(
            "notifications",
            "the return visits of 12% of daily Instagram users",
            0.3,
            0.12,
            ("sourcing", "late-stage"),
        ),
        "tagging": Surface(
            "people to tag",
            "3% of Instagram photo engagement",
            0.08,
            0.2,
            ("sourcing", "late-stage"),
        ),
    },
    "fb": {
        "feed": Surface("posts", "45% of Facebook ad revenue", 1.0, 0.03),
        "reels": Surface("reels", "15% of Facebook ad revenue", 0.7, 0.055),
        "video": Surface("videos", "10% of Facebook ad revenue", 0.55, 0.05),
        "marketplace-search": Surface(
            "listings", "9% of Facebook ad revenue and all Marketplace sales", 0.5, 0.03
        ),
        "stories": Surface(
            "stories", "8% of Facebook ad revenue", 0.45, 0.045, ("sourcing", "early-stage", "tray")
        ),
        "groups": Surface("group posts", "5% of Facebook ad revenue", 0.35, 0.05),
        "comments": Surface("comments", "10% of Facebook time spent", 0.2, 0.07),
        "notifications": Surface(
            "notifications",
            "the return visits of 9% of daily Facebook users",
            0.3,
            0.1,
            ("sourcing", "late-stage"),
        ),
    },
    "th": {
        "feed": Surface("threads", "90% of Threads time spent", 0.3, 0.04),
        "notifications": Surface(
            "notifications",
            "the return visits of 20% of daily Threads users",
            0.12,
            0.1,
            ("sourcing", "late-stage"),
        ),
    },
}

ARCHITECTURES = {
    "sourcing": ("two-tower",),
    "early-stage": ("dlrm", "dhen"),
    "late-stage": ("mtml", "dhen", "transformer"),
    "tray": ("mtml",),
}
POSITION_WEIGHT = {"sourcing": 0.6, "early-stage": 0.7, "late-stage": 1.0, "tray": 1.0}
STAGE_NE = {"sourcing": 0.88, "early-stage": 0.85, "late-stage": 0.8, "tray": 0.8}
POSITION_JOB = {
    "sourcing": "Retrieves the few thousand candidate {items} for {where} out of millions",
    "early-stage": "Cheaply scores candidate {items} for {where} so only the best few hundred reach late-stage ranking",
    "late-stage": "Orders the final {items} shown in {where} by predicted engagement and value",
    "tray": "Orders the {items} tray of {where} by predicted taps and replies",
}
POSITION_STAKE = {
    "sourcing": "retrieval for {where}: if it stops, the surface empties; the surface carries {stake}",
    "early-stage": "early-stage ranking for {where}, which carries {stake}",
    "late-stage": "ranks {where}: {stake}",
    "tray": "ranks the tray of {where}: {stake}",
}

# (id slug, what the experiment tries)
IDEAS = (
    ("long-history", "a longer user-history sequence"),
    ("watch-time", "a watch-time task head"),
    ("fresh-emb", "fresher foundation embeddings"),
    ("deep-dhen", "a deeper DHEN interaction stack"),
    ("pos-debias", "position-debiased training labels"),
    ("creator-aff", "creator-affinity features"),
    ("cold-start", "a cold-start boost for new creators"),
    ("int8", "int8 quantised serving for lower latency"),
    ("integrity", "an integrity penalty in the multi-objective loss"),
    ("session-ctx", "in-session context features"),
    ("cross-net", "a deeper cross network"),
    ("calib-loss", "calibration-aware training"),
    ("cross-app", "cross-app interest signals"),
    ("distilled", "a smaller distilled student model"),
    ("neg-feedback", "explicit negative-feedback signals"),
    ("trending", "real-time trending features"),
    ("moe-head", "a mixture-of-experts head"),
    ("hash-v2", "collision-free hashing of sparse ids"),
    ("decay-labels", "time-decayed engagement labels"),
    ("emb-refresh", "a retrained embedding table"),
)
EXPERIMENT_PHASES = (
    (LaunchPhase.ESTIMATION, 4),
    (LaunchPhase.APPROVAL, 2),
    (LaunchPhase.PREPARATION, 2),
    (LaunchPhase.SCALE_UP, 2),
    (LaunchPhase.FINALIZATION, 1),
)
EXPERIMENT_SHARES = (0.005, 0.01, 0.01, 0.02, 0.02, 0.05)
MAX_EXPERIMENT_TRAFFIC = 0.6
TRAFFIC_PER_IMPORTANCE = 4_000_000  # events per hour on a slot of importance 1.0


@dataclass(frozen=True)
class Slot:
    app: str
    surface: str
    position: str
    architecture: str

    @property
    def type(self) -> str:
        return f"{self.app}_{self.surface}_{self.position}_{self.architecture}"

    @property
    def info(self) -> Surface:
        return SURFACES[self.app][self.surface]

    @property
    def importance(self) -> float:
        return self.info.importance * POSITION_WEIGHT[self.position]

    @property
    def where(self) -> str:
        return f"the {VOCABULARY.apps[self.app]} {VOCABULARY.surfaces[self.surface]}"

    @property
    def team(self) -> str:
        kind = "retrieval" if self.position == "sourcing" else "ranking"
        return f"{self.app}-{self.surface}-{kind}"


def baseline_tier(importance: float) -> Tier:
    for tier, floor in (
        (Tier.TIER0, 0.7),
        (Tier.TIER1, 0.4),
        (Tier.TIER2, 0.2),
        (Tier.TIER3, 0.07),
    ):
        if importance >= floor:
            return tier
    return Tier.TIER4


def _lower(tier: Tier, steps: int) -> Tier:
    return Tier(f"TIER{min(tier.rank + steps, 4)}")


def _percent(share: float) -> str:
    return f"{share * 100:.3g}%"


class _Builder:
    """Accumulates one fleet from a single seeded random stream (order matters)."""

    def __init__(self, models: int, seed: int, end: datetime) -> None:
        self.rng = random.Random(seed)
        self.target = models
        self.end = end
        self.start = end - timedelta(days=HISTORY_DAYS)
        self.models: list[Model] = []
        self.profiles: dict[str, MetricProfile] = {}

    def stamps(self) -> dict[str, datetime]:
        created = self.start - timedelta(hours=self.rng.randrange(24 * 30, 24 * 700))
        updated = min(created + timedelta(hours=self.rng.randrange(1, 24 * 400)), self.start)
        return {"created_at": created, "updated_at": updated}

    def add(
        self, model: Model, events: float, base_rate: float, ne: float, noisy: bool = False
    ) -> None:
        rng = self.rng
        positives = max(events * base_rate, 1.0)
        # Relative noise of a rate estimated from n positives is about 1/sqrt(n).
        noise = min(max(1.5 / math.sqrt(positives), 0.004), 0.03)
        calibration = rng.uniform(0.97, 1.03)
        if noisy:  # a model living at the edge of its band: spends budget slowly
            calibration, noise = 1.05, 0.03
        self.models.append(model)
        self.profiles[model.id] = MetricProfile(
            events_per_bucket=float(max(round(events), 100)),
            base_rate=round(base_rate * rng.uniform(0.8, 1.2), 4),
            calibration=round(calibration, 3),
            normalized_entropy=round(ne + rng.uniform(-0.02, 0.02), 3),
            noise=round(noise, 4),
            seed=rng.randrange(1 << 31),
        )


def generate_fleet(
    models: int, seed: int, name: str | None = None, end: datetime = DEFAULT_END
) -> FleetFile:
    """A valid fleet of exactly ``models`` models, identical for the same arguments."""
    if models < 4:
        raise ValueError("a generated fleet needs at least 4 models (a foundation and one slot)")
    builder = _Builder(models, seed, end)
    rng = builder.rng
    slots = _slots(rng)
    foundation_apps = [app for app in SURFACES if models >= 60 or app == "ig"]
    foundation_count = sum(2 if models >= 100 else 1 for _ in foundation_apps)
    remaining = models - foundation_count
    used = _spread(slots, min(len(slots), max(1, remaining // 3)))
    extras = _extras_per_slot(rng, used, remaining - len(used))
    slot_models: dict[str, list[Model]] = {}
    for slot, extra in zip(used, extras):
        slot_models[slot.type] = _slot_models(builder, slot, extra)
    foundations = _foundations(builder, foundation_apps, models >= 100, slot_models)
    incidents = _incidents(builder, foundations)
    bands = {
        slot.type: SOURCING_BANDS if slot.position == "sourcing" else NOTIFICATION_BANDS
        for slot in used
        if slot.position == "sourcing" or slot.surface == "notifications"
    }
    # A holdout lags its baseline by design: judged against a wider band of its own, each as wide as the
    # type's (see domain.bands).
    holdout_bands = {"*": HOLDOUT_BANDS} | {
        type_string: HealthBands(
            calibration_low=round(type_bands.calibration_low - 0.02, 6),
            calibration_high=round(type_bands.calibration_high + 0.02, 6),
            ne_max=round(type_bands.ne_max + 0.01, 6),
        )
        for type_string, type_bands in sorted(bands.items())
    }
    return FleetFile(
        name=name or f"generated-{models}-seed{seed}",
        description=(
            f"{models} generated models (seed {seed}): every slot has a baseline, most a holdout and"
            " experiments; foundation models feed each app's ranking and retrieval."
        ),
        vocabulary=VOCABULARY,
        default_bands=DEFAULT_BANDS,
        bands=dict(sorted(bands.items())),
        role_bands={Role.HOLDOUT: holdout_bands},
        # Each app's data pipelines have their own rotation: a shared-cause incident on one surface pages it.
        pipelines={
            app: PipelineRotation(
                team=f"{app}-data-pipelines", rotation=f"{app}-data-pipelines-oncall"
            )
            for app in SURFACES
        },
        models=builder.models,
        history=MetricHistory(
            start=builder.start,
            end=end,
            bucket=BUCKET,
            profiles=builder.profiles,
            incidents=incidents,
        ),
    )


def _slots(rng: random.Random) -> list[Slot]:
    return [
        Slot(app, surface, position, rng.choice(ARCHITECTURES[position]))
        for app, surfaces in SURFACES.items()
        for surface, info in surfaces.items()
        for position in info.positions
    ]


def _spread(slots: list[Slot], count: int) -> list[Slot]:
    """The ``count`` slots to fill: most important first, but every app and stage early on."""
    ordered = sorted(slots, key=lambda s: -s.importance)
    picked: list[Slot] = []
    seen: set[tuple[str, str]] = set()
    for slot in ordered:  # first pass: one slot per (app, position)
        if (slot.app, slot.position) not in seen:
            seen.add((slot.app, slot.position))
            picked.append(slot)
    picked += [slot for slot in ordered if slot not in picked]
    return picked[:count]


def _extras_per_slot(rng: random.Random, slots: list[Slot], extra: int) -> list[int]:
    """Share the non-baseline models out, busier slots for more important surfaces."""
    counts = [0] * len(slots)
    weights = [0.3 + slot.importance for slot in slots]
    for index in rng.choices(range(len(slots)), weights=weights, k=extra):
        counts[index] += 1
    return counts


def _slot_models(builder: _Builder, slot: Slot, extra: int) -> list[Model]:
    """A baseline, a holdout when there is room, and ``extra - 1`` experiments."""
    rng = builder.rng
    info = slot.info
    tier = baseline_tier(slot.importance)
    team = slot.team
    rotation = f"{team}-oncall"
    stake = POSITION_STAKE[slot.position].format(where=slot.where, stake=info.stake)
    volume = TRAFFIC_PER_IMPORTANCE * slot.importance
    baseline_id = f"{slot.type}.v{rng.randrange(3, 60)}"
    holdout_id = f"{slot.type}.holdout-2026h2" if extra >= 1 else None
    shares: list[float] = []
    experiments: list[tuple[str, str, LaunchPhase]] = []
    used_slugs: set[str] = set()
    for number in range(1, extra):
        slug, idea = rng.choice(IDEAS)
        if slug in used_slugs:
            slug = f"{slug}-{number}"
        used_slugs.add(slug)
        phase = rng.choices(
            [p for p, _ in EXPERIMENT_PHASES], weights=[w for _, w in EXPERIMENT_PHASES]
        )[0]
        experiments.append((f"{slot.type}.x{number}-{slug}", idea, phase))
        shares.append(rng.choice(EXPERIMENT_SHARES))
    if sum(shares) > MAX_EXPERIMENT_TRAFFIC:
        scale = MAX_EXPERIMENT_TRAFFIC / sum(shares)
        shares = [max(round(share * scale, 6), 0.000001) for share in shares]
    holdout_share = 0.02 if holdout_id else 0.0
    # The baseline takes the exact remainder, so the slot adds up to 1 despite float rounding.
    baseline_share = round(1.0 - math.fsum(shares) - holdout_share, 6)
    built = []

    baseline = Model(
        id=baseline_id,
        type=slot.type,
        role=Role.BASELINE,
        tier=tier,
        tier_justification=stake if tier.needs_justification else "",
        owner_team=team,
        oncall_rotation=rotation,
        holdout_model_id=holdout_id,
        traffic_share=baseline_share,
        purpose=POSITION_JOB[slot.position].format(items=info.items, where=slot.where) + ".",
        **builder.stamps(),
    )
    noisy = rng.random() < 0.02
    builder.add(
        baseline, volume * baseline_share, info.base_rate, STAGE_NE[slot.position], noisy=noisy
    )
    built.append(baseline)
    if holdout_id:
        holdout = Model(
            id=holdout_id,
            type=slot.type,
            role=Role.HOLDOUT,
            tier=_lower(tier, 3),
            owner_team=team,
            oncall_rotation=rotation,
            baseline_model_id=baseline_id,
            traffic_share=holdout_share,
            purpose=(
                f"Keeps {_percent(holdout_share)} of {slot.where} traffic on last half's model"
                " to measure what this half's launches gained."
            ),
            **builder.stamps(),
        )
        builder.add(holdout, volume * holdout_share, info.base_rate, STAGE_NE[slot.position] + 0.01)
        built.append(holdout)
    for (model_id, idea, phase), share in zip(experiments, shares):
        ramping = phase in (LaunchPhase.SCALE_UP, LaunchPhase.FINALIZATION)
        exp_tier = _lower(tier, 1 if ramping else 2)
        experiment = Model(
            id=model_id,
            type=slot.type,
            role=Role.EXPERIMENT,
            tier=exp_tier,
            tier_justification=(
                f"serves {_percent(share)} of the traffic of {slot.where} ({info.stake})"
                if exp_tier.needs_justification
                else ""
            ),
            owner_team=team,
            oncall_rotation=rotation,
            baseline_model_id=baseline_id,
            holdout_model_id=holdout_id,
            traffic_share=share,
            launch_phase=phase,
            purpose=f"Tests {idea} against {baseline_id} on {_percent(share)} of {slot.where} traffic.",
            **builder.stamps(),
        )
        builder.add(experiment, volume * share, info.base_rate, STAGE_NE[slot.position] - 0.005)
        built.append(experiment)
    return built


@dataclass(frozen=True)
class _Foundation:
    model: Model
    downstream: list[str]


def _foundations(
    builder: _Builder, apps: list[str], with_retrieval: bool, slot_models: dict[str, list[Model]]
) -> list[_Foundation]:
    """Foundation models per app, wired upstream of that app's models (Threads distils Instagram's)."""
    rng = builder.rng
    found: list[_Foundation] = []
    ranking_fm: dict[str, str] = {}
    # Upstream links are set on models that already exist: rebuild them with the link added.
    upstream: dict[str, list[str]] = {}
    for app in apps:
        kinds: list[tuple[str, str, tuple[str, ...]]] = [
            ("late-stage", "transformer", ("early-stage", "late-stage", "tray"))
        ]
        if with_retrieval:
            kinds.append(("sourcing", "two-tower", ("sourcing",)))
        for position, arch, feeds in kinds:
            type_string = f"{app}_cross-surface_{position}_{arch}"
            model_id = f"{type_string}.fm-v{rng.randrange(2, 12)}"
            downstream = [
                model.id
                for type_, models in slot_models.items()
                if type_.startswith(f"{app}_") and type_.split("_")[2] in feeds
                for model in models
            ]
            for child in downstream:
                upstream.setdefault(child, []).append(model_id)
            app_name = VOCABULARY.apps[app]
            what = (
                "user-interest sequences"
                if position == "late-stage"
                else "user and item embeddings"
            )
            parents: tuple[str, ...] = ()
            if position == "late-stage":
                ranking_fm[app] = model_id
                if app == "th" and "ig" in ranking_fm:
                    parents = (ranking_fm["ig"],)
            tier = Tier.TIER0 if len(downstream) >= 50 else Tier.TIER1
            stage_word = "ranking" if position == "late-stage" else "retrieval"
            model = Model(
                id=model_id,
                type=type_string,
                role=Role.FOUNDATION,
                tier=tier,
                tier_justification=(
                    f"feeds {len(downstream)} {app_name} {stage_word} models: a regression degrades"
                    f" every {app_name} surface at once"
                ),
                owner_team=f"{app}-foundation-models",
                oncall_rotation=f"{app}-foundation-models-oncall",
                upstream_model_ids=parents,
                purpose=(
                    f"Learns shared {what} from every {app_name} surface"
                    + (" (distilled from Instagram's)" if parents else "")
                    + f" and transfers them to downstream {stage_word} models."
                ),
                **builder.stamps(),
            )
            builder.add(model, 1_500_000, 0.05, 0.78)
            found.append(_Foundation(model, downstream))
    builder.models = [
        model.model_copy(update={"upstream_model_ids": tuple(upstream[model.id])})
        if model.id in upstream
        else model
        for model in builder.models
    ]
    raised = _as_critical_as_downstream(builder.models)
    builder.models = [raised.get(model.id, model) for model in builder.models]
    return [_Foundation(raised.get(f.model.id, f.model), f.downstream) for f in found]


def _as_critical_as_downstream(models: list[Model]) -> dict[str, Model]:
    """Models (foundations) raised to the tier of the most critical model downstream of them, by id: a
    model's tier is the most severe incident it can cause (the registry refuses anything less)."""
    by_id = {model.id: model for model in models}
    raised: dict[str, Model] = {}
    changed = True
    while changed:  # foundation chains are short (Threads distils Instagram's): a pass or two
        changed = False
        for model in by_id.values():
            for parent_id in model.upstream_model_ids:
                parent = by_id[parent_id]
                if model.tier.rank < parent.tier.rank:
                    by_id[parent_id] = raised[parent_id] = parent.model_copy(
                        update={"tier": model.tier}
                    )
                    changed = True
    return raised


def _incidents(builder: _Builder, foundations: list[_Foundation]) -> list[MetricIncident]:
    """A few deliberate incidents, each with its story, chosen from the fleet deterministically."""
    rng = builder.rng
    end = builder.end
    by_role: dict[Role, list[Model]] = {role: [] for role in Role}
    for model in builder.models:
        by_role[model.role].append(model)
    incidents: list[MetricIncident] = []

    def pick(candidates: list[Model], taken: set[str]) -> Model | None:
        free = [model for model in candidates if model.id not in taken]
        return rng.choice(free) if free else None

    taken: set[str] = set()
    scaling = [m for m in by_role[Role.EXPERIMENT] if m.launch_phase is LaunchPhase.SCALE_UP]
    drifting = pick(scaling or by_role[Role.EXPERIMENT], taken)
    if drifting:
        taken.add(drifting.id)
        incidents.append(
            MetricIncident(
                model_id=drifting.id,
                kind=IncidentKind.CALIBRATION_DRIFT,
                start=end - timedelta(hours=9),
                magnitude=1.35,
                story="Experiment over-predicts more every hour after a feature pipeline change: roll back to baseline.",
            )
        )
    biggest = max(foundations, key=lambda f: len(f.downstream), default=None)
    if biggest is not None:
        taken.add(biggest.model.id)
        start = end - timedelta(hours=4)
        incidents.append(
            MetricIncident(
                model_id=biggest.model.id,
                kind=IncidentKind.NE_REGRESSION,
                start=start,
                magnitude=1.25,
                story="Foundation model published a bad snapshot: its downstream models regress with it.",
            )
        )
        by_id = {model.id: model for model in builder.models}
        most_critical = sorted(biggest.downstream, key=lambda m: (by_id[m].tier.rank, m))
        for child in most_critical[:3]:
            taken.add(child)
            incidents.append(
                MetricIncident(
                    model_id=child,
                    kind=IncidentKind.NE_REGRESSION,
                    start=start + timedelta(hours=1),
                    magnitude=1.2,
                    story=f"Downstream of {biggest.model.id}: fix the upstream, not this model.",
                )
            )
    stopped = pick(by_role[Role.HOLDOUT] or by_role[Role.BASELINE], taken)
    if stopped:
        taken.add(stopped.id)
        incidents.append(
            MetricIncident(
                model_id=stopped.id,
                kind=IncidentKind.FEED_STOP,
                start=end - timedelta(hours=3),
                story="Logging pipeline stopped: no data is not healthy, and not violating either.",
            )
        )
    past = pick(by_role[Role.BASELINE], taken)
    if past:
        taken.add(past.id)
        start = end - timedelta(days=12, hours=5)
        incidents.append(
            MetricIncident(
                model_id=past.id,
                kind=IncidentKind.NE_REGRESSION,
                start=start,
                end=start + timedelta(hours=4),
                magnitude=1.3,
                story="A resolved four-hour regression twelve days ago still weighs on the error budget.",
            )
        )
    shifted = pick(by_role[Role.BASELINE], taken)
    if shifted:
        start = end - timedelta(days=5)
        incidents.append(
            MetricIncident(
                model_id=shifted.id,
                kind=IncidentKind.TRAFFIC_SHIFT,
                start=start,
                end=start + timedelta(days=1),
                magnitude=0.4,
                story="A regional outage cut traffic for a day; the ratios stayed healthy.",
            )
        )
    return incidents
