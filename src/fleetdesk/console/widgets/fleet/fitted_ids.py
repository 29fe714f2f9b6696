"""Model ids cut to a column's width so that no two rows read alike.

An id is its model type string, a dot and a variant (``ig_reels_late-stage_transformer.x1-fresh-emb``).
Cutting ids at the end made siblings identical: at 80 columns 287 of the large fleet's 1,200 ids shared
their cut prefix and a filter for ``ig_reels_late-stage_transformer.x1`` showed 11 identical rows. What
tells siblings apart is the variant, and the type is what the type column and the filter already say; so
an id that does not fit keeps its variant whole and gives up the end of its type:

    ig_reels_late-stage_transf….x1-fresh-emb

Where that still reads alike (two types that share their first letters, with the same variant), the
type keeps the terms that tell those ids apart and elides the others:

    fb…late-stage….holdout-2026h2      fb…early-stage….holdout-2026h2

Ids that do not follow the type.variant shape (or whose variant alone is too long) keep their head and
tail around one ellipsis, the split chosen so that they differ; and if nothing else separates them, a
``~2``, ``~3`` suffix does. Every shown text is checked against every other, over the whole fleet (not
only the rows a filter shows), so a row reads the same while the engineer types.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from itertools import combinations

from rich.cells import cell_len as _rich_cell_len


def cell_len(text: str) -> int:
    """The cells ``text`` takes: its length when it is ASCII (shown ids are sanitized, so printable), else
    rich's count of wide and zero-width characters, several times slower (50,000 ids fit at each load)."""
    return len(text) if text.isascii() else _rich_cell_len(text)


_MIN_TYPE_HEAD = 3
"""Fewer letters of a type than this read as noise: elide the terms instead."""


def fit_ids(models: Mapping[str, tuple[str, str]], width: int, ellipsis: str) -> dict[str, str]:
    """Each model's id as it fits ``width`` cells, every one different from every other.

    ``models`` maps a model id to its (id, type string) as they are shown (sanitized).
    """
    shown = {
        model_id: _type_kept_head(text, type_text, width, ellipsis)
        for model_id, (text, type_text) in models.items()
    }
    whole = {model_id for model_id, (text, _) in models.items() if shown[model_id] == text}
    for fallback in (_terms_apart, _ends_apart):
        groups = _alike(shown, whole)
        if not groups:
            return shown
        for group in groups:
            shown.update(
                fallback({model_id: models[model_id] for model_id in group}, width, ellipsis)
            )
    _number_the_rest(shown, whole, width, ellipsis)
    return shown


def _alike(shown: Mapping[str, str], whole: set[str]) -> list[list[str]]:
    """Groups of models whose cut ids read the same, without those shown whole (they cannot change)."""
    # Counted first (in C): most texts are unique, and a list per text was most of fitting 50,000 ids.
    repeated = {text for text, n in Counter(shown.values()).items() if n > 1}
    by_text: dict[str, list[str]] = defaultdict(list)
    for model_id, text in shown.items():
        if text in repeated:
            by_text[text].append(model_id)
    return [
        [m for m in members if m not in whole]
        for members in by_text.values()
        if len(members) > 1 and any(m not in whole for m in members)
    ]


def _type_kept_head(text: str, type_text: str, width: int, ellipsis: str) -> str:
    """The id whole, or its type's head, an ellipsis and the whole variant, or (no room) its two ends."""
    if cell_len(text) <= width:
        return text
    variant = _variant(text, type_text)
    if variant is not None:
        room = width - cell_len(ellipsis) - 1 - cell_len(variant)
        if room >= _MIN_TYPE_HEAD:
            # A head ending in a separator ("late-stage_…") reads better without it.
            return f"{_head(type_text, room).rstrip('_-') or _head(type_text, room)}{ellipsis}.{variant}"
    return _ends(text, width, ellipsis, tail=_tail_share(width, ellipsis))


def _terms_apart(group: Mapping[str, tuple[str, str]], width: int, ellipsis: str) -> dict[str, str]:
    """Ids of one group that read alike: each keeps its app, the fewest type terms that tell the group
    apart, and its variant; the other terms come back, left to right, as far as the width allows."""
    split = {
        model_id: (type_text.split("_"), variant)
        for model_id, (text, type_text) in group.items()
        if (variant := _variant(text, type_text)) is not None
    }
    if len(split) < len(group):
        return {}
    count = max(len(terms) for terms, _ in split.values())
    varying = [
        i for i in range(1, count) if len({_term(terms, i) for terms, _ in split.values()}) > 1
    ]
    # The fewest terms, the leftmost first (the surface and the funnel position read before the architecture).
    chosen = next(
        (
            set(pick)
            for size in range(len(varying) + 1)
            for pick in combinations(varying, size)
            if _separates(split.values(), pick)
        ),
        None,
    )
    if chosen is None:
        return {}
    chosen = {0, *chosen}
    result: dict[str, str] = {}
    for model_id, (terms, variant) in split.items():
        kept = set(chosen)
        if cell_len(_joined(terms, kept, variant, ellipsis)) > width:
            continue  # too long even so: the next fallback cuts it
        for i in range(1, len(terms)):  # give back the other terms, left to right, while they fit
            if i not in kept and cell_len(_joined(terms, kept | {i}, variant, ellipsis)) <= width:
                kept.add(i)
        result[model_id] = _joined(terms, kept, variant, ellipsis)
    return result


def _joined(terms: list[str], kept: set[int], variant: str, ellipsis: str) -> str:
    """Kept terms joined by "_", each run of elided terms one ellipsis, then "." and the variant."""
    out = ""
    gap = False
    for i, term in enumerate(terms):
        if i in kept:
            out += (ellipsis if gap else ("_" if out else "")) + term
            gap = False
        else:
            gap = True
    return f"{out}{ellipsis if gap else ''}.{variant}"


def _separates(members: Iterable[tuple[list[str], str]], pick: tuple[int, ...]) -> bool:
    seen = set()
    for terms, variant in members:
        key = (tuple(_term(terms, i) for i in pick), variant)
        if key in seen:
            return False
        seen.add(key)
    return True


def _term(terms: list[str], index: int) -> str:
    return terms[index] if index < len(terms) else ""


def _ends_apart(group: Mapping[str, tuple[str, str]], width: int, ellipsis: str) -> dict[str, str]:
    """Head and tail around one ellipsis, with the first split (most tail first) that tells the group apart."""
    texts = {model_id: text for model_id, (text, _) in group.items() if cell_len(text) > width}
    room = width - cell_len(ellipsis)
    if room < 2 or not texts:
        return {}
    best: dict[str, str] = {}
    for tail in range(room - 1, 0, -1):
        cut = {model_id: _ends(text, width, ellipsis, tail) for model_id, text in texts.items()}
        if len(set(cut.values())) == len(cut):
            return cut
        if not best:
            best = cut
    return best


def _number_the_rest(shown: dict[str, str], whole: set[str], width: int, ellipsis: str) -> None:
    """Last resort: ``~2``, ``~3``… on the second and later of ids that still read alike."""
    taken = set(shown.values())
    for group in _alike(shown, whole):
        first_is_whole = any(m in whole for m in group) or len(group) < 2
        members = sorted(group)
        for number, model_id in enumerate(members, start=2 if first_is_whole else 1):
            if number == 1:
                continue
            suffix = f"~{number}"
            base = shown[model_id]
            while True:
                text = _head(base, width - len(suffix)) + suffix
                if text not in taken:
                    break
                number += 1
                suffix = f"~{number}"
            shown[model_id] = text
            taken.add(text)


def _variant(text: str, type_text: str) -> str | None:
    """What follows "<type>." in the id, or None when the id does not start with its type."""
    if type_text and text.startswith(type_text + ".") and len(text) > len(type_text) + 1:
        return text[len(type_text) + 1 :]
    return None


def _tail_share(width: int, ellipsis: str) -> int:
    """Cells for the tail when an id is cut at both ends: the end tells siblings apart, so most of it."""
    room = width - cell_len(ellipsis)
    return max(room - max(room // 3, 1), 1)


def _ends(text: str, width: int, ellipsis: str, tail: int) -> str:
    room = width - cell_len(ellipsis)
    if room <= 0:
        return _head(text, width)
    tail = min(tail, room)
    return _head(text, room - tail) + ellipsis + _tail(text, tail)


def _head(text: str, cells: int) -> str:
    """The longest start of ``text`` that takes at most ``cells`` cells (wide characters count two)."""
    if cells <= 0:
        return ""
    if text.isascii():
        return text[:cells]
    used = 0
    for index, char in enumerate(text):
        used += cell_len(char)
        if used > cells:
            return text[:index]
    return text


def _tail(text: str, cells: int) -> str:
    """The longest end of ``text`` that takes at most ``cells`` cells."""
    if cells <= 0:
        return ""
    if text.isascii():
        return text[-cells:]
    used = 0
    for index in range(len(text) - 1, -1, -1):
        used += cell_len(text[index])
        if used > cells:
            return text[index + 1 :]
    return text
