"""Argument types for the command line: a value outside what the command can use is a usage error (exit 2),
said on one line, before anything starts; never a traceback from deep inside."""

from __future__ import annotations

import argparse
import math
import unicodedata
from collections.abc import Callable

from fleetdesk.domain.text import sanitize
from fleetdesk.domain.urls import http_url_problem

TEXT_MAX = 256


def whole(low: int, high: int, what: str = "a whole number") -> Callable[[str], int]:
    """An int in [low, high]."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what}: {sanitize(repr(text), 40)}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"must be from {low} to {high}, not {sanitize(text, 40)}"
            )
        return value

    return parse


port = whole(0, 65535, "a port number")


def number(low: float, high: float) -> Callable[[str], float]:
    """A finite float in [low, high] (float() alone also reads inf and nan)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {sanitize(repr(text), 40)}") from None
        if not (math.isfinite(value) and low <= value <= high):
            raise argparse.ArgumentTypeError(
                f"must be a number from {low:g} to {high:g}, not {sanitize(text, 40)}"
            )
        return value

    return parse


def identifier(value: str) -> str:
    """An id to look up as it is (a registry id may hold any character): UTF-8, 1 to TEXT_MAX characters.

    argv that was not UTF-8 arrives with surrogates, which nothing can encode: it could never match an id.
    """
    if any(0xD800 <= ord(char) <= 0xDFFF for char in value):
        raise argparse.ArgumentTypeError(f"not UTF-8 text: {sanitize(value, 60)}")
    if not value or len(value) > TEXT_MAX:
        raise argparse.ArgumentTypeError(f"must be 1 to {TEXT_MAX} characters")
    return value


def name(value: str) -> str:
    """A name a person picks (user, team, fleet): an identifier without control or invisible characters."""
    identifier(value)
    if any(unicodedata.category(char) in ("Cc", "Cf") for char in value) or not value.strip():
        raise argparse.ArgumentTypeError(
            f"holds control or invisible characters, or only spaces: {sanitize(value, 60)}"
        )
    return value


def url(value: str) -> str:
    """An http(s) URL (fleetdesk.domain.urls): no line break or template can ride along into what it is printed in."""
    problem = http_url_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{problem}, not {sanitize(repr(value), 60)}")
    return value
