"""Loading a snapshot file: read, parse, lift older versions, validate; every failure is one plain line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fleetdesk.domain.text import sanitize
from fleetdesk.settings.local_files import MIB, FileRefused, read_regular_file
from fleetdesk.snapshot.bundle import MIGRATIONS, SCHEMA_VERSION, Snapshot

MAX_BYTES = 128 * MIB
"""A large-fleet snapshot is a few MB (50,000 models, about 40); anything near this is not one (and would only
exhaust memory: parsing takes several times the file's size)."""


class SnapshotError(Exception):
    """The file is not a snapshot this fleetdesk can open; the message says why, on one line."""


@dataclass(frozen=True, slots=True)
class Reopened:
    """A loaded snapshot and the schema version its file was written in."""

    snapshot: Snapshot
    file_version: int

    @property
    def migrated(self) -> bool:
        return self.file_version != SCHEMA_VERSION


def load_snapshot(path: Path) -> Reopened:
    """Read and validate the snapshot at ``path``; raises SnapshotError with a one-line reason."""
    where = sanitize(str(path))
    try:
        data = read_regular_file(path, MAX_BYTES)
    except FileNotFoundError:
        raise SnapshotError(f"{where}: no such file") from None
    except FileRefused as error:
        raise SnapshotError(f"{where}: {error.strerror}; not opening it") from None
    except OSError as error:
        raise SnapshotError(
            f"{where}: cannot read it ({sanitize(error.strerror or type(error).__name__)})"
        ) from None
    return parse_snapshot(data, where)


def parse_snapshot(data: bytes, where: str = "snapshot") -> Reopened:
    """Validate snapshot bytes, lifting older schema versions to the current one."""
    if not data.strip():
        raise SnapshotError(f"{where}: the file is empty (an interrupted copy?)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SnapshotError(
            f"{where}: not UTF-8 text (bad byte at offset {error.start}); the file is corrupted"
        ) from None
    try:
        document = json.loads(text)
    except RecursionError:
        raise SnapshotError(
            f"{where}: nested far deeper than any snapshot; the file is corrupted"
        ) from None
    except json.JSONDecodeError as error:
        # A string cannot span lines in JSON, so an unterminated one means the end of the file was reached.
        if not text[error.pos :].strip() or error.msg.startswith("Unterminated string"):
            raise SnapshotError(
                f"{where}: the file ends early (truncated at byte {len(data)}); "
                "ask for it again or use the .md summary"
            ) from None
        raise SnapshotError(
            f"{where}: not valid JSON at line {error.lineno} column {error.colno} "
            f"({sanitize(error.msg)}); the file is corrupted"
        ) from None
    version = _version(document, where)
    for step_from in range(version, SCHEMA_VERSION):
        document = _validated_step(document, step_from, where)
    try:
        snapshot = Snapshot.model_validate(document)
    except ValidationError as error:
        raise SnapshotError(
            f"{where}: not a valid version {version} snapshot: {_first(error)}"
        ) from None
    return Reopened(snapshot=snapshot, file_version=version)


def _version(document: Any, where: str) -> int:
    if not isinstance(document, dict) or "schema_version" not in document:
        raise SnapshotError(f"{where}: not a fleetdesk snapshot (no schema_version field)")
    version = document["schema_version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SnapshotError(
            f"{where}: schema_version {sanitize(repr(version), 40)} is not a snapshot version"
        )
    if version > SCHEMA_VERSION:
        raise SnapshotError(
            f"{where}: snapshot schema version {version} is newer than this fleetdesk understands "
            f"(up to {SCHEMA_VERSION}); upgrade fleetdesk to open it"
        )
    if version != SCHEMA_VERSION and version not in MIGRATIONS:
        raise SnapshotError(f"{where}: snapshot schema version {version} is no longer supported")
    return version


def _validated_step(document: dict[str, Any], version: int, where: str) -> dict[str, Any]:
    try:
        return MIGRATIONS[version](document)
    except ValidationError as error:
        raise SnapshotError(
            f"{where}: not a valid version {version} snapshot: {_first(error)}"
        ) from None


def _first(error: ValidationError) -> str:
    details = error.errors(include_url=False, include_input=False)
    first = details[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "document"
    more = f" (and {len(details) - 1} more problems)" if len(details) > 1 else ""
    return sanitize(f"{where}: {first.get('msg', 'invalid')}{more}", 300)
