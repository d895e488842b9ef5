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

``m5 review GRADES_DIR --marker NAME --questions LIST`` writes, beside the same pages, that
marker's own sheet ``marks_<NAME>.csv`` with a column per rubric item and a comment column per
question (:mod:`autograder.marking.sheets`), so that each teaching assistant fills their own file;
``--marks FILE...`` reads any number of sheets of either kind together, refuses two files that mark
one answer differently, and keeps the decisions through :func:`autograder.marking.model.write_marks`,
the writer the marking page uses too. A number in a per-question column is a manual mark.
"""

from __future__ import annotations

import csv
import html
import json
from pathlib import Path

import markdown

from autograder.export import anonymize as anonymize_views
from autograder.grade import gradebook, outputs, report, shards, written
from autograder.marking import model, sheets
from autograder.marking.model import student_key, students  # the one copy; m5 review's names for them
from autograder.marking.sheets import COMMENT_SUFFIX, KEY, MAX_MARKS_BYTES, MAX_ROW, SEPARATORS  # noqa: F401 - the sheets' words

REVIEW_DIR = "review"
MARKS_FILE = "marks.csv"
MAX_COMMENT_CHARS = model.MAX_COMMENT_CHARS
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
            "added for any question, holds comments the student reads on their feedback page (m5 feedback). With --marker NAME "
            "--questions LIST each marker gets their own sheet, marks_NAME.csv, with a column per rubric item and a comment column; "
            "--marks merges any number of them."
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
            "странице отзыва (m5 feedback). С --marker ИМЯ --questions СПИСОК каждый проверяющий получает свой лист, "
            "marks_ИМЯ.csv, со столбцом на каждый пункт критериев и столбцом комментария; --marks объединяет любое их число."
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


def _page(title: str, body: str, lang: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">{CSP}<title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n"
    )


def write_review(
    grades_dir: Path,
    lang: str = "en",
    force: bool = False,
    anonymize: bool = False,
    marker: str | None = None,
    questions: list[str] | None = None,
) -> list[Path]:
    """The review pages and ``marks.csv`` (see the module docstring); returns the files written.
    A marks sheet with marks in it is never overwritten unless ``force``: ReviewError instead.

    ``anonymize``: the same in ``review/anonymized/`` with every student under a pseudonym, the
    marks sheet keyed by pseudonym, and the class report and similarity pairs rebuilt there with
    pseudonyms too (:mod:`.anonymize`); returns the pages, the report's files, then ``marks.csv``.

    ``marker``: instead of ``marks.csv``, that marker's sheet of rubric items and comments for
    ``questions`` (every question when None), ``marks_<marker>.csv`` (:mod:`autograder.marking.sheets`)."""
    grades_dir = Path(grades_dir)
    answers, rows = _load(grades_dir)
    by_student = students(answers)
    folder, marks = grades_dir / REVIEW_DIR, grades_dir / MARKS_FILE
    shown, keys = {s: s for s in by_student}, {s: student_key(s) for s in by_student}
    if anonymize:
        folder = folder / anonymize_views.FOLDER
        marks = folder / MARKS_FILE
    try:  # the marker's name and questions checked before anything is written
        chosen = sheets.chosen_questions(questions, model.questions()) if marker is not None else []
        marks = marks.parent / sheets.sheet_name(marker) if marker is not None else marks
    except model.MarkingError as exc:
        raise ReviewError(str(exc)) from None
    if not force and sheets.has_marks(marks):
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
    if marker is not None:
        rows = sheets.sheet_rows(model.class_answers(grades_dir), marker, chosen, model.rubric_items(), lang, shown if anonymize else None)
        return [index, *written_files, sheets.save_sheet(marks, rows, force=True)]  # its marks were checked above
    ids = [q["id"] for q in written.questions(lang)]
    with outputs.open_text(marks) as fh:
        sheet = csv.writer(fh)
        sheet.writerow([KEY, "student", *ids])
        sheet.writerow([MAX_ROW, "", *(f"{q['points']:g}" for q in written.questions(lang))])
        for student in order:
            given = by_student[student]
            sheet.writerow([keys[student], report.for_csv(shown[student]), *("" if given.get(i, "").strip() else "0" for i in ids)])
    return [index, *written_files, marks]


def read_marks(path: Path, by_student: dict[str, dict[str, str]], aliases: dict[str, str] | None = None) -> dict[str, dict[str, float]]:
    """{student: {question id: mark}} from one filled sheet of either kind (blank answers 0);
    ReviewError naming the row and the column.

    Rows are matched by their ``key`` (the student's id that :func:`write_review` wrote, or, in the
    sheet written with ``anonymize``, a pseudonym of ``aliases``: {pseudonym: student}); a file
    written before the key column existed is matched by its ``student`` column."""
    return read_marks_and_comments(path, by_student, aliases)[0]


def read_marks_and_comments(
    path: Path, by_student: dict[str, dict[str, str]], aliases: dict[str, str] | None = None
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, str]]]:
    """(marks as :func:`read_marks` reads them, {student: {question id: comment}})."""
    known, items = model.questions(), model.rubric_items()
    try:
        sheet = sheets.read_sheet(Path(path), by_student, items, known, aliases)
    except model.MarkingError as exc:
        raise ReviewError(str(exc)) from None
    marks: dict[str, dict[str, float]] = {s: {} for s in sheet.rows}
    comments: dict[str, dict[str, str]] = {}
    for (student, question), marked in sorted(sheet.marked.items()):
        marks[student][question] = model.mark_of(marked.decision, items, known[question].points)
        if marked.decision.comment:
            comments.setdefault(student, {})[question] = marked.decision.comment
    for student in sheet.rows:  # a blank answer the sheet has a column for is 0
        marks[student].update({c.question: 0.0 for c in sheet.columns if not by_student[student].get(c.question, "").strip()})
    return marks, comments


def merge_marks(grades_dir: Path, marks_path: Path | list[Path], csv_format: str = "m5", partial: bool = False) -> Path:
    """Keep the written marks of one or several filled sheets in the gradebook (``written_marks.json``)
    and rebuild every sheet from it (``grades.csv``, ``grades_final.csv``, every LMS export;
    :func:`autograder.marking.sheets.merge_sheets`). Nothing is written unless every file is valid.
    ``partial``: answered questions no file marks yet are left out rather than refused.
    Returns the path of ``grades.csv``."""
    grades_dir = Path(grades_dir)
    answers, _ = _load(grades_dir)
    paths = [Path(p) for p in marks_path] if isinstance(marks_path, (list, tuple)) else [Path(marks_path)]
    try:
        aliases = anonymize_views.aliases(grades_dir, students(answers))
        sheets.merge_sheets(grades_dir, paths, None if csv_format == "m5" else csv_format, aliases, partial)
    except (anonymize_views.AnonymizeError, model.MarkingError, gradebook.GradebookError) as exc:
        raise ReviewError(str(exc)) from None
    return grades_dir / "grades.csv"
