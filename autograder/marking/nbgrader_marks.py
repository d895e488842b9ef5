"""The written answers' marks and comments into nbgrader's gradebook (``gradebook.db``), for courses
whose students read ``nbgrader generate_feedback``'s pages.

:func:`push_marks` takes every mark our gradebook holds (the ``--out`` folder of ``m5 grade``,
``written_marks.json``) and writes, through nbgrader's own API (:class:`nbgrader.api.Gradebook`):

* the grade's ``manual_score``: our mark (``needs_manual_grade`` cleared, as nbgrader's formgrader does);
* the comment's ``manual_comment``: the applied rubric items as the student reads them, in the
  notebook's language, each with its points, then the marker's comment (``None`` when there is
  neither, so nbgrader's own "No response." of a blank answer stays);

on the notebook the student submitted: ``written_answers.json`` names it by its path (``label``),
``.../<assignment>/<notebook>.ipynb``; a lab question goes to the student's lab notebook.

Everything is looked up before anything changes, and one commit writes it all: what nbgrader does
not know (a student, an assignment, a notebook, a submission, a grade cell) is skipped and reported
with the reason; a mark above the cell's ``max_score`` is refused in one line and nothing is
written. An autograded (code) cell is never touched. The same marks give the same database: a
second run changes nothing.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import sqlalchemy
from nbgrader import api as nbapi

from autograder.grade import gradebook, report, written
from autograder.marking import model

LANGS = model.LANGS
TOLERANCE = 1e-9  # a mark this close above max_score is max_score (floating sums of item points)
SHOWN_CHARS = 200  # of one name or path in a message
NEEDED_TABLES = {"student", "assignment", "notebook", "grade_cells", "solution_cells", "grade", "comment"}

REASONS = {
    "question": ("not a written question of this module", "не письменный вопрос этого модуля"),
    "no_notebook": (
        "no submitted {kind} notebook in written_answers.json",
        "в written_answers.json нет сданной тетради ({kind})",
    ),
    "label": ("the notebook's path {label} names no assignment folder", "путь тетради {label} не называет папку задания"),
    "text": ("text nbgrader cannot store (a lone surrogate)", "текст, который nbgrader не может сохранить (одиночный суррогат)"),
    "student": ("nbgrader knows no student {student}", "в nbgrader нет студента {student}"),
    "assignment": ("nbgrader knows no assignment {assignment}", "в nbgrader нет задания {assignment}"),
    "notebook": (
        "nbgrader's assignment {assignment} has no notebook {notebook}",
        "в задании {assignment} в nbgrader нет тетради {notebook}",
    ),
    "submission": (
        "nbgrader has no submission of {assignment}/{notebook} by {student}",
        "в nbgrader нет сданной тетради {assignment}/{notebook} студента {student}",
    ),
    "cell": ("{notebook} has no grade cell {question} in nbgrader", "в тетради {notebook} в nbgrader нет оцениваемой ячейки {question}"),
    "code": (
        "{question} is an autograded code cell in nbgrader: never touched",
        "{question} в nbgrader — автоматически проверяемая ячейка кода: не трогаем",
    ),
    "comment": (
        "{notebook} has no solution cell {question} in nbgrader for the comment",
        "в тетради {notebook} в nbgrader нет ячейки решения {question} для комментария",
    ),
}
WORDS = {
    "en": {
        "head": "nbgrader gradebook: {written} marks in place ({changed} changed), {comments} with a comment",
        "absent": "{absent} blank marks of notebooks never submitted: nothing to write",
        "skipped": "{n} skipped:",
        "over": "{student}, {question} ({where}): mark {mark:g} is above the nbgrader cell's max_score {maximum:g}; nothing written{more}",
        "more": " ({n} more such marks)",
        "lang": "lang_of_feedback must be one of en, ru, not {lang}",
        "missing": "{path}: no such nbgrader gradebook; nothing written",
        "not_nbgrader": "{url}: not an nbgrader gradebook (no {tables} table); nothing written",
        "database": "{url}: the nbgrader gradebook could not be used ({error}); nothing written",
        "unreadable": "{folder}: our gradebook could not be read ({error}); nothing written",
    },
    "ru": {
        "head": "журнал nbgrader: оценок на месте — {written} (изменено {changed}), с комментарием — {comments}",
        "absent": "пустых оценок за несданные тетради — {absent}: записывать нечего",
        "skipped": "пропущено {n}:",
        "over": "{student}, {question} ({where}): оценка {mark:g} больше max_score ячейки nbgrader ({maximum:g}); ничего не записано{more}",
        "more": " (и ещё таких оценок: {n})",
        "lang": "lang_of_feedback должен быть en или ru, а не {lang}",
        "missing": "{path}: журнала nbgrader нет; ничего не записано",
        "not_nbgrader": "{url}: не журнал nbgrader (нет таблицы {tables}); ничего не записано",
        "database": "{url}: журналом nbgrader не удалось воспользоваться ({error}); ничего не записано",
        "unreadable": "{folder}: не удалось прочитать наш журнал ({error}); ничего не записано",
    },
}


def shown_in_message(value) -> str:
    """``value`` fit for a one-line message: every non-printable character escaped, cut at :data:`SHOWN_CHARS`."""
    text = str(value)
    return report.for_terminal(text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…")


class PushError(ValueError):
    """Marks that cannot go into nbgrader's gradebook: one line (English, ``text("ru")`` in Russian); nothing written."""

    def __init__(self, key: str, **fields):
        self.key, self.fields = key, {k: shown_in_message(v) if isinstance(v, str) else v for k, v in fields.items()}
        super().__init__(self.text("en"))

    def text(self, lang: str = "en") -> str:
        """The message in ``lang`` (en or ru)."""
        words = WORDS[lang if lang in WORDS else "en"]
        more = self.fields.get("others", 0)
        return words[self.key].format(**self.fields, more=words["more"].format(n=more) if more else "")


@dataclass(frozen=True)
class Target:
    """Where one mark goes in nbgrader: the student's submitted notebook and the answer's cell."""

    student: str
    question: str
    assignment: str
    notebook: str
    lang: str

    @property
    def where(self) -> str:
        return f"{self.assignment}/{self.notebook}"


@dataclass(frozen=True)
class Skipped:
    """A mark left out: who, which question, where (``assignment/notebook`` when known) and why (a key of :data:`REASONS`)."""

    student: str
    question: str
    reason: str
    where: str = ""
    fields: tuple[tuple[str, str], ...] = ()

    def text(self, lang: str = "en") -> str:
        """One line: the student, the question, where and why, in ``lang``."""
        why = REASONS[self.reason][LANGS.index(lang) if lang in LANGS else 0]
        values = {k: shown_in_message(v) for k, v in dict(self.fields).items()}
        where = f" ({shown_in_message(self.where)})" if self.where else ""
        return f"{shown_in_message(self.student)}, {shown_in_message(self.question)}{where}: {why.format(**values)}"


@dataclass
class Report:
    """What :func:`push_marks` did: marks in place (``written``, of which ``changed`` differed before),
    how many carry a comment, what was ``skipped`` and why, and ``absent``: blank marks of notebooks
    the student never submitted (nothing to write)."""

    written: int = 0
    changed: int = 0
    comments: int = 0
    absent: int = 0
    skipped: list[Skipped] = field(default_factory=list)

    def text(self, lang: str = "en") -> str:
        """The summary in ``lang`` (en or ru): counts, then one line per skipped mark."""
        words = WORDS[lang if lang in WORDS else "en"]
        lines = [words["head"].format(written=self.written, changed=self.changed, comments=self.comments)]
        if self.absent:
            lines.append(words["absent"].format(absent=self.absent))
        if self.skipped:
            lines.append(words["skipped"].format(n=len(self.skipped)))
            lines += [f"  - {s.text(lang)}" for s in self.skipped]
        return "\n".join(lines)


@dataclass(frozen=True)
class Marked:
    """One mark of our gradebook: the mark, the rubric items applied (ids) and the marker's comment."""

    mark: float
    items: tuple[str, ...] = ()
    comment: str = ""


@dataclass(frozen=True)
class Planned:
    """One mark to write: its target, the mark and the comment (None: no comment)."""

    target: Target
    mark: float
    comment: str | None


def db_url(db_url_or_path) -> str:
    """An SQLAlchemy URL: a URL (``scheme://...``) as given, a path as ``sqlite:///<absolute path>``.
    PushError when an SQLite file is not there (nbgrader, and SQLite, would create an empty one)."""
    text = str(db_url_or_path)
    if isinstance(db_url_or_path, str) and "://" in text:
        try:
            url = sqlalchemy.engine.make_url(text)
        except (sqlalchemy.exc.ArgumentError, ValueError):
            raise PushError("database", url="(unreadable database URL)", error="ArgumentError") from None
        if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:" and not Path(url.database).is_file():
            raise PushError("missing", path=url.database)
        return text
    path = Path(db_url_or_path)
    if not path.is_file():
        raise PushError("missing", path=str(path))
    return f"sqlite:///{path.resolve()}"


def place(label: str) -> tuple[str, str] | None:
    """(assignment, notebook) of a submitted notebook from its path: the folder above the file and
    the file's stem; None when the path has no folder."""
    parts = PurePosixPath(label.replace("\\", "/")).parts
    if len(parts) < 2 or not parts[-2] or not PurePosixPath(parts[-1]).stem:
        return None
    return parts[-2], PurePosixPath(parts[-1]).stem


def notebook_lang(assignment: str, notebook: str, forced: str | None = None) -> str:
    """The language of the feedback: ``forced`` when given, else the ``_en``/``_ru`` ending of the
    notebook's name, else of the assignment's, else English."""
    if forced:
        return forced
    for name in (notebook, assignment):
        for lang in LANGS:
            if name.endswith(f"_{lang}"):
                return lang
    return "en"


def read_marks(folder: Path) -> tuple[dict[tuple[str, str], Marked], dict[str, model.RubricItem]]:
    """Every mark our gradebook in ``folder`` holds ({(student, question): Marked}, the marks as
    :func:`autograder.grade.gradebook.load` checked them) with the items and comment each decision
    carries (:func:`autograder.marking.model.read_decisions`), and the rubric items: ``rubrics.toml``'s,
    updated by those the file recorded (an item edited or added while marking). A bare-number mark
    (the older format, or ``manual``) has no items. PushError when the gradebook cannot be read."""
    folder = Path(folder)
    try:
        marks = gradebook.load(folder).marks
        decisions, recorded = model.read_decisions(folder)
    except (gradebook.GradebookError, model.MarkingError) as exc:
        raise PushError("unreadable", folder=str(folder), error=str(exc)) from None
    out = {
        (student, question): Marked(float(marks[student][question]), decision.items if decision.manual is None else (), decision.comment)
        for (student, question), decision in decisions.items()
    }
    return out, model.rubric_items() | recorded


def as_text(text: str) -> str:
    """``text`` for nbgrader's feedback, which renders comments as Markdown with raw HTML passed
    through: ``&``, ``<`` and ``>`` escaped, so a comment (which may quote a student's answer)
    shows as written and never runs."""
    return html.escape(text, quote=False)


def comment_text(marked: Marked, items: dict[str, model.RubricItem], lang: str) -> str | None:
    """What the student reads: a Markdown line per applied rubric item (its student wording in
    ``lang`` and its points), then the marker's comment, HTML escaped (:func:`as_text`); None when
    there is neither."""
    lines = [f"- {as_text(items[i].student[lang])} ({items[i].points:+g})" if i in items else f"- {as_text(i)}" for i in marked.items]
    parts = ["\n".join(lines)] if lines else []
    if marked.comment:
        parts.append(as_text(marked.comment))
    return "\n\n".join(parts) if parts else None


def _answers(entry: dict) -> dict:
    """A notebook's answers ({question: text}; none when the entry's are malformed)."""
    answers = entry.get("answers")
    return answers if isinstance(answers, dict) else {}


def submitted_entry(entries: list[dict], question: str) -> dict | None:
    """Of one student's notebooks of one kind, the one whose answer to ``question`` the marks are
    about (as :func:`autograder.marking.model.students` reads them: the last non-blank answer, else
    the first notebook with the question, else the first notebook); None when there is none."""
    answered = [e for e in entries if str(_answers(e).get(question) or "").strip()]
    having = [e for e in entries if question in _answers(e)]
    return (answered[-1:] or having[:1] or entries[:1] or [None])[0]


def _storable(*texts: str) -> bool:
    """Whether SQLite can keep every text (UTF-8: no lone surrogate)."""
    try:
        for text in texts:
            text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _by_kind(folder: Path) -> dict[tuple[str, str], list[dict]]:
    """The notebooks of ``written_answers.json`` by (student, kind: assignment or lab), in class order."""
    out: dict[tuple[str, str], list[dict]] = {}
    for entry in written.class_answers(folder):
        out.setdefault((str(entry.get("student", "")), str(entry.get("notebook", ""))), []).append(entry)
    return out


def plan(folder: Path, lang_of_feedback: str | None = None) -> tuple[list[Planned], list[Skipped], int]:
    """(marks to write, marks skipped before nbgrader is asked, blank marks of notebooks never
    submitted) from our gradebook in ``folder``. PushError when it cannot be read."""
    marks, items = read_marks(folder)
    try:
        kinds = {q["id"]: q["notebook"] for q in written.questions("en")}
    except (OSError, ValueError, KeyError) as exc:  # an installed copy without the instructor sources
        raise PushError("unreadable", folder="source/", error=type(exc).__name__) from None
    notebooks = _by_kind(Path(folder))
    planned, skipped, absent = [], [], 0
    for (student, question), marked in sorted(marks.items()):
        if question not in kinds:
            skipped.append(Skipped(student, question, "question"))
            continue
        entry = submitted_entry(notebooks.get((student, kinds[question]), []), question)
        if entry is None:
            if marked == Marked(0.0):
                absent += 1
            else:
                skipped.append(Skipped(student, question, "no_notebook", fields=(("kind", kinds[question]),)))
            continue
        where = place(entry["label"])
        if where is None:
            skipped.append(Skipped(student, question, "label", fields=(("label", entry["label"]),)))
            continue
        target = Target(student, question, *where, notebook_lang(*where, lang_of_feedback))
        comment = comment_text(marked, items, target.lang)
        if not _storable(student, question, *where, comment or ""):
            skipped.append(Skipped(student, question, "text", target.where))
            continue
        planned.append(Planned(target, marked.mark, comment))
    return planned, skipped, absent


def _missing(gb: nbapi.Gradebook, target: Target) -> str | None:
    """Which of the student, the assignment, the notebook, the submission or the answer's grade cell
    nbgrader does not know (a key of :data:`REASONS`), or "code" for an autograded cell; None when all is there."""
    lookups = [
        ("student", lambda: gb.find_student(target.student)),
        ("assignment", lambda: gb.find_assignment(target.assignment)),
        ("notebook", lambda: gb.find_notebook(target.notebook, target.assignment)),
        ("submission", lambda: gb.find_submission_notebook(target.notebook, target.assignment, target.student)),
        ("cell", lambda: gb.find_grade_cell(target.question, target.notebook, target.assignment)),
    ]
    for reason, lookup in lookups:
        try:
            found = lookup()
        except nbapi.MissingEntry:
            return reason
    return "code" if found.cell_type != "markdown" else None


def _comment(gb: nbapi.Gradebook, target: Target):
    """The answer's comment in nbgrader, or None when its notebook has no solution cell of that name."""
    try:
        return gb.find_comment(target.question, target.notebook, target.assignment, target.student)
    except nbapi.MissingEntry:
        return None


def _skip(planned: Planned, reason: str) -> Skipped:
    t = planned.target
    fields = (("student", t.student), ("assignment", t.assignment), ("notebook", t.notebook), ("question", t.question))
    return Skipped(t.student, t.question, reason, t.where, fields)


def check(gb: nbapi.Gradebook, planned: list[Planned]) -> tuple[list[tuple[Planned, object, object]], list[Skipped]]:
    """Each mark's (planned, grade, comment or None) in nbgrader, and the marks nbgrader has no place
    for; PushError for a mark above its cell's max_score. Reads only."""
    found, skipped, over = [], [], []
    for p in planned:
        reason = _missing(gb, p.target)
        comment = _comment(gb, p.target) if reason is None else None
        if reason is None and comment is None and p.comment is not None:
            reason = "comment"
        if reason is not None:
            skipped.append(_skip(p, reason))
            continue
        grade = gb.find_grade(p.target.question, p.target.notebook, p.target.assignment, p.target.student)
        if p.mark > grade.max_score + TOLERANCE:
            over.append((p, grade.max_score))
        found.append((p, grade, comment))
    if over:
        (p, maximum), others = over[0], len(over) - 1
        t = p.target
        raise PushError("over", student=t.student, question=t.question, where=t.where, mark=p.mark, maximum=maximum, others=others)
    return found, skipped


def apply(found: list[tuple[Planned, object, object]]) -> tuple[int, int]:
    """Set each grade's manual score and each comment's manual comment (in the session, not yet
    committed); returns (marks in place, marks whose values changed). Never touches auto scores."""
    changed = 0
    for p, grade, comment in found:
        mark = min(p.mark, grade.max_score)  # within TOLERANCE above: the cell's maximum
        before = (grade.manual_score, grade.needs_manual_grade, comment.manual_comment if comment is not None else None)
        grade.manual_score, grade.needs_manual_grade = mark, False
        if comment is not None:
            comment.manual_comment = p.comment
        changed += before != (mark, False, p.comment if comment is not None else None)
    return len(found), changed


def _shown_url(url: str) -> str:
    """``url`` for a message: its password hidden."""
    try:
        return sqlalchemy.engine.make_url(url).render_as_string(hide_password=True)
    except (sqlalchemy.exc.ArgumentError, ValueError):
        return "(unreadable database URL)"


def _open(url: str) -> nbapi.Gradebook:
    """nbgrader's gradebook at ``url``, refused (PushError) when the database is not one: nbgrader
    would add its tables to any database it opens."""
    shown = _shown_url(url)
    try:
        engine = sqlalchemy.create_engine(url)
        try:
            tables = set(sqlalchemy.inspect(engine).get_table_names())
        finally:
            engine.dispose()
        missing = sorted(NEEDED_TABLES - tables)
        if missing:
            raise PushError("not_nbgrader", url=shown, tables=missing[0])
        return nbapi.Gradebook(url)
    except (sqlalchemy.exc.SQLAlchemyError, nbapi.InvalidEntry, ImportError) as exc:  # ImportError: a URL whose driver is absent
        raise PushError("database", url=shown, error=type(exc).__name__) from None


def push_marks(grades_dir: Path, db_url_or_path, *, lang_of_feedback: str | None = None) -> Report:
    """Write every written mark of the gradebook in ``grades_dir`` and its comment into nbgrader's
    gradebook (``db_url_or_path``: a ``gradebook.db`` or an SQLAlchemy URL), on the notebook each
    student submitted; ``lang_of_feedback`` (en, ru): the comments' language instead of each
    notebook's own. All is checked, then written in one commit. PushError (one line, nothing
    written) for a gradebook that cannot be used or a mark above its cell's max_score."""
    if lang_of_feedback is not None and lang_of_feedback not in LANGS:
        raise PushError("lang", lang=str(lang_of_feedback))
    url = db_url(db_url_or_path)
    planned, skipped, absent = plan(Path(grades_dir), lang_of_feedback)
    gb = _open(url)
    try:
        found, missing = check(gb, planned)
        in_place, changed = apply(found)
        gb.db.commit()
    except sqlalchemy.exc.SQLAlchemyError as exc:
        gb.db.rollback()
        raise PushError("database", url=_shown_url(url), error=type(exc).__name__) from None
    except BaseException:
        gb.db.rollback()
        raise
    finally:
        gb.close()
    comments = sum(1 for p, _, comment in found if comment is not None and p.comment is not None)
    return Report(in_place, changed, comments, absent, skipped + missing)
