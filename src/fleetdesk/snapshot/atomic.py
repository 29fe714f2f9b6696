"""Writing files so that their final names only ever hold complete files.

Each file's bytes go to a temporary file in the same directory (same
filesystem, so the rename is atomic), are flushed and fsynced; only when every
file of the group is complete are the temporary files renamed over the final
names, in the order given, and the directories fsynced so the renames survive
a power cut. A crash or a full disk while writing leaves every final name as
it was (at worst a hidden ``.NAME.tmp-*`` file stays behind after a hard
kill); an error removes the temporary files.
"""

from __future__ import annotations

import errno
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

TEMP_MARK = ".tmp-"

Chunks = bytes | Iterable[bytes]


class AtomicWriteError(Exception):
    """A file could not be written; whatever was under its final name before is untouched."""

    def __init__(self, message: str, errno_: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno_


def write_atomic(
    path: Path,
    chunks: Chunks,
    *,
    mode: int = 0o644,
    before_rename: Callable[[Path], None] | None = None,
) -> None:
    """Write one file atomically (see write_files)."""
    write_files({path: chunks}, mode=mode, before_rename=before_rename)


def write_files(
    files: Mapping[Path, Chunks],
    *,
    mode: int = 0o644,
    before_rename: Callable[[Path], None] | None = None,
) -> None:
    """Write every file to a synced temp file, then rename them all in order; ``before_rename`` is a crash-test hook."""
    staged: list[tuple[Path, Path]] = []
    renamed: list[Path] = []
    current = next(iter(files), Path("."))
    try:
        for path, chunks in files.items():
            current = path
            staged.append((_stage(path, chunks, mode), path))
        for temp, path in staged:
            current = path
            if before_rename is not None:
                before_rename(temp)
            os.replace(temp, path)
            renamed.append(path)
        for directory in dict.fromkeys(path.parent for path in files):
            _fsync_directory(directory)
    except BaseException as error:
        for temp, _ in staged:
            temp.unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise _failure(current, error, renamed) from None
        raise


def remove_leftovers(directory: Path, suffixes: Iterable[str], older_than: float) -> list[Path]:
    """Delete temp files of killed writers (``.NAME.SUFFIX.tmp-*``) untouched for ``older_than`` seconds."""
    removed = []
    now = time.time()
    for suffix in suffixes:
        for temp in directory.glob(f".*{suffix}{TEMP_MARK}*"):
            try:
                # Young ones may belong to a writer still running.
                if now - temp.stat().st_mtime > older_than:
                    temp.unlink()
                    removed.append(temp)
            except FileNotFoundError:
                continue
    return removed


def _stage(path: Path, chunks: Chunks, mode: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}{TEMP_MARK}", dir=path.parent)
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in [chunks] if isinstance(chunks, bytes) else chunks:
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _failure(path: Path, error: OSError, renamed: list[Path]) -> AtomicWriteError:
    if error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        why = "the disk is full (or the file is over the size limit)"
    else:
        why = error.strerror or type(error).__name__
    code = errno.errorcode.get(error.errno or 0, "error")
    done = (
        f"already replaced: {', '.join(str(item) for item in renamed)}"
        if renamed
        else "nothing was replaced"
    )
    return AtomicWriteError(f"cannot write {path}: {why} ({code}); {done}", error.errno)
