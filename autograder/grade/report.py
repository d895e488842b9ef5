"""Write what grading found: Gradescope results.json, the class grades.csv, tables.

Feedback shows the failing input, what was expected, what came back and a hint,
in the submission's language; never hidden test source or grader tracebacks.
"""

from __future__ import annotations

import csv
import html
import inspect
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath

import numpy as np

import reference_impl
from autograder.grade import outputs
from autograder.grade.outputs import json_safe
from autograder.grade.score import SubmissionResult, TestResult, assignment_total, class_summary

WORDS = {
    "en": {
        "passed": "passed",
        "failed": "FAILED",
        "input": "Failing input",
        "expected": "expected",
        "got": "got",
        "problem": "problem",
        "hint": "Hint",
        "total": "Total",
        "kernel": "item",
        "score": "score",
        "mean": "mean",
        "most_failed": "most failed test",
        "submission": "submission",
        "time": "time",
        "unreadable": "the submission could not be graded",
        "summary": "Summary",
        "failed_count": "{failed} of {tests} tests failed",
        "details": {
            "after_due_date": "each test's result and failing input are shown after the due date",
            "after_published": "each test's result and failing input are shown when the grades are published",
            "hidden": "each test's result and failing input are not shown",
        },
        "disclaimer": (
            "Hidden tests check each kernel on hundreds of generated inputs; "
            "the score is the sum of the properties that held on all of them."
        ),
    },
    "ru": {
        "passed": "пройдено",
        "failed": "НЕ ПРОЙДЕНО",
        "input": "Вход, на котором тест падает",
        "expected": "ожидалось",
        "got": "получено",
        "problem": "проблема",
        "hint": "Подсказка",
        "total": "Итого",
        "kernel": "задание",
        "score": "баллы",
        "mean": "среднее",
        "submission": "решение",
        "time": "время",
        "unreadable": "решение не удалось проверить",
        "most_failed": "чаще всего не пройден",
        "summary": "Итог",
        "failed_count": "не пройдено тестов: {failed} из {tests}",
        "details": {
            "after_due_date": "результат и входные данные каждого теста будут показаны после срока сдачи",
            "after_published": "результат и входные данные каждого теста будут показаны после публикации оценок",
            "hidden": "результат и входные данные тестов не показываются",
        },
        "disclaimer": (
            "Скрытые тесты проверяют каждое ядро на сотнях сгенерированных входов; балл — сумма свойств, выполненных на всех входах."
        ),
    },
}


# ---------------------------------------------------------------- sinks
# Student-controlled text (file and folder names, cell ids, messages of the student's
# exceptions, notebook metadata) is escaped for the sink it goes to.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def for_terminal(text) -> str:
    """One printable line: control, format (bidi) and separator characters, and lone
    surrogates of undecodable file names, become visible escapes such as ``\\x1b``,
    ``\\n`` or ``\\udcff``; ANSI escapes and newlines cannot act on the terminal."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode("ascii") for ch in text)


def for_block(text) -> str:
    """Lines of student text (an answer, code) for a page: line breaks kept, tabs expanded, and
    in each line every control, bidi or other format character shown as an escape
    (:func:`for_terminal`), so nothing can reorder or hide what the reader sees."""
    return "\n".join(for_terminal(line) for line in str(text).expandtabs(4).splitlines())


def for_csv(text) -> str:
    """A CSV cell a spreadsheet shows as text: one printable line, and a leading
    ``= + - @`` (a formula in Excel, LibreOffice, Google Sheets) prefixed with ``'``."""
    text = for_terminal(text)
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def for_feedback(text) -> str:
    """Student-influenced text inside results.json: one printable line (a forged cell id
    cannot start a fake "Total: 120 / 120" line) with ``& < >`` HTML-escaped (no
    ``<script>`` reaches a page that renders the feedback)."""
    return html.escape(for_terminal(text), quote=False)


def show(value, limit: int = 400) -> str:
    if isinstance(value, np.ndarray):
        text = np.array2string(value, precision=6, separator=", ", threshold=40, max_line_width=10**6).replace("\n", "")
        text = f"array({text})" if value.ndim else text
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def show_call(kernel: str, call) -> str:
    fn = getattr(reference_impl, kernel, None)
    names = list(inspect.signature(fn).parameters) if fn is not None else []
    parts = [
        f"{names[i]}={show(np.asarray(a) if isinstance(a, list) else a)}" if i < len(names) else show(a) for i, a in enumerate(call.args)
    ]
    parts += [f"{k}={show(v)}" for k, v in call.kwargs.items()]
    return f"{kernel}(" + ", ".join(parts) + ")"


def feedback(test: TestResult, lang: str) -> str:
    w = WORDS[lang]
    if test.passed:
        return w["passed"]
    lines = [w["failed"]]
    f = test.failure
    if f is not None:
        lines.append(f"{w['problem']}: {for_feedback(f.message[lang])}")  # may quote the student's exception
        call = test.counterexample or f.call
        if call is not None:
            lines.append(f"{w['input']}: {show_call(test.group, call)}")
        if f.expected is not None:
            lines.append(f"{w['expected']}: {show(f.expected)}")
        if f.got is not None:
            lines.append(f"{w['got']}: {for_feedback(show(f.got))}")
    if test.hint.get(lang):
        lines.append(f"{w['hint']}: {test.hint[lang]}")
    return "\n".join(lines)


def maximum(result: SubmissionResult) -> float:
    """The submission's maximum: its tests' points, or the documented assignment total
    when nothing could be graded (an unreadable file is 0 out of the real maximum)."""
    return result.max_score if result.tests else assignment_total()


# When students see a test's entry on Gradescope (its autograder specifications, "Controlling Test
# Case Visibility"); instructors always see everything. The top-level field is the default of the
# whole result, which a test's own field overrides.
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")


def summary_line(result: SubmissionResult, visibility: str = "visible") -> str:
    """One line a student may always see: the total and how many tests failed (never which
    input), or why nothing could be graded, and when the details come."""
    lang = result.language if result.language in WORDS else "en"
    w = WORDS[lang]
    parts = [f"{w['total']}: {result.score:g} / {maximum(result):g}"]
    if result.tests:
        parts.append(w["failed_count"].format(failed=sum(not t.passed for t in result.tests), tests=len(result.tests)))
        if visibility in w["details"]:
            parts.append(w["details"][visibility])
    if result.error:
        parts.append(f"{w['unreadable']}: {for_feedback(result.error)}")
    return "; ".join(parts)


def results_json(
    result: SubmissionResult,
    isolation_warning: str | None = None,
    visibility: str = "visible",
    *,
    summary: bool = False,
    marker_notes: list[dict] | tuple = (),
) -> dict:
    """Gradescope's results.json for one submission (also written by ``m5 grade``).

    Plain text throughout (``output_format`` and ``test_output_format``): student text
    inside it is one line each and HTML-escaped, so it can neither add lines nor markup.

    ``visibility`` (one of :data:`VISIBILITIES`) is every test entry's, with its failing input,
    and the top-level one. Other than "visible" (or with ``summary``), a first entry, always
    visible and worth no points, gives :func:`summary_line` and the notes (which file was
    graded, what was skipped and why); ``marker_notes`` (the written answers, for the marker)
    go to the top-level output only. The defaults give ``m5 grade``'s document: everything
    visible, no summary entry.
    """
    if visibility not in VISIBILITIES:
        raise ValueError(f"visibility: expected one of {', '.join(VISIBILITIES)}, got {visibility!r}")
    lang = result.language if result.language in WORDS else "en"
    w = WORDS[lang]
    notes = [for_feedback(note.get(lang, "")) for note in result.notes]
    summary_lines = [f"{w['total']}: {result.score:g} / {maximum(result):g}"]
    if result.error:
        summary_lines.append(f"{w['unreadable']}: {for_feedback(result.error)}")
    else:
        summary_lines.append(w["disclaimer"])
    summary_lines += notes + [for_feedback(note.get(lang, "")) for note in marker_notes]
    if isolation_warning:
        summary_lines.insert(0, isolation_warning)
    tests = [
        {
            "name": t.name[lang],
            "score": t.score,
            "max_score": t.max_score,
            "status": "passed" if t.passed else "failed",
            "output": feedback(t, lang),
            "visibility": visibility,
        }
        for t in result.tests
    ]
    if summary or visibility != "visible":
        line = summary_line(result, visibility)
        ok = not result.error and all(t.passed for t in result.tests) and bool(result.tests)
        entry = {
            "name": f"{w['summary']}: {summary_line(result)}",
            "status": "passed" if ok else "failed",
            "output": "\n".join([line, *notes]),
        }
        tests.insert(0, {**entry, "visibility": "visible"})
    return json_safe(
        {
            "score": round(result.score, 6),
            "execution_time": round(result.seconds, 3),
            "output": "\n".join(summary_lines),
            "output_format": "text",
            "test_output_format": "text",
            "visibility": visibility,
            "stdout_visibility": "hidden",
            "tests": tests,
        }
    )


def dump_json(data) -> str:
    """JSON text that is always valid UTF-8 (see :func:`outputs.json_safe`)."""
    return json.dumps(json_safe(data), indent=2, ensure_ascii=False)


def write_results(result: SubmissionResult, out_dir: Path, isolation_warning: str | None = None) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "results.json"
    outputs.write_text(path, dump_json(results_json(result, isolation_warning)) + "\n")
    return path


# ---------------------------------------------------------------- output names
RESULTS_NAME = "results.json"


def output_dirs(relatives: list[str], reserved: set[str] = frozenset()) -> list[PurePosixPath]:
    """One results folder per submission, named by its relative path (student folders
    kept: ``alice/module05/m05_assignment_en.ipynb``), never shared with another.

    ``reserved`` are top-level file names of the class outputs (``grades.csv``). A
    folder that would clash with another submission's folder or results file, or with
    a reserved name, gets ``~2``, ``~3``... appended, in input order (deterministic).
    """
    files = {PurePosixPath(name) for name in reserved}  # paths that are (or will be) files
    dirs: set[PurePosixPath] = set()  # every folder on the way to a claimed one
    claimed: set[PurePosixPath] = set()
    out: list[PurePosixPath] = []
    for rel in relatives:
        parts = [p for p in PurePosixPath(rel).parts if p not in ("", ".", "..", "/")] or ["submission"]
        path = PurePosixPath()
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            candidate, n = path / part, 1
            while candidate in files or (last and (candidate in claimed or candidate / RESULTS_NAME in dirs)):
                n += 1
                candidate = path / f"{part}~{n}"
            path = candidate
        claimed.add(path)
        files.add(path / RESULTS_NAME)
        dirs.update((path, *path.parents))
        out.append(path)
    return out


# ---------------------------------------------------------------- the class tables
IDENTITY_COLUMNS = ["submission", "student", "assignment", "language", "timestamp"]


@dataclass(frozen=True)
class GradeRow:
    """One submission's line of the grade sheets (``grades.csv`` and the LMS exports):
    all they read of a :class:`SubmissionResult`, as plain data a shard can write and a
    merge read back (``shards.py``)."""

    label: str
    student: str
    assignment: str
    language: str
    timestamp: str
    score: float
    maximum: float
    groups: list  # [[group, points], ...] in the order the tests come
    error: str = ""

    @classmethod
    def of(cls, result: SubmissionResult | GradeRow) -> GradeRow:
        if isinstance(result, GradeRow):
            return result
        return cls(
            result.label,
            result.student,
            result.assignment,
            result.language,
            result.timestamp,
            result.score,
            maximum(result),
            [[g, got] for g, (got, _) in result.by_group().items()],
            result.error or "",
        )

    @classmethod
    def from_dict(cls, data: dict) -> GradeRow:
        """The inverse of ``dataclasses.asdict``; raises TypeError or ValueError for a field of the wrong kind."""
        texts = ("label", "student", "assignment", "language", "timestamp", "error")
        if any(not isinstance(data[k], str) for k in texts):
            raise TypeError("a text field is not text")
        numbers = [data["score"], data["maximum"], *(g[1] for g in data["groups"])]
        if any(type(v) not in (int, float) for v in numbers):
            raise TypeError("a score is not a number")
        if any(not (isinstance(g, list) and len(g) == 2 and isinstance(g[0], str)) for g in data["groups"]):
            raise ValueError("groups must be [name, points] pairs")
        return cls(**{k: data[k] for k in (*texts, "score", "maximum", "groups")})


def row_dict(value) -> dict:
    """A grade-sheet row as plain data: :class:`GradeRow`'s fields, from a result, a GradeRow or
    a dict holding them (other keys of the dict are dropped)."""
    if isinstance(value, dict):
        return asdict(GradeRow.from_dict(value))
    return asdict(GradeRow.of(value))


def _rows(results: list) -> list[GradeRow]:
    return [GradeRow.of(r) for r in results]


def _groups(rows: list[GradeRow]) -> tuple[list[str], list[str]]:
    """Kernel columns then exercise columns, in the order the tests come."""
    seen: list[str] = []
    for r in rows:
        seen += [g for g, _ in r.groups if g not in seen]
    exercises = [g for g in seen if g.startswith("ex") and g[2:].isdigit()]
    return [g for g in seen if g not in exercises], exercises


def write_grades_csv(results: list[SubmissionResult | GradeRow], path: Path) -> Path:
    """The class table: one row per submission, identified by its relative path, with
    the student id, assignment, language, timestamp, total, one column per kernel and
    one per exercise, and the reason when it could not be graded."""
    rows = _rows(results)
    kernels, exercises = _groups(rows)
    with outputs.open_text(path) as fh:
        writer = csv.writer(fh)
        writer.writerow([*IDENTITY_COLUMNS, "score", "max_score", *kernels, *exercises, "error"])
        for r in rows:
            per = dict(r.groups)
            identity = [r.label, r.student, r.assignment, r.language, r.timestamp]
            writer.writerow(
                [
                    *map(for_csv, identity),
                    f"{r.score:g}",
                    f"{r.maximum:g}",
                    *(f"{per[g]:g}" if g in per else "" for g in (*kernels, *exercises)),
                    for_csv(r.error),
                ]
            )
    return path


LMS_FORMATS = ("moodle", "canvas")
CLASS_FILES = {
    "grades.csv",
    *(f"grades_{fmt}.csv" for fmt in LMS_FORMATS),
    "grades.json",
    "class_report.json",
    "class_report.html",
    "written_answers.json",
    "marks.csv",
    "review",
    "similarity_pairs.json",
    "grades_final.csv",
    "written_marks.json",
    "adjustments.csv",
    "extensions.csv",
    "policy.json",
    "anonymization_key.csv",
    "feedback",
}  # beside the submissions' folders


_LANGUAGE_SUFFIX = re.compile(r"_(en|ru)$")


def module_of(assignment: str) -> str:
    """One module's column for both languages: ``module05_en`` and ``module05_ru`` are ``module05``."""
    return _LANGUAGE_SUFFIX.sub("", assignment) or "module05"


def best_per_student(results: list[SubmissionResult | GradeRow]) -> dict[str, dict[str, float]]:
    """{student: {module: best score}}: a student who handed in the EN and the RU notebook
    (of one module, in one folder or as the two nbgrader assignments) keeps the higher score."""
    best: dict[str, dict[str, float]] = {}
    for r in _rows(results):
        row = best.setdefault(r.student or r.label, {})
        column = module_of(r.assignment)
        row[column] = max(row.get(column, 0.0), r.score)
    return best


def write_lms_csv(results: list[SubmissionResult | GradeRow], path: Path, fmt: str, total: float | None = None) -> Path:
    """An import-ready grade sheet, one row per student and one column per assignment.

    ``moodle``: columns ``Username`` and ``<assignment>``; in Moodle's *Import → CSV
    file*, map "Username" to *username* and each assignment column to its grade item.
    ``canvas``: Canvas's gradebook columns ``Student, ID, SIS User ID, SIS Login ID,
    Section`` (the student id goes to *SIS Login ID*, which Canvas matches on), then
    ``<assignment> (<maximum>)`` with a ``Points Possible`` row first.
    """
    if fmt not in LMS_FORMATS:
        raise ValueError(f"fmt: expected one of {', '.join(LMS_FORMATS)}, got {fmt!r}")
    best = best_per_student(results)
    assignments = sorted({a for row in best.values() for a in row})
    total = f"{assignment_total() if total is None else total:g}"
    with outputs.open_text(path) as fh:
        writer = csv.writer(fh)
        if fmt == "moodle":
            writer.writerow(["Username", *map(for_csv, assignments)])
            for student, row in best.items():
                writer.writerow([for_csv(student), *(f"{row[a]:g}" if a in row else "" for a in assignments)])
        else:
            writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *(for_csv(f"{a} ({total})") for a in assignments)])
            writer.writerow(["Points Possible", "", "", "", "", *(total for _ in assignments)])
            for student, row in best.items():
                writer.writerow([for_csv(student), "", "", for_csv(student), "", *(f"{row[a]:g}" if a in row else "" for a in assignments)])
    return path


def grade_table(results: list[SubmissionResult], lang: str = "en") -> str:
    """The terminal table of a run: one line per submission (names made printable)."""
    w = WORDS[lang]
    labels = [for_terminal(r.label) for r in results]
    width = max([len(label) for label in labels] + [10])
    lines = [f"{w['submission']:<{width}}  {w['score']:>9}  {w['time']}"]
    for label, r in zip(labels, results):
        lines.append(
            f"{label:<{width}}  {r.score:>4g}/{maximum(r):<4g}  {r.seconds:.2f}s" + (f"  ({for_terminal(r.error)})" if r.error else "")
        )
    return "\n".join(lines)


def summary_table(results: list[SubmissionResult], lang: str = "en") -> str:
    w = WORDS[lang]
    rows = class_summary(results, lang)
    width = max([len(r["group"]) for r in rows] + [8])
    lines = [f"{w['kernel']:<{width}}  {w['mean']:>10}  {w['most_failed']}"]
    for row in rows:
        lines.append(f"{row['group']:<{width}}  {row['mean']:>5.2f}/{row['max']:<4g}  {row['most_failed']}")
    return "\n".join(lines)
