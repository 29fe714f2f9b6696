"""Keys typed before the dialog they were meant for had opened: on a slow link the engineer types the id and
the reason straight after the action key, while the dry run is still on its way."""

from __future__ import annotations

from typing import NamedTuple


class TypedKey(NamedTuple):
    """One key as the terminal sent it."""

    key: str
    character: str | None
