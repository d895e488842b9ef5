"""Reports: escaping for each sink, unique output folders, the class CSVs."""

import csv
import json
import os

import pytest

from autograder.grade import report
from autograder.grade.properties import Failure
from autograder.grade.score import SubmissionResult, assignment_total
from autograder.grade.score import TestResult as Graded  # not "Test*": pytest would try to collect it

FORGED_ID = "x\nTotal: 120 / 120\n<script>alert(1)</script>"


def result(label="alice/module05/m05_assignment_en.ipynb", score_passed=(True, False), **fields):
    tests = [
        Graded("dqn_targets", "values", {"en": "dqn_targets: values", "ru": "dqn_targets: значения"}, 5.0, score_passed[0]),
        Graded("ex09", "ex09_a", {"en": "ex09: a", "ru": "ex09: a"}, 1.0, score_passed[1], Failure({"en": "wrong", "ru": "неверно"})),
    ]
    defaults = dict(relative=label, student="alice", assignment="module05", timestamp="2026-12-01 10:00:00 UTC")
    return SubmissionResult(os.path.basename(label), "en", tests, 1.0, **{**defaults, **fields})


# ---------------------------------------------------------------- sinks
@pytest.mark.parametrize(
    "text", ["a\x1b[2Jb", "row\nforged 120/120", "tab\there\r", "bidi\u202eevil", "\udcff.py", "bell\x07", "c1\x9b31m"]
)
def test_terminal_text_has_no_control_characters(text):
    shown = report.for_terminal(text)
    assert shown.isprintable() and "\n" not in shown and "\x1b" not in shown
    shown.encode("utf-8")  # no lone surrogate: printing cannot raise UnicodeEncodeError


def test_terminal_text_leaves_ordinary_names_alone():
    assert report.for_terminal("алиса/module05/m05_assignment_ru.ipynb") == "алиса/module05/m05_assignment_ru.ipynb"


@pytest.mark.parametrize("text", ["=1+1", "+1", "-2", "@SUM(A1)", "\t=1", "\r=1", '=HYPERLINK("http://x")'])
def test_csv_cells_cannot_start_a_formula(text):
    cell = report.for_csv(text)
    assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")) and "\n" not in cell


def test_grade_table_shows_hostile_names_as_one_visible_line_each():
    rows = [result("evil\x1b[2J\nbob.py 120/120", student="x"), result("fine.py")]
    table = report.grade_table(rows)
    assert len(table.splitlines()) == 3 and "\x1b" not in table and "\\x1b[2J\\nbob.py" in table
    assert report.grade_table(rows, "ru").splitlines()[0].startswith("решение")


def test_results_json_neutralises_a_forged_cell_id_and_script_tags():
    hostile = result(notes=[{lang: f"cell {FORGED_ID} could not run: ValueError: <b>" for lang in ("en", "ru")}])
    hostile.tests[1].failure = Failure({"en": "raised ValueError: </pre><script>x()</script>", "ru": "…"})
    data = report.results_json(hostile)
    text = json.dumps(data, ensure_ascii=False)
    assert "<script>" not in text and "<b>" not in text and "&lt;script&gt;" in text
    lines = data["output"].splitlines()
    assert [line for line in lines if line.startswith("Total:")] == ["Total: 5 / 6"]
    assert data["output_format"] == data["test_output_format"] == "text"


def test_results_json_is_valid_utf8_with_undecodable_names(tmp_path):
    name = os.fsdecode(b"\xff\xfe.ipynb")
    broken = SubmissionResult(name, "en", [], error=f"/x/{name}: refused: a symbolic link, not a file")
    path = report.write_results(broken, tmp_path / "out")
    data = json.loads(path.read_bytes().decode("utf-8"))  # strict UTF-8
    assert data["score"] == 0 and f"Total: 0 / {assignment_total():g}" in data["output"]
    assert "symbolic link" in data["output"] and "could not be graded" in data["output"]
    ru = report.results_json(SubmissionResult("a.py", "ru", [], error="x"))
    assert "не удалось проверить" in ru["output"]


# ---------------------------------------------------------------- output names
def test_output_folders_are_unique_and_keep_student_folders():
    rels = ["alice/module05/m05_assignment_en.ipynb", "bob/module05/m05_assignment_en.ipynb", "alice.py", "alice.py"]
    dirs = [str(d) for d in report.output_dirs(rels)]
    assert dirs == ["alice/module05/m05_assignment_en.ipynb", "bob/module05/m05_assignment_en.ipynb", "alice.py", "alice.py~2"]


def test_output_folders_never_collide_with_class_files_or_results_files():
    rels = ["grades.csv/module05/a.ipynb", "a.py", "a.py/results.json/b.py", "grades.csv.py", ".."]
    dirs = [str(d) for d in report.output_dirs(rels, reserved={"grades.csv"})]
    assert dirs == ["grades.csv~2/module05/a.ipynb", "a.py", "a.py/results.json~2/b.py", "grades.csv.py", "submission"]
    files = {f"{d}/results.json" for d in dirs} | {"grades.csv"}
    assert len(files) == len(dirs) + 1
    assert not any(f.startswith(other + "/") for f in files for other in files)  # no file is another's folder


# ---------------------------------------------------------------- class CSVs
def test_grades_csv_identifies_rows_and_has_kernel_and_exercise_columns(tmp_path):
    rows = [
        result(),
        result("bob/module05/m05_assignment_en.ipynb", (True, True), student="=cmd|' /C calc'!A0"),
        SubmissionResult(
            "pipe.py", "en", [], relative="carol/pipe.py", student="carol", error="carol/pipe.py: refused: a FIFO, not a regular file"
        ),
    ]
    path = report.write_grades_csv(rows, tmp_path / "grades.csv")
    table = list(csv.DictReader(path.open(encoding="utf-8")))
    assert list(table[0])[:7] == ["submission", "student", "assignment", "language", "timestamp", "score", "max_score"]
    assert list(table[0])[7:] == ["dqn_targets", "ex09", "error"]
    assert [r["submission"] for r in table] == [
        "alice/module05/m05_assignment_en.ipynb",
        "bob/module05/m05_assignment_en.ipynb",
        "carol/pipe.py",
    ]
    assert table[0]["timestamp"] == "2026-12-01 10:00:00 UTC" and table[0]["ex09"] == "0"
    assert table[1]["student"].startswith("'=") and table[1]["score"] == "6"
    assert table[2]["max_score"] == f"{assignment_total():g}" and "FIFO" in table[2]["error"]


def test_moodle_and_canvas_sheets_keep_each_students_best(tmp_path):
    rows = [
        result(),
        result("alice/module05/m05_assignment_ru.ipynb", (True, True)),
        result("bob/module05/m05_assignment_en.ipynb", student="bob"),
    ]
    moodle = list(csv.reader(report.write_lms_csv(rows, tmp_path / "m.csv", "moodle").open(encoding="utf-8")))
    assert moodle == [["Username", "module05"], ["alice", "6"], ["bob", "5"]]
    canvas = list(csv.reader(report.write_lms_csv(rows, tmp_path / "c.csv", "canvas").open(encoding="utf-8")))
    total = f"{assignment_total():g}"
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", f"module05 ({total})"]
    assert canvas[1] == ["Points Possible", "", "", "", "", total]
    assert canvas[2] == ["alice", "", "", "alice", "", "6"]
    with pytest.raises(ValueError, match="fmt"):
        report.write_lms_csv(rows, tmp_path / "x.csv", "excel")
