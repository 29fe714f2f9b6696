"""Headless drill scripts: timed key presses played against the console (CI and graded drills).

A script is a JSON list of steps, oldest first::

    [{"at": 0.5, "from": "page", "keys": "a"},
     {"at": 1.0, "from": "page", "keys": "slash"},
     {"at": 1.1, "from": "page", "type": "ig_feed_ranking_exp_b"},
     {"at": 1.2, "from": "page", "keys": "enter e y"}]

``at`` is wall seconds after the drill started; with ``"from": "page"`` after
the first page, and with ``"from": "previous"`` after the previous step was
handled (a script timed that way does not depend on how fast the machine
replays or types). ``keys`` is one or more Textual key names separated by
spaces; ``type`` is literal text, typed one character at a time (the console turns each
character into the key a terminal would send).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError, model_validator

from fleetdesk.domain.bounds import FINITE
from fleetdesk.drills.scenario import MAX_WALL_SECONDS, ScenarioError, ScenarioProblem, _field
from fleetdesk.settings.local_files import MIB, read_text_file, why_unreadable


class ScriptStep(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, **FINITE)

    at: float = Field(
        ge=0.0,
        le=MAX_WALL_SECONDS,
        description="Wall seconds after the start (or after the first page)",
    )
    origin: Literal["start", "page", "previous"] = Field(default="start", alias="from")
    keys: str | None = Field(
        default=None, min_length=1, description="Key names separated by spaces"
    )
    type: str | None = Field(
        default=None, min_length=1, description="Text typed character by character"
    )

    @model_validator(mode="after")
    def _one_kind(self) -> ScriptStep:
        if (self.keys is None) == (self.type is None):
            raise ValueError("give exactly one of 'keys' and 'type'")
        return self

    def presses(self) -> list[str]:
        """What this step presses, in order: key names, or the characters of the text to type."""
        if self.keys is not None:
            return self.keys.split()
        return list(self.type or "")


class KeyScript(RootModel[list[ScriptStep]]):
    """A whole script; steps must not go back in time within the same origin."""

    @model_validator(mode="after")
    def _ordered(self) -> KeyScript:
        last: dict[str, float] = {}
        for index, step in enumerate(self.root):
            if step.origin == "previous":
                continue
            if step.at < last.get(step.origin, 0.0):
                raise ValueError(f"step {index} at {step.at}s comes before an earlier step")
            if step.origin == "start" and "page" in last:
                raise ValueError(
                    f"step {index}: a step timed from the start cannot follow one timed from the page"
                )
            last[step.origin] = step.at
        return self


def load_script(path: Path) -> KeyScript:
    """Read and validate a script file; errors name the file and the step."""
    try:
        raw = json.loads(read_text_file(path, MIB))
    except (OSError, UnicodeDecodeError) as error:
        raise ScenarioError(
            str(path),
            [ScenarioProblem(field="(file)", message=f"cannot read: {why_unreadable(error)}")],
            "key script",
        ) from None
    except json.JSONDecodeError as error:
        raise ScenarioError(
            str(path),
            [
                ScenarioProblem(
                    field="(file)",
                    message=f"line {error.lineno} column {error.colno}: not valid JSON: {error.msg}",
                )
            ],
            "key script",
        ) from None
    try:
        return KeyScript.model_validate(raw)
    except ValidationError as error:
        problems = [
            ScenarioProblem(
                field=_field(tuple(e["loc"])), message=e["msg"].removeprefix("Value error, ")
            )
            for e in error.errors(include_url=False)
        ]
        raise ScenarioError(str(path), problems, "key script") from None
