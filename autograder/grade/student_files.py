"""Read student files safely: no links followed, regular files only, size checked first.

Every byte of a submission is hostile. The grader often runs as root, so a symlink
planted in a submission folder could point at a root-only file or another student's
work; a FIFO would hang the reader and ``/dev/zero`` would never end. Everything the
grader reads from a submission goes through :func:`read_bytes`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# Documented caps (docs/sandbox.md): a notebook with outputs stripped is a few hundred
# kB; a notebook with embedded figures rarely passes a few MB.
MAX_NOTEBOOK_BYTES = 16 << 20
MAX_PYTHON_BYTES = 1 << 20


class SubmissionError(Exception):
    """The submission cannot be read at all: one line that says why."""


def read_bytes(path: Path, limit: int) -> bytes:
    """The content of ``path``: a regular file, opened without following a final
    symlink, at most ``limit`` bytes (checked on the open descriptor before reading)."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        raise SubmissionError(f"{path}: no such file") from None
    except OSError as exc:
        if os.path.islink(path):
            raise SubmissionError(f"{path}: refused: a symbolic link, not a file") from None
        raise SubmissionError(f"{path}: cannot open ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = (
                "a directory"
                if stat.S_ISDIR(info.st_mode)
                else "a FIFO"
                if stat.S_ISFIFO(info.st_mode)
                else "a device"
                if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
                else "a socket"
                if stat.S_ISSOCK(info.st_mode)
                else "not a regular file"
            )
            raise SubmissionError(f"{path}: refused: {kind}, not a regular file")
        if info.st_size > limit:
            raise SubmissionError(f"{path}: refused: {info.st_size} bytes, more than the {limit} allowed")
        chunks, total = [], 0
        while True:  # the file may grow while we read: never take more than the limit
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise SubmissionError(f"{path}: refused: more than the {limit} bytes allowed")
        return b"".join(chunks)
    finally:
        os.close(fd)


def as_mapping(value) -> dict:
    """``value`` if it is a dict, else an empty one: notebook metadata is student-controlled
    JSON and may hold a list or a string where a dict belongs."""
    return value if isinstance(value, dict) else {}


def source_text(source) -> str:
    """A cell's source as text: a string, or a list of pieces joined (non-strings as str)."""
    if isinstance(source, list):
        return "".join(piece if isinstance(piece, str) else str(piece) for piece in source)
    return source if isinstance(source, str) else str(source)
