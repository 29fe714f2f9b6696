"""The text/event-stream decoder, against the WHATWG parsing rules."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fleetdesk.client._sse import SseDecoder, SseMessage

STREAM = (
    ": hello\n"
    "retry: 1500\n"
    "id: 1\n"
    "event: bucket\n"
    'data: {"a": 1}\n'
    "\n"
    "data:first\r\n"
    "data: second\r\n"
    "id: 2\r\n"
    "\r\n"
    "id: 3\r"
    "data\r"
    "\r"
)


def decode_all(stream: str, chunks: list[int] | None = None) -> tuple[SseDecoder, list[SseMessage]]:
    decoder = SseDecoder()
    messages: list[SseMessage] = []
    if chunks is None:
        messages.extend(decoder.feed(stream))
    else:
        position = 0
        for size in chunks:
            messages.extend(decoder.feed(stream[position : position + size]))
            position += size
        messages.extend(decoder.feed(stream[position:]))
    return decoder, messages


def test_fields_comments_and_line_endings() -> None:
    decoder, messages = decode_all(STREAM)
    assert messages == [
        SseMessage(event="bucket", data='{"a": 1}', last_event_id="1"),
        SseMessage(event="message", data="first\nsecond", last_event_id="2"),
        SseMessage(event="message", data="", last_event_id="3"),
    ]
    assert decoder.retry_ms == 1500
    assert decoder.comments == 1


@given(st.lists(st.integers(min_value=0, max_value=7), max_size=40))
def test_any_chunking_gives_the_same_messages(chunks: list[int]) -> None:
    assert decode_all(STREAM, chunks)[1] == decode_all(STREAM)[1]


def test_cr_at_chunk_end_is_not_a_blank_line() -> None:
    decoder = SseDecoder()
    assert decoder.feed("data: x\r") == []
    # If the held-back CR were a line end, the LF would end an empty line and dispatch early.
    assert decoder.feed("\ndata: y\r\n") == []
    assert decoder.feed("\r\n") == [SseMessage(event="message", data="x\ny", last_event_id="")]


def test_id_only_block_moves_last_event_id_without_dispatch() -> None:
    decoder, messages = decode_all("id: 7\n\n")
    assert messages == []
    assert decoder.last_event_id == "7"


def test_id_with_nul_and_bad_retry_are_ignored() -> None:
    decoder, messages = decode_all("id: 1\nid: 2\0x\nretry: 12a\ndata: d\n\n")
    assert messages == [SseMessage(event="message", data="d", last_event_id="1")]
    assert decoder.retry_ms is None


def test_leading_bom_is_dropped_once() -> None:
    _, messages = decode_all("\ufeffdata: a\n\n")
    assert messages[0].data == "a"


def test_unknown_fields_and_incomplete_tail_do_not_dispatch() -> None:
    _, messages = decode_all("foo: bar\ndata: never finished\n")
    assert messages == []


def test_oversized_line_is_dropped_and_counted_then_decoding_resumes() -> None:
    decoder = SseDecoder(max_line=64)
    assert decoder.feed("data: " + "x" * 100) == []
    assert decoder.feed("x" * 100 + "\n\n") == []
    assert decoder.dropped == 1
    assert decoder.feed("data: ok\n\n") == [
        SseMessage(event="message", data="ok", last_event_id="")
    ]


def test_oversized_event_is_dropped_whole() -> None:
    decoder = SseDecoder(max_line=64, max_event=100)
    text = "".join(f"data: {'y' * 40}\n" for _ in range(4)) + "\n" + "data: after\n\n"
    assert decoder.feed(text) == [SseMessage(event="message", data="after", last_event_id="")]
    assert decoder.dropped == 1
