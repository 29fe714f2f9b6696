"""Keys a file holds that its schema does not know: a misspelled field must be an error, not vanish.

The schemas themselves keep pydantic's default of ignoring unknown keys, because the same models are the wire
contract, where a newer server may add fields an older console must not choke on. A file a person writes is
checked against them here instead, key by key.
"""

from __future__ import annotations

import functools
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
    known = _known_keys(schema)
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


@functools.cache
def _known_keys(schema: type[BaseModel]) -> dict[str, Any]:
    """A schema's keys (names and aliases) and their annotations: worked out once, not for every one of a
    large fleet's 100,000 records."""
    known: dict[str, Any] = {}
    for name, field in schema.model_fields.items():
        for key in (
            name,
            field.alias,
            field.validation_alias if isinstance(field.validation_alias, str) else None,
        ):
            if key:
                known[key] = field.annotation
    return known


def _inside(annotation: Any, value: Any, loc: tuple[str | int, ...]) -> Iterator[dict[str, Any]]:
    """Walk into a value as its annotation says: a model, or lists, tuples, dicts and unions of them."""
    kind, inner = _shape(annotation)
    if kind == "model":
        yield from unknown_keys(inner, value, loc)
    elif kind == "items" and isinstance(value, list):
        for index, item in enumerate(value):
            yield from _inside(inner, item, (*loc, index))
    elif kind == "values" and isinstance(value, dict):
        for key, item in value.items():
            yield from _inside(inner, item, (*loc, key))


_SHAPES: dict[int, tuple[Any, tuple[str, Any]]] = {}
"""_shape's answers by the annotation's id (annotations need not be hashable), each kept with its annotation."""


def _shape(annotation: Any) -> tuple[str, Any]:
    """What a value of this annotation holds: ("model", its schema), ("items", their annotation), ("values",
    theirs) or ("leaf", None). Worked out once per annotation: a large fleet's records ask a million times."""
    known = _SHAPES.get(id(annotation))
    if known is not None and known[0] is annotation:
        return known[1]
    shape = _shape_of(annotation)
    _SHAPES[id(annotation)] = (annotation, shape)
    return shape


def _shape_of(annotation: Any) -> tuple[str, Any]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "model", annotation
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _shape_of(args[0])
    if origin in (typing.Union, types.UnionType):
        models = [arg for arg in args if isinstance(arg, type) and issubclass(arg, BaseModel)]
        return ("model", models[0]) if len(models) == 1 else ("leaf", None)
    if origin in (list, tuple, set, frozenset) and args:
        return "items", args[0]
    if origin is dict and len(args) == 2:
        return "values", args[1]
    return "leaf", None
