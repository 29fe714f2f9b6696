"""Reading a file a person named (on the command line, in settings): a regular file only, never past a limit.

A name can point at anything: a FIFO (opening it waits for a writer forever),
a device (``/dev/zero`` never ends), a directory, a socket, a file in /proc
that says it is empty and is not, a file that grows while it is read. Each is
refused with a plain reason instead of hanging or filling memory.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

KIB = 1024
MIB = 1024 * KIB

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


class FileRefused(OSError):
    """The file cannot be read as asked; ``strerror`` says why in plain words (existing OSError handlers show it)."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(why)
        self.strerror = why
        self.filename = str(path)


def read_regular_file(path: Path | str, limit: int) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed), at most ``limit`` of them, or FileRefused."""
    path = Path(path)
    _refuse_unless_regular(
        path, os.stat(path).st_mode
    )  # a socket cannot even be opened: say what it is
    # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; it is then refused below.
    fd = os.open(
        path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    )
    try:
        _refuse_unless_regular(
            path, os.fstat(fd).st_mode
        )  # what was opened, should the name have moved since
        if os.fstat(fd).st_size > limit:
            raise FileRefused(path, f"is larger than {_size(limit)}, more than any such file")
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        size = 0
        # Read one byte past the limit: st_size can lie (/proc) or grow while we read.
        while chunk := os.read(fd, min(MIB, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise FileRefused(path, f"is larger than {_size(limit)}, more than any such file")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _refuse_unless_regular(path: Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise FileRefused(path, f"is {kind}, not a regular file")


def _size(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit >= MIB else f"{limit // KIB} KiB"


def read_text_file(path: Path | str, limit: int) -> str:
    """read_regular_file as UTF-8 text (UnicodeDecodeError when it is not)."""
    return read_regular_file(path, limit).decode("utf-8")


def why_unreadable(error: OSError | UnicodeDecodeError) -> str:
    """Why a named file could not be read, in plain words ("is a FIFO (named pipe), not a regular file"), without
    the "[Errno N] ...: 'path'" wrapping str() of an OSError adds (the caller names the file once itself)."""
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 text (bad byte at offset {error.start})"
    return error.strerror or type(error).__name__
