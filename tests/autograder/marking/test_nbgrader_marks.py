"""Written marks and comments into a real nbgrader gradebook.db (built with nbgrader's API, milliseconds)."""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.grade import written
from autograder.marking import model, nbgrader_marks
from tests.autograder.marking_fixtures import make_gradebook

# nbgrader's own add_submission builds its rows before adding them to the session (its SQLAlchemy warns)
pytestmark = pytest.mark.filterwarnings("ignore:Object of type:sqlalchemy.exc.SAWarning")
HOSTILE = "=cmd|' /C calc'!A0 <script>alert(1)</script>\u202eevil\u202c\x00 `rm -rf` {x} %s\r\n\\' DROP TABLE grade;--"
WRITTEN = {"q01_answer": 3.0, "q02_answer": 3.0, "q03_answer": 3.0, "ex09_explain": 1.0}  # markdown grade cells (q03 is code below)
NOTEBOOKS = {
    "module05_en": ("m05_assignment_en", "m05_lab_en"),
    "module05_ru": ("m05_assignment_ru", "m05_lab_ru"),
}
SUBMITTED = {"alice": "module05_en", "bob": "module05_en", "dasha": "module05_ru", HOSTILE: "module05_en"}
LABELS = [  # what written_answers.json holds: paths as `m5 grade` names them, in nbgrader's layout
    ("alice", "assignment", "submitted/alice/module05_en/m05_assignment_en.ipynb"),
    ("alice", "lab", "alice/module05_en/m05_lab_en.ipynb"),
    ("bob", "assignment", "submitted/bob/module05_en/m05_assignment_en.ipynb"),
    ("dasha", "assignment", "submitted/dasha/module05_ru/m05_assignment_ru.ipynb"),
    ("ghost", "assignment", "submitted/ghost/module05_en/m05_assignment_en.ipynb"),
    (HOSTILE, "assignment", "submitted/h/module05_en/m05_assignment_en.ipynb"),
]
DECISIONS = {
    ("alice", "q01_answer"): model.Decision(("q01_answer#1", "q01_answer#2"), "Good; say what the mask is."),
    ("alice", "q02_answer"): model.Decision((), HOSTILE),
    ("alice", "q03_answer"): model.Decision(("q03_answer#1",), ""),  # a code cell in nbgrader: never touched
    ("alice", "ex10_explain"): model.Decision(("ex10_explain#1",), ""),  # no such cell in nbgrader
    ("alice", "answer_dqn"): model.Decision(("answer_dqn#1",), "Lab remark."),
    ("bob", "q01_answer"): model.Decision(),  # blank answer: 0, no comment
    ("bob", "answer_dqn"): model.Decision(),  # blank, and bob sent no lab: nothing to write
    ("dasha", "q01_answer"): model.Decision(("q01_answer#1",), "Хорошо, но кратко."),
    ("ghost", "q01_answer"): model.Decision(("q01_answer#1",), ""),  # nbgrader knows no ghost
    (HOSTILE, "q01_answer"): model.Decision(("q01_answer#3",), HOSTILE),
}


def build_nbgrader(path: Path) -> Path:
    """An nbgrader gradebook as ``nbgrader generate_assignment`` and ``autograde`` leave it: both
    assignments, their notebooks and cells, submissions, and an autograded code cell scored 7 of 10.
    (nbgrader asks ``alembic`` for its version when it creates one: seconds; tests copy one.)"""
    with Gradebook(f"sqlite:///{path}") as gb:
        for assignment, notebooks in NOTEBOOKS.items():
            gb.add_assignment(assignment)
            for notebook in notebooks:
                gb.add_notebook(notebook, assignment)
                for name, points in (WRITTEN if "assignment" in notebook else {"answer_dqn": 2.0}).items():
                    kind = "code" if name == "q03_answer" else "markdown"
                    gb.add_grade_cell(name, notebook, assignment, max_score=points, cell_type=kind)
                    gb.add_solution_cell(name, notebook, assignment)
                if "assignment" in notebook:
                    gb.add_grade_cell("dqn_targets", notebook, assignment, max_score=10.0, cell_type="code")
        for student, assignment in SUBMITTED.items():
            gb.add_student(student)
            gb.add_submission(assignment, student)
            code = gb.find_grade("dqn_targets", NOTEBOOKS[assignment][0], assignment, student)
            code.auto_score, code.needs_manual_grade = 7.0, False
            for name in ("q01_answer", "q02_answer", "q03_answer", "ex09_explain"):  # what autograde leaves
                gb.find_comment(name, NOTEBOOKS[assignment][0], assignment, student).auto_comment = "No response."
        gb.add_student("erin")  # known to nbgrader, absent from our gradebook
        gb.db.commit()
    return path


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """One nbgrader gradebook for the module's tests to copy."""
    saved = os.environ.get("PATH", "")
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{saved}"  # nbgrader runs `alembic` from PATH
    try:
        return build_nbgrader(tmp_path_factory.mktemp("nbgrader") / "gradebook.db")
    finally:
        os.environ["PATH"] = saved


def copy_of(template: Path, path: Path, maximum: float | None = None) -> Path:
    """A copy of the template gradebook at ``path``; ``maximum``: q01_answer's max_score in the English assignment."""
    shutil.copyfile(template, path)
    if maximum is not None:
        with Gradebook(f"sqlite:///{path}") as gb:
            gb.find_grade_cell("q01_answer", "m05_assignment_en", "module05_en").max_score = maximum
            gb.db.commit()
    return path


def build_ours(folder: Path, decisions: dict = DECISIONS) -> Path:
    """Our gradebook: the class's rows, written_answers.json with the labels above, the marks."""
    answers = {s: {"q01_answer": "something"} for s, _, _ in LABELS}
    make_gradebook(folder, answers)
    entries = [{"label": label, "student": s, "notebook": kind, "answers": {"q01_answer": "x"}} for s, kind, label in LABELS]
    written.write_class_answers(folder, entries)
    model.write_marks(folder, decisions, model.rubric_items())
    return folder


def state(db: Path) -> dict:
    """Every grade and comment of every submission, as nbgrader's API reads them."""
    out = {}
    with Gradebook(f"sqlite:///{db}") as gb:
        for student, assignment in SUBMITTED.items():
            for notebook in NOTEBOOKS[assignment]:
                nb = gb.find_submission_notebook(notebook, assignment, student)
                for grade in nb.grades:
                    out[("grade", student, notebook, grade.name)] = (grade.auto_score, grade.manual_score, grade.needs_manual_grade)
                for comment in nb.comments:
                    out[("comment", student, notebook, comment.name)] = (comment.auto_comment, comment.manual_comment)
    return out


@pytest.fixture
def course(tmp_path, template):
    return copy_of(template, tmp_path / "gradebook.db"), build_ours(tmp_path / "grades")


def test_marks_and_comments_land_on_the_submitted_notebook_in_its_language(course):
    db, grades = course
    report = nbgrader_marks.push_marks(grades, db)
    items = model.rubric_items()
    after = state(db)
    assert after[("grade", "alice", "m05_assignment_en", "q01_answer")] == (None, 2.0, False)
    alice_q01 = after[("comment", "alice", "m05_assignment_en", "q01_answer")][1]
    assert alice_q01 == (
        f"- {items['q01_answer#1'].student['en']} (+1)\n- {items['q01_answer#2'].student['en']} (+1)\n\nGood; say what the mask is."
    )
    assert after[("grade", "alice", "m05_lab_en", "answer_dqn")][1] == items["answer_dqn#1"].points  # the lab's answer on the lab
    assert after[("comment", "alice", "m05_lab_en", "answer_dqn")][1].endswith("\n\nLab remark.")
    dasha = after[("comment", "dasha", "m05_assignment_ru", "q01_answer")][1]
    assert dasha == f"- {items['q01_answer#1'].student['ru']} (+1)\n\nХорошо, но кратко."
    assert after[("grade", "dasha", "m05_assignment_ru", "q01_answer")][1] == 1.0
    assert after[("grade", "bob", "m05_assignment_en", "q01_answer")] == (None, 0.0, False)
    assert after[("comment", "bob", "m05_assignment_en", "q01_answer")] == ("No response.", None)  # nbgrader's own word stays
    assert report.written == 6 and report.changed == 6 and report.comments == 5 and report.absent == 1


def test_hostile_text_round_trips_exactly(course):
    db, grades = course
    nbgrader_marks.push_marks(grades, db)
    after = state(db)
    shown = nbgrader_marks.as_text(HOSTILE)  # HTML escaped: nbgrader's Markdown passes raw HTML through
    assert after[("comment", "alice", "m05_assignment_en", "q02_answer")][1] == shown and "<script>" not in shown
    assert html.unescape(shown) == HOSTILE  # nothing else changed: the student reads the comment as written
    assert after[("comment", HOSTILE, "m05_assignment_en", "q01_answer")][1].endswith("\n\n" + shown)
    assert after[("grade", HOSTILE, "m05_assignment_en", "q01_answer")][1] == model.rubric_items()["q01_answer#3"].points


def test_autograded_code_cells_are_never_touched(course):
    db, grades = course
    before = state(db)
    report = nbgrader_marks.push_marks(grades, db)
    after = state(db)
    for student, assignment in SUBMITTED.items():
        for name in ("dqn_targets", "q03_answer"):
            key = ("grade", student, NOTEBOOKS[assignment][0], name)
            assert after[key] == before[key]
    assert after[("grade", "alice", "m05_assignment_en", "dqn_targets")] == (7.0, None, False)
    assert ("alice", "q03_answer", "code") in {(s.student, s.question, s.reason) for s in report.skipped}


def test_what_nbgrader_does_not_know_is_skipped_and_reported(course):
    db, grades = course
    report = nbgrader_marks.push_marks(grades, db)
    skipped = {(s.student, s.question): s for s in report.skipped}
    assert {k: s.reason for k, s in skipped.items()} == {
        ("alice", "ex10_explain"): "cell",
        ("alice", "q03_answer"): "code",
        ("ghost", "q01_answer"): "student",
    }
    en, ru = report.text("en"), report.text("ru")
    assert "ghost, q01_answer (module05_en/m05_assignment_en): nbgrader knows no student ghost" in en
    assert "в nbgrader нет студента ghost" in ru and "пропущено 3:" in ru
    assert "m05_assignment_en has no grade cell ex10_explain in nbgrader" in en
    assert "1 blank marks of notebooks never submitted" in en
    assert "\n" not in "".join(s.text(lang) for s in report.skipped for lang in ("en", "ru"))


def test_unknown_assignment_notebook_and_submission_are_skipped(tmp_path, template):
    db = copy_of(template, tmp_path / "gradebook.db")
    grades = build_ours(tmp_path / "grades", {("alice", "q01_answer"): model.Decision(("q01_answer#1",), "")})
    entries = [
        {"label": "alice/module99/m05_assignment_en.ipynb", "student": "alice", "notebook": "assignment", "answers": {"q01_answer": "x"}}
    ]
    for label, reason in [
        ("alice/module99/m05_assignment_en.ipynb", "assignment"),
        ("alice/module05_en/other.ipynb", "notebook"),
        ("erin/module05_ru/m05_assignment_ru.ipynb", "submission"),
        ("m05_assignment_en.ipynb", "label"),
    ]:
        entries[0]["label"] = label
        written.write_class_answers(grades, entries)
        report = nbgrader_marks.push_marks(grades, db)
        assert [s.reason for s in report.skipped] == [reason] and report.written == 0, label
    assert state(db) == state(template)


def test_a_second_run_changes_nothing(course):
    db, grades = course
    first = nbgrader_marks.push_marks(grades, db)
    written_state, written_bytes = state(db), db.read_bytes()
    second = nbgrader_marks.push_marks(grades, db)
    assert state(db) == written_state and db.read_bytes() == written_bytes
    assert (second.written, second.changed, second.skipped) == (first.written, 0, first.skipped)
    assert "6 marks in place (0 changed)" in second.text("en") and "изменено 0" in second.text("ru")


def test_a_mark_above_the_cells_max_score_is_refused_and_nothing_is_written(tmp_path, template):
    db = copy_of(template, tmp_path / "gradebook.db", maximum=1.0)
    grades = build_ours(tmp_path / "grades")
    before = state(db)
    with pytest.raises(nbgrader_marks.PushError) as refused:
        nbgrader_marks.push_marks(grades, db)
    assert str(refused.value) == (
        "alice, q01_answer (module05_en/m05_assignment_en): mark 2 is above the nbgrader cell's max_score 1; nothing written"
    )
    assert "ничего не записано" in refused.value.text("ru") and "\n" not in refused.value.text("ru")
    assert state(db) == before


def test_a_changed_mark_is_written_again_and_a_forced_language_is_used(course):
    db, grades = course
    nbgrader_marks.push_marks(grades, db)
    model.write_marks(grades, {**DECISIONS, ("alice", "q01_answer"): model.Decision(("q01_answer#1",), "")}, model.rubric_items())
    report = nbgrader_marks.push_marks(grades, db, lang_of_feedback="ru")
    after = state(db)
    assert after[("grade", "alice", "m05_assignment_en", "q01_answer")][1] == 1.0
    assert (
        after[("comment", "alice", "m05_assignment_en", "q01_answer")][1] == f"- {model.rubric_items()['q01_answer#1'].student['ru']} (+1)"
    )
    assert report.changed == 3  # alice's q01; her lab's and the hostile student's items now in Russian (dasha's were)


def test_items_recorded_while_marking_and_a_lone_surrogate(course):
    """An item added on the marking page reads as it was recorded; a comment SQLite cannot keep
    (a lone surrogate, in a marks file edited by hand: m5 never writes one) skips that mark alone."""
    db, grades = course
    added = model.RubricItem("q01_answer#n1", "q01_answer", 0.5, {"en": "m", "ru": "м"}, {"en": "Named the mask", "ru": "Названа маска"})
    decisions = {
        ("dasha", "q01_answer"): model.Decision(("q01_answer#n1",), ""),
        ("alice", "q01_answer"): model.Decision((), "bad text"),
        ("bob", "q01_answer"): model.Decision((), "fine"),
    }
    marks_file = model.write_marks(grades, decisions, {**model.rubric_items(), added.id: added})
    document = json.loads(marks_file.read_text(encoding="utf-8"))
    document["comments"]["alice"]["q01_answer"] = "bad \ud800 text"
    marks_file.write_text(json.dumps(document), encoding="ascii")  # the lone surrogate as a \ud800 escape
    report = nbgrader_marks.push_marks(grades, db)
    after = state(db)
    assert after[("comment", "dasha", "m05_assignment_ru", "q01_answer")][1] == "- Названа маска (+0.5)"
    assert after[("grade", "dasha", "m05_assignment_ru", "q01_answer")][1] == 0.5
    assert after[("grade", "alice", "m05_assignment_en", "q01_answer")][1] is None
    assert after[("comment", "bob", "m05_assignment_en", "q01_answer")][1] == "fine"
    assert [(s.student, s.reason) for s in report.skipped] == [("alice", "text")]


@pytest.mark.parametrize(
    "target, says",
    [
        ("missing.db", ": no such nbgrader gradebook; nothing written"),
        ("sqlite:///missing.db", ": no such nbgrader gradebook; nothing written"),
        ("not_nbgrader.db", "not an nbgrader gradebook (no assignment table); nothing written"),
    ],
)
def test_a_database_that_is_not_nbgraders_is_refused_and_left_alone(tmp_path, target, says):
    import sqlite3  # why: only this test makes a database that is not nbgrader's

    grades = build_ours(tmp_path / "grades")
    if target == "not_nbgrader.db":
        with sqlite3.connect(tmp_path / target) as connection:
            connection.execute("CREATE TABLE other (x TEXT)")
    with pytest.raises(nbgrader_marks.PushError, match="nothing written") as refused:
        nbgrader_marks.push_marks(grades, f"sqlite:///{tmp_path}/missing.db" if "://" in target else tmp_path / target)
    assert says in str(refused.value)
    if "missing" in target:
        assert not (tmp_path / "missing.db").exists()
    else:
        with sqlite3.connect(tmp_path / target) as connection:
            assert [r[0] for r in connection.execute("SELECT name FROM sqlite_master")] == ["other"]
    with pytest.raises(nbgrader_marks.PushError, match="lang_of_feedback must be one of en, ru"):
        nbgrader_marks.push_marks(grades, tmp_path / target, lang_of_feedback="de")


def autograded_notebook(path: Path) -> Path:
    """The autograded copy of alice's notebook: the answer cell and the code cell, with nbgrader's metadata."""

    def cell(kind: str, grade_id: str, points: float, source: str) -> dict:
        meta = {"grade": True, "solution": True, "grade_id": grade_id, "points": points, "locked": False, "schema_version": 3}
        extra = {"outputs": [], "execution_count": None} if kind == "code" else {}
        return {"cell_type": kind, "id": grade_id, "metadata": {"nbgrader": meta}, "source": source, **extra}

    cells = [cell("markdown", "q01_answer", 3.0, "My answer."), cell("code", "dqn_targets", 10.0, "x = 1")]
    cells[1]["metadata"]["nbgrader"]["solution"] = False  # a test cell: graded, no solution
    notebook = {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({**notebook, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_nbgraders_own_feedback_shows_the_comment(course):
    """``nbgrader generate_feedback`` (nbgrader's command, ~3 s) puts the pushed comment into the student's page."""
    db, grades = course
    root = db.parent
    nbgrader_marks.push_marks(grades, db)
    autograded_notebook(root / "autograded" / "alice" / "module05_en" / "m05_assignment_en.ipynb")
    (root / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.db_url = {f'sqlite:///{db}'!r}\n")
    command = [str(Path(sys.executable).with_name("nbgrader")), "generate_feedback", "module05_en", "--student", "alice", "--force"]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(root)})
    assert done.returncode == 0, done.stderr[-2000:]
    page = (root / "feedback" / "alice" / "module05_en" / "m05_assignment_en.html").read_text(encoding="utf-8")
    assert "Good; say what the mask is." in page
    assert "2.0 / 3.0" in page or "2 / 3" in page  # nbgrader's score line for the cell


def test_the_command_line_pushes_the_marks_and_says_what_it_did_in_the_language(course, capsys):
    from autograder import cli  # the entry point, as an instructor runs it

    db, grades = course
    assert cli.main(["review", str(grades), "--to-nbgrader", str(db), "--lang", "ru"]) == cli.EXIT_OK
    said = capsys.readouterr().out
    assert said and all(ord(c) < 128 for c in said) is False  # the summary in Russian
    assert state(db)[("grade", "alice", "m05_assignment_en", "q01_answer")] == (None, 2.0, False)
    assert cli.main(["review", str(grades), "--to-nbgrader", str(db.parent / "missing.db")]) == cli.EXIT_USAGE
    assert "no such nbgrader gradebook" in capsys.readouterr().err
