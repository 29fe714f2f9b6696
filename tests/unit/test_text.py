"""sanitize: nothing from data can drive the terminal, hide text or reorder it."""

from __future__ import annotations

import string
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetdesk.domain.text import ELLIPSIS, sanitize

UNSAFE_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def unsafe_chars(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c) in UNSAFE_CATEGORIES]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # CSI colour and screen clear: ESC becomes visible, the rest is inert text.
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),
        # 8-bit CSI (C1).
        ("\x9b31m", "\\x9b31m"),
        # OSC 52 clipboard write, BEL- and ST-terminated.
        ("\x1b]52;c;ZXZpbA==\x07", "\\x1b]52;c;ZXZpbA==\\x07"),
        ("\x1b]52;c;ZXZpbA==\x1b\\", "\\x1b]52;c;ZXZpbA==\\x1b\\"),
        # OSC 8 hyperlink hiding its target behind innocent text.
        (
            "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
            "\\x1b]8;;https://evil.example\\x1b\\click\\x1b]8;;\\x1b\\",
        ),
        # Window title (OSC 0) and DCS.
        ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),
        ("\x90q\x9c", "\\x90q\\x9c"),
        # Line breaking and cursor motion.
        ("a\nb\rc\td\x08e", "a\\x0ab\\x0dc\\x09d\\x08e"),
        ("x\x00y\x7fz", "x\\x00y\\x7fz"),
        ("a\u2028b\u2029c\x85d", "a\\u2028b\\u2029c\\x85d"),
        # Bidi: override, embeddings, isolates, marks.
        ("invoice_\u202etxt.exe", "invoice_\\u202etxt.exe"),
        ("\u202a\u202b\u202c\u202d", "\\u202a\\u202b\\u202c\\u202d"),
        ("\u2066\u2067\u2068\u2069", "\\u2066\\u2067\\u2068\\u2069"),
        ("\u200e\u200f\u061c", "\\u200e\\u200f\\u061c"),
        # Zero-width and invisible format characters.
        ("ig\u200b_feed", "ig\\u200b_feed"),
        ("a\u200cb\u200dc\u2060d\ufeffe", "a\\u200cb\\u200dc\\u2060d\\ufeffe"),
        ("soft\u00adhyphen", "soft\\xadhyphen"),
        ("\u180e\u2061\u2064", "\\u180e\\u2061\\u2064"),
        ("\ufff9\ufffa\ufffb", "\\ufff9\\ufffa\\ufffb"),
        ("\u0600\u06dd", "\\u0600\\u06dd"),
        # Tag characters (beyond the BMP): eight hex digits, never ambiguous.
        ("flag\U000e0041\U000e007f", "flag\\U000e0041\\U000e007f"),
        # Letters that render as nothing.
        ("\u3164\uffa0\u115f\u1160", "\\u3164\\uffa0\\u115f\\u1160"),
    ],
)
def test_escapes_become_visible_text(raw: str, expected: str) -> None:
    assert sanitize(raw) == expected
    assert unsafe_chars(sanitize(raw)) == []


@pytest.mark.parametrize("code", [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)])
def test_every_c0_c1_and_del_is_escaped(code: int) -> None:
    assert sanitize(f"a{chr(code)}b") == f"a\\x{code:02x}b"


@pytest.mark.parametrize(
    "text",
    [
        "ig_stories_tray_mtml",
        "Équipe de classement — 日本語 — 🚀",
        "TIER0: feed ads revenue (≈ $1M/h)",
        "[bold]not markup[/bold] & <b>not html</b>",
        "C:\\path\\x1b is literal text",
        "a\u00a0b",  # no-break space draws as a space
        "e\u0301",  # combining accent stays with its letter
        "☺\ufe0f",  # variation selector
    ],
)
def test_ordinary_text_passes_unchanged(text: str) -> None:
    assert sanitize(text) == text


def test_non_utf8_bytes_become_escapes() -> None:
    assert sanitize(b"ok\xff\xfe") == "ok\\xff\\xfe"
    assert sanitize(b"\x1b[2J") == "\\x1b[2J"
    assert sanitize("café".encode()) == "café"
    assert sanitize(b"\xe2\x80\xae") == "\\u202e"  # RLO arriving as valid UTF-8 bytes
    assert sanitize(b"\xc3") == "\\xc3"  # truncated sequence


def test_lone_surrogates_become_escapes_and_the_result_encodes() -> None:
    result = sanitize("a\udc80b\ud83d")
    assert result == "a\\udc80b\\ud83d"
    result.encode("utf-8")  # would raise on a surviving surrogate


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("abcdef", 4, "abc" + ELLIPSIS),
        ("abcd", 4, "abcd"),  # exactly at the limit: untouched
        ("abc", 10, "abc"),
        ("abcdef", 1, ELLIPSIS),
        ("abcdef", 0, ""),
        ("abcdef", -3, ""),
        ("", 0, ""),
        # The limit counts the visible result, escapes included.
        ("a\x1bb", 6, "a\\x1bb"),
        # An escape is never cut in half: "ab\x1b" would be 6 chars, so it stops at "ab".
        ("ab\x1bcd", 4, "ab" + ELLIPSIS),
        ("ab\x1bcd", 7, "ab\\x1b" + ELLIPSIS),
        ("日本語テキスト", 4, "日本語" + ELLIPSIS),
    ],
)
def test_limit_cuts_with_an_ellipsis(text: str, limit: int, expected: str) -> None:
    assert sanitize(text, limit) == expected
    assert len(sanitize(text, limit)) <= max(limit, 0)


ANY_CHAR = st.characters(
    min_codepoint=0, max_codepoint=0x10FFFF
)  # surrogates and controls included


@settings(max_examples=300, deadline=None)
@given(st.text(ANY_CHAR, max_size=80))
def test_no_control_or_format_character_survives(text: str) -> None:
    result = sanitize(text)
    assert unsafe_chars(result) == []
    result.encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=80))
def test_no_control_character_survives_from_bytes(data: bytes) -> None:
    assert unsafe_chars(sanitize(data)) == []


@settings(max_examples=300, deadline=None)
@given(st.text(ANY_CHAR, max_size=80), st.integers(min_value=-2, max_value=100))
def test_limit_is_respected_and_keeps_a_prefix(text: str, limit: int) -> None:
    full = sanitize(text)
    cut = sanitize(text, limit)
    assert len(cut) <= max(limit, 0)
    if len(full) <= limit:
        assert cut == full
    elif limit > 0:
        assert cut.endswith(ELLIPSIS)
        assert full.startswith(cut[: -len(ELLIPSIS)])


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=string.printable[:95], max_size=200)
)  # printable ASCII, no whitespace controls
def test_printable_ascii_passes_unchanged(text: str) -> None:
    assert sanitize(text) == text


@settings(max_examples=300, deadline=None)
@given(st.text(ANY_CHAR, max_size=80))
def test_sanitizing_twice_changes_nothing_more(text: str) -> None:
    once = sanitize(text)
    assert sanitize(once) == once
