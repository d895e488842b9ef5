"""``m5 feedback``: one self-contained feedback page per student, from the gradebook.

``m5 feedback GRADES_DIR`` reads the gradebook (:mod:`autograder.grade.gradebook`: the rows of
``grades.json``, the written marks, the adjustments, the late policy) and each submission's
``results.json``, and writes into ``--out`` (default ``GRADES_DIR/feedback``):

* ``<name>-<hash>.html`` per student: the final mark (English and Russian submissions of one
  module count once, by the gradebook's rule), how each submission's total is made (automatic,
  written, late penalty, adjustments with their reasons), the late policy and the student's
  extension, per kernel and per property points, the numerical answers, every failing test's
  text (its input, what was expected and what came back, the likely mistake), and each written
  answer with its mark, the rubric items the marker applied to it (their points, deductions as
  such, in the page's language; ``written_marks.json`` of format 2), what a full answer covers,
  and the marker's comment (``m5 review``, the marking page);
* ``index.html``: the students and their pages, for the instructor (not for students);
* the LMS bulk-upload archives (``feedback_moodle.zip``, ``feedback_canvas.zip``) for the
  submissions graded from Moodle's or Canvas's download (:mod:`.feedback_lms`).

A page is one file that opens offline and on a phone: inline style, no script, no external
resource, a Content-Security-Policy that allows none. Every text a student controls (their id,
file names, answers, messages of their code's exceptions) and every text of the gradebook is
escaped, with control and bidi characters shown as escapes (:func:`report.for_block`). A page
holds no time of its writing: the same gradebook gives the same bytes. A file name is the
student id made safe (ASCII, Cyrillic transliterated, at most 48 characters) and a hash of the
id, so two students never share one. Each file is written atomically (:mod:`.outputs`).
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath

from autograder.assign import rubrics
from autograder.export import feedback_lms
from autograder.grade import gradebook, outputs, report, written
from autograder.grade.student_files import SubmissionError, read_bytes
from autograder.hidden.kernels import PROPERTIES
from autograder.marking import model
from reference_impl import exercises

FEEDBACK_DIR = "feedback"
INDEX_NAME = "index.html"
MAX_RESULTS_BYTES = 8 << 20  # a results.json is tens of kB; anything bigger is not one
MAX_TEXT = 4000  # characters of one test's text or answer shown
LANGS = ("en", "ru")
WORDS = {
    "en": {
        "title": "Feedback",
        "student": "Student",
        "final": "Final mark",
        "module": "module",
        "counts": "counts",
        "mark": "mark",
        "rule": "Which submission counts: " + gradebook.FINAL_RULE + ".",
        "totals": "How each total is made",
        "submission": "submission",
        "automatic": "automatic",
        "written": "written",
        "penalty": "late penalty",
        "adjustment": "adjustments",
        "total": "total",
        "of": "of",
        "adjustments": "Adjustments",
        "points": "points",
        "item": "about",
        "reason": "reason",
        "when": "when",
        "late": "Deadline",
        "policy": "The late policy",
        "submitted": "submitted",
        "source": "time from",
        "due": "your due date",
        "extension": "your extension",
        "late_hours": "hours late",
        "on_time": "on time",
        "language": "language",
        "not_graded": "This submission could not be graded",
        "kernels": "Points per kernel and exercise",
        "kernel": "kernel or exercise",
        "tests": "Points per property and answer",
        "test": "property or answer",
        "passed": "passed",
        "failed": "failed",
        "answers": "Numerical answers",
        "answer": "answer",
        "your_value": "your value",
        "missing_value": "(missing)",
        "right": "right",
        "wrong": "wrong",
        "failing": "What failed, and why",
        "as_graded": "The texts below are the grader's, in the language of the submission.",
        "notes": "Grader's notes",
        "no_results": "The detailed results of this submission (results.json) are {why}: only its points are shown.",
        "missing": "missing",
        "unreadable": "unreadable",
        "malformed": "not in the grader's format",
        "written_title": "Written answers",
        "not_marked": "Not marked yet.",
        "your_answer": "Your answer",
        "blank": "(blank)",
        "rubric": "What a full answer covers",
        "comment": "Marker's comment",
        "applied": "What your answer earned",
        "deduction": "deduction",
        "none": "none",
        "index_note": "One page per student, for the instructor (send each student their own page only).",
        "pages": "Students",
        "page": "page",
    },
    "ru": {
        "title": "Отзыв",
        "student": "Студент",
        "final": "Итоговая оценка",
        "module": "модуль",
        "counts": "засчитано",
        "mark": "оценка",
        "rule": "Какое решение засчитывается: то, которое студент сдал; лучшее из двух, если сданы обе языковые версии модуля.",
        "totals": "Из чего складывается итог",
        "submission": "решение",
        "automatic": "автоматически",
        "written": "письменные",
        "penalty": "штраф за опоздание",
        "adjustment": "поправки",
        "total": "итого",
        "of": "из",
        "adjustments": "Поправки",
        "points": "баллы",
        "item": "к чему",
        "reason": "причина",
        "when": "когда",
        "late": "Срок сдачи",
        "policy": "Правила для опоздавших работ",
        "submitted": "сдано",
        "source": "время взято из",
        "due": "ваш срок",
        "extension": "ваше продление",
        "late_hours": "часов опоздания",
        "on_time": "вовремя",
        "language": "язык",
        "not_graded": "Это решение не удалось проверить",
        "kernels": "Баллы по ядрам и упражнениям",
        "kernel": "ядро или упражнение",
        "tests": "Баллы по свойствам и ответам",
        "test": "свойство или ответ",
        "passed": "пройдено",
        "failed": "не пройдено",
        "answers": "Численные ответы",
        "answer": "ответ",
        "your_value": "ваше значение",
        "missing_value": "(нет ответа)",
        "right": "верно",
        "wrong": "неверно",
        "failing": "Что не прошло и почему",
        "as_graded": "Тексты ниже — тексты проверки, на языке решения.",
        "notes": "Замечания проверки",
        "no_results": "Подробные результаты этого решения (results.json) {why}: показаны только баллы.",
        "missing": "отсутствуют",
        "unreadable": "не читаются",
        "malformed": "не в формате проверки",
        "written_title": "Письменные ответы",
        "not_marked": "Ещё не проверено.",
        "your_answer": "Ваш ответ",
        "blank": "(пусто)",
        "rubric": "Что содержит полный ответ",
        "comment": "Комментарий проверяющего",
        "applied": "Что засчитано вашему ответу",
        "deduction": "вычет",
        "none": "нет",
        "index_note": "По странице на студента, для преподавателя (каждому студенту — только его страницу).",
        "pages": "Студенты",
        "page": "страница",
    },
}
CSP = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">'
STYLE = (
    "body{font-family:sans-serif;max-width:60em;margin:1em auto;padding:0 1em;line-height:1.4}"
    "table{border-collapse:collapse;margin:.5em 0;display:block;overflow-x:auto}"
    "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}th{background:#eee}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f6f6;padding:.5em}"
    ".lost{color:#a00}.note{color:#555}.counts{font-weight:bold}h1,h2,h3{overflow-wrap:anywhere}"
)
_TRANSLIT = dict(
    zip(
        "абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
        [
            "a",
            "b",
            "v",
            "g",
            "d",
            "e",
            "e",
            "zh",
            "z",
            "i",
            "y",
            "k",
            "l",
            "m",
            "n",
            "o",
            "p",
            "r",
            "s",
            "t",
            "u",
            "f",
            "kh",
            "ts",
            "ch",
            "sh",
            "shch",
            "-",
            "y",
            "-",
            "e",
            "yu",
            "ya",
        ],
    )
)


class FeedbackError(ValueError):
    """A gradebook that cannot be read: one line naming the file (nothing written)."""


# ---------------------------------------------------------------- escaping and names
def _e(text) -> str:
    """Text for the page on one line: control and bidi characters shown as escapes, then HTML-escaped."""
    return html.escape(report.for_terminal(text), quote=True)


def _block(text, limit: int = MAX_TEXT) -> str:
    text = str(text)
    cut = text[:limit] + ("\n…" if len(text) > limit else "")
    return f"<pre>{html.escape(report.for_block(cut), quote=True)}</pre>"


def _n(value: float) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) and math.isfinite(value) else "–"


def page_name(student: str) -> str:
    """A file name for the student's page: safe on every file system and in a zip, the same on
    every run, and never another student's (a hash of the exact id)."""
    digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    chars = []
    for ch in student:
        low = ch.lower()
        if low in _TRANSLIT:
            latin = _TRANSLIT[low].strip("-")
            chars.append(latin.capitalize() if ch != low else latin)
        else:
            chars.append(ch if ch.isascii() and (ch.isalnum() or ch in "-.") else "_")
    slug = re.sub(r"[_.]{2,}|_+", "_", "".join(chars)).strip("._-")[:48].strip("._-")
    return f"{slug or 'student'}-{digest}.html"


# ---------------------------------------------------------------- what the gradebook holds
@dataclass
class Submission:
    """One gradebook row as a page shows it."""

    data: dict  # the row of grades.json
    folder: PurePosixPath  # its results folder in the gradebook
    total: float  # its line in the sheets (automatic + written - penalty + adjustments, floored)
    maximum: float
    late: gradebook.Lateness | None = None
    counts: bool = False
    results: dict | None = None  # results.json, checked
    results_problem: str = ""  # "missing", "unreadable", "malformed" when results is None


@dataclass(frozen=True)
class AppliedItem:
    """A rubric item a marker applied to an answer: its points (negative: a deduction) and its student wording."""

    points: float
    student: dict[str, str]


@dataclass
class Student:
    id: str
    submissions: list[Submission] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)
    marks: dict[str, float] | None = None
    comments: dict[str, str] = field(default_factory=dict)
    applied: dict[str, list[AppliedItem]] = field(default_factory=dict)  # per question, when the marks name their items
    adjustments: list[dict] = field(default_factory=list)

    @property
    def file(self) -> str:
        return page_name(self.id)


def _results(path: Path) -> tuple[dict | None, str]:
    """(results.json checked, "") or (None, why): missing, unreadable, malformed."""
    if not os.path.lexists(path):
        return None, "missing"
    try:
        data = json.loads(read_bytes(path, MAX_RESULTS_BYTES).decode("utf-8"))
    except (SubmissionError, UnicodeDecodeError, ValueError):
        return None, "unreadable"
    number = (int, float)
    ok = (
        isinstance(data, dict)
        and isinstance(data.get("tests"), list)
        and isinstance(data.get("output", ""), str)
        and all(
            isinstance(t, dict)
            and isinstance(t.get("name"), str)
            and isinstance(t.get("output", ""), str)
            and type(t.get("score")) in number
            and type(t.get("max_score")) in number
            for t in data["tests"]
        )
    )
    return (data, "") if ok else (None, "malformed")


def _marks_document(folder: Path) -> dict:
    """``written_marks.json`` as a dict (empty when absent or unreadable: the gradebook says why elsewhere)."""
    try:
        document = json.loads(read_bytes(folder / gradebook.MARKS_FILE, gradebook.MAX_FILE_BYTES).decode("utf-8"))
    except (SubmissionError, UnicodeDecodeError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def _comments(document: dict) -> dict[str, dict[str, str]]:
    """The markers' comments kept beside the written marks; none when malformed."""
    comments = document.get("comments", {})
    if not isinstance(comments, dict):
        return {}
    return {
        s: {q: c for q, c in given.items() if isinstance(q, str) and isinstance(c, str)}
        for s, given in comments.items()
        if isinstance(s, str) and isinstance(given, dict)
    }


def _rubric_item(entry) -> AppliedItem | None:
    """One entry of the document's ``rubric`` (as it stood when marked), or None when malformed."""
    if not isinstance(entry, dict) or type(entry.get("points")) not in (int, float) or not math.isfinite(entry["points"]):
        return None
    wording = entry.get("student")
    if not isinstance(wording, dict) or not all(isinstance(wording.get(lang), str) for lang in LANGS):
        return None
    return AppliedItem(float(entry["points"]), {lang: wording[lang] for lang in LANGS})


def _applied(document: dict) -> dict[str, dict[str, list[AppliedItem]]]:
    """{student: {question: the items applied}} from the marks of format 2 (``items`` and ``rubric``);
    an answer given a bare number (``manual``), an unknown item or a malformed entry shows none."""
    items, rubric = document.get("items"), document.get("rubric")
    manual = document.get("manual") if isinstance(document.get("manual"), dict) else {}
    if not isinstance(items, dict) or not isinstance(rubric, dict):
        return {}
    known = {i: _rubric_item(entry) for i, entry in rubric.items()}
    out: dict[str, dict[str, list[AppliedItem]]] = {}
    for student, given in items.items():
        numbers = manual.get(student) if isinstance(manual.get(student), dict) else {}
        for question, ids in given.items() if isinstance(given, dict) else ():
            if question in numbers or not isinstance(ids, list) or not all(isinstance(i, str) and known.get(i) for i in ids):
                continue
            out.setdefault(student, {})[question] = [known[i] for i in ids]
    return out


def collect(grades_dir: Path) -> tuple[gradebook.Gradebook, list[Student]]:
    """The gradebook and its students (sorted by id), each with their submissions, answers,
    marks, comments and adjustments; FeedbackError for a gradebook that cannot be read."""
    grades_dir = Path(grades_dir)
    try:
        book = gradebook.load(grades_dir)
        sheet = gradebook.sheet_rows(book)
        late = gradebook.lateness(book)
    except gradebook.GradebookError as exc:
        raise FeedbackError(str(exc)) from None
    folders = report.output_dirs([row["label"] for row in book.rows], reserved=report.CLASS_FILES)
    answers = model.students([e for e in written.class_answers(grades_dir) if isinstance(e.get("answers", {}), dict)])
    document = _marks_document(grades_dir)
    comments, applied = _comments(document), _applied(document)
    students: dict[str, Student] = {}
    best: dict[tuple[str, str], Submission] = {}
    for data, line, folder in zip(book.rows, sheet, folders):
        sid = data["student"] or data["label"]
        entry = students.setdefault(sid, Student(sid))
        found = Submission(data, folder, line.score, line.maximum, late.get(data["label"]))
        found.results, found.results_problem = _results(grades_dir / folder / report.RESULTS_NAME)
        entry.submissions.append(found)
        key = (sid, report.module_of(data["assignment"]))
        if key not in best or found.total > best[key].total:  # gradebook.FINAL_RULE, as grades_final.csv
            best[key] = found
    for chosen in best.values():
        chosen.counts = True
    for sid, entry in students.items():
        entry.answers = answers.get(sid, {})
        entry.marks = book.marks.get(sid)
        entry.comments = comments.get(sid, {})
        entry.applied = applied.get(sid, {})
        entry.adjustments = [a for a in book.adjustments if a["student"] == sid]
    return book, [students[s] for s in sorted(students)]


# ---------------------------------------------------------------- the suite's names and maxima
@lru_cache(maxsize=1)
def _suite() -> tuple[dict[str, dict[str, str]], dict[str, float]]:
    """({test name in either language: its name in both}, {kernel or exercise: its points})."""
    from autograder.grade.judge import ANSWER_TITLE  # Hypothesis and the suite: only when pages are written

    names: dict[str, dict[str, str]] = {}
    maxima: dict[str, float] = {}
    for prop in PROPERTIES:
        both = {lang: prop.name(lang) for lang in LANGS}
        names.update({both[lang]: both for lang in LANGS})
        maxima[prop.kernel] = maxima.get(prop.kernel, 0.0) + prop.points
    for number in exercises.ANSWER_NAMES:
        group = f"ex{number:02d}"
        for name in exercises.graded_answers(number):
            both = {lang: f"{group}: {ANSWER_TITLE[lang].format(name=name)}" for lang in LANGS}
            names.update({both[lang]: both for lang in LANGS})
            maxima[group] = maxima.get(group, 0.0) + 1.0
    return names, maxima


def _questions(lang: str) -> tuple[dict, ...]:
    try:
        return written.questions(lang)
    except (OSError, ValueError, KeyError):  # an installed copy without the sources
        return ()


def _rubrics() -> dict:

    try:
        return rubrics.load()
    except rubrics.RubricError:
        return {}


# ---------------------------------------------------------------- one page
def _table(head: list[str], rows: list[list[str]], table_id: str) -> str:
    cells = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table id="{table_id}"><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>'


def _final(student: Student, w: dict) -> str:
    rows = [
        [
            _e(report.module_of(s.data["assignment"])),
            _e(s.data["label"]),
            f'<span class="counts">{_n(s.total)}</span> {w["of"]} {_n(s.maximum)}',
        ]
        for s in student.submissions
        if s.counts
    ]
    return f"<h2>{w['final']}</h2>" + _table([w["module"], w["counts"], w["mark"]], rows, "final") + f'<p class="note">{w["rule"]}</p>'


def _totals(student: Student, w: dict) -> str:
    marks = sum((student.marks or {}).values())
    adjusted = sum(a["points"] for a in student.adjustments)
    rows = []
    for s in student.submissions:
        penalty = s.late.penalty_points if s.late else 0.0
        rows.append(
            [
                _e(s.data["label"]) + (f' <span class="counts">({w["counts"]})</span>' if s.counts else ""),
                f"{_n(s.data['score'])} {w['of']} {_n(s.data['maximum'])}",
                _n(marks) if student.marks is not None else "–",
                f"−{_n(penalty)}" + (f" ({_n(s.late.penalty_percent)} %)" if s.late and s.late.penalty_percent else "") if s.late else "–",
                _n(adjusted) if student.adjustments else "–",
                f"{_n(s.total)} {w['of']} {_n(s.maximum)}",
            ]
        )
    head = [w["submission"], w["automatic"], w["written"], w["penalty"], w["adjustment"], w["total"]]
    parts = [f"<h2>{w['totals']}</h2>", _table(head, rows, "totals")]
    if student.adjustments:
        items = [[_n(a["points"]), _e(a["item"]), _e(a["reason"]), _e(a["at"])] for a in student.adjustments]
        parts += [f"<h3>{w['adjustments']}</h3>", _table([w["points"], w["item"], w["reason"], w["when"]], items, "adjustments")]
    return "".join(parts)


def _late(student: Student, policy: list[str], w: dict) -> str:
    lates = [s for s in student.submissions if s.late is not None]
    if not policy and not lates:
        return ""
    parts = [f"<h2>{w['late']}</h2>"]
    if policy:
        parts.append(f'<h3>{w["policy"]}</h3><ul id="policy">' + "".join(f"<li>{_e(line)}</li>" for line in policy) + "</ul>")
    rows = [
        [
            _e(s.data["label"]),
            _e(s.late.submitted) or "–",
            _e(s.late.source),
            _e(s.late.due),
            _e(s.late.extension) or "–",
            _n(s.late.late_hours) if s.late.late_hours else w["on_time"],
            f"−{_n(s.late.penalty_points)} ({_n(s.late.penalty_percent)} %)",
        ]
        for s in lates
    ]
    if rows:
        head = [w["submission"], w["submitted"], w["source"], w["due"], w["extension"], w["late_hours"], w["penalty"]]
        parts.append(_table(head, rows, "lateness"))
    return "".join(parts)


def _submission(n: int, s: Submission, lang: str, w: dict) -> str:
    names, maxima = _suite()
    data = s.data
    head = f'<h2 id="submission-{n}">{w["submission"]}: {_e(data["label"])}</h2>'
    facts = [f"{w['language']}: {_e(data['language'])}", f"{w['automatic']}: {_n(data['score'])} {w['of']} {_n(data['maximum'])}"]
    parts = [head, f"<p>{'; '.join(facts)}</p>"]
    if data["error"]:
        parts.append(f'<p class="lost">{w["not_graded"]}:</p>{_block(data["error"])}')
    groups = [[g, p] for g, p in data["groups"]]
    kernels = [[_e(g), f"{_n(p)} {w['of']} {_n(maxima.get(g, math.nan))}"] for g, p in groups]
    if kernels:
        parts += [f"<h3>{w['kernels']}</h3>", _table([w["kernel"], w["points"]], kernels, f"kernels-{n}")]
    record = data.get("record") if isinstance(data.get("record"), dict) else {}
    given_answers = record.get("answers") if isinstance(record.get("answers"), list) else []
    wrong = {(a[0], a[1]): a[2] for a in given_answers if isinstance(a, list) and len(a) == 3 and all(isinstance(x, str) for x in a[:2])}
    results = s.results
    if results is None:
        parts.append(f'<p class="lost" id="no-results-{n}">{w["no_results"].format(why=w[s.results_problem])}</p>')
    else:
        tests = results["tests"]
        rows, answers, failing = [], [], []
        for t in tests:
            name = names.get(t["name"], {}).get(lang, t["name"])
            ok = t["score"] >= t["max_score"]
            shown = f"{_n(t['score'])} {w['of']} {_n(t['max_score'])}"
            rows.append([_e(name), shown if ok else f'<span class="lost">{shown}</span>', w["passed"] if ok else w["failed"]])
            group, _, rest = name.partition(": ")
            if re.fullmatch(r"ex[0-9]{2}", group):
                key = rest.rsplit(" ", 1)[-1]
                value = wrong.get((group, key), "")
                given = w["missing_value"] if value is None else _e(value) if value else ""
                answers.append([_e(group), f"<code>{_e(key)}</code>", w["right"] if ok else w["wrong"], given if not ok else ""])
            if not ok:
                text = html.unescape(t.get("output", ""))  # results.json escapes the student's text for Gradescope
                failing.append(f"<h4>{_e(name)}</h4>{_block(text)}")
        parts += [f"<h3>{w['tests']}</h3>", _table([w["test"], w["points"], ""], rows, f"tests-{n}")]
        if answers:
            parts += [f"<h3>{w['answers']}</h3>", _table([w["kernel"], w["answer"], "", w["your_value"]], answers, f"answers-{n}")]
        if failing:
            note = f'<p class="note">{w["as_graded"]}</p>' if data["language"] != lang else ""
            parts += [f"<h3>{w['failing']}</h3>", note, f'<div id="failing-{n}">' + "".join(failing) + "</div>"]
        if results.get("output"):
            parts += [f"<h3>{w['notes']}</h3>", _block(html.unescape(results["output"]))]
    return "<section>" + "".join(parts) + "</section>"


def _applied_items(items: list[AppliedItem], lang: str, w: dict) -> str:
    """The items a marker applied to an answer, each with its points; a deduction said as such."""
    if not items:
        return f"<p>{w['applied']}: {w['none']}</p>"
    lines = [
        f"<li>{_e(item.student[lang])} (+{_n(item.points)})</li>"
        if item.points > 0
        else f'<li><span class="lost">{w["deduction"]}</span>: {_e(item.student[lang])} (−{_n(-item.points)})</li>'
        for item in items
    ]
    return f'<p>{w["applied"]}:</p><ul class="applied">{"".join(lines)}</ul>'


def _written(student: Student, lang: str, w: dict) -> str:
    questions = _questions(lang)
    if not questions or not (student.answers or student.marks or student.comments):
        return ""
    rubrics = _rubrics()
    parts = [f'<h2 id="written">{w["written_title"]}</h2>']
    if student.marks is None:
        parts.append(f'<p class="note">{w["not_marked"]}</p>')
    for q in questions:
        qid = q["id"]
        mark = (student.marks or {}).get(qid)
        score = f"{_n(mark)} {w['of']} {_n(q['points'])}" if mark is not None else f"– {w['of']} {_n(q['points'])}"
        answer = student.answers.get(qid, "")
        block = [f"<h3>{_e(qid)}: {score}</h3>", f"<p>{w['your_answer']}:</p>", _block(answer) if answer else f"<p>{w['blank']}</p>"]
        if qid in student.applied:
            block.append(_applied_items(student.applied[qid], lang, w))
        rubric = rubrics.get(qid)
        if rubric is not None:
            items = "".join(f"<li>{_e(item.student[lang])} ({_n(item.points)})</li>" for item in rubric.items if item.points > 0)
            block.append(f"<p>{w['rubric']}:</p><ul>{items}</ul>")
        if student.comments.get(qid):
            block.append(f"<p>{w['comment']}:</p>{_block(student.comments[qid])}")
        parts.append(f'<div class="question" id="q-{_e(qid)}">' + "".join(block) + "</div>")
    return "".join(parts)


def _page(title: str, body: str, lang: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">{CSP}{VIEWPORT}<title>{title}</title>'
        f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n"
    )


def page_language(student: Student, lang: str | None) -> str:
    """``lang``, else the language of the submission that counts (the first one's when none does)."""
    if lang in LANGS:
        return lang
    chosen = next((s for s in student.submissions if s.counts), student.submissions[0])
    return chosen.data["language"] if chosen.data["language"] in LANGS else "en"


def render(student: Student, policy: dict[str, list[str]], lang: str | None = None) -> str:
    """The student's page (see the module docstring); ``policy``: the late policy's lines per language."""
    page_lang = page_language(student, lang)
    w = WORDS[page_lang]
    body = [f"<h1>{w['title']}: {_e(student.id)}</h1>", _final(student, w), _totals(student, w), _late(student, policy[page_lang], w)]
    body += [_submission(n, s, page_lang, w) for n, s in enumerate(student.submissions, 1)]
    body.append(_written(student, page_lang, w))
    return _page(f"{w['title']}: {_e(student.id)}", "\n".join(part for part in body if part), page_lang)


def _index(students: list[Student], lang: str) -> str:
    w = WORDS[lang]
    rows = [
        [
            f'<a href="{html.escape(s.file, quote=True)}">{_e(s.id)}</a>',
            ", ".join(f"{_n(x.total)} {w['of']} {_n(x.maximum)}" for x in s.submissions if x.counts),
        ]
        for s in students
    ]
    body = f"<h1>{w['title']}</h1><p>{w['index_note']}</p>" + _table([w["pages"], w["final"]], rows, "students")
    return _page(w["title"], body, lang)


# ---------------------------------------------------------------- writing
@dataclass
class Written:
    files: list[Path]
    pages: int
    packages: dict[str, feedback_lms.Package]


def build_feedback(grades_dir: Path, out: Path | None = None, lang: str | None = None) -> Written:
    """Every page, the index and the LMS archives (see the module docstring); FeedbackError,
    nothing written, for a gradebook that cannot be read."""
    grades_dir = Path(grades_dir)
    out = Path(out) if out is not None else grades_dir / FEEDBACK_DIR
    book, students = collect(grades_dir)
    policy = {language: gradebook.policy_lines(book, language) for language in LANGS}
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FeedbackError(f"--out {out}: cannot be made a folder ({exc.strerror})") from None
    files, pages = [], []
    for student in students:
        text = render(student, policy, lang)
        files.append(outputs.write_text(out / student.file, text))
        data = text.encode("utf-8", outputs.ENCODE_ERRORS)
        pages.append((data, [s.data["label"] for s in student.submissions], student.file.rsplit("-", 1)[-1][:-5]))
    files.append(outputs.write_text(out / INDEX_NAME, _index(students, lang or "en")))
    zips, packages = feedback_lms.write_packages(out, pages)
    return Written(files + zips, len(students), packages)


def write_feedback(grades_dir: Path, out: Path, lang: str | None = None) -> list[Path]:
    """The files :func:`build_feedback` writes: the pages, ``index.html``, then the archives."""
    return build_feedback(grades_dir, out, lang).files
