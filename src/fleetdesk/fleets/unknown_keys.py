"""Keys a file holds that its schema does not know: a misspelled field must be an error, not vanish.

The schemas themselves keep pydantic's default of ignoring unknown keys, because the same models are the wire
contract, where a newer server may add fields an older console must not choke on. A file a person writes is
checked against them here instead, key by key.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel


def unknown_keys(
    schema: type[BaseModel], raw: Any, loc: tuple[str | int, ...] = ()
) -> Iterator[dict[str, Any]]:
    """Each key in ``raw`` that ``schema`` (and the models inside it) does not know, as a pydantic-style error."""
    if not isinstance(raw, dict):
        return
    known: dict[str, Any] = {}
    for name, field in schema.model_fields.items():
        for key in (
            name,
            field.alias,
            field.validation_alias if isinstance(field.validation_alias, str) else None,
        ):
            if key:
                known[key] = field.annotation
    for key, value in raw.items():
        if key not in known:
            yield {
                "loc": (*loc, key),
                "msg": "unknown key (misspelled, or not a field here)",
                "type": "extra_forbidden",
                "input": key,
            }
            continue
        yield from _inside(known[key], value, (*loc, key))


def _inside(annotation: Any, value: Any, loc: tuple[str | int, ...]) -> Iterator[dict[str, Any]]:
    """Walk into a value as its annotation says: a model, or lists, tuples, dicts and unions of them."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield from unknown_keys(annotation, value, loc)
        return
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        yield from _inside(args[0], value, loc)
    elif origin in (typing.Union, types.UnionType):
        models = [arg for arg in args if isinstance(arg, type) and issubclass(arg, BaseModel)]
        if len(models) == 1:
            yield from _inside(models[0], value, loc)
    elif origin in (list, tuple, set, frozenset) and args and isinstance(value, list):
        for index, item in enumerate(value):
            yield from _inside(args[0], item, (*loc, index))
    elif origin is dict and len(args) == 2 and isinstance(value, dict):
        for key, item in value.items():
            yield from _inside(args[1], item, (*loc, key))
