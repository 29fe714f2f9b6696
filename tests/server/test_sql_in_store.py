"""SQL lives in the store package only: every other module of fleetdesk calls its functions.

So a change of schema or dialect is a change of ``fleetdesk.server.store`` alone, and a reader finds every
statement that touches a table in the module named after it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import fleetdesk

PACKAGE = Path(fleetdesk.__file__).parent
STORE = PACKAGE / "server" / "store"

# A statement's opening words, as the store writes them: upper-case keywords followed by what they take
# (or by the end of an f-string's literal part, as in f"SELECT {columns} FROM …"). Upper case only, so
# prose ("select a model", "update the registry") and enum values ("UPDATE = 'update'") pass.
STATEMENT = re.compile(
    r"\bSELECT\s+([\w*(\"']|$)|\bINSERT\s+INTO\s|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\s"
    r"|\bPRAGMA\s+\w+"
)


def sql_outside_store() -> list[str]:
    """``path:line: text`` of every string constant outside the store package that holds a statement."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(STORE):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            # f-strings' literal parts are Constant nodes too, so a statement built with {…} is found.
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and STATEMENT.search(node.value)
            ):
                found.append(
                    f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value.strip()[:80]}"
                )
    return found


def test_the_pattern_finds_statements_and_passes_prose() -> None:
    for sql in (
        "SELECT 1",
        "SELECT * FROM models",
        'SELECT id, "user" FROM tokens',
        "INSERT INTO events (type) VALUES (?)",
        "UPDATE models SET health = ?",
        "DELETE FROM idempotency WHERE created_at < ?",
    ):
        assert STATEMENT.search(sql), sql
    for sql in ("SELECT ", "SELECT id, "):  # f-string parts before a {…}
        assert STATEMENT.search(sql), sql
    for prose in ("update", "select a model, then press r", "Update the registry", "UPDATE"):
        assert not STATEMENT.search(prose), prose


def test_no_sql_outside_the_store_package() -> None:
    found = sql_outside_store()
    assert not found, (
        "SQL outside fleetdesk.server.store (move it to a store module):\n" + "\n".join(found)
    )
