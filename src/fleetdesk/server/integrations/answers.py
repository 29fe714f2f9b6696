"""What the server reads of an answer from a service it calls (Prometheus, Alertmanager, a webhook): at most
MAX_ANSWER_BYTES, so an address that is not the service it should be, or a hostile one, cannot grow the
server's memory without bound (httpx alone reads a whole answer, decompressed, into memory)."""

from __future__ import annotations

from typing import Any

import httpx

MAX_ANSWER_BYTES = 32 * 1024 * 1024
"""A Prometheus range query over 28 days for one model is about 100 KB; a paging target answers a line."""

_FRAMING = {"content-encoding", "content-length", "transfer-encoding"}


class AnswerTooLarge(Exception):
    """The answer passed MAX_ANSWER_BYTES; the message says so in plain words."""


def post_bounded(http: httpx.Client, url: str, **request: Any) -> httpx.Response:
    """``http.post(url, **request)``, its body read only up to MAX_ANSWER_BYTES (decoded), else AnswerTooLarge."""
    too_large = AnswerTooLarge(f"answered more than {MAX_ANSWER_BYTES // 2**20} MiB")
    with http.stream("POST", url, **request) as response:
        declared = response.headers.get("content-length", "")
        if declared.isascii() and declared.isdigit() and int(declared) > MAX_ANSWER_BYTES:
            raise too_large
        body = bytearray()
        for chunk in response.iter_bytes():  # decoded: a compressed bomb is held to the limit too
            body += chunk
            if len(body) > MAX_ANSWER_BYTES:
                raise too_large
    # The body is decoded already: the new answer must not claim an encoding or another length.
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _FRAMING]
    return httpx.Response(
        response.status_code, headers=headers, content=bytes(body), request=response.request
    )
