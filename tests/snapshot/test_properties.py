"""Properties over arbitrary text: Markdown output is inert, redaction is idempotent and never leaks the token."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from fleetdesk.snapshot import markdown
from fleetdesk.snapshot.redact import MASK, Redactor

TOKEN = "fdk_PropTest-0123456789abcdefXYZ"
texty = st.text(alphabet=st.characters(codec="utf-8"), max_size=200)
noisy = st.lists(
    st.one_of(
        texty,
        st.sampled_from(
            [
                TOKEN,
                "Authorization: Bearer ",
                "password=",
                "https://u:p@h/",
                "`",
                "[",
                "](",
                "<",
                "\x1b[31m",
                "\u202e",
            ]
        ),
    ),
    max_size=8,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(noisy)
def test_markdown_text_has_no_live_specials_or_controls(value: str) -> None:
    out = markdown.text(value)
    # Every special is preceded by an odd number of backslashes: escaped, not live.
    for match in re.finditer(r"(\\*)([`*_{}\[\]<>()#+!|~&])", out):
        assert len(match.group(1)) % 2 == 1, out
    assert not re.search(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", out)


@settings(max_examples=300, deadline=None)
@given(noisy)
def test_redaction_is_idempotent_and_masks_the_token(value: str) -> None:
    redactor = Redactor([TOKEN])
    once = redactor.text(value)
    counted = dict(redactor.counts)
    fresh = Redactor([TOKEN])
    assert redactor.text(once) == once and fresh.text(once) == once and not fresh.counts
    assert TOKEN not in once
    if TOKEN in value:
        assert MASK in once and counted
