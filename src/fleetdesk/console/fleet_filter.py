"""The fleet view's filter: every typed word must match some field of the model.

Words match substrings of the id, type string, app, surface, funnel stage,
owner team and role; ``tier0``/``t0`` and health words (``page``, ``ticket``,
``unstable``, ``nodata``, ``ok``, ``stable``) match exactly, so ``t0 page feed``
reads as "paging TIER0 models on feed".
"""

from __future__ import annotations

from fleetdesk.console.widgets.fleet.row import FleetRow
from fleetdesk.wire import Attention, Health, Tier

_HEALTH_WORDS: dict[str, set[Attention | Health]] = {
    "page": {Attention.PAGE},
    "ticket": {Attention.TICKET},
    "unstable": {Attention.UNSTABLE, Health.UNSTABLE},
    "nodata": {Attention.NO_DATA, Health.NO_DATA},
    "no_data": {Attention.NO_DATA, Health.NO_DATA},
    "ok": {Attention.OK},
    "stable": {Health.STABLE},
    "alert": {Attention.PAGE, Attention.TICKET},
}


def tier_word(word: str) -> Tier | None:
    """``tier0``, ``t0`` (any case) as a Tier; None otherwise."""
    word = word.lower()
    for prefix in ("tier", "t"):
        rest = word.removeprefix(prefix)
        if rest != word and rest.isdigit() and 0 <= int(rest) <= 4:
            return Tier(f"TIER{rest}")
    return None


def haystack(model: FleetRow) -> str:
    """The lower-case text a model's free words are searched in."""
    return " ".join(
        (model.id, model.type, model.app, model.surface, model.stage, model.owner_team, model.role)
    ).lower()


def matches(model: FleetRow, words: list[str], text: str | None = None) -> bool:
    """True when every word matches; ``text`` is the model's precomputed haystack."""
    text = haystack(model) if text is None else text
    for word in words:
        tier = tier_word(word)
        if tier is not None:
            if model.tier is not tier:
                return False
            continue
        states = _HEALTH_WORDS.get(word.lower())
        if states is not None:
            if model.attention not in states and model.health not in states:
                return False
            continue
        if word.lower() not in text:
            return False
    return True


def split(query: str) -> list[str]:
    return query.split()
