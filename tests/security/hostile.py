"""Hostile text for the small fleet: every kind of byte a terminal would act on, each beside a marker.

Each payload is followed by a plain marker so a leak is unambiguous in a pty capture: Textual writes its
own CSI/OSC sequences, but never ``ESC]52;c;`` followed by our base64, or ``ESC[...`` followed by our marker.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from fleetdesk.fleets import resolve_fleet_path

TARGET = "ig_feed_late-stage_mtml.x1-watch-time"
"""The small fleet's paging scale-up experiment (open incident, baseline v41) that becomes hostile."""

FILTER_WORD = "zqhostile"
"""Plain letters in the hostile id, typed into the console's filter to find the model."""

OSC52 = "\x1b]52;c;SE9TVElMRS1DTElQ\x07"  # sets the clipboard to "HOSTILE-CLIP"
OSC8 = "\x1b]8;;https://evil.example/\x1b\\LINK-MARK\x1b]8;;\x1b\\"
CSI = "\x1b[2J\x1b[31;1mCSI-MARK"
C1 = "\x9b31mC1-MARK\x85\x9d0;title\x9c"
BIDI = "\u202eBIDI-MARK\u202c"
ZERO_WIDTH = "ZW\u200b\u200d\ufeffMARK"
CONTROLS = "\x00\x07\x08\x0d\x7fDEL-MARK"
MARKUP = "[bold]MARKUP-MARK[/bold] [@click=app.quit]CLICK-MARK[/]"

HOSTILE_ID = f"ig_feed_late-stage_mtml.{FILTER_WORD}{OSC52}{CSI}{BIDI}{ZERO_WIDTH}{C1}[bold]"
HOSTILE_OWNER = f"ig-feed-ranking{OSC8}{BIDI}"
HOSTILE_ROTATION = f"oncall{CSI}{CONTROLS}"
HOSTILE_PURPOSE = (
    f"PURPOSE-MARK {MARKUP} {OSC52} {OSC8} {C1} {CONTROLS} {ZERO_WIDTH} " + "long " * 400
)
HOSTILE_NOTE = f"NOTE-MARK {MARKUP} {OSC52} {OSC8} {CSI} {C1} {BIDI} \udcff\udc80 {CONTROLS}"
"""A note as the API carries it; the lone surrogates are what non-UTF-8 bytes become in JSON."""

# Byte sequences that may only reach a terminal if data leaked raw: each payload's start plus its marker.
LEAKS: dict[str, re.Pattern[bytes]] = {
    "OSC 52 clipboard write": re.compile(rb"\x1b\]52;"),
    "OSC 8 hyperlink to the hostile URL": re.compile(rb"\x1b\]8;;https://evil"),
    "data-borne CSI": re.compile(rb"\x1b\[31;1mCSI-MARK"),
    "8-bit C1 control (UTF-8 encoded)": re.compile(rb"\xc2[\x80-\x9f]"),
    "raw 8-bit C1 control": re.compile(rb"[\x80-\x9f]C1-MARK"),
    "U+202E right-to-left override": re.compile("\u202e".encode()),
    "zero-width characters": re.compile("\u200b|\u200d|\ufeff".encode()),
    "DEL": re.compile(rb"\x7f"),
    "NUL": re.compile(rb"\x00"),
    "backspace/CR before a marker": re.compile(rb"[\x08\x0d]\x7f?DEL-MARK"),
}


def leaks(data: bytes) -> list[str]:
    """Names of the hostile payloads found raw in ``data``."""
    return [name for name, pattern in LEAKS.items() if pattern.search(data)]


def hostile_fleet(directory: Path) -> Path:
    """The small fleet with TARGET renamed to HOSTILE_ID and its texts made hostile, as a JSON file."""
    data = json.loads(resolve_fleet_path("small").read_text(encoding="utf-8"))
    for model in data["models"]:
        if model["id"] == TARGET:
            model.update(
                owner_team=HOSTILE_OWNER,
                oncall_rotation=HOSTILE_ROTATION,
                purpose=HOSTILE_PURPOSE,
                tier_justification=f"TIER-MARK {MARKUP} {CSI}",
            )
    text = json.dumps(data, ensure_ascii=True).replace(json.dumps(TARGET), json.dumps(HOSTILE_ID))
    path = directory / "hostile.json"
    path.write_text(text, encoding="ascii")
    return path
