"""``m5 merge``: join the outputs of ``m5 grade --shard K/N`` into what one unsharded run writes.

Everything is checked before anything is written; a problem is refused in one line that
names the folder, the file and the cause (the CLI exits 2), and ``--out`` is left as it was:

* **places**: ``--out`` is neither a shard folder, nor inside one, nor holding one;
* **the split**: shards 1..N of one split, each once, of one class (the same class digest)
  graded by one grader (the same corpus key), every submission in exactly one shard;
* **the rows**: every field of its kind, every score finite and within 0..maximum, every
  maximum within the assignment's, each class-report record consistent with its row (its
  outputs digests, when it has them, a mapping of kernel name to a digest or null);
* **the files**: ``grades.json`` and ``written_answers.json`` regular files (never read
  through a link) of bounded size; every entry under a shard folder a directory or a
  regular file: a symbolic link, device, FIFO or socket anywhere is refused by name;
* **the targets**: every file goes under ``--out`` at the relative path it has in its
  shard, and no existing folder on the way there is a link.

Then the result folders are copied (regular files only, by content) and the sheets,
``grades.json``, the class report and ``written_answers.json`` are written with the same
writers an unsharded run uses (:mod:`.outputs`: atomic), so the sheets are the same bytes.
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path

from autograder.grade import class_report, gradebook, output_digest, outputs, report, written
from autograder.grade.score import assignment_total
from autograder.grade.shards import FORMAT, ROWS_FILE, ShardError, row_extras, write_rows_file
from autograder.grade.student_files import SubmissionError, read_bytes

MAX_JSON_BYTES = 512 * 1024 * 1024  # a class of thousands with every code kept is tens of MB
MAX_RESULT_BYTES = 64 * 1024 * 1024  # one results.json is a few kB
# Top-level names of a shard folder that the merge writes itself (never copied).
OWN_NAMES = frozenset({ROWS_FILE, *report.CLASS_FILES})
_KINDS = {
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
}


def _read_json(path: Path, what: str):
    """A JSON file of a shard: a regular file (no link), bounded; ShardError otherwise."""
    try:
        data = read_bytes(path, MAX_JSON_BYTES)
    except SubmissionError as exc:
        if "no such file" in str(exc):
            raise ShardError(f"{path.parent}: no {path.name} ({what})") from None
        raise ShardError(str(exc)) from None
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ShardError(f"{path}: unreadable ({type(exc).__name__})") from None


def _rows_document(folder: Path) -> dict:
    document = _read_json(folder / ROWS_FILE, "not the output of m5 grade")
    path = folder / ROWS_FILE
    if isinstance(document, dict) and document.get("format") == 1:
        raise ShardError(f"{path}: written by an older m5 grade, without the run's identity: grade this shard again")
    run = document.get("run") if isinstance(document, dict) else None
    ok = (
        isinstance(document, dict)
        and document.get("format") == FORMAT
        and isinstance(document.get("shard"), list)
        and len(document["shard"]) == 2
        and all(type(v) is int and v >= 1 for v in document["shard"])
        and document["shard"][0] <= document["shard"][1]
        and type(document.get("class_size")) is int
        and document["class_size"] >= 0
        and isinstance(run, dict)
        and all(isinstance(run.get(k), str) and run[k] for k in ("class", "grader"))
        and isinstance(document.get("rows"), list)
    )
    if not ok:
        raise ShardError(f"{path}: not a shard of a class (m5 grade --shard K/N writes one)")
    return document


def _check_places(folders: list[Path], out: Path) -> None:
    target = out.resolve()
    for folder in folders:
        here = folder.resolve()
        if target == here:
            raise ShardError(f"merge: --out {out} is one of the shard folders")
        if target.is_relative_to(here):
            raise ShardError(f"merge: --out {out} is inside the shard folder {folder}")
        if here.is_relative_to(target):
            raise ShardError(f"merge: the shard folder {folder} is inside --out {out}")


def _check_split(folders: list[Path], documents: list[dict]) -> int:
    """The class size, once the shards are 1..N of one split of one class by one grader."""
    first, n, size = documents[0], documents[0]["shard"][1], documents[0]["class_size"]
    seen: dict[int, Path] = {}
    for folder, document in zip(folders, documents):
        k, m = document["shard"]
        if m != n or document["class_size"] != size:
            raise ShardError(
                f"{folder}: shard {k}/{m} of a class of {document['class_size']}, the first folder "
                f"holds a shard of {n} of a class of {size}"
            )
        if document["run"]["class"] != first["run"]["class"]:
            raise ShardError(
                f"{folder}: graded from another class than {folders[0]} (the submissions differ): grade every shard from one copy"
            )
        if document["run"]["grader"] != first["run"]["grader"]:
            raise ShardError(f"{folder}: graded by another version of the grader than {folders[0]}: grade every shard with one version")
        if k in seen:
            raise ShardError(f"{folder}: shard {k}/{n} again (also in {seen[k]})")
        seen[k] = folder
    missing = sorted(set(range(1, n + 1)) - set(seen))
    if missing:
        raise ShardError(f"merge: shard(s) {', '.join(f'{k}/{n}' for k in missing)} missing")
    return size


def _number_problem(values: dict[str, float], maximum_allowed: float) -> str | None:
    """Why the row's numbers cannot be a grade (None when they can)."""
    if not all(math.isfinite(v) for v in values.values()):
        return "a score is not finite"
    if not 0 <= values["maximum"] <= maximum_allowed:
        return f"maximum {values['maximum']:g} is outside 0..{maximum_allowed:g}"
    if not 0 <= values["score"] <= values["maximum"]:
        return f"score {values['score']:g} is outside 0..{values['maximum']:g}"
    return None


def _check_rows(folders: list[Path], documents: list[dict], size: int) -> tuple[dict, dict]:
    rows: dict[int, report.GradeRow] = {}
    records: dict[int, dict] = {}
    top = assignment_total()
    for folder, document in zip(folders, documents):
        for number, entry in enumerate(document["rows"], 1):
            where = f"{folder / ROWS_FILE}: row {number}"
            index = entry.get("index") if isinstance(entry, dict) else None
            if type(index) is not int or not 0 <= index < size:
                raise ShardError(f"{where} has no valid index")
            if index in rows:
                raise ShardError(f"{where}: submission {index} is also in another shard")
            try:
                row = report.GradeRow.from_dict(entry)
                record = _record(entry["record"])
            except (KeyError, TypeError, ValueError) as exc:
                raise ShardError(f"{where} is malformed ({exc})") from None
            problem = _number_problem({"score": row.score, "maximum": row.maximum}, top)
            problem = problem or next(
                (f"group {g!r} has {p:g} points" for g, p in row.groups if not (math.isfinite(p) and 0 <= p <= row.maximum)), None
            )
            if problem is None and (record["score"] != row.score or record["maximum"] != row.maximum or record["label"] != row.label):
                problem = "its class-report record disagrees with the row"
            if problem:
                raise ShardError(f"{where}: {problem}")
            rows[index], records[index] = row, record
    if len(rows) != size:
        raise ShardError(f"merge: {size - len(rows)} of the class's {size} submissions are in no shard")
    return rows, records


def _answers(folder: Path) -> list[dict]:
    """A shard's written answers (none when it kept none), every entry checked."""
    path = folder / written.ANSWERS_FILE
    try:
        os.lstat(path)
    except FileNotFoundError:
        return []  # a shard of .py files only keeps no answers
    document = _read_json(path, "written answers")
    entries = document.get("submissions") if isinstance(document, dict) else None
    texts = ("label", "student", "notebook")
    ok = isinstance(entries, list) and all(
        isinstance(e, dict)
        and all(isinstance(e.get(k), str) for k in texts)
        and isinstance(e.get("answers"), dict)
        and all(isinstance(q, str) and isinstance(a, str) for q, a in e["answers"].items())
        for e in entries
    )
    if not ok:
        raise ShardError(f"{path}: malformed (not the written answers m5 grade keeps)")
    return entries


def _plan_copies(folder: Path) -> list[tuple[Path, Path]]:
    """(source file, relative path) of every regular file the merge copies from ``folder``;
    ShardError naming the first link, device, FIFO or socket found anywhere under it."""
    copies = []
    for here, dirs, files in os.walk(folder, followlinks=False):
        base = Path(here)
        for name in sorted(dirs + files):
            path = base / name
            relative = path.relative_to(folder)
            if base == folder and name in OWN_NAMES:
                continue
            mode = os.lstat(path).st_mode
            kind = _KINDS.get(stat.S_IFMT(mode))
            if kind is not None:
                raise ShardError(
                    f"{folder}: {report.for_terminal(relative.as_posix())} is {kind}; a shard folder holds only folders and regular files"
                )
            if stat.S_ISREG(mode) and not name.startswith("."):  # dot files: an interrupted write's temporary
                copies.append((path, relative))
        dirs[:] = [d for d in dirs if not (base == folder and d in OWN_NAMES)]
    return copies


def _check_targets(out: Path, relatives: list[Path]) -> None:
    """Every target under ``out`` reached through real folders only (no link on the way, none at the end)."""
    for relative in relatives:
        path = out
        for part in relative.parts:
            path = path / part
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                break  # created by the merge from here on
            if stat.S_ISLNK(mode):
                raise ShardError(f"merge: {path} in --out is a symbolic link; refusing to write through it")


def merge_shards(folders: list[Path], out: Path, csv_format: str = "m5", lang: str = "en") -> list[report.GradeRow]:
    """Join shard outputs into ``out`` (see the module docstring); returns the rows in class order."""
    folders, out = [Path(f) for f in folders], Path(out)
    if not folders:
        raise ShardError("merge: give the output folders of every shard")
    _check_places(folders, out)
    documents = [_rows_document(f) for f in folders]
    size = _check_split(folders, documents)
    rows, records = _check_rows(folders, documents, size)
    answers = [entry for folder in folders for entry in _answers(folder)]
    if gradebook.exists(out):  # a re-run of this merge keeps the marks and adjustments; another class's is refused
        document = _read_json(out / ROWS_FILE, "not the output of m5 merge")
        before = (document.get("run") if isinstance(document, dict) else None) or {}
        if not isinstance(before, dict) or before.get("class") != documents[0]["run"].get("class"):
            raise ShardError(f"merge: {out} already holds the gradebook of another class run: choose another --out")
    copies = [copy for folder in folders for copy in _plan_copies(folder)]
    _check_targets(out, [relative for _, relative in copies])
    contents = []
    for source, relative in copies:
        try:
            contents.append((relative, read_bytes(source, MAX_RESULT_BYTES)))
        except SubmissionError as exc:
            raise ShardError(f"merge: {exc}") from None
    policy = _policy_link(folders)
    # Everything is checked: write.
    out.mkdir(parents=True, exist_ok=True)
    for relative, data in contents:
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
        outputs.write_bytes(out / relative, data)
    ordered = [rows[i] for i in range(size)]
    in_order = [records[i] for i in range(size)]
    extras = {entry["index"]: row_extras(entry) for document in documents for entry in document["rows"]}
    class_report.write(in_order, out, lang)
    written.write_class_answers(out, sorted(answers, key=lambda e: e["label"]))
    rows_out = [{**report.row_dict(row), **extras[i]} for i, row in enumerate(ordered)]
    write_rows_file(out, None, size, list(range(size)), rows_out, in_order, documents[0]["run"], root=documents[0].get("root"))
    if policy is not None:
        outputs.write_bytes(out / gradebook.POLICY_LINK, policy)
    gradebook.rebuild(out, csv_format)
    return ordered


def _policy_link(folders: list[Path]) -> bytes | None:
    """The shards' common late policy link (each graded with the same --policy), or None for none."""
    links = set()
    for folder in folders:
        path = folder / gradebook.POLICY_LINK
        try:
            links.add(read_bytes(path, 64 * 1024) if path.exists() else None)
        except SubmissionError as exc:
            raise ShardError(f"merge: {exc}") from None
    if len(links) > 1:
        raise ShardError("merge: the shards were graded with different late policies (--policy): grade them with one")
    link = links.pop()
    if link is not None:  # the policy must be readable now: the sheets are built from it
        try:
            gradebook.late.read_policy(Path(json.loads(link.decode("utf-8"))["file"]))
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, OSError) as exc:
            raise ShardError(f"merge: {folders[0] / gradebook.POLICY_LINK}: {exc}") from None
    return link


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
    if isinstance(data["score"], bool) or isinstance(data["maximum"], bool):
        raise ValueError("its class-report record is malformed")
    if not isinstance(data.get("code", ""), str) or any(type(p) is not int for p in data.get("fingerprints", [])):
        raise ValueError("its code or fingerprints are malformed")
    if "outputs" in data and not output_digest.well_formed(data["outputs"]):  # absent: graded before the digests (all unknown)
        raise ValueError(f"its outputs are not a mapping of kernel name to {output_digest.DIGEST_CHARS} hex characters or null")
    return data
