"""Whether the database's disk can take writes, for /readyz.

A full disk fails each write with SQLITE_FULL (answered 507, nothing changed) while reads still work, so
"the database answers" is not "ready". Not ready: the disk has less than MIN_FREE_BYTES free, or a write
found it full and not that much has been freed since (a big ingest can fail with more than that free).
Writes are refused (DiskFull, answered 507) for as long as that failure stands: a small write could still fit
in the last free pages, and one that does would make "every write waits for space" untrue and the answers
to the same client depend on the size of its request.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

MIN_FREE_BYTES = 4 * 1024 * 1024


class DiskFull(Exception):
    """A write refused before it began: an earlier write found the disk full and space was not freed since."""


class StorageWatch:
    """Free space where the database lives, and the last write that found the disk full."""

    def __init__(self, db_path: Path) -> None:
        self._folder = db_path.resolve().parent
        self._lock = threading.Lock()
        self._free_when_full: int | None = None

    def free_bytes(self) -> int:
        return shutil.disk_usage(self._folder).free

    def write_found_disk_full(self) -> None:
        with self._lock:
            self._free_when_full = self.free_bytes()

    def found_full(self, free: int) -> bool:
        """Whether a write found the disk full and not MIN_FREE_BYTES were freed since."""
        with self._lock:
            if self._free_when_full is not None and free >= self._free_when_full + MIN_FREE_BYTES:
                self._free_when_full = None  # space was freed since the failure
            return self._free_when_full is not None

    def check_writable(self) -> None:
        if self.found_full(self.free_bytes()):
            raise DiskFull

    def not_ready(self) -> str | None:
        """Why writes cannot be taken now, in plain words; None when they can."""
        free = self.free_bytes()
        if free < MIN_FREE_BYTES or self.found_full(free):
            return f"the database's disk is full ({free // 1024} KiB free): writes fail until space is freed"
        return None
