"""The fleet view's filter: every typed word must match some field of the model.

Words match substrings of the id, type string, app, surface, funnel stage,
owner team and role; ``tier0``/``t0`` and health words (``page``, ``ticket``,
``unstable``, ``nodata``, ``ok``, ``stable``) match exactly, so ``t0 page feed``
reads as "paging TIER0 models on feed".
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

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
    return predicate(words)(model, haystack(model) if text is None else text)


def predicate(words: list[str]) -> Callable[[FleetRow, str], bool]:
    """The words as one test of a model and its haystack: each word is read once, not once per model."""
    tests: list[Callable[[FleetRow, str], bool]] = []
    for word in words:
        tier = tier_word(word)
        states = _HEALTH_WORDS.get(word.lower())
        if tier is not None:
            tests.append(partial(_is_tier, tier))
        elif states is not None:
            tests.append(partial(_in_states, states))
        else:
            tests.append(partial(_has_word, word.lower()))
    return lambda model, text: all(test(model, text) for test in tests)


def wider_filters(words: list[str]) -> list[tuple[str, ...]]:
    """Filters that show every model ``words`` shows, narrowest first: the same words with the last one a
    keystroke shorter (both free words: a substring of the haystack stays one when cut), or without it.
    What one of them showed is all a keystroke that extends it needs to look at."""
    if not words:
        return []
    *rest, last = words
    wider = []
    shorter = last[:-1]
    if shorter and _is_free(shorter) and _is_free(last):
        wider.append((*rest, shorter))
    wider.append(tuple(rest))
    return wider


def _is_free(word: str) -> bool:
    return tier_word(word) is None and word.lower() not in _HEALTH_WORDS


def _is_tier(tier: Tier, model: FleetRow, text: str) -> bool:
    return model.tier is tier


def _in_states(states: set[Attention | Health], model: FleetRow, text: str) -> bool:
    return model.attention in states or model.health in states


def _has_word(needle: str, model: FleetRow, text: str) -> bool:
    return needle in text


def split(query: str) -> list[str]:
    return query.split()
