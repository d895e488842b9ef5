"""``m5 review``: the written answers of a graded class, marked by a person.

``m5 review GRADES_DIR`` reads what ``m5 grade`` kept (``written_answers.json``,
``grades.json``) and writes, in ``GRADES_DIR/review/``, one page per question (the
question, the model answer from the instructor source, its points, and every student's
answer, escaped, blank ones marked) and ``GRADES_DIR/marks.csv``: one row per student,
one column per question, a ``max`` row with each question's points, blank answers
already 0 and the rest empty for the marker.

``m5 review GRADES_DIR --marks FILLED.csv`` checks the whole file first (a regular file of
at most 5 MB, UTF-8 with or without a BOM, separated by commas, semicolons or tabs; its
header, every student by the row's key, every cell a number from 0 to the question's
maximum, no answered question left unmarked) and refuses it in one line naming the row and
the column, writing nothing; then it rewrites ``grades.csv`` and every LMS export with one
column per question and totals out of the automatic points plus the written ones (167).

A marker may add a column ``<question>_comment`` for any question: its cells are comments the
student reads on their feedback page (``m5 feedback``), never counted in a total; they are kept
in ``written_marks.json`` under ``comments``, beside the marks.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
from pathlib import Path

import markdown

from autograder.export import anonymize as anonymize_views
from autograder.grade import gradebook, outputs, report, shards, written
from autograder.grade.student_files import SubmissionError, read_bytes

REVIEW_DIR = "review"
MARKS_FILE = "marks.csv"
MAX_ROW = "max"
KEY = "key"  # marks.csv's first column: a student's id that no spreadsheet or CSV escaping can change
MAX_MARKS_BYTES = 5 * 1024 * 1024  # a class of thousands is a few hundred kB
SEPARATORS = (",", ";", "\t")  # what spreadsheets save as CSV (Excel in a Russian locale writes ";")
COMMENT_SUFFIX = "_comment"  # an optional column per question: the marker's comment, shown to the student
MAX_COMMENT_CHARS = 4000
WORDS = {
    "en": {
        "title": "Written answers",
        "question": "Question",
        "model": "Model answer",
        "points": "points",
        "answers": "Answers",
        "blank": "(blank)",
        "student": "student",
        "index": "Questions",
        "note": (
            "Mark in marks.csv (one row per student), then run m5 review with --marks. A column <question>_comment, "
            "added for any question, holds comments the student reads on their feedback page (m5 feedback)."
        ),
    },
    "ru": {
        "title": "Письменные ответы",
        "question": "Вопрос",
        "model": "Образцовый ответ",
        "points": "баллов",
        "answers": "Ответы",
        "blank": "(пусто)",
        "student": "студент",
        "index": "Вопросы",
        "note": (
            "Поставьте баллы в marks.csv (строка на студента) и запустите m5 review с --marks. Столбец "
            "<вопрос>_comment, добавленный для любого вопроса, — комментарии, которые студент прочтёт на своей "
            "странице отзыва (m5 feedback)."
        ),
    },
}
CSP = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
STYLE = (
    "body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
    "pre{white-space:pre-wrap;background:#f6f6f6;padding:.5em}.blank{color:#888}"
)


class ReviewError(ValueError):
    """Class outputs without written answers, or a marks file that cannot be merged."""


def _load(grades_dir: Path) -> tuple[list[dict], dict]:
    try:
        answers = json.loads((grades_dir / written.ANSWERS_FILE).read_text(encoding="utf-8"))["submissions"]
        rows = json.loads((grades_dir / shards.ROWS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ReviewError(
            f"{grades_dir}: no readable {written.ANSWERS_FILE} and {shards.ROWS_FILE} (the --out of m5 grade or m5 merge): {exc}"
        ) from None
    return answers, rows


def students(answers: list[dict]) -> dict[str, dict[str, str]]:
    """{student: {question id: answer}} over all their notebooks (the assignment's and the lab's,
    in either language; where two notebooks answer one question, the later answer stands)."""
    out: dict[str, dict[str, str]] = {}
    for entry in answers:
        mine = out.setdefault(str(entry.get("student", "")), {})
        for question, text in (entry.get("answers") or {}).items():
            if text or question not in mine:  # an untouched copy (the other language's) never hides an answer
                mine[str(question)] = str(text)
    return out


def _page(title: str, body: str, lang: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">{CSP}<title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n"
    )


def student_key(student: str) -> str:
    """The id of a student's row in marks.csv: short, plain hex, the same on every run."""
    return "k" + hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def write_review(grades_dir: Path, lang: str = "en", force: bool = False, anonymize: bool = False) -> list[Path]:
    """The review pages and ``marks.csv`` (see the module docstring); returns the files written.
    A ``marks.csv`` with marks in it is never overwritten unless ``force``: ReviewError instead.

    ``anonymize``: the same in ``review/anonymized/`` with every student under a pseudonym, the
    marks sheet keyed by pseudonym, and the class report and similarity pairs rebuilt there with
    pseudonyms too (:mod:`.anonymize`); returns the pages, the report's files, then ``marks.csv``."""
    grades_dir = Path(grades_dir)
    answers, rows = _load(grades_dir)
    by_student = students(answers)
    folder, marks = grades_dir / REVIEW_DIR, grades_dir / MARKS_FILE
    shown, keys = {s: s for s in by_student}, {s: student_key(s) for s in by_student}
    if anonymize:
        folder = folder / anonymize_views.FOLDER
        marks = folder / MARKS_FILE
    if not force and _has_marks(marks):
        raise ReviewError(f"{marks} has marks in it: merge it with --marks, or add --force to write a blank one over it")
    if anonymize:  # everything read and built before anything is written
        try:
            views = anonymize_views.Views(grades_dir, rows.get("rows") if isinstance(rows, dict) else None, answers, lang)
        except anonymize_views.AnonymizeError as exc:
            raise ReviewError(f"--anonymize: {exc}") from None
        shown = keys = {s: views.anonymizer.student(s) for s in by_student}
        by_student = {s: {q: views.anonymizer.text(s, text) for q, text in given.items()} for s, given in by_student.items()}
        views.write_key()
    order = sorted(by_student, key=lambda s: (anonymize_views.number(shown[s]), shown[s])) if anonymize else sorted(by_student)
    w = WORDS[lang]
    folder.mkdir(parents=True, exist_ok=True)
    written_files = []
    links = []
    for q in written.questions(lang):
        items = []
        for student in order:
            text = by_student[student].get(q["id"], "")
            shown_text = f"<pre>{html.escape(report.for_block(text))}</pre>" if text else f'<p class="blank">{w["blank"]}</p>'
            name = shown[student]
            items.append(f'<h3 id="{html.escape(name, quote=True)}">{html.escape(report.for_terminal(name))}</h3>{shown_text}')
        body = (
            f"<h1>{html.escape(q['id'])} ({q['points']:g} {w['points']})</h1>"
            f"<h2>{w['question']}</h2>{markdown.markdown(q['question'], extensions=['fenced_code'])}"
            f"<h2>{w['model']}</h2>{markdown.markdown(q['model'], extensions=['fenced_code'])}"
            f"<h2>{w['answers']}</h2>" + "".join(items)
        )
        path = folder / f"{q['id']}.html"
        outputs.write_text(path, _page(f"{w['title']}: {q['id']}", body, lang))
        written_files.append(path)
        links.append(f'<li><a href="{q["id"]}.html">{q["id"]}</a> ({q["points"]:g} {w["points"]})</li>')
    index = folder / "index.html"
    outputs.write_text(
        index, _page(w["title"], f"<h1>{w['title']}</h1><p>{w['note']}</p><h2>{w['index']}</h2><ul>" + "".join(links) + "</ul>", lang)
    )
    if anonymize:
        written_files += views.write_report(folder)
    ids = [q["id"] for q in written.questions(lang)]
    with outputs.open_text(marks) as fh:
        sheet = csv.writer(fh)
        sheet.writerow([KEY, "student", *ids])
        sheet.writerow([MAX_ROW, "", *(f"{q['points']:g}" for q in written.questions(lang))])
        for student in order:
            given = by_student[student]
            sheet.writerow([keys[student], report.for_csv(shown[student]), *("" if given.get(i) else "0" for i in ids)])
    return [index, *written_files, marks]


def _has_marks(path: Path) -> bool:
    """Whether ``marks.csv`` holds a mark someone entered (a cell m5 review did not write)."""
    if not path.exists():
        return False
    try:
        rows = _marks_rows(path)
    except ReviewError:
        return True  # unreadable as ours: somebody's file, not ours to overwrite
    first = 2 if rows and rows[0][:2] == [KEY, "student"] else 1
    return any(cell.strip() not in ("", "0") for row in rows[2:] for cell in row[first:])


def _marks_rows(path: Path) -> list[list[str]]:
    """The rows of a marks file: a regular file (no link, FIFO or device) of at most
    :data:`MAX_MARKS_BYTES`, UTF-8 with or without a BOM, separated by , ; or tab."""
    try:
        data = read_bytes(path, MAX_MARKS_BYTES)
    except SubmissionError as exc:
        raise ReviewError(f"--marks {exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ReviewError(f"{path}: not UTF-8 text (save it as CSV UTF-8)") from None
    first = text.split("\n", 1)[0]
    separator = next((s for s in SEPARATORS if first.startswith(f"{KEY}{s}") or first.startswith(f"student{s}")), ",")
    try:
        return list(csv.reader(io.StringIO(text, newline=""), delimiter=separator))
    except csv.Error as exc:
        raise ReviewError(f"{path}: unreadable CSV ({exc})") from None


def read_marks(path: Path, by_student: dict[str, dict[str, str]], aliases: dict[str, str] | None = None) -> dict[str, dict[str, float]]:
    """{student: {question id: mark}} from a filled ``marks.csv``; ReviewError naming the row and column.

    Rows are matched by their ``key`` (the student's id that :func:`write_review` wrote, or, in the
    sheet written with ``anonymize``, a pseudonym of ``aliases``: {pseudonym: student}); a file
    written before the key column existed is matched by its ``student`` column."""
    return read_marks_and_comments(path, by_student, aliases)[0]


def read_marks_and_comments(
    path: Path, by_student: dict[str, dict[str, str]], aliases: dict[str, str] | None = None
) -> tuple[dict, dict[str, dict[str, str]]]:
    """(marks as :func:`read_marks` reads them, {student: {question id: comment}}): the optional
    ``<question>_comment`` columns (:data:`COMMENT_SUFFIX`), blank comments left out."""
    points = {q["id"]: q["points"] for q in written.questions("en")}
    rows = _marks_rows(path)
    keyed = bool(rows and rows[0][:2] == [KEY, "student"])
    if len(rows) < 2 or not rows[0] or not (keyed or rows[0][0] == "student"):
        raise ReviewError(f"{path}: row 1 must be the header written by m5 review (key, student, question ids)")
    first = 2 if keyed else 1
    header = rows[0][first:]
    commented = [h for h in header if h.endswith(COMMENT_SUFFIX) and h[: -len(COMMENT_SUFFIX)] in points]
    if len(set(commented)) != len(commented):
        raise ReviewError(f"{path}: row 1: a comment column repeated; keep one <question>{COMMENT_SUFFIX} per question")
    marked = [h for h in header if h not in commented]
    unknown = [h for h in marked if h not in points]
    if unknown or sorted(marked) != sorted(points):
        what = f"unknown question {unknown[0]!r}" if unknown else "questions missing or repeated"
        raise ReviewError(f"{path}: row 1: {what}; keep the header m5 review wrote")
    if rows[1][:1] != [MAX_ROW]:
        raise ReviewError(f"{path}: row 2 must be the {MAX_ROW!r} row m5 review wrote")
    known = {student_key(s): s for s in by_student} if keyed else {report.for_csv(s): s for s in by_student}
    if keyed:  # a sheet filled under pseudonyms (m5 review --anonymize)
        known.update({p: s for p, s in (aliases or {}).items() if s in by_student})
    marks: dict[str, dict[str, float]] = {}
    comments: dict[str, dict[str, str]] = {}
    for number, row in enumerate(rows[2:], 3):
        if not row or not any(cell.strip() for cell in row):
            continue
        if row[0] not in known:
            raise ReviewError(f"{path}: row {number}: unknown {'key' if keyed else 'student'} {report.for_terminal(row[0])!r}")
        student = known[row[0]]
        if student in marks:
            raise ReviewError(f"{path}: row {number}: student {report.for_terminal(row[first - 1])!r} again")
        if len(row) != len(rows[0]):
            raise ReviewError(f"{path}: row {number}: {len(row)} cells, the header has {len(rows[0])}")
        marks[student] = {}
        for question, cell in zip(header, row[first:]):
            where = f"{path}: row {number}, column {question!r}"
            if question in commented:
                if cell.strip():
                    comments.setdefault(student, {})[question[: -len(COMMENT_SUFFIX)]] = cell.strip()[:MAX_COMMENT_CHARS]
                continue
            if not cell.strip():
                if by_student[student].get(question):
                    raise ReviewError(f"{where}: an answered question is not marked")
                marks[student][question] = 0.0
                continue
            try:
                value = float(cell.strip().replace(",", "."))  # a decimal comma, as a Russian spreadsheet writes it
            except ValueError:
                raise ReviewError(f"{where}: {report.for_terminal(cell)!r} is not a number") from None
            if not 0 <= value <= points[question]:
                raise ReviewError(f"{where}: {value:g} is outside 0..{points[question]:g}")
            marks[student][question] = value
    missing = sorted(set(by_student) - set(marks))
    if missing:
        raise ReviewError(f"{path}: no row for student {report.for_terminal(missing[0])!r}")
    return marks, comments


def merge_marks(grades_dir: Path, marks_path: Path, csv_format: str = "m5") -> Path:
    """Keep the written marks in the gradebook (``written_marks.json``) and rebuild every sheet from
    it (``grades.csv``, ``grades_final.csv``, every LMS export; :mod:`autograder.grade.gradebook`).
    Nothing is written unless the whole marks file is valid. Returns the path of ``grades.csv``."""
    grades_dir = Path(grades_dir)
    answers, _ = _load(grades_dir)
    by_student = students(answers)
    try:
        aliases = anonymize_views.aliases(grades_dir, by_student)
    except anonymize_views.AnonymizeError as exc:
        raise ReviewError(str(exc)) from None
    marks, comments = read_marks_and_comments(marks_path, by_student, aliases)
    try:
        gradebook.load(grades_dir)  # every gradebook file readable before anything changes
        if comments:  # beside the marks, under their own key (the gradebook reads "marks" only)
            outputs.write_json(grades_dir / gradebook.MARKS_FILE, {"format": 1, "marks": marks, "comments": comments})
        else:
            gradebook.save_marks(grades_dir, marks)
        gradebook.rebuild(grades_dir, None if csv_format == "m5" else csv_format)
    except gradebook.GradebookError as exc:
        raise ReviewError(str(exc)) from None
    return grades_dir / "grades.csv"
