"""The gradebook of one assignment: the folder ``m5 grade --out`` writes, kept by every later command.

What it holds (every file written atomically, :mod:`.outputs`):

* ``grades.json``: one row per graded submission (the automatic points, per kernel and
  answer), the class folder it was graded from, and the run's identity (``m5 grade``;
  ``m5 grade --update`` replaces the rows of the submissions it grades again, keeping the others);
* ``written_marks.json``: the written answers' marks per student (``m5 review --marks``);
* ``adjustments.csv``: per-student adjustments with who, when and why (``m5 adjust``; an
  instructor may also edit it by hand: every command re-reads it and refuses a bad row by name);
* ``policy.json``: where the late policy is declared (the course's ``m5_course.toml``, given to
  ``m5 grade --policy``; read again by every command, never copied: :mod:`.late`);
* ``extensions.csv``: per-student extensions (``student,due,reason``), edited by the instructor.

The sheets (``grades.csv``, every LMS export, ``grades_final.csv``) are never edited: every
command that changes the gradebook rebuilds them from it (:func:`rebuild`), so running a command
again loses nothing. A row's total is its raw points (automatic plus its student's written marks),
minus the late penalty (a percentage of the raw points), plus the student's adjustments, never
below 0. ``grades_final.csv`` has one mark per student and module (the English and Russian
assignments of one module count once, by :data:`FINAL_RULE`), with every term of it.
"""

from __future__ import annotations

import csv
import datetime
import getpass
import io
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

from autograder.grade import late, outputs, report, written
from autograder.grade.shards import FORMAT, ROWS_FILE
from autograder.grade.student_files import SubmissionError, read_bytes

MARKS_FILE = "written_marks.json"
ADJUSTMENTS_FILE = "adjustments.csv"
FINAL_FILE = "grades_final.csv"
ADJUSTMENT_COLUMNS = ["student", "points", "item", "reason", "by", "at"]
ADJUSTMENT = "adjustment"  # its column in the sheets
LATE_PENALTY = "late_penalty"  # its column in grades.csv
POLICY_LINK = "policy.json"
FINAL_COLUMNS = [
    "student", "module", "automatic", "written", "raw", "submitted", "time_source", "late_hours", "penalty_percent",
    "penalty", "adjustment", "final", "max_score", "from", "rule",
]  # fmt: skip
MAX_FILE_BYTES = 64 * 1024 * 1024
FINAL_RULE = "the assignment the student submitted; the better one when they submitted both languages of the module"


class GradebookError(ValueError):
    """A gradebook file that cannot be used: one line naming the file, the row and the field."""


@dataclass
class Gradebook:
    folder: Path
    document: dict  # grades.json
    marks: dict[str, dict[str, float]] = field(default_factory=dict)
    adjustments: list[dict] = field(default_factory=list)
    policy: late.Policy | None = None
    extensions: dict[str, late.Extension] = field(default_factory=dict)

    @property
    def rows(self) -> list[dict]:
        return self.document["rows"]

    @property
    def students(self) -> set[str]:
        return {row["student"] or row["label"] for row in self.rows}


def exists(folder: Path) -> bool:
    return (Path(folder) / ROWS_FILE).is_file()


def _read(path: Path, what: str) -> bytes:
    try:
        return read_bytes(path, MAX_FILE_BYTES)
    except SubmissionError as exc:
        raise GradebookError(f"{exc} ({what})") from None


def load(folder: Path) -> Gradebook:
    """The gradebook in ``folder``, every file checked; GradebookError naming the first problem."""
    folder = Path(folder)
    path = folder / ROWS_FILE
    if not path.exists():
        raise GradebookError(f"{folder}: no {ROWS_FILE} (not the --out folder of m5 grade or m5 merge)")
    try:
        document = json.loads(_read(path, "the gradebook's rows").decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise GradebookError(f"{path}: unreadable ({type(exc).__name__})") from None
    if not isinstance(document, dict) or not isinstance(document.get("rows"), list):
        raise GradebookError(f"{path}: not a gradebook (no rows)")
    if document.get("format") != FORMAT:
        raise GradebookError(
            f"{path}: written by another version of m5 (format {document.get('format')!r}, not {FORMAT}): grade the class again"
        )
    for number, row in enumerate(document["rows"], 1):
        try:
            report.GradeRow.from_dict(row)
        except (KeyError, TypeError, ValueError) as exc:
            raise GradebookError(f"{path}: row {number} is malformed ({exc})") from None
    book = Gradebook(folder, document)
    book.marks = _load_marks(folder / MARKS_FILE)
    book.adjustments = read_adjustments(folder / ADJUSTMENTS_FILE, book.students)
    try:
        book.policy = _load_policy(folder)
        extensions = folder / late.EXTENSIONS_FILE
        if book.policy is not None:
            book.extensions = late.read_extensions(extensions, book.students, late.zone(book.policy.timezone, "policy"))
        elif extensions.exists():
            raise GradebookError(f"{extensions}: extensions without a late policy (give m5 grade --update --policy FILE)")
    except late.PolicyError as exc:
        raise GradebookError(str(exc)) from None
    return book


def _load_policy(folder: Path) -> late.Policy | None:
    link = folder / POLICY_LINK
    if not link.exists():
        return None
    try:
        source = json.loads(_read(link, "where the late policy is").decode("utf-8"))["file"]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise GradebookError(f"{link}: unreadable ({type(exc).__name__})") from None
    if not isinstance(source, str) or not Path(source).is_file():
        raise GradebookError(f"{link}: the late policy {source!r} is not a file (moved? give m5 grade --update --policy FILE)")
    return late.read_policy(Path(source))


def set_policy(folder: Path, policy_file: Path) -> late.Policy:
    """Check ``policy_file`` (GradebookError naming the field) and make it this gradebook's late policy."""
    try:
        policy = late.read_policy(policy_file)
    except late.PolicyError as exc:
        raise GradebookError(str(exc)) from None
    Path(folder).mkdir(parents=True, exist_ok=True)
    outputs.write_json(Path(folder) / POLICY_LINK, {"format": 1, "file": str(Path(policy_file).resolve())})
    return policy


def _load_marks(path: Path) -> dict[str, dict[str, float]]:
    if not path.exists():
        return {}
    try:
        marks = json.loads(_read(path, "the written marks").decode("utf-8"))["marks"]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise GradebookError(f"{path}: unreadable ({type(exc).__name__})") from None
    ok = isinstance(marks, dict) and all(
        isinstance(s, str)
        and isinstance(m, dict)
        and all(isinstance(q, str) and type(v) in (int, float) and math.isfinite(v) for q, v in m.items())
        for s, m in marks.items()
    )
    if not ok:
        raise GradebookError(f"{path}: malformed (m5 review --marks writes it)")
    return marks


def save_marks(folder: Path, marks: dict[str, dict[str, float]]) -> Path:
    return outputs.write_json(Path(folder) / MARKS_FILE, {"format": 1, "marks": marks})


# ------------------------------------------------------------------ adjustments
def read_adjustments(path: Path, students: set[str]) -> list[dict]:
    """The rows of ``adjustments.csv`` (none when absent), each checked: a known student, a finite
    number of points, a reason; GradebookError naming the row and the field."""
    if not path.exists():
        return []
    try:
        text = _read(path, "the adjustments").decode("utf-8-sig")
    except UnicodeDecodeError:
        raise GradebookError(f"{path}: not UTF-8 text") from None
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    missing = [c for c in ("student", "points", "reason") if c not in (rows[0] if rows else _header(text))]
    if missing:
        raise GradebookError(f"{path}: row 1: no column {missing[0]!r} (the header is {', '.join(ADJUSTMENT_COLUMNS)})")
    out = []
    for number, row in enumerate(rows, 2):
        where = f"{path}: row {number}"
        if row["student"] not in students:
            raise GradebookError(f"{where}, column 'student': {report.for_terminal(row['student'])!r} is no student of this gradebook")
        try:
            points = float(row["points"])
        except (TypeError, ValueError):
            raise GradebookError(f"{where}, column 'points': {report.for_terminal(row['points'])!r} is not a number") from None
        if not math.isfinite(points):
            raise GradebookError(f"{where}, column 'points': not finite")
        if not (row.get("reason") or "").strip():
            raise GradebookError(f"{where}, column 'reason': empty (say why)")
        out.append({**{c: row.get(c) or "" for c in ADJUSTMENT_COLUMNS}, "points": points})
    return out


def _header(text: str) -> list[str]:
    first = text.splitlines()[0] if text.strip() else ""
    return next(csv.reader([first])) if first else []


def add_adjustment(folder: Path, student: str, points: float, reason: str, item: str = "") -> dict:
    """Append one adjustment (who and when recorded), keeping every existing row byte for byte,
    then rebuild the sheets; GradebookError for an unknown student, bad points or no reason."""
    book = load(folder)
    if student not in book.students:
        raise GradebookError(f"{folder}: {report.for_terminal(student)!r} is no student of this gradebook")
    if not math.isfinite(points):
        raise GradebookError(f"points: {points!r} is not a finite number")
    if not reason.strip():
        raise GradebookError("--reason: say why (it is shown to the student)")
    entry = {
        "student": student,
        "points": f"{points:g}",
        "item": item,
        "reason": reason.strip(),
        "by": getpass.getuser(),
        "at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
    }
    path = Path(folder) / ADJUSTMENTS_FILE
    before = path.read_bytes() if path.exists() else b""
    line = io.StringIO(newline="")
    writer = csv.writer(line)
    if not before:
        writer.writerow(ADJUSTMENT_COLUMNS)
    writer.writerow([entry[c] for c in ADJUSTMENT_COLUMNS])
    joiner = b"" if not before or before.endswith(b"\n") else b"\r\n"
    outputs.write_bytes(path, before + joiner + line.getvalue().encode("utf-8"))
    rebuild(folder)
    return entry


# ------------------------------------------------------------------ lateness
@dataclass(frozen=True)
class Lateness:
    """One submission measured against the late policy (:mod:`.late`)."""

    submitted: str  # ISO 8601 with its offset; "" when no time is known
    source: str  # where the time came from: "nbgrader timestamp.txt", "Moodle worksheet", "Canvas export", "file time (fallback)"
    due: str  # the student's due date (their extension applied), ISO 8601 with its offset
    extension: str  # "" or what the extension says (new due date and reason)
    late_hours: float  # hours late after the grace period; 0 when on time
    penalty_percent: float  # of the assignment's points (automatic + written), capped
    penalty_points: float


def _raw(book: Gradebook, row: dict) -> float:
    """A row's raw points: automatic plus its student's written marks."""
    return row["score"] + sum(book.marks.get(row["student"] or row["label"], {}).values())


def lateness(book: Gradebook) -> dict[str, Lateness]:
    """Each row's lateness by its label; empty when the gradebook has no late policy."""
    policy = book.policy
    if policy is None:
        return {}
    out = {}
    for row in book.rows:
        student = row["student"] or row["label"]
        extension = book.extensions.get(student)
        due = extension.due if extension else policy.due
        submitted = row.get("submitted", "")
        seconds = late.late_seconds(policy, datetime.datetime.fromisoformat(submitted), due) if submitted else 0.0
        percent = late.penalty_percent(policy, seconds)
        out[row["label"]] = Lateness(
            submitted=submitted,
            source=row.get("time_source", "") or "none",
            due=late.iso(due),
            extension=f"{late.iso(extension.due)}: {extension.reason}" if extension else "",
            late_hours=round(seconds / 3600, 2),
            penalty_percent=percent,
            penalty_points=round(_raw(book, row) * percent / 100, 6),
        )
    return out


def policy_lines(book: Gradebook, lang: str) -> list[str]:
    """The late policy in words (due date, grace, penalty, cap), in ``lang``; empty without one."""
    return late.describe(book.policy, lang) if book.policy else []


# ------------------------------------------------------------------ the sheets
def sheet_rows(book: Gradebook) -> list[report.GradeRow]:
    """Each submission's line: automatic points + the student's written marks + adjustments (floored at 0)."""
    written_max = written.maximum() if book.marks else 0.0
    adjusted: dict[str, float] = {}
    for entry in book.adjustments:
        adjusted[entry["student"]] = adjusted.get(entry["student"], 0.0) + entry["points"]
    ids = [q["id"] for q in written.questions("en")] if book.marks else []
    late_of = lateness(book)
    out = []
    for data in book.rows:
        row = report.GradeRow.from_dict(data)
        student = row.student or row.label
        given = book.marks.get(student, {})
        penalty = late_of[row.label].penalty_points if row.label in late_of else 0.0
        extra = sum(given.values()) - penalty + adjusted.get(student, 0.0)
        groups = [*row.groups, *([q, given[q]] for q in ids if q in given)]
        if book.policy is not None:
            groups.append([LATE_PENALTY, -penalty])
        if student in adjusted:
            groups.append([ADJUSTMENT, adjusted[student]])
        out.append(replace(row, score=max(0.0, row.score + extra), maximum=row.maximum + written_max, groups=groups))
    return out


def final_rows(book: Gradebook, rows: list[report.GradeRow]) -> list[list[str]]:
    """grades_final.csv's rows (:data:`FINAL_COLUMNS`): per student and module, the better assignment
    (:data:`FINAL_RULE`), with how its mark is made: final = raw - penalty + adjustment (never below 0),
    raw = automatic + written."""
    by_label = {data["label"]: data for data in book.rows}
    late_of = lateness(book)
    best: dict[tuple[str, str], report.GradeRow] = {}
    for row in rows:
        key = (row.student or row.label, report.module_of(row.assignment))
        if key not in best or row.score > best[key].score:
            best[key] = row
    out = []
    for (student, module), row in sorted(best.items()):
        data = by_label[row.label]
        automatic = data["score"]
        written_points = _raw(book, data) - automatic
        adjustment = dict(row.groups).get(ADJUSTMENT, 0.0)
        lag = late_of.get(row.label)
        out.append(
            [
                report.for_csv(student),
                report.for_csv(module),
                f"{automatic:g}",
                f"{written_points:g}",
                f"{automatic + written_points:g}",
                lag.submitted if lag else "",
                lag.source if lag else "",
                f"{lag.late_hours:g}" if lag else "",
                f"{lag.penalty_percent:g}" if lag else "",
                f"{lag.penalty_points:g}" if lag else "0",
                f"{adjustment:g}",
                f"{row.score:g}",
                f"{row.maximum:g}",
                report.for_csv(row.label),
                FINAL_RULE,
            ]
        )
    return out


def rebuild(folder: Path, csv_format: str | None = None) -> list[Path]:
    """Every sheet from the gradebook: grades.csv, grades_final.csv and each LMS export that exists
    (or ``csv_format``'s). Returns the files written."""
    folder = Path(folder)
    book = load(folder)
    rows = sheet_rows(book)
    written_files = [report.write_grades_csv(rows, folder / "grades.csv")]
    with outputs.open_text(folder / FINAL_FILE) as fh:
        sheet = csv.writer(fh)
        sheet.writerow(FINAL_COLUMNS)
        sheet.writerows(final_rows(book, rows))
    written_files.append(folder / FINAL_FILE)
    total = max((r.maximum for r in rows), default=None)
    for fmt in report.LMS_FORMATS:
        path = folder / f"grades_{fmt}.csv"
        if fmt == csv_format or path.exists():
            written_files.append(report.write_lms_csv(rows, path, fmt, total=total))
    return written_files
