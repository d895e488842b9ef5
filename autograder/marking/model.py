"""What every marking route shares: answers, rubric items, a marker's decision, and the one writer of the marks.

* An :class:`Answer` is one student's text for one hand-graded question (``grade_id``), read
  from the gradebook's ``written_answers.json``; a blank answer is worth 0 and takes no decision.
* A :class:`RubricItem` has a stable id: ``<question>#<k>`` for the k-th item of
  ``rubrics.toml`` (1-based), ``<question>#n<k>`` for the k-th item a marker adds while marking.
* A :class:`Decision` is the set of items applied to one answer and the marker's comment;
  its mark is their points' sum floored at 0 and capped at the question's points
  (:func:`mark_of`), so an item whose points change re-marks every answer that carries it.
* :func:`write_marks` is the only writer of ``written_marks.json``: the marking page and the
  sheets both call it, and it rebuilds every gradebook sheet (totals, final marks, LMS exports).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from autograder.assign import rubrics
from autograder.grade import gradebook, outputs, written
from autograder.grade.student_files import SubmissionError, read_bytes

LANGS = ("en", "ru")
MARKS_FORMAT = 2  # written_marks.json: marks (read by the gradebook), comments, items, rubric
MAX_COMMENT_CHARS = 4000
MAX_ITEM_TEXT_CHARS = 500
MAX_MARKER_CHARS = 40


class MarkingError(ValueError):
    """Bad input to a marking action: one line naming what and why; nothing changed."""


@dataclass(frozen=True)
class Answer:
    student: str
    question: str
    text: str

    @property
    def blank(self) -> bool:
        return not self.text.strip()


@dataclass(frozen=True)
class RubricItem:
    id: str
    question: str
    points: float
    marker: dict[str, str]  # the marker's wording, en and ru
    student: dict[str, str]  # what the student reads on the feedback page, en and ru

    def as_json(self) -> dict:
        return {"question": self.question, "points": self.points, "marker": dict(self.marker), "student": dict(self.student)}


@dataclass(frozen=True)
class Decision:
    """A marker's decision on one answer: the items applied (sorted ids) and a comment.

    ``manual``: a bare number a marker gave instead of items (the per-question column of the
    older marks sheet); when set it is the mark, floored at 0 and capped at the question's points."""

    items: tuple[str, ...] = ()
    comment: str = ""
    marker: str = ""
    manual: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "items", tuple(sorted(set(self.items))))


@dataclass
class Question:
    id: str
    points: float
    notebook: str = ""
    text: dict[str, str] = field(default_factory=dict)  # the question, per language
    model: dict[str, str] = field(default_factory=dict)  # the model answer, per language


def marker_name(marker) -> str | None:
    """A marker's name as every route keeps it (spaces at either end dropped), or None when it is
    not 1 to :data:`MAX_MARKER_CHARS` printable characters."""
    name = marker.strip() if isinstance(marker, str) else ""
    return name if 0 < len(name) <= MAX_MARKER_CHARS and name.isprintable() else None


def item_id(question: str, k: int, added: bool = False) -> str:
    return f"{question}#{'n' if added else ''}{k}"


def questions() -> dict[str, Question]:
    """Every hand-graded question by id, with its points, text and model answer in both languages."""
    out: dict[str, Question] = {}
    for lang in LANGS:
        for q in written.questions(lang):
            entry = out.setdefault(q["id"], Question(q["id"], float(q["points"]), q["notebook"]))
            entry.text[lang], entry.model[lang] = q["question"], q["model"]
    return out


def rubric_items(rubric_table: dict[str, rubrics.Rubric] | None = None) -> dict[str, RubricItem]:
    """The items of ``rubrics.toml`` by id (in question, then item order)."""
    table = rubrics.load() if rubric_table is None else rubric_table
    return {
        item_id(qid, k): RubricItem(item_id(qid, k), qid, item.points, dict(item.marker), dict(item.student))
        for qid, rubric in table.items()
        for k, item in enumerate(rubric.items, start=1)
    }


def students(entries: list[dict]) -> dict[str, dict[str, str]]:
    """{student: {question id: answer}} over all their notebooks (the assignment's and the lab's,
    in either language; where two notebooks answer one question, the later answer stands)."""
    out: dict[str, dict[str, str]] = {}
    for entry in entries:
        mine = out.setdefault(str(entry.get("student", "")), {})
        for question, text in (entry.get("answers") or {}).items():
            if text or question not in mine:  # an untouched copy (the other language's) never hides an answer
                mine[str(question)] = str(text)
    return out


def class_answers(folder: Path, known: dict[str, Question] | None = None) -> list[Answer]:
    """Every student's answer to every hand-graded question (blank where they wrote none), in
    (question order, student) order."""
    known = questions() if known is None else known
    by_student = students(written.class_answers(Path(folder)))
    return [Answer(s, q, by_student[s].get(q, "")) for q in known for s in sorted(by_student)]


def student_key(student: str) -> str:
    """A student's id in a marks sheet: short, plain hex, the same on every run."""
    return "k" + hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def check_points(points: float, question: Question) -> float:
    """An item's points: a finite non-zero number within ±the question's points."""
    if isinstance(points, bool) or not isinstance(points, (int, float)) or not math.isfinite(points) or points == 0:
        raise MarkingError(f"rubric item of {question.id}: `points` must be a finite non-zero number, got {points!r}")
    if abs(points) > question.points:
        raise MarkingError(f"rubric item of {question.id}: `points` {points:g} is outside ±{question.points:g}, the question's points")
    return float(points)


def mark_of(decision: Decision, items: dict[str, RubricItem], points: float) -> float:
    """Σ points of the applied items (or the ``manual`` mark when given), floored at 0 and capped at
    the question's ``points``."""
    total = decision.manual if decision.manual is not None else sum(items[i].points for i in decision.items)
    return min(max(total, 0.0), points)


def marks_document(decisions: dict[tuple[str, str], Decision], items: dict[str, RubricItem], known: dict[str, Question]) -> dict:
    """The content of ``written_marks.json`` for these decisions (keys: (student, question)),
    with the rubric as it stands; sorted, so equal decisions give equal bytes. A ``manual`` key
    ({student: {question: mark}}) is there only when some decision is a bare number."""
    marks: dict[str, dict[str, float]] = {}
    comments: dict[str, dict[str, str]] = {}
    applied: dict[str, dict[str, list[str]]] = {}
    manual: dict[str, dict[str, float]] = {}
    for (student, question), decision in sorted(decisions.items()):
        unknown = [i for i in decision.items if i not in items or items[i].question != question]
        if question not in known or unknown:
            raise MarkingError(f"{student}, {question}: unknown question or rubric item {unknown or question}")
        marks.setdefault(student, {})[question] = mark_of(decision, items, known[question].points)
        applied.setdefault(student, {})[question] = list(decision.items)
        if decision.comment:
            comments.setdefault(student, {})[question] = decision.comment
        if decision.manual is not None:
            manual.setdefault(student, {})[question] = float(decision.manual)
    used = sorted({i for d in decisions.values() for i in d.items} | {i for i in items if not items[i].id.split("#")[1].startswith("n")})
    document = {
        "format": MARKS_FORMAT,
        "marks": marks,
        "comments": comments,
        "items": applied,
        "rubric": {i: items[i].as_json() for i in used},
    }
    if manual:  # only then: decisions of items alone keep the bytes they always had
        document["manual"] = manual
    return document


def with_blank_answers(decisions: dict[tuple[str, str], Decision], answers: list[Answer]) -> dict[tuple[str, str], Decision]:
    """``decisions`` and, for every blank answer none of them covers, an empty decision (0 points):
    a blank answer is marked 0 without a marker, whichever route marked the rest. Every route calls
    it before :func:`write_marks`, so the same marks give the same sheets."""
    blanks = {(a.student, a.question): Decision() for a in answers if a.blank and (a.student, a.question) not in decisions}
    return {**decisions, **blanks}


def _recorded_item(item: str, raw) -> RubricItem | None:
    ok = isinstance(raw, dict) and isinstance(raw.get("question"), str) and type(raw.get("points")) in (int, float)
    texts = (raw.get(k) if ok else None for k in ("marker", "student"))
    ok = ok and all(isinstance(t, dict) and all(isinstance(t.get(lang), str) for lang in LANGS) for t in texts)
    if not ok or not math.isfinite(raw["points"]):
        return None
    return RubricItem(item, raw["question"], float(raw["points"]), dict(raw["marker"]), dict(raw["student"]))


def _part(document: dict, key: str, student: str, question: str):
    """``document[key][student][question]``, or None where any level is missing or not a table."""
    table = document.get(key) if isinstance(document.get(key), dict) else {}
    mine = table.get(student) if isinstance(table.get(student), dict) else {}
    return mine.get(question)


def read_decisions(folder: Path) -> tuple[dict[tuple[str, str], Decision], dict[str, RubricItem]]:
    """The decisions the gradebook holds (``written_marks.json``; none when absent) and the rubric
    items as they stood when they were written (an item edited or added on the marking page keeps
    its points). The older format, marks without items, reads as bare-number decisions.
    MarkingError for a file that cannot be read."""
    try:
        marks = gradebook.load(Path(folder)).marks
    except gradebook.GradebookError as exc:
        raise MarkingError(str(exc)) from None
    if not marks:
        return {}, {}
    path = Path(folder) / gradebook.MARKS_FILE
    try:  # a regular file, bounded, as the gradebook itself reads it
        document = json.loads(read_bytes(path, gradebook.MAX_FILE_BYTES).decode("utf-8"))
    except (SubmissionError, UnicodeDecodeError, ValueError) as exc:
        raise MarkingError(f"{path}: unreadable ({exc if isinstance(exc, SubmissionError) else type(exc).__name__})") from None
    document = document if isinstance(document, dict) else {}
    rubric = document.get("rubric") if isinstance(document.get("rubric"), dict) else {}
    recorded = {i: item for i, raw in rubric.items() if (item := _recorded_item(i, raw)) is not None}
    decisions = {}
    for student, given in marks.items():
        for question, mark in given.items():
            applied = _part(document, "items", student, question)
            comment = _part(document, "comments", student, question)
            comment = comment if isinstance(comment, str) else ""
            manual = _part(document, "manual", student, question)
            if isinstance(applied, list) and all(isinstance(i, str) for i in applied) and manual is None:
                decision = Decision(tuple(applied), comment)
            else:  # the older format, or a bare number: the mark as it was given
                decision = Decision((), comment, manual=float(mark))
            decisions[(student, question)] = decision
    return decisions, recorded


def write_marks(
    folder: Path, decisions: dict[tuple[str, str], Decision], items: dict[str, RubricItem], csv_format: str | None = None
) -> Path:
    """Keep ``decisions`` in the gradebook (``written_marks.json``) and rebuild every sheet from it.
    Everything is checked before anything is written; returns the marks file."""
    folder = Path(folder)
    document = marks_document(decisions, items, questions())
    try:
        gradebook.load(folder)  # every gradebook file readable before anything changes
    except gradebook.GradebookError as exc:
        raise MarkingError(str(exc)) from None
    path = outputs.write_json(folder / gradebook.MARKS_FILE, document)
    gradebook.rebuild(folder, csv_format)
    return path
