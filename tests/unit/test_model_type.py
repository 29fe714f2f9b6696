"""The type-string grammar: parse, format, labels, funnel stage and precise errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from fleetdesk.domain.model_type import (
    FunnelStage,
    ModelType,
    ModelTypeError,
    Position,
    Vocabulary,
)

VOCABULARY = Vocabulary(
    apps={"ig": "Instagram", "fb": "Facebook"},
    surfaces={"stories": "Stories", "marketplace-search": "Marketplace search"},
    positions={
        "retrieval": Position(label="candidate retrieval", stage=FunnelStage.SOURCING),
        "early-stage": Position(label="first-pass ranker", stage=FunnelStage.EARLY_STAGE_RANKING),
        "tray": Position(label="tray order", stage=FunnelStage.LATE_STAGE_RANKING),
    },
    architectures={"mtml": "multi-task multi-label", "two-tower": "two-tower retrieval"},
)


def test_parse_splits_the_four_parts() -> None:
    parsed = VOCABULARY.parse("ig_stories_tray_mtml")
    assert parsed == ModelType(app="ig", surface="stories", position="tray", architecture="mtml")


def test_multi_word_terms_join_with_hyphen_and_round_trip() -> None:
    text = "fb_marketplace-search_early-stage_two-tower"
    parsed = VOCABULARY.parse(text)
    assert (parsed.surface, parsed.position, parsed.architecture) == (
        "marketplace-search",
        "early-stage",
        "two-tower",
    )
    assert str(parsed) == text


def test_surface_position_is_the_traffic_slot() -> None:
    assert VOCABULARY.parse("ig_stories_tray_mtml").surface_position == "ig_stories_tray"


def test_describe_gives_every_label_and_the_stage() -> None:
    text = VOCABULARY.describe(VOCABULARY.parse("fb_marketplace-search_early-stage_two-tower"))
    assert text == (
        "Facebook · Marketplace search · first-pass ranker (early-stage ranking) · two-tower retrieval"
    )


@pytest.mark.parametrize(
    ("type_string", "stage"),
    [
        ("ig_stories_retrieval_two-tower", FunnelStage.SOURCING),
        ("ig_stories_early-stage_mtml", FunnelStage.EARLY_STAGE_RANKING),
        ("ig_stories_tray_mtml", FunnelStage.LATE_STAGE_RANKING),
    ],
)
def test_funnel_stage_comes_from_the_position(type_string: str, stage: FunnelStage) -> None:
    assert VOCABULARY.stage(VOCABULARY.parse(type_string)) is stage


@pytest.mark.parametrize(
    ("type_string", "part"),
    [
        # Wrong number of "_"-separated terms.
        ("", "format"),
        ("ig", "format"),
        ("ig_stories_tray", "format"),
        ("ig_stories_tray_mtml_v2", "format"),
        ("ig_marketplace_search_tray_mtml", "format"),  # multi-word term written with "_"
        # Empty terms, including at either end.
        ("_stories_tray_mtml", "app"),
        ("ig__tray_mtml", "surface"),
        ("ig_stories__mtml", "position"),
        ("ig_stories_tray_", "architecture"),
        # Uppercase, spaces, stray characters.
        ("IG_stories_tray_mtml", "app"),
        ("ig_Stories_tray_mtml", "surface"),
        ("ig_stories_Tray_mtml", "position"),
        ("ig_stories_tray_MTML", "architecture"),
        ("ig_stories_tray_mtml ", "architecture"),
        (" ig_stories_tray_mtml", "app"),
        ("ig_stories_tray_mtml\n", "architecture"),
        ("ig_stori\u00e9s_tray_mtml", "surface"),
        ("ig_stories_tr\u0430y_mtml", "position"),  # Cyrillic a looks like Latin a
        # Hyphens: doubled, leading, trailing.
        ("fb_marketplace--search_tray_mtml", "surface"),
        ("fb_-marketplace-search_tray_mtml", "surface"),
        ("fb_marketplace-search_early-stage-_mtml", "position"),
        # Well formed but unknown to the vocabulary.
        ("tt_stories_tray_mtml", "app"),
        ("ig_reels_tray_mtml", "surface"),
        ("ig_stories_top_mtml", "position"),
        ("ig_stories_tray_dhen", "architecture"),
        ("ig_stories_tray_two", "architecture"),  # a prefix of a known multi-word term
        ("ig_marketplace_tray_mtml", "surface"),
    ],
)
def test_malformed_or_unknown_strings_name_the_bad_part(type_string: str, part: str) -> None:
    with pytest.raises(ModelTypeError) as caught:
        VOCABULARY.parse(type_string)
    assert caught.value.part == part
    assert caught.value.type_string == type_string
    assert part in str(caught.value)


def test_unknown_term_error_lists_the_known_terms() -> None:
    with pytest.raises(ModelTypeError) as caught:
        VOCABULARY.parse("ig_reels_tray_mtml")
    assert "'reels'" in str(caught.value)
    assert "marketplace-search, stories" in str(caught.value)


def test_the_first_bad_part_is_named_when_several_are_bad() -> None:
    with pytest.raises(ModelTypeError) as caught:
        VOCABULARY.parse("tt_reels_top_dhen")
    assert caught.value.part == "app"


def test_error_message_is_available_without_the_prefix() -> None:
    with pytest.raises(ModelTypeError) as caught:
        VOCABULARY.parse("a: b_stories_tray_mtml")
    assert caught.value.message.startswith("'a: b' is not lowercase words")


@pytest.mark.parametrize("query", ["describe", "stage"])
def test_a_hand_built_type_with_unknown_terms_is_a_model_type_error(query: str) -> None:
    unknown = ModelType(app="ig", surface="stories", position="top", architecture="mtml")
    with pytest.raises(ModelTypeError) as caught:
        getattr(VOCABULARY, query)(unknown)
    assert caught.value.part == "position"


@pytest.mark.parametrize("term", ["Stories", "two_words", "a--b", "-a", "a-", "", "a b", "ok\n"])
def test_vocabulary_rejects_terms_outside_the_grammar(term: str) -> None:
    with pytest.raises(ValidationError):
        Vocabulary(apps={"ig": "Instagram"}, surfaces={term: "x"}, positions={}, architectures={})


@pytest.mark.parametrize("field", ["app", "surface", "position", "architecture"])
@pytest.mark.parametrize("value", ["", "Ig", "a_b", "a--b", "a\n"])
def test_model_type_fields_follow_the_grammar(field: str, value: str) -> None:
    terms = {"app": "ig", "surface": "stories", "position": "tray", "architecture": "mtml"}
    with pytest.raises(ValidationError):
        ModelType(**{**terms, field: value})


# A term is 1-3 words of [a-z0-9]; the vocabulary and the type are drawn together.
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=6)
TERM = st.lists(WORD, min_size=1, max_size=3).map("-".join)
TERMS = st.lists(TERM, min_size=1, max_size=4, unique=True)


@st.composite
def vocabulary_and_type(draw: st.DrawFn) -> tuple[Vocabulary, tuple[str, str, str, str]]:
    apps, surfaces, positions, architectures = (draw(TERMS) for _ in range(4))
    vocabulary = Vocabulary(
        apps={t: f"app {t}" for t in apps},
        surfaces={t: f"surface {t}" for t in surfaces},
        positions={
            t: Position(label=f"position {t}", stage=draw(st.sampled_from(FunnelStage)))
            for t in positions
        },
        architectures={t: f"arch {t}" for t in architectures},
    )
    chosen = tuple(
        draw(st.sampled_from(terms)) for terms in (apps, surfaces, positions, architectures)
    )
    return vocabulary, chosen  # type: ignore[return-value]


@settings(max_examples=150, deadline=None)
@given(vocabulary_and_type())
def test_parse_and_format_round_trip(case: tuple[Vocabulary, tuple[str, str, str, str]]) -> None:
    vocabulary, (app, surface, position, architecture) = case
    text = "_".join((app, surface, position, architecture))
    parsed = vocabulary.parse(text)
    assert (parsed.app, parsed.surface, parsed.position, parsed.architecture) == (
        app,
        surface,
        position,
        architecture,
    )
    assert str(parsed) == text
    assert vocabulary.parse(str(parsed)) == parsed
    assert vocabulary.stage(parsed) is vocabulary.positions[position].stage
    assert vocabulary.describe(parsed).split(" · ")[0] == f"app {app}"


@settings(max_examples=150, deadline=None)
@given(vocabulary_and_type(), st.sampled_from(range(4)), WORD)
def test_a_term_outside_the_vocabulary_is_named(
    case: tuple[Vocabulary, tuple[str, str, str, str]], index: int, replacement: str
) -> None:
    vocabulary, terms = case
    table = (vocabulary.apps, vocabulary.surfaces, vocabulary.positions, vocabulary.architectures)[
        index
    ]
    replacement = replacement + "x" * 7  # longer than any drawn term, so never known
    assert replacement not in table
    changed = list(terms)
    changed[index] = replacement
    with pytest.raises(ModelTypeError) as caught:
        vocabulary.parse("_".join(changed))
    assert caught.value.part == ("app", "surface", "position", "architecture")[index]
