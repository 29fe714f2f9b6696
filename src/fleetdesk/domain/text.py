"""Making data-borne text safe for a terminal.

Anything that reaches the screen or an export from data (ids, notes, owner
names, server messages) goes through ``sanitize``: control characters, escape
sequences, bidi overrides and invisible characters are shown as visible
``\\xNN``/``\\uNNNN`` escapes, so the text reads literally and cannot move the
cursor, set the clipboard, hide a link or reorder what the eye sees. Markup is
a separate concern: the console renders sanitized strings as plain text
objects, never as markup.
"""

from __future__ import annotations

import re

# C0 controls (tab and newline included: they break one-line layouts), DEL,
# C1 controls, bidi embeddings/overrides/isolates and marks, zero-width and
# other invisible format characters, and line/paragraph separators.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u206f\u3164\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
ELLIPSIS = "…"


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def sanitize(text: str | bytes, limit: int | None = None) -> str:
    """Printable, single-line, markup-inert-ready text; optionally cut to ``limit`` chars."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="backslashreplace")
    # Lone surrogates cannot be encoded to the terminal at all.
    text = text.encode("utf-8", errors="backslashreplace").decode("utf-8")
    safe = _UNSAFE.sub(_escape, text)
    if limit is not None and len(safe) > limit:
        return safe[: max(limit - 1, 0)] + ELLIPSIS
    return safe
