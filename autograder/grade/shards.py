"""Grading a class on several machines: ``m5 grade --shard K/N`` grades a fixed 1/N of
the class, ``m5 merge`` joins the N outputs into what one unsharded run writes.

A submission belongs to shard ``1 + sha256(relative path) mod N``: the same on every
machine and on every run, whatever order the folders are listed in. Each shard writes,
beside its submissions' ``results.json`` folders (named as the whole class names them),
``grades.json`` (which every class run writes): its rows of the grade sheet, with each
submission's place in the whole class and the shard it is. The merge checks that the N files come from one class split one way, every
submission exactly once, before it writes anything; then it copies the result folders
and writes ``grades.csv`` (and the LMS export) from the rows, in class order, with the
same writers an unsharded run uses, so the sheets are the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import asdict
from pathlib import Path

from autograder.grade import class_report, report, written

ROWS_FILE = "grades.json"  # every class run writes it; a shard's names its shard
FORMAT = 1
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


def write_rows_file(
    out: Path, shard: tuple[int, int] | None, class_size: int, indices: list[int], results: list, records: list[dict]
) -> Path:
    """``out/grades.json``: the run's grade-sheet rows (``results``: SubmissionResults or
    GradeRows), each with its index in the class and its class-report record; ``shard``
    (K, N) for a shard, None for a whole class."""
    rows = [{"index": i, **asdict(report.GradeRow.of(r)), "record": record} for i, r, record in zip(indices, results, records)]
    document = {"format": FORMAT, "shard": list(shard) if shard else None, "class_size": class_size, "rows": rows}
    path = out / ROWS_FILE
    path.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path


def _read(folder: Path) -> dict:
    path = folder / ROWS_FILE
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ShardError(f"{folder}: no {ROWS_FILE} (not the output of m5 grade)") from None
    except (OSError, ValueError) as exc:
        raise ShardError(f"{path}: unreadable ({exc})") from None
    ok = (
        isinstance(document, dict)
        and document.get("format") == FORMAT
        and isinstance(document.get("shard"), list)
        and len(document["shard"]) == 2
        and all(type(v) is int for v in document["shard"])
        and type(document.get("class_size")) is int
        and isinstance(document.get("rows"), list)
    )
    if not ok:
        raise ShardError(f"{path}: not a shard of a class (m5 grade --shard K/N writes one)")
    return document


def merge(folders: list[Path], out: Path, csv_format: str = "m5", lang: str = "en") -> list[report.GradeRow]:
    """Join shard outputs into ``out`` (see the module docstring); returns the rows in class order.

    Refused, with nothing written, unless the folders hold shards 1..N of one split of
    one class, each once, and their rows cover every submission exactly once; ``out``
    must not be one of them."""
    folders = [Path(f) for f in folders]
    if not folders:
        raise ShardError("merge: give the output folders of every shard")
    documents = [_read(f) for f in folders]
    n = documents[0]["shard"][1]
    size = documents[0]["class_size"]
    seen_shards: dict[int, Path] = {}
    for folder, document in zip(folders, documents):
        k, m = document["shard"]
        if m != n or document["class_size"] != size:
            raise ShardError(
                f"{folder}: shard {k}/{m} of a class of {document['class_size']}, the first folder "
                f"holds a shard of {n} of a class of {size}"
            )
        if k in seen_shards:
            raise ShardError(f"{folder}: shard {k}/{n} again (also in {seen_shards[k]})")
        seen_shards[k] = folder
    missing = sorted(set(range(1, n + 1)) - set(seen_shards))
    if missing:
        raise ShardError(f"merge: shard(s) {', '.join(f'{k}/{n}' for k in missing)} missing")
    rows: dict[int, report.GradeRow] = {}
    records: dict[int, dict] = {}
    for folder, document in zip(folders, documents):
        for number, entry in enumerate(document["rows"], 1):
            index = entry.get("index") if isinstance(entry, dict) else None
            if type(index) is not int or not 0 <= index < size:
                raise ShardError(f"{folder / ROWS_FILE}: row {number} has no valid index")
            if index in rows:
                raise ShardError(f"{folder / ROWS_FILE}: submission {index} is also in another shard")
            try:
                rows[index] = report.GradeRow.from_dict(entry)
                records[index] = _record(entry["record"])
            except (KeyError, TypeError, ValueError) as exc:
                raise ShardError(f"{folder / ROWS_FILE}: row {number} is malformed ({exc})") from None
    if len(rows) != size:
        raise ShardError(f"merge: {size - len(rows)} of the class's {size} submissions are in no shard")
    resolved_out = out.resolve()
    if any(resolved_out == f.resolve() for f in folders):
        raise ShardError(f"merge: --out {out} is one of the shard folders")
    ordered = [rows[i] for i in range(size)]
    out.mkdir(parents=True, exist_ok=True)
    skip = {ROWS_FILE, *report.CLASS_FILES}
    for folder in folders:
        for child in sorted(folder.iterdir()):
            if child.name in skip:
                continue
            target = out / child.name
            if child.is_dir() and not child.is_symlink():
                shutil.copytree(child, target, symlinks=True, dirs_exist_ok=True)
            elif child.is_file() and not child.is_symlink():
                shutil.copy2(child, target)
    report.write_grades_csv(ordered, out / "grades.csv")
    if csv_format != "m5":
        report.write_lms_csv(ordered, out / f"grades_{csv_format}.csv", csv_format)
    class_report.write([records[i] for i in range(size)], out, lang)
    answers = []
    for folder in folders:
        try:
            answers += json.loads((folder / written.ANSWERS_FILE).read_text(encoding="utf-8"))["submissions"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a shard graded before answers were kept: nothing to merge
    written.write_class_answers(out, sorted(answers, key=lambda e: str(e.get("label", ""))))
    write_rows_file(out, None, size, list(range(size)), ordered, [records[i] for i in range(size)])
    return ordered


def _record(data) -> dict:
    """A class-report record read back from a shard file, its fields' kinds checked."""
    kinds = {
        "label": str,
        "score": (int, float),
        "maximum": (int, float),
        "graded": bool,
        "error": str,
        "seconds": (int, float),
        "failed": list,
        "mistakes": list,
        "answers": list,
        "limits": list,
    }
    if not isinstance(data, dict) or any(not isinstance(data.get(k), kind) for k, kind in kinds.items()):
        raise ValueError("its class-report record is malformed")
    if not isinstance(data.get("code", ""), str) or any(type(p) is not int for p in data.get("fingerprints", [])):
        raise ValueError("its code or fingerprints are malformed")
    return data
