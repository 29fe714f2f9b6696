"""Incremental decoder for ``text/event-stream`` (the WHATWG server-sent events format).

Fed text chunks as they arrive; returns whole messages. Lines end in CRLF,
LF or CR (after a CR that ends a chunk, an LF that starts the next one is
the rest of a CRLF, not an empty line).
Lines and events have size limits so a broken or hostile stream cannot grow
memory without bound; what goes over is dropped and counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE_END = re.compile(r"\r\n|\r|\n")
_DIGITS = re.compile(r"[0-9]+")


@dataclass(frozen=True, slots=True)
class SseMessage:
    """One dispatched event: its type, data, and the last event id in effect."""

    event: str
    data: str
    last_event_id: str


class SseDecoder:
    """Turns a stream of text chunks into SseMessages, keeping id and retry state."""

    def __init__(self, *, max_line: int = 1 << 20, max_event: int = 4 << 20) -> None:
        self.max_line = max_line
        self.max_event = max_event
        self.last_event_id = ""
        self.retry_ms: int | None = None
        self.comments = 0
        self.dropped = 0
        self._buffer = ""
        self._started = False
        self._skipping_line = False
        self._after_cr = False
        self._event = ""
        self._data: list[str] = []
        self._event_size = 0
        self._event_too_big = False

    def feed(self, chunk: str) -> list[SseMessage]:
        """Decode one chunk; returns the messages it completed (possibly none)."""
        if not self._started and chunk:
            self._started = True
            chunk = chunk.removeprefix("\ufeff")
        if self._after_cr and chunk:
            chunk = chunk.removeprefix("\n")
            self._after_cr = False
        self._buffer += chunk
        messages: list[SseMessage] = []
        position = 0
        while (match := _LINE_END.search(self._buffer, position)) is not None:
            if match.group() == "\r" and match.end() == len(self._buffer):
                self._after_cr = True
            line = self._buffer[position : match.start()]
            position = match.end()
            if self._skipping_line:
                self._skipping_line = False
                continue
            message = self._line(line)
            if message is not None:
                messages.append(message)
        self._buffer = self._buffer[position:]
        if len(self._buffer) > self.max_line:
            # Drop the rest of this over-long line, wherever it ends.
            self._buffer = ""
            self._skipping_line = True
            self._event_too_big = True
        return messages

    def _line(self, line: str) -> SseMessage | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            self.comments += 1
            return None
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "event":
            self._event = value
        elif field == "data":
            self._event_size += len(value) + 1
            if self._event_size > self.max_event:
                self._event_too_big = True
            else:
                self._data.append(value)
        elif field == "id" and "\0" not in value:
            self.last_event_id = value
        elif field == "retry" and _DIGITS.fullmatch(value):
            self.retry_ms = int(value)
        return None

    def _dispatch(self) -> SseMessage | None:
        event, data, too_big = self._event, self._data, self._event_too_big
        self._event, self._data, self._event_size, self._event_too_big = "", [], 0, False
        if too_big:
            self.dropped += 1
            return None
        if not data:
            return None
        return SseMessage(
            event=event or "message", data="\n".join(data), last_event_id=self.last_event_id
        )
