"""The few SQL expressions SQLite and PostgreSQL spell differently; everything else is written once.

A connection carries its dialect (``conn.dialect``), so a query that needs one of these asks for it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

IN_CHUNK = 500
"""Values bound in one SQLite ``IN (…)``: well under its limit on bound values (set by its build, 32,766 by
default), which a shared-cause group, an ingest or an SLO pass at 50,000 models can pass."""


@dataclass(frozen=True)
class Dialect:
    name: str

    @property
    def postgres(self) -> bool:
        return self.name == "postgresql"

    def one_of(self, column: str, values: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        """(condition, its bound values) for "``column`` is one of ``values``", one statement each: every list
        the fleet's size bounds goes through this. PostgreSQL binds the whole list as one array (one statement,
        one value: its limit of 65,535 values never comes near, and its driver does not parse a statement of
        500 placeholders per chunk); SQLite, which has no arrays, gets chunks of ``IN (?, …)``. None for no
        values."""
        if not values:
            return
        if self.postgres:
            yield f"{column} = ANY(?)", [list(values)]
            return
        for start in range(0, len(values), IN_CHUNK):
            chunk = values[start : start + IN_CHUNK]
            yield f"{column} IN ({','.join('?' * len(chunk))})", list(chunk)

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
