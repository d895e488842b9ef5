"""The spreadsheet route of marking: a marks sheet per marker, read back as decisions.

``write_sheet`` writes ``marks_<marker>.csv`` for one marker and the questions they mark:

* row 1: ``key``, ``student``, one column per rubric item of each question (``q02_answer#1``),
  then ``<question>_comment`` per question (what the student reads on their feedback page);
* row 2 (``max``): each item's points; row 3 (``rubric``): each item's wording for the marker and,
  under ``student``, how to fill the cells; row 4 (``marker``): the marker's name, so the
  decisions read back know who marked them, whatever the file is renamed to;
* one row per student who answered at least one of the questions. A blank answer is worth 0
  without a marker: its cells say so (``blank``) and take no mark.

The marker writes ``1``, ``x``, ``yes`` or ``да`` in the cell of each item the answer earns, and
``0`` (or nothing) elsewhere. A question whose item cells are all left empty, with no comment, is
not marked yet; to give 0, write ``0`` in one of its cells.

The older sheet of ``m5 review`` (``marks.csv``: one column per question holding a number) is
read by the same reader: a number is a manual mark (:attr:`model.Decision.manual`); such a sheet
keeps its rule of one row for every student.

``read_sheets`` reads several files (each a regular file of at most 5 MB, UTF-8 with or without a
BOM, separated by commas, semicolons or tabs) and checks all of them before anything is written:
an unknown student, question or rubric item, a mark on a blank answer, a malformed cell, an
answered question nobody marked, and two files marking one answer differently are each refused in
one line naming the file, the row and the column. ``merge_sheets`` then keeps the decisions in the
gradebook through :func:`model.write_marks`, as the marking page does: the same marks give the same
files byte for byte, whichever route they came by.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grade import outputs, report
from autograder.grade.student_files import SubmissionError, read_bytes
from autograder.marking import model

KEY = "key"  # the first column: a student's id that no spreadsheet or CSV escaping can change
STUDENT = "student"
MAX_ROW = "max"
RUBRIC_ROW = "rubric"
MARKER_ROW = "marker"
PREAMBLE = (MAX_ROW, RUBRIC_ROW, MARKER_ROW)  # the rows between the header and the students, in this order
COMMENT_SUFFIX = "_comment"  # a column per question: the marker's comment, shown to the student
MAX_MARKS_BYTES = 5 * 1024 * 1024  # a class of thousands is a few hundred kB
SEPARATORS = (",", ";", "\t")  # what spreadsheets save as CSV (Excel in a Russian locale writes ";")
SHEET_PREFIX = "marks_"
MAX_MARKER_CHARS = model.MAX_MARKER_CHARS
# what a marker may write in an item cell, compared case-folded ("х" is the Cyrillic letter)
APPLIED = frozenset({"1", "1.0", "1,0", "x", "х", "yes", "y", "да", "д", "+", "true", "истина"})
NOT_APPLIED = frozenset({"", "0", "0.0", "0,0", "no", "n", "нет", "-", "false", "ложь"})
BLANK_WORDS = {"en": "blank", "ru": "пусто"}  # the item cells of a blank answer
NOT_MARKED_ON_BLANK = NOT_APPLIED | frozenset(BLANK_WORDS.values())
WORDS = {
    "en": {
        "how": "1, x, yes = the answer earns the item; 0 = it does not; a question left all empty is not marked yet",
        "comment": "comment the student reads",
    },
    "ru": {
        "how": "1, x, да — пункт засчитан; 0 — не засчитан; вопрос, где все клетки пусты, ещё не проверен",
        "comment": "комментарий, который прочтёт студент",
    },
}

MESSAGES = {
    "en": {
        "unreadable_file": "--marks {problem}",
        "not_utf8": "not UTF-8 text (save it as CSV UTF-8)",
        "bad_csv": "unreadable CSV ({problem})",
        "marker": "--marker {name}: give a name of 1 to {n} printable characters",
        "unknown_question_arg": "--questions: unknown question {question} (known: {known})",
        "no_questions": "--questions: give at least one question",
        "has_marks": "{path} has marks in it: merge it with --marks, or add --force to write a blank one over it",
        "no_files": "--marks: give at least one marks file",
        "header": "row 1 must be the header written by m5 review (key, student, question ids)",
        "max_row": "row 2 must be the 'max' row m5 review wrote",
        "unknown_question": "unknown question {question}; keep the header m5 review wrote",
        "unknown_item": "unknown rubric item of {question}; write a new sheet (m5 review --marker)",
        "repeated": "repeated; keep one column of each",
        "mixed": "a mark and rubric items for one question; keep one or the other",
        "points": "the item is worth {points}, the sheet says {cell}; write a new sheet (m5 review --marker)",
        "not_a_mark": "{cell} is not a mark (1, x, yes or да: the answer earns the item; 0: not)",
        "not_a_number": "{cell} is not a number",
        "outside": "{value} is outside 0..{points}",
        "not_marked": "an answered question is not marked",
        "on_blank": "a mark on a blank answer (it is 0 and takes no mark or comment)",
        "comment_only": "a comment, but no item marked (write 0 in an item cell to give 0)",
        "unknown_key": "unknown {what} {value}",
        "again": "student {name} again (row {first})",
        "too_long": "{cells} cells, the header has {header}",
        "no_row": "no row for student {name}",
        "no_row_answered": "no row for student {name}, who answered {question}",
        "no_column": "no marks file has a column for {question}, and student {name} answered it",
        "differs": (
            "marked differently in {other}, row {other_row} (the same student's {question}); agree on one decision, or leave it to one file"
        ),
    },
    "ru": {
        "unreadable_file": "--marks {problem}",
        "not_utf8": "не текст UTF-8 (сохраните его как CSV UTF-8)",
        "bad_csv": "CSV не читается ({problem})",
        "marker": "--marker {name}: укажите имя из 1–{n} печатных символов",
        "unknown_question_arg": "--questions: неизвестный вопрос {question} (есть: {known})",
        "no_questions": "--questions: укажите хотя бы один вопрос",
        "has_marks": "{path}: в нём уже есть баллы: объедините его через --marks или добавьте --force, чтобы записать пустой поверх",
        "no_files": "--marks: укажите хотя бы один файл баллов",
        "header": "строка 1 должна быть заголовком, записанным m5 review (key, student, id вопросов)",
        "max_row": "строка 2 должна быть строкой 'max', записанной m5 review",
        "unknown_question": "неизвестный вопрос {question}; оставьте заголовок, записанный m5 review",
        "unknown_item": "неизвестный пункт критериев вопроса {question}; запишите новый лист (m5 review --marker)",
        "repeated": "повторяется; оставьте по одному столбцу",
        "mixed": "и балл, и пункты критериев для одного вопроса; оставьте что-то одно",
        "points": "пункт стоит {points}, в листе — {cell}; запишите новый лист (m5 review --marker)",
        "not_a_mark": "{cell} — не отметка (1, x, yes или да: пункт засчитан; 0: нет)",
        "not_a_number": "{cell} — не число",
        "outside": "{value} вне 0..{points}",
        "not_marked": "ответ на вопрос не проверен",
        "on_blank": "отметка у пустого ответа (он равен 0, без отметок и комментария)",
        "comment_only": "комментарий есть, а пункты не отмечены (чтобы поставить 0, впишите 0 в клетку пункта)",
        "unknown_key": "неизвестный {what} {value}",
        "again": "студент {name} ещё раз (строка {first})",
        "too_long": "клеток: {cells}, в заголовке: {header}",
        "no_row": "нет строки студента {name}",
        "no_row_answered": "нет строки студента {name}, а он ответил на {question}",
        "no_column": "ни в одном файле баллов нет столбца {question}, а студент {name} на него ответил",
        "differs": (
            "в {other}, строка {other_row}, отмечено иначе (тот же ответ на {question}); "
            "договоритесь об одном решении или оставьте его одному файлу"
        ),
    },
}


@dataclass(frozen=True)
class At:
    """Where in a marks file a problem is: the file, and its row and column when known."""

    path: Path | None = None
    row: int | None = None
    column: str | None = None

    def say(self, lang: str) -> str:
        row, column = ("row", "column") if lang == "en" else ("строка", "столбец")
        parts = [
            f"{row} {self.row}" if self.row is not None else "",
            f"{column} {report.for_terminal(self.column)!r}" if self.column is not None else "",
        ]
        place = ", ".join(p for p in parts if p)
        path = report.for_terminal(str(self.path)) if self.path is not None else ""
        return f"{path}: {place}" if path and place else path or place


def refuse(key: str, at: At = At(), **fields) -> model.MarkingError:
    """A one-line refusal (English) with ``.text`` in both languages, as the marking page's are."""
    text = {}
    for lang in model.LANGS:
        where, what = at.say(lang), MESSAGES[lang][key].format(**fields)
        text[lang] = f"{where}: {what}" if where else what
    error = model.MarkingError(text["en"])
    error.text = text
    return error


def _q(value) -> str:
    """A value a marker or student wrote, quoted and on one printable line."""
    return repr(report.for_terminal(value))


# ---------------------------------------------------------------- reading a CSV as a spreadsheet saves it
def read_rows(path: Path) -> list[list[str]]:
    """The rows of a marks file: a regular file (no link, FIFO or device) of at most
    :data:`MAX_MARKS_BYTES`, UTF-8 with or without a BOM, separated by , ; or tab."""
    try:
        data = read_bytes(path, MAX_MARKS_BYTES)
    except SubmissionError as exc:
        raise refuse("unreadable_file", problem=str(exc)) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise refuse("not_utf8", At(path)) from None
    first = text.split("\n", 1)[0]
    separator = next((s for s in SEPARATORS if first.startswith(f"{KEY}{s}") or first.startswith(f"{STUDENT}{s}")), ",")
    try:
        return list(csv.reader(io.StringIO(text, newline=""), delimiter=separator))
    except csv.Error as exc:
        raise refuse("bad_csv", At(path), problem=str(exc)) from None


def has_marks(path: Path) -> bool:
    """Whether a marks file holds something a marker entered (a cell the writer did not fill)."""
    if not path.exists() and not path.is_symlink():
        return False
    try:
        rows = read_rows(path)
    except model.MarkingError:
        return True  # unreadable as ours: somebody's file, not ours to overwrite
    first = 2 if rows and rows[0][:2] == [KEY, STUDENT] else 1
    students = [row for row in rows[1:] if row[:1] and row[0] not in PREAMBLE]
    return any(cell.strip().casefold() not in NOT_MARKED_ON_BLANK for row in students for cell in row[first:])


# ---------------------------------------------------------------- writing a marker's sheet
def check_marker(marker: str) -> str:
    """A marker's name: printable text of 1 to :data:`MAX_MARKER_CHARS` characters."""
    name = model.marker_name(marker)
    if name is None:
        raise refuse("marker", name=_q(marker), n=MAX_MARKER_CHARS)
    return name


def sheet_name(marker: str) -> str:
    """``marks_<marker>.csv`` with the name made safe for any file system: letters (any script),
    digits, ``-`` and ``_`` kept, everything else ``_``."""
    name = unicodedata.normalize("NFC", check_marker(marker))
    safe = re.sub(r"_+", "_", "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)).strip("_-")
    return f"{SHEET_PREFIX}{safe or 'marker'}.csv"


def chosen_questions(wanted: list[str] | None, known: dict[str, model.Question]) -> list[str]:
    """The questions of a sheet in the gradebook's order: ``wanted`` (every question when None);
    MarkingError for an unknown one."""
    if wanted is None:
        return list(known)
    unknown = [q for q in wanted if q not in known]
    if unknown:
        raise refuse("unknown_question_arg", question=_q(unknown[0]), known=", ".join(known))
    if not wanted:
        raise refuse("no_questions")
    return [q for q in known if q in wanted]


def _natural(name: str) -> tuple:
    """``Student 9`` before ``Student 10``: runs of digits compare as numbers."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name))


def sheet_rows(
    answers: list[model.Answer],
    marker: str,
    chosen: list[str],
    items: dict[str, model.RubricItem],
    lang: str = "en",
    pseudonyms: dict[str, str] | None = None,
) -> list[list[str]]:
    """The rows of a marker's sheet (see the module docstring). ``pseudonyms`` ({student: pseudonym}):
    students keyed and named by pseudonym only, in pseudonym order."""
    marker = check_marker(marker)
    columns = [i for q in chosen for i in items if items[i].question == q]
    text = {(a.student, a.question): a.text for a in answers if a.question in chosen}
    students = sorted({s for (s, _), t in text.items() if t.strip()})
    if pseudonyms is not None:
        students.sort(key=lambda s: _natural(pseudonyms[s]))
    words = WORDS[lang]
    rows = [
        [KEY, STUDENT, *columns, *(q + COMMENT_SUFFIX for q in chosen)],
        [MAX_ROW, "", *(f"{items[i].points:g}" for i in columns), *("" for _ in chosen)],
        [RUBRIC_ROW, words["how"], *(report.for_csv(items[i].marker[lang]) for i in columns), *([words["comment"]] * len(chosen))],
        [MARKER_ROW, report.for_csv(marker), *("" for _ in columns), *("" for _ in chosen)],
    ]
    for student in students:
        blank = {q for q in chosen if not text.get((student, q), "").strip()}
        cells = [BLANK_WORDS[lang] if items[i].question in blank else "" for i in columns]
        key, shown = (pseudonyms[student], pseudonyms[student]) if pseudonyms is not None else (model.student_key(student), student)
        rows.append([key, report.for_csv(shown), *cells, *("" for _ in chosen)])
    return rows


def save_sheet(path: Path, rows: list[list[str]], force: bool = False) -> Path:
    """Write ``rows`` to ``path`` atomically; a sheet holding marks is kept unless ``force``."""
    if not force and has_marks(path):
        raise refuse("has_marks", path=report.for_terminal(str(path)))
    path.parent.mkdir(parents=True, exist_ok=True)
    with outputs.open_text(path) as fh:
        csv.writer(fh).writerows(rows)
    return path


def write_sheet(
    folder: Path,
    marker: str,
    questions: list[str] | None = None,
    lang: str = "en",
    *,
    force: bool = False,
    pseudonyms: dict[str, str] | None = None,
    where: Path | None = None,
    items: dict[str, model.RubricItem] | None = None,
) -> Path:
    """``marks_<marker>.csv`` for the gradebook ``folder`` (written in ``where``, default the
    gradebook itself) with the chosen ``questions`` (all when None); returns its path. With
    ``pseudonyms`` ({student: pseudonym}, as ``m5 review --anonymize`` assigns them) no real id is in it."""
    folder = Path(folder)
    known = model.questions()
    chosen = chosen_questions(questions, known)
    items = model.rubric_items() if items is None else items
    rows = sheet_rows(model.class_answers(folder, known), marker, chosen, items, lang, pseudonyms)
    return save_sheet(Path(where or folder) / sheet_name(marker), rows, force)


# ---------------------------------------------------------------- reading a filled sheet
@dataclass(frozen=True)
class Column:
    """One marking column: a question's mark (a number), one of its items, or its comment."""

    name: str
    question: str
    kind: str  # "mark", "item" or "comment"


@dataclass(frozen=True)
class Marked:
    """A decision read from a sheet, and where: the file, the row and each of its cells' meaning."""

    decision: model.Decision
    path: Path
    row: int
    cells: dict[str, object]  # column name: True/False (item), a number (mark), text (comment)


@dataclass
class Sheet:
    path: Path
    marker: str
    columns: list[Column]
    numbers: bool  # the older sheet (a number per question): a row for every student
    rows: dict[str, int] = field(default_factory=dict)  # student: row number
    marked: dict[tuple[str, str], Marked] = field(default_factory=dict)


def _column(path: Path, name: str, items: dict[str, model.RubricItem], known: dict[str, model.Question]) -> Column:
    """What a header cell names; MarkingError for an unknown question or rubric item."""
    where = At(path, 1, name)
    if "#" in name:
        question = name.split("#", 1)[0]
        if question not in known:
            raise refuse("unknown_question", where, question=_q(question))
        if name not in items or items[name].question != question:
            raise refuse("unknown_item", where, question=question)
        return Column(name, question, "item")
    if name.endswith(COMMENT_SUFFIX) and name[: -len(COMMENT_SUFFIX)] in known:
        return Column(name, name[: -len(COMMENT_SUFFIX)], "comment")
    if name not in known:
        raise refuse("unknown_question", where, question=_q(name))
    return Column(name, name, "mark")


def _header(path: Path, rows: list[list[str]], items, known) -> tuple[bool, list[Column]]:
    """(keyed by ``key``, the marking columns) of a sheet's header; MarkingError naming the column."""
    keyed = bool(rows and rows[0][:2] == [KEY, STUDENT])
    if len(rows) < 2 or not rows[0] or not (keyed or rows[0][0] == STUDENT):
        raise refuse("header", At(path))
    names = rows[0][2 if keyed else 1 :]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise refuse("repeated", At(path, 1, repeated[0]))
    columns = [_column(path, name, items, known) for name in names]
    kinds = {}
    for column in columns:
        if column.kind != "comment":
            kinds.setdefault(column.question, set()).add(column.kind)
    mixed = [q for q, k in kinds.items() if len(k) > 1]
    if mixed:
        raise refuse("mixed", At(path, 1, mixed[0]))
    if rows[1][:1] != [MAX_ROW]:
        raise refuse("max_row", At(path))
    return keyed, columns


def _check_points(path: Path, rows: list[list[str]], first: int, columns: list[Column], items) -> None:
    """The ``max`` row gives each item the points it has now (else the marker saw other points)."""
    for column, cell in zip(columns, [*rows[1][first:], *[""] * len(columns)]):
        if column.kind != "item":
            continue
        points = items[column.name].points
        if _number(cell) != points:
            raise refuse("points", At(path, 2, column.name), points=f"{points:g}", cell=_q(cell))


def _number(cell: str) -> float | None:
    """A number as a spreadsheet writes it (a decimal comma too), or None."""
    try:
        return float(cell.strip().replace(",", "."))
    except ValueError:
        return None


def _marker(path: Path, rows: list[list[str]]) -> str:
    """The name in the ``marker`` row (its formula guard taken off), else the file's name."""
    for row in rows[1 : 1 + len(PREAMBLE)]:
        if row[:1] == [MARKER_ROW] and len(row) > 1 and row[1].strip():
            name = row[1].strip()
            return name[1:] if name.startswith("'") and name[1:].startswith(report.FORMULA_PREFIXES) else name
    return path.stem


def _item_cell(where: At, cell: str) -> bool | None:
    """True (applied), False (written not applied) or None (left empty) from an item cell."""
    value = cell.strip().casefold()
    if value in APPLIED:
        return True
    if value in NOT_APPLIED:
        return None if not value else False
    raise refuse("not_a_mark", where, cell=_q(cell))


def _mark_cell(where: At, cell: str, question: model.Question, answered: bool) -> float | None:
    """A number from 0 to the question's points, or None for an empty cell of a blank answer."""
    if not cell.strip():
        if answered:
            raise refuse("not_marked", where)
        return None
    value = _number(cell)
    if value is None:
        raise refuse("not_a_number", where, cell=_q(cell))
    if not 0 <= value <= question.points:
        raise refuse("outside", where, value=f"{value:g}", points=f"{question.points:g}")
    return value


def _quiet_on_blank(column: Column, cell: str) -> bool:
    """Whether a cell of a blank answer says nothing: empty, 0, ``blank``, ``-``."""
    if column.kind == "comment":
        return not cell.strip()
    if column.kind == "mark":
        return not cell.strip() or _number(cell) == 0
    return cell.strip().casefold() in NOT_MARKED_ON_BLANK


def _question_cells(where_of, question: model.Question, cells: dict[Column, str], answered: bool) -> dict[str, object] | None:
    """The meaning of one question's cells in a row, {column: value}, or None when there is no
    decision (a blank answer, or one not marked yet). A blank answer takes no mark or comment."""
    if not answered:
        loud = [c for c, cell in cells.items() if not _quiet_on_blank(c, cell)]
        if loud:
            raise refuse("on_blank", where_of(loud[0]))
        return None
    meaning: dict[str, object] = {}
    for column, cell in cells.items():
        if column.kind == "comment":
            meaning[column.name] = cell.strip()[: model.MAX_COMMENT_CHARS]
        elif column.kind == "mark":
            meaning[column.name] = _mark_cell(where_of(column), cell, question, answered)
        else:
            meaning[column.name] = _item_cell(where_of(column), cell)
    if all(v is None for c, v in meaning.items() if not c.endswith(COMMENT_SUFFIX)):
        comment = next((c for c in cells if c.kind == "comment" and meaning[c.name]), None)
        if comment is not None:
            raise refuse("comment_only", where_of(comment))
        return None
    return meaning


def _decision(meaning: dict[str, object], marker: str) -> model.Decision:
    """The decision a question's cells say: the items marked applied, the comment, a number."""
    items = tuple(name for name, value in meaning.items() if value is True)
    comment = next((str(v) for name, v in meaning.items() if name.endswith(COMMENT_SUFFIX) and "#" not in name), "")
    manual = next((float(v) for v in meaning.values() if type(v) is float), None)
    return model.Decision(items, comment, marker, manual)


def _students_by_key(keyed: bool, by_student: dict[str, dict[str, str]], aliases: dict[str, str] | None) -> dict[str, str]:
    """{what a row's first cell says: student}: the key (or a pseudonym of ``aliases``), or in a
    sheet written before the key column existed, the student's id as the sheet shows it."""
    if not keyed:
        return {report.for_csv(s): s for s in by_student}
    known = {model.student_key(s): s for s in by_student}
    known.update({p: s for p, s in (aliases or {}).items() if s in by_student})
    return known


def read_sheet(
    path: Path,
    by_student: dict[str, dict[str, str]],
    items: dict[str, model.RubricItem],
    known: dict[str, model.Question],
    aliases: dict[str, str] | None = None,
) -> Sheet:
    """One filled sheet, every cell checked (see the module docstring); MarkingError naming the
    file, the row and the column of the first problem."""
    path = Path(path)
    rows = read_rows(path)
    keyed, columns = _header(path, rows, items, known)
    first = 2 if keyed else 1
    _check_points(path, rows, first, columns, items)
    sheet = Sheet(path, _marker(path, rows), columns, any(c.kind == "mark" for c in columns))
    students = _students_by_key(keyed, by_student, aliases)
    questions = list(dict.fromkeys(c.question for c in columns))
    start = 2  # after the header and the max row, the rubric and marker rows when there
    while start < min(len(rows), 1 + len(PREAMBLE)) and rows[start][:1] and rows[start][0] in PREAMBLE[1:]:
        start += 1
    for number, row in enumerate(rows[start:], start + 1):
        if not any(cell.strip() for cell in row):
            continue
        if row[0] not in students:
            what = KEY if keyed else STUDENT
            raise refuse("unknown_key", At(path, number, what), what=what, value=_q(row[0]))
        student = students[row[0]]
        if student in sheet.rows:
            raise refuse("again", At(path, number), name=_q(row[first - 1]), first=sheet.rows[student])
        if len(row) > len(rows[0]) and any(cell.strip() for cell in row[len(rows[0]) :]):
            raise refuse("too_long", At(path, number), cells=len(row), header=len(rows[0]))
        sheet.rows[student] = number
        cells = dict(zip(columns, [*row[first:], *[""] * len(columns)]))
        for question in questions:
            mine = {c: v for c, v in cells.items() if c.question == question}
            answered = bool(by_student[student].get(question, "").strip())
            meaning = _question_cells(lambda c, number=number: At(path, number, c.name), known[question], mine, answered)
            if meaning is not None:
                sheet.marked[(student, question)] = Marked(_decision(meaning, sheet.marker), path, number, meaning)
    if sheet.numbers:
        missing = sorted(set(by_student) - set(sheet.rows))
        if missing:
            raise refuse("no_row", At(path), name=_q(_shown(missing[0], aliases)))
    return sheet


def _shown(student: str, aliases: dict[str, str] | None) -> str:
    """How a message names a student: by pseudonym when they have one (a TA may read it), else by id."""
    return next((p for p, s in sorted((aliases or {}).items()) if s == student), student)


# ---------------------------------------------------------------- several sheets: one set of decisions
def same(a: model.Decision, b: model.Decision) -> bool:
    """Two markers' decisions agree: the same items, comment and number (who marked aside)."""
    return (a.items, a.comment, a.manual) == (b.items, b.comment, b.manual)


def _meaning(cells: dict[str, object], name: str) -> object:
    """A column's meaning in a row, an absent or empty one as its default (not applied, no comment)."""
    value = cells.get(name)
    return "" if name.endswith(COMMENT_SUFFIX) and value is None else False if value is None and "#" in name else value


def _where_they_differ(a: Marked, b: Marked) -> str:
    """The first column of ``b``'s whose meaning differs from ``a``'s (``b``'s first if none does)."""
    return next((name for name in b.cells if _meaning(a.cells, name) != _meaning(b.cells, name)), next(iter(b.cells)))


def combine(sheets: list[Sheet]) -> dict[tuple[str, str], Marked]:
    """Every answer's decision over ``sheets``; an answer two files mark differently is refused,
    naming both files, the rows and the column."""
    out: dict[tuple[str, str], Marked] = {}
    for sheet in sheets:
        for answer, marked in sheet.marked.items():
            earlier = out.setdefault(answer, marked)
            if earlier is not marked and not same(earlier.decision, marked.decision):
                column = _where_they_differ(earlier, marked)
                where = At(marked.path, marked.row, column)
                raise refuse("differs", where, other=report.for_terminal(str(earlier.path)), other_row=earlier.row, question=answer[1])
    return out


def check_covered(sheets: list[Sheet], marked: dict, answers: list[model.Answer], aliases: dict[str, str] | None = None) -> None:
    """Every answered question of the questions the files hold is marked; MarkingError naming
    where its mark is missing."""
    for answer in answers:
        if answer.blank or (answer.student, answer.question) in marked:
            continue
        holding = [s for s in sheets if any(c.question == answer.question for c in s.columns)]
        with_row = [s for s in holding if answer.student in s.rows]
        if with_row:
            sheet = with_row[0]
            column = next(c.name for c in sheet.columns if c.question == answer.question)
            row = sheet.rows[answer.student]
            raise refuse("not_marked", At(sheet.path, row, column))
        shown = _q(_shown(answer.student, aliases))
        if holding:
            raise refuse("no_row_answered", At(holding[0].path), name=shown, question=answer.question)
        raise refuse("no_column", name=shown, question=answer.question)


def read_sheets(
    folder: Path,
    paths: list[Path],
    aliases: dict[str, str] | None = None,
    items: dict[str, model.RubricItem] | None = None,
    partial: bool = False,
    previous: dict[tuple[str, str], model.Decision] | None = None,
) -> dict[tuple[str, str], model.Decision]:
    """{(student, question): decision} over the filled sheets ``paths`` of the gradebook ``folder``,
    each decision with its file's marker; blank answers are left out (they are 0 without a marker).
    ``aliases`` ({pseudonym: student}): how an anonymized sheet's rows are matched. Unless
    ``partial``, every answered question must be marked in some file or in ``previous`` (what the
    gradebook already holds)."""
    if not paths:
        raise refuse("no_files")
    known = model.questions()
    items = model.rubric_items() if items is None else items
    answers = model.class_answers(Path(folder), known)
    by_student: dict[str, dict[str, str]] = {}
    for answer in answers:
        by_student.setdefault(answer.student, {})[answer.question] = answer.text
    sheets = [read_sheet(Path(p), by_student, items, known, aliases) for p in paths]
    marked = combine(sheets)
    if not partial:
        check_covered(sheets, {**dict.fromkeys(previous or {}), **marked}, answers, aliases)
    return {answer: m.decision for answer, m in sorted(marked.items())}


def merge_sheets(
    folder: Path,
    paths: list[Path],
    csv_format: str | None = None,
    aliases: dict[str, str] | None = None,
    partial: bool = False,
) -> Path:
    """Add the decisions of the filled sheets ``paths`` to those the gradebook holds (a sheet's
    decision replaces the held one for the same answer; every other held mark stays, so markers'
    files can be merged one at a time) and rebuild its sheets (:func:`model.write_marks`, every
    blank answer 0); nothing is written unless every file is valid. Returns ``written_marks.json``."""
    folder = Path(folder)
    previous, recorded = model.read_decisions(folder)
    items = {**model.rubric_items(), **recorded}  # an item edited or added on the marking page keeps its points
    decisions = read_sheets(folder, paths, aliases, items, partial, previous)
    merged = {**previous, **decisions}
    return model.write_marks(folder, model.with_blank_answers(merged, model.class_answers(folder)), items, csv_format)
