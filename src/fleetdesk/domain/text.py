"""Making data-borne text safe for a terminal.

Anything that reaches the screen or an export from data (ids, notes, owner
names, server messages) goes through ``sanitize``: control characters, escape
sequences, bidi overrides and invisible characters are shown as visible
``\\xNN``/``\\uNNNN``/``\\UNNNNNNNN`` escapes, so the text reads literally and
cannot move the cursor, set the clipboard, hide a link or reorder what the eye
sees. Markup is a separate concern: the console renders sanitized strings as
plain text objects, never as markup.
"""

from __future__ import annotations

import unicodedata

# Categories a terminal acts on or draws as nothing: controls (C0, DEL, C1; tab
# and newline included, they break one-line layouts), format characters (bidi
# embeddings/overrides/isolates and marks, zero-width spaces and joiners, soft
# hyphen, tags), surrogates, and line/paragraph separators.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# Letters and marks that render blank, so an id could hide them or look empty.
_BLANK = frozenset("\u115f\u1160\u17b4\u17b5\u3164\uffa0")
ELLIPSIS = "…"


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _piece(char: str) -> str:
    return (
        _escape(char)
        if char in _BLANK or unicodedata.category(char) in _UNSAFE_CATEGORIES
        else char
    )


def sanitize(text: str | bytes, limit: int | None = None) -> str:
    """Printable, single-line, markup-inert-ready text; optionally cut to ``limit`` chars."""
    if isinstance(text, str) and text.isascii() and text.isprintable():
        # Printable ASCII (nearly every id, type and team) is safe as it is: the console fits 50,000 ids to
        # its table at each load, and the walk below was a fifth of that.
        if limit is None or len(text) <= limit:
            return text
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="backslashreplace")
    # Lone surrogates cannot be encoded to the terminal at all.
    text = text.encode("utf-8", errors="backslashreplace").decode("utf-8")
    # isprintable() is False for every unsafe category, so clean text skips the per-character walk.
    if text.isprintable() and _BLANK.isdisjoint(text):
        pieces: list[str] | str = text
    else:
        pieces = [_piece(char) for char in text]
    if limit is None:
        return "".join(pieces)
    if limit <= 0:
        return ""
    if sum(map(len, pieces)) <= limit:
        return "".join(pieces)
    # Cut between pieces so an escape is never split into a misleading half.
    kept: list[str] = []
    room = limit - len(ELLIPSIS)
    for piece in pieces:
        if len(piece) > room:
            break
        kept.append(piece)
        room -= len(piece)
    return "".join(kept) + ELLIPSIS
