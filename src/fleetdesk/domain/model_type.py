"""The model type string and the vocabulary that decodes it.

Grammar (unambiguous without looking at the vocabulary)::

    type   = app "_" surface "_" position "_" arch
    term   = word *("-" word)          ; multi-word terms join words with "-"
    word   = 1*(a-z / 0-9)

So a type string is always exactly four ``_``-separated terms, e.g.
``ig_stories_tray_mtml`` or ``fb_marketplace-search_late-stage_dhen``.
Each term must then be known to the vocabulary, which gives it a human label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

# Match with fullmatch: "$" alone would also accept a trailing newline.
TERM_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
PARTS = ("app", "surface", "position", "architecture")


class FunnelStage(StrEnum):
    """Where in the recommendation funnel a position sits."""

    SOURCING = "sourcing"
    EARLY_STAGE_RANKING = "early-stage ranking"
    LATE_STAGE_RANKING = "late-stage ranking"


class ModelTypeError(ValueError):
    """A type string that does not parse or names an unknown term."""

    def __init__(self, type_string: str, part: str, message: str) -> None:
        self.type_string = type_string
        self.part = part
        self.message = message
        super().__init__(f"model type {type_string!r}: {part}: {message}")


class Position(BaseModel):
    """A position term: its label and the funnel stage it belongs to."""

    model_config = ConfigDict(frozen=True)

    label: str
    stage: FunnelStage


class Vocabulary(BaseModel):
    """The registry's known terms for each part of a type string, with labels."""

    model_config = ConfigDict(frozen=True)

    apps: dict[str, str]
    surfaces: dict[str, str]
    positions: dict[str, Position]
    architectures: dict[str, str]

    @model_validator(mode="after")
    def _terms_follow_grammar(self) -> Vocabulary:
        bad = [
            f"{part}: {term!r}"
            for part, terms in zip(PARTS, self._tables())
            for term in terms
            if not TERM_PATTERN.fullmatch(term)
        ]
        if bad:
            raise ValueError("terms must be lowercase words joined by '-': " + ", ".join(bad))
        return self

    def _tables(self) -> tuple[Mapping[str, object], ...]:
        return (self.apps, self.surfaces, self.positions, self.architectures)

    def parse(self, type_string: str) -> ModelType:
        """Parse and check a type string; raise ModelTypeError naming the bad part."""
        terms = type_string.split("_")
        if len(terms) != len(PARTS):
            raise ModelTypeError(
                type_string,
                "format",
                f"expected 4 terms app_surface_position_architecture, got {len(terms)}"
                " (join words inside a term with '-', e.g. late-stage)",
            )
        for part, term, table in zip(PARTS, terms, self._tables()):
            if not TERM_PATTERN.fullmatch(term):
                raise ModelTypeError(
                    type_string,
                    part,
                    f"{term!r} is not lowercase words joined by '-'",
                )
            if term not in table:
                known = ", ".join(sorted(table)) or "none"
                raise ModelTypeError(type_string, part, f"unknown {part} {term!r} (known: {known})")
        return ModelType(app=terms[0], surface=terms[1], position=terms[2], architecture=terms[3])

    def describe(self, model_type: ModelType) -> str:
        """Human reading of a type, e.g. 'Instagram · Stories · tray (…) · multi-task multi-label'."""
        self.parse(str(model_type))  # a ModelType built by hand may hold unknown terms
        position = self.positions[model_type.position]
        return " · ".join(
            (
                self.apps[model_type.app],
                self.surfaces[model_type.surface],
                f"{position.label} ({position.stage})",
                self.architectures[model_type.architecture],
            )
        )

    def stage(self, model_type: ModelType) -> FunnelStage:
        """The funnel stage of the type's position (ModelTypeError for unknown terms)."""
        self.parse(str(model_type))
        return self.positions[model_type.position].stage


class ModelType(BaseModel):
    """A category of models, identified by its type string."""

    model_config = ConfigDict(frozen=True)

    app: str = Field(pattern=TERM_PATTERN.pattern)
    surface: str = Field(pattern=TERM_PATTERN.pattern)
    position: str = Field(pattern=TERM_PATTERN.pattern)
    architecture: str = Field(pattern=TERM_PATTERN.pattern)

    def __str__(self) -> str:
        return "_".join((self.app, self.surface, self.position, self.architecture))

    @property
    def surface_position(self) -> str:
        """The traffic slot this type serves: app, surface and position."""
        return f"{self.app}_{self.surface}_{self.position}"
