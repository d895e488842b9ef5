"""Grading a class on several machines: ``m5 grade --shard K/N`` grades a fixed 1/N of
the class; ``m5 merge`` (:mod:`.merge`) joins the N outputs into what one unsharded run writes.

A submission belongs to shard ``1 + sha256(relative path) mod N``: the same on every
machine and on every run, whatever order the folders are listed in. Each shard writes,
beside its submissions' ``results.json`` folders (named as the whole class names them),
``grades.json`` (which every class run writes): its rows of the grade sheet, with each
submission's place in the whole class, the shard it is, and the run's identity: a digest
of the whole class as found (every submission's relative path and bytes) and of the
grader (its corpus key), so shards of different classes, of a changed class or of another
grader version are never merged.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from autograder.grade import outputs, report
from autograder.grade.student_files import SubmissionError, read_bytes

ROWS_FILE = "grades.json"  # every class run writes it; a shard's names its shard
# 2: with the run identity. A record's optional "outputs" (the digests of the similarity flags)
# came later without a new format: an older reader ignores it, a row without it reads as
# "not compared", and shards from before it have another grader identity, which m5 merge refuses.
FORMAT = 2
_SPEC = re.compile(r"([1-9][0-9]*)/([1-9][0-9]*)")


class ShardError(ValueError):
    """A bad ``--shard`` value, or shard outputs that cannot be merged (nothing is written)."""


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` as (K, N), 1 <= K <= N."""
    match = _SPEC.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None or not 1 <= int(match[1]) <= int(match[2]):
        raise ShardError(f"--shard: expected K/N with 1 <= K <= N (e.g. 2/3), got {text!r}")
    return int(match[1]), int(match[2])


def shard_of(relative: str, n: int) -> int:
    """The shard (1..n) of the submission found at ``relative``."""
    digest = hashlib.sha256(relative.encode("utf-8", "surrogatepass")).digest()
    return 1 + int.from_bytes(digest[:8], "big") % n


def select(found: list, shard: tuple[int, int]) -> list[int]:
    """Indices into ``found`` (the whole class, as discovered) of ``shard``'s submissions."""
    k, n = shard
    return [i for i, item in enumerate(found) if shard_of(item.relative or item.path.name, n) == k]


def class_identity(found: list, cap: int = 64 * 1024 * 1024) -> tuple[str, dict[str, str]]:
    """(a digest of the whole class as found, {relative path: the digest of that submission's
    bytes, or of why it was refused}). Shards of one class on any machine agree on both."""
    digests = {}
    for item in found:
        try:
            body = b"error:" + item.error.encode("utf-8", "backslashreplace") if item.error else read_bytes(item.path, cap)
        except (SubmissionError, OSError) as exc:
            body = b"unreadable:" + str(exc).encode("utf-8", "backslashreplace")
        digests[item.relative or item.path.name] = hashlib.sha256(body).hexdigest()
    return digest_of(digests), digests


def digest_of(digests: dict[str, str]) -> str:
    """One digest of {relative path: submission digest}, whatever their order."""
    whole = hashlib.sha256()
    for label in sorted(digests, key=lambda label: label.encode("utf-8", "surrogatepass")):
        whole.update(label.encode("utf-8", "surrogatepass") + b"\0" + digests[label].encode() + b"\0")
    return whole.hexdigest()


def digest_of_rows(rows: list[dict]) -> str:
    """The class digest of gradebook rows (each with ``label`` and ``digest``)."""
    return digest_of({row["label"]: row.get("digest", "") for row in rows})


# Text a gradebook row keeps besides the sheet's fields: the file's digest (is a regrade the same
# file?) and its submission time with where it came from (the late policy, grade/late.py).
EXTRA_ROW_KEYS = ("digest", "submitted", "time_source")


def row_extras(row) -> dict:
    """The :data:`EXTRA_ROW_KEYS` of a row dict (text; "" when absent or not text)."""
    data = row if isinstance(row, dict) else {}
    return {key: data[key] if isinstance(data.get(key), str) else "" for key in EXTRA_ROW_KEYS}


def write_rows_file(
    out: Path,
    shard: tuple[int, int] | None,
    class_size: int,
    indices: list[int],
    rows: list[dict],
    records: list[dict],
    run: dict | None = None,
    root: str | None = None,
) -> Path:
    """``out/grades.json``: the grade-sheet rows (dicts of :class:`report.GradeRow`'s fields, with
    the submission's ``digest``; or SubmissionResults or GradeRows), each with its index in the
    class and its class-report record; ``shard`` (K, N) for a shard, None for a whole class;
    ``run``: the run's identity (``{"class": ..., "grader": ...}``, see the module docstring);
    ``root``: the class folder the rows' paths are relative to (for ``m5 grade --update``)."""
    rows = [{"index": i, **report.row_dict(r), **row_extras(r), "record": record} for i, r, record in zip(indices, rows, records)]
    document = {
        "format": FORMAT,
        "shard": list(shard) if shard else None,
        "class_size": class_size,
        "run": run or {},
        "root": root,
        "rows": rows,
    }
    return outputs.write_json(out / ROWS_FILE, document)
