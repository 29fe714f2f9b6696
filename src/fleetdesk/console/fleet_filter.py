"""The fleet view's filter: every typed word must match some field of the model.

Words match substrings of the id, type string, app, surface, funnel stage,
owner team and role; ``tier0``/``t0`` and health words (``page``, ``ticket``,
``unstable``, ``nodata``, ``ok``, ``stable``) match exactly, so ``t0 page feed``
reads as "paging TIER0 models on feed".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from fleetdesk.wire import Attention, Health, ModelRow, Tier

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


def haystack(model: ModelRow) -> str:
    """The lower-case text a model's free words are searched in."""
    return " ".join(
        (model.id, model.type, model.app, model.surface, model.stage, model.owner_team, model.role)
    ).lower()


def matches(model: ModelRow, words: list[str], text: str | None = None) -> bool:
    """True when every word matches; ``text`` is the model's precomputed haystack."""
    return bool(
        narrow(
            words,
            [model.id],
            {model.id: model},
            {model.id: haystack(model) if text is None else text},
        )
    )


def narrow(
    words: list[str],
    ids: Iterable[str],
    models: Mapping[str, ModelRow],
    haystacks: Mapping[str, str],
) -> list[str]:
    """Those of ``ids`` (in their order) whose model every word matches. One pass over the list per word,
    the word's test written inline: at 50,000 models a call per model and word was most of a keystroke."""
    shown = list(ids)
    for word in words:
        tier = tier_word(word)
        states = _HEALTH_WORDS.get(word.lower())
        if tier is not None:
            shown = [i for i in shown if models[i].tier is tier]
        elif states is not None:
            shown = [
                i for i in shown if models[i].attention in states or models[i].health in states
            ]
        else:
            needle = word.lower()
            shown = [i for i in shown if needle in haystacks[i]]
    return shown


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


def split(query: str) -> list[str]:
    return query.split()
