"""The server's log: uvicorn's and fleetdesk's lines, each one sanitized as it is written.

Log lines carry data (a model id in a path, an exception's message, a traceback quoting both) to terminals
and log viewers that act on escape sequences, so sanitizing them at each call site would leave the next one
out: the formatter sanitizes every record, tracebacks included.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterator
from typing import Any

from uvicorn.logging import DefaultFormatter

from fleetdesk.domain.text import sanitize


class SanitizingFormatter(DefaultFormatter):
    """uvicorn's plain format with data made inert: a message is one sanitized line (a line break in a model
    id cannot forge another record), a traceback keeps its frame lines, each sanitized, and says each
    exception on one line."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        record.message = sanitize(record.message)
        return super().formatMessage(record)

    def formatException(self, ei: Any) -> str:  # noqa: N802 - logging's name
        return "\n".join(_exception_lines(traceback.TracebackException(*ei[:3])))

    def formatStack(self, stack_info: str) -> str:  # noqa: N802 - logging's name
        return "\n".join(sanitize(line) for line in stack_info.split("\n"))


def _exception_lines(error: traceback.TracebackException) -> Iterator[str]:
    """The lines of a traceback as the standard one reads, each sanitized, each exception's text on one line."""
    if error.__cause__ is not None:
        yield from _exception_lines(error.__cause__)
        yield "The above exception was the direct cause of the following exception:"
    elif error.__context__ is not None and not error.__suppress_context__:
        yield from _exception_lines(error.__context__)
        yield "During handling of the above exception, another exception occurred:"
    if error.stack:
        yield "Traceback (most recent call last):"
        for frame in error.stack.format():
            yield from (sanitize(line) for line in frame.rstrip("\n").split("\n"))
    yield sanitize("".join(error.format_exception_only()).removesuffix("\n"))


def log_config() -> dict[str, Any]:
    """A logging dictConfig for uvicorn.Config: uvicorn's and fleetdesk.server's lines to stderr, sanitized.

    No colours: they are escape sequences of our own, and would come out escaped. The request log stays off
    (query strings must never reach a log), as it was with uvicorn's own configuration and access_log=False.
    fleetdesk.server keeps the level it inherits (uvicorn sets its own from --log-level).
    """
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "sanitized": {
                "()": SanitizingFormatter,
                "fmt": "%(levelprefix)s %(message)s",
                "use_colors": False,
            }
        },
        "handlers": {
            "stderr": {
                "formatter": "sanitized",
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
            }
        },
        "loggers": {
            "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
            "uvicorn.error": {"level": "INFO"},
            "fleetdesk.server": {"handlers": ["stderr"]},
        },
    }
