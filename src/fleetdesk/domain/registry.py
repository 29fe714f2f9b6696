"""The model registry: model records, fleet-wide validation and lineage."""

from __future__ import annotations

import difflib
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from fleetdesk.domain.bounds import FINITE, Moment
from fleetdesk.domain.model_type import ModelType, ModelTypeError, Vocabulary

TRAFFIC_TOLERANCE = 1e-6

AttributeValue = StrictBool | StrictInt | StrictFloat | StrictStr
"""A value of an extension attribute (declared by the model's type record, domain.type_record)."""


class Tier(StrEnum):
    """Company-wide criticality: TIER0 is the most severe possible incident."""

    TIER0 = "TIER0"
    TIER1 = "TIER1"
    TIER2 = "TIER2"
    TIER3 = "TIER3"
    TIER4 = "TIER4"

    @property
    def rank(self) -> int:
        """0 for TIER0 … 4 for TIER4 (lower is more critical)."""
        return int(self.value[-1])

    @property
    def needs_justification(self) -> bool:
        return self.rank <= 2


class Role(StrEnum):
    BASELINE = "baseline"
    EXPERIMENT = "experiment"
    HOLDOUT = "holdout"
    FOUNDATION = "foundation"


class LaunchPhase(StrEnum):
    ESTIMATION = "estimation"
    APPROVAL = "approval"
    PREPARATION = "preparation"
    SCALE_UP = "scale-up"
    FINALIZATION = "finalization"
    LAUNCHED = "launched"


class Model(BaseModel):
    """One model instance in the registry (ModelMetadata)."""

    model_config = ConfigDict(frozen=True, **FINITE)

    id: str = Field(min_length=1, max_length=256)
    type: str = Field(description="Model type string, app_surface_position_architecture")
    role: Role
    tier: Tier
    tier_justification: str = Field(
        default="", description="Business impact that justifies TIER0–TIER2"
    )
    owner_team: str = Field(min_length=1)
    oncall_rotation: str = Field(min_length=1)
    baseline_model_id: str | None = None
    holdout_model_id: str | None = None
    traffic_share: float = Field(default=0.0, ge=0.0, le=1.0)
    launch_phase: LaunchPhase = LaunchPhase.LAUNCHED
    upstream_model_ids: tuple[str, ...] = ()
    purpose: str = Field(min_length=1, description="What the model does, one sentence")
    attributes: dict[str, AttributeValue] = Field(
        default_factory=dict, description="Extension attributes its type's record declares"
    )
    created_at: Moment
    updated_at: Moment


class RegistryViolation(BaseModel):
    """One broken rule, naming the model and the field."""

    model_config = ConfigDict(frozen=True)

    model_id: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.model_id}.{self.field}: {self.message}"


class RegistryError(ValueError):
    """A fleet that breaks registry rules; carries every violation at once."""

    def __init__(self, violations: list[RegistryViolation], source: str = "") -> None:
        self.violations = violations
        where = f"{source}: " if source else ""
        lines = "\n".join(f"  - {v}" for v in violations)
        super().__init__(f"{where}{len(violations)} registry violation(s):\n{lines}")


class Registry:
    """A validated fleet of models with lineage queries."""

    def __init__(self, models: Iterable[Model], vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary
        self.models: dict[str, Model] = {}
        duplicates: list[RegistryViolation] = []
        for model in models:
            if model.id in self.models:
                # Keep the first record so its own violations are still reported.
                duplicates.append(
                    RegistryViolation(model_id=model.id, field="id", message="duplicate model id")
                )
                continue
            self.models[model.id] = model
        self._downstream: dict[str, list[str]] = defaultdict(list)
        for model in self.models.values():
            for upstream_id in model.upstream_model_ids:
                self._downstream[upstream_id].append(model.id)
        violations = duplicates + self._violations()
        if violations:
            raise RegistryError(violations)

    def __len__(self) -> int:
        return len(self.models)

    def __contains__(self, model_id: object) -> bool:
        return model_id in self.models

    def get(self, model_id: str) -> Model:
        """The model with this id; KeyError with close matches otherwise."""
        try:
            return self.models[model_id]
        except KeyError:
            raise UnknownModelError(model_id, self.suggest(model_id)) from None

    def suggest(self, model_id: str, limit: int = 3) -> list[str]:
        """Known ids close to ``model_id``: ids it starts or is part of first, then look-alikes."""
        needle = model_id.casefold()
        containing = sorted(
            (known for known in self.models if needle and needle in known.casefold()),
            key=lambda known: (not known.casefold().startswith(needle), len(known), known),
        )
        similar = difflib.get_close_matches(model_id, self.models, n=limit, cutoff=0.5)
        return list(dict.fromkeys(containing + similar))[:limit]

    def model_type(self, model_id: str) -> ModelType:
        return self.vocabulary.parse(self.get(model_id).type)

    def downstream(self, model_id: str) -> list[Model]:
        """Every model that transitively takes knowledge from this one (blast radius)."""
        self.get(model_id)  # an unknown id is an error, not an empty blast radius
        seen: set[str] = set()
        queue = deque(self._downstream.get(model_id, ()))
        while queue:
            current = queue.popleft()
            if current in seen:
                continue
            seen.add(current)
            queue.extend(self._downstream.get(current, ()))
        return [self.models[m] for m in sorted(seen)]

    def blast_radius(self, model_id: str) -> dict[Tier, int]:
        """Downstream model count per tier, every tier present (zero when none)."""
        counts = {tier: 0 for tier in Tier}
        for model in self.downstream(model_id):
            counts[model.tier] += 1
        return counts

    def upstream_chain(self, model_id: str) -> list[Model]:
        """Upstream models, nearest first (breadth-first), each once."""
        order: list[str] = []
        queue = deque(self.get(model_id).upstream_model_ids)
        while queue:
            current = queue.popleft()
            if current in order or current not in self.models:
                continue
            order.append(current)
            queue.extend(self.models[current].upstream_model_ids)
        return [self.models[m] for m in order]

    def _violations(self) -> list[RegistryViolation]:
        found: list[RegistryViolation] = []

        def flag(model: Model, field: str, message: str) -> None:
            found.append(RegistryViolation(model_id=model.id, field=field, message=message))

        traffic: dict[str, float] = defaultdict(float)
        traffic_members: dict[str, list[Model]] = defaultdict(list)
        for model in self.models.values():
            model_type: ModelType | None = None
            try:
                model_type = self.vocabulary.parse(model.type)
            except ModelTypeError as error:
                flag(model, "type", f"{error.part}: {error.message}")
            if model.tier.needs_justification and not model.tier_justification.strip():
                flag(
                    model,
                    "tier_justification",
                    f"{model.tier} needs a business-impact justification",
                )
            for field in ("baseline_model_id", "holdout_model_id"):
                ref = getattr(model, field)
                if ref is None:
                    continue
                if ref == model.id:
                    flag(model, field, "refers to the model itself")
                elif ref not in self.models:
                    flag(model, field, f"unknown model {ref!r}")
            holdout = self.models.get(model.holdout_model_id or "")
            if holdout is not None and holdout.id != model.id and holdout.role != Role.HOLDOUT:
                flag(
                    model,
                    "holdout_model_id",
                    f"{holdout.id!r} is {_a(holdout.role)}, not a holdout",
                )
            for ref in model.upstream_model_ids:
                if ref not in self.models:
                    flag(model, "upstream_model_ids", f"unknown model {ref!r}")
            if model.role in (Role.EXPERIMENT, Role.HOLDOUT):
                baseline = self.models.get(model.baseline_model_id or "")
                if model.baseline_model_id is None:
                    flag(model, "baseline_model_id", f"{_a(model.role)} needs a baseline")
                # An unknown or self baseline was reported above; one problem, one violation.
                elif baseline is not None and baseline.id != model.id:
                    if baseline.type != model.type:
                        flag(
                            model,
                            "baseline_model_id",
                            f"baseline {baseline.id!r} has type {baseline.type!r}, not {model.type!r}",
                        )
                    elif baseline.role != Role.BASELINE:
                        flag(
                            model,
                            "baseline_model_id",
                            f"{baseline.id!r} is {_a(baseline.role)}, not a baseline",
                        )
            if model.role == Role.FOUNDATION:
                if model.traffic_share:
                    flag(model, "traffic_share", "a foundation model serves no traffic of its own")
            elif model_type is not None:
                traffic[model_type.surface_position] += model.traffic_share
                traffic_members[model_type.surface_position].append(model)
        for slot, total in sorted(traffic.items()):
            if abs(total - 1.0) > TRAFFIC_TOLERANCE:
                members = traffic_members[slot]
                first = min(members, key=lambda m: m.id)
                flag(
                    first,
                    "traffic_share",
                    f"traffic shares on {slot} add up to {total:.4g}, not 1"
                    f" ({', '.join(m.id for m in sorted(members, key=lambda m: m.id))})",
                )
        found.extend(self._cycle_violations())
        found.extend(self._tier_violations())
        return found

    def _tier_violations(self) -> list[RegistryViolation]:
        """A model's tier is the most severe incident it can cause, and its degradation reaches everything
        downstream: so it is at least as critical as the most critical model downstream of it."""
        found = []
        for model_id in sorted(self._downstream):
            model = self.models.get(model_id)
            if model is None:
                continue  # an unknown upstream id, reported on the model that names it
            below = self.downstream(model_id)
            if not below:
                continue
            critical = min(below, key=lambda m: (m.tier.rank, m.id))
            if critical.tier.rank < model.tier.rank:
                found.append(
                    RegistryViolation(
                        model_id=model_id,
                        field="tier",
                        message=f"{model.tier} is less critical than {critical.id!r} ({critical.tier})"
                        f" downstream of it; a model is at least as critical as anything downstream:"
                        f" raise it to {critical.tier}",
                    )
                )
        return found

    def _cycle_violations(self) -> list[RegistryViolation]:
        """Report each upstream cycle once, on its smallest model id."""
        white, grey, black = 0, 1, 2
        colour = {model_id: white for model_id in self.models}
        reported: list[RegistryViolation] = []
        for root in sorted(self.models):
            if colour[root] != white:
                continue
            stack: list[tuple[str, Iterator[str]]] = [
                (root, iter(self.models[root].upstream_model_ids))
            ]
            path = [root]
            colour[root] = grey
            while stack:
                node, children = stack[-1]
                child = next(children, None)
                if child is None:
                    stack.pop()
                    path.pop()
                    colour[node] = black
                    continue
                if child not in self.models:
                    continue
                if colour[child] == grey:
                    cycle = path[path.index(child) :] + [child]
                    anchor = min(cycle[:-1])
                    reported.append(
                        RegistryViolation(
                            model_id=anchor,
                            field="upstream_model_ids",
                            message="upstream cycle: " + " -> ".join(cycle),
                        )
                    )
                elif colour[child] == white:
                    colour[child] = grey
                    path.append(child)
                    stack.append((child, iter(self.models[child].upstream_model_ids)))
        return reported


def _a(role: Role) -> str:
    """The role with its indefinite article: 'an experiment', 'a baseline'."""
    return f"{'an' if role[0] in 'aeiou' else 'a'} {role}"


class UnknownModelError(KeyError):
    """No model with this id; carries close ids to suggest."""

    def __init__(self, model_id: str, suggestions: list[str]) -> None:
        self.model_id = model_id
        self.suggestions = suggestions
        hint = f" (did you mean: {', '.join(suggestions)}?)" if suggestions else ""
        super().__init__(f"no model {model_id!r}{hint}")

    def __str__(self) -> str:
        return str(self.args[0])
