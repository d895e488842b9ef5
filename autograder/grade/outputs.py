"""Writing the class outputs: every file whole or not at all, every student string as data.

Every file a class run, a merge or a review writes (``results.json``, the grade sheets,
``grades.json``, ``written_answers.json``, the class report, the review pages,
``marks.csv``) goes through :func:`write_bytes`: a temporary file in the same folder,
flushed and fsynced, then renamed over the target, so a kill at any moment leaves either
the previous file or the new one, never a truncated one.

Text a student controls can hold anything the grader can read: lone surrogates (a file
name that is not UTF-8, a ``"\\ud800"`` escape in a notebook's JSON), NUL and control
characters. :func:`json_safe` is the one rule for all of it: a string that UTF-8 cannot
encode has those characters written as backslash escapes (``\\udcff``), visible and
re-readable; the writers encode with the same rule, so no student string can make a
write fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

ENCODE_ERRORS = "backslashreplace"  # a lone surrogate becomes the text \udcff


def json_safe(value):
    """``value`` with every string encodable as UTF-8 (a lone surrogate from an undecodable
    file name becomes the text ``\\udcff``), so the JSON written from it is always valid."""
    if isinstance(value, str):
        return value.encode("utf-8", ENCODE_ERRORS).decode("utf-8")
    if isinstance(value, dict):
        return {json_safe(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system syncs a directory
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _replace(tmp: str, path: Path) -> None:
    """The one step that makes a new file visible (a test stops a command just before it)."""
    os.replace(tmp, path)


def write_bytes(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temporary file beside it, fsync, rename)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        _replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_folder(path.parent)
    return path


def write_text(path: Path, text: str) -> Path:
    """``text`` as UTF-8, atomically; characters UTF-8 cannot hold become backslash escapes."""
    return write_bytes(path, text.encode("utf-8", ENCODE_ERRORS))


def write_json(path: Path, value, *, indent: int = 1) -> Path:
    """``value`` as JSON (UTF-8, non-ASCII kept), atomically; always re-readable (:func:`json_safe`)."""
    try:  # nearly always every string encodes: no need to walk the value first (a class's pairs are 10^5 dicts)
        data = (json.dumps(value, ensure_ascii=False, indent=indent) + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate somewhere: the same bytes json_safe's rule gives
        data = (json.dumps(json_safe(value), ensure_ascii=False, indent=indent) + "\n").encode("utf-8", ENCODE_ERRORS)
    return write_bytes(path, data)


@contextlib.contextmanager
def open_text(path: Path):
    """A text file to write (a CSV writer's), committed atomically when the block ends
    without an error; on an error nothing changes at ``path``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors=ENCODE_ERRORS, newline="") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        _replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_folder(path.parent)
