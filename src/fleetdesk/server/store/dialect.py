"""The few SQL expressions SQLite and PostgreSQL spell differently; everything else is written once.

A connection carries its dialect (``conn.dialect``), so a query that needs one of these asks for it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

_Value = TypeVar("_Value")

IN_CHUNK = 500
"""Values bound in one ``IN (…)``: well under either store's limit on bound values (SQLite's build sets its
own, 32,766 by default; PostgreSQL 65,535), which a shared-cause group, an ingest or an SLO pass at 50,000
models can pass."""


def in_chunks(values: Sequence[_Value]) -> Iterator[tuple[str, Sequence[_Value]]]:
    """(``?`` placeholders, values) for each chunk of ``values``: every ``IN (…)`` of a list the fleet's
    size bounds goes through this, one statement per chunk."""
    for start in range(0, len(values), IN_CHUNK):
        chunk = values[start : start + IN_CHUNK]
        yield ",".join("?" * len(chunk)), chunk


@dataclass(frozen=True)
class Dialect:
    name: str

    @property
    def postgres(self) -> bool:
        return self.name == "postgresql"

    def json_array(self, *columns: str) -> str:
        """A JSON array of these columns, as text."""
        joined = ", ".join(columns)
        return f"json_build_array({joined})::text" if self.postgres else f"json_array({joined})"

    def json_array_contains(self, column: str) -> str:
        """True when the JSON array in the text ``column`` holds the string bound to the next ``?``."""
        if self.postgres:
            return (
                f"EXISTS (SELECT 1 FROM json_array_elements_text({column}::json) AS e WHERE e = ?)"
            )
        return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE value = ?)"

    def json_array_length(self, column: str) -> str:
        return (
            f"json_array_length({column}::json)"
            if self.postgres
            else f"json_array_length({column})"
        )

    def greatest(self, *expressions: str) -> str:
        """The largest of these values (SQLite's scalar max)."""
        return f"{'greatest' if self.postgres else 'max'}({', '.join(expressions)})"


SQLITE = Dialect("sqlite")
POSTGRES = Dialect("postgresql")
