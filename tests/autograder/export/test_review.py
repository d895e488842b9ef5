"""m5 review: the written answers of a graded class, marked by a person, merged to 167."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import nbformat
import pytest
from uploads import LAB, nbgrader_course  # tests/autograder is on sys.path

from autograder import cli
from autograder.export import review
from autograder.grade import written
from autograder.grade.score import assignment_total

HOSTILE = "<script>alert('answer')</script> and $x$"


def _answer(path, answers: dict[str, str]) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def graded(tmp_path_factory, corpus):
    root = tmp_path_factory.mktemp("review")
    submitted = nbgrader_course(root / "course", {"alice": 0, "bob": 1, "carol": None}, extra=(LAB[0],))
    _answer(submitted / "alice" / "module05" / "m05_assignment_en.ipynb", {"q01_answer": HOSTILE, "ex09_explain": "mean"})
    _answer(submitted / "alice" / "module05" / LAB[0], {"answer_dagger": "DAgger asks the expert where it goes"})
    _answer(submitted / "bob" / "module05" / "m05_assignment_ru.ipynb", {"q02_answer": "Ответ Боба"})
    out = root / "grades"
    assert cli.main(["grade", str(submitted), "--no-shrink", "--out", str(out), "--csv-format", "canvas"]) == 0
    return out


def test_the_questions_are_the_47_hand_graded_points_in_both_languages():
    for lang in ("en", "ru"):
        qs = written.questions(lang)
        assert len(qs) == 23 and sum(q["points"] for q in qs) == written.maximum() == 47
        assert all(q["question"].strip() and q["model"].strip() for q in qs)
    assert [q["id"] for q in written.questions("en")] == [q["id"] for q in written.questions("ru")]


def test_a_class_run_keeps_every_notebooks_written_answers(graded):
    kept = json.loads((graded / written.ANSWERS_FILE).read_text(encoding="utf-8"))["submissions"]
    alice = {e["notebook"]: e["answers"] for e in kept if e["student"] == "alice" and not e["label"].endswith("_ru.ipynb")}
    assert alice["assignment"]["q01_answer"] == HOSTILE
    carol = [e for e in kept if e["student"] == "carol"]
    assert len(carol) == 3 and all(text == "" for e in carol for text in e["answers"].values())  # stubs are blank
    assert alice["lab"]["answer_dagger"].startswith("DAgger")  # the lab notebook is not graded, its answers are kept
    bob = [e for e in kept if e["label"] == "bob/module05/m05_assignment_ru.ipynb"]
    assert bob[0]["answers"]["q02_answer"] == "Ответ Боба"
    assert review.students(kept)["alice"]["q01_answer"] == HOSTILE  # her untouched Russian copy hides nothing


def test_review_pages_and_the_marks_sheet(graded):
    assert cli.main(["review", str(graded), "--lang", "ru"]) == 0
    page = (graded / "review" / "q01_answer.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;" in page and "<script>" not in page and "default-src 'none'" in page
    assert "(пусто)" in page and "Образцовый ответ" in page
    sheet = list(csv.reader((graded / review.MARKS_FILE).open(encoding="utf-8")))
    assert sheet[0][:2] == [review.KEY, "student"] and sheet[1][0] == review.MAX_ROW and len(sheet) == 2 + 3
    ids = sheet[0][2:]
    carol = dict(zip(ids, next(r for r in sheet if r[1] == "carol")[2:]))
    assert set(carol.values()) == {"0"}  # nothing answered: nothing to mark
    alice = dict(zip(ids, next(r for r in sheet if r[1] == "alice")[2:]))
    assert next(r for r in sheet if r[1] == "alice")[0] == review.student_key("alice")
    assert alice["q01_answer"] == "" and alice["answer_dagger"] == "" and alice["answer_dqn"] == "0"


def _filled(graded, tmp_path, change=None):
    sheet = list(csv.reader((graded / review.MARKS_FILE).open(encoding="utf-8")))
    ids = sheet[0][2:]
    for row in sheet[2:]:
        for i, cell in enumerate(row[2:], 2):
            if cell == "":
                row[i] = "2" if ids[i - 2] in ("q01_answer", "answer_dagger") else "1"
    if change:
        change(sheet)
    path = tmp_path / "filled.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(sheet)
    return path


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda s: s[2].__setitem__(2, "9"), "outside 0..3"),
        (lambda s: s[2].__setitem__(2, "two"), "is not a number"),
        (lambda s: s.append(["kmallory", "mallory", *["0"] * (len(s[0]) - 2)]), "unknown key"),
        (lambda s: s[0].__setitem__(2, "q99_answer"), "unknown question"),
        (lambda s: s.pop(), "no row for student"),
    ],
)
def test_bad_marks_are_refused_naming_the_row_and_nothing_is_written(graded, tmp_path, change, says):
    assert cli.main(["review", str(graded)]) == 0
    before = (graded / "grades.csv").read_bytes()
    with pytest.raises(review.ReviewError, match=says):
        review.merge_marks(graded, _filled(graded, tmp_path, change))
    assert (graded / "grades.csv").read_bytes() == before
    assert cli.main(["review", str(graded), "--marks", str(_filled(graded, tmp_path, change))]) == cli.EXIT_USAGE


def test_an_answered_question_left_unmarked_is_refused(graded, tmp_path):
    assert cli.main(["review", str(graded)]) == 0
    with pytest.raises(review.ReviewError, match="row .*, column 'q01_answer': an answered question is not marked"):
        review.merge_marks(graded, graded / review.MARKS_FILE)


def test_merged_marks_give_grades_out_of_167(graded, tmp_path):
    assert cli.main(["review", str(graded)]) == 0
    before = {r["submission"]: r for r in csv.DictReader((graded / "grades.csv").open(encoding="utf-8"))}
    filled = _filled(graded, tmp_path)
    sheet = list(csv.reader(filled.open(encoding="utf-8")))
    marks = {row[1]: dict(zip(sheet[0][2:], map(float, row[2:]))) for row in sheet[2:]}
    assert cli.main(["review", str(graded), "--marks", str(filled), "--csv-format", "canvas"]) == 0
    after = {r["submission"]: r for r in csv.DictReader((graded / "grades.csv").open(encoding="utf-8"))}
    top = assignment_total() + written.maximum()
    assert top == 167
    alice = "alice/module05/m05_assignment_en.ipynb"
    # her marks, the assignment's and the lab's, are added on each of her assignment rows
    assert float(after[alice]["score"]) == pytest.approx(float(before[alice]["score"]) + sum(marks["alice"].values()))
    assert marks["alice"]["answer_dagger"] == 2 and sum(marks["carol"].values()) == 0
    assert all(float(r["max_score"]) == top for r in after.values())
    assert after[alice]["answer_dagger"] == "2" and after[alice]["q01_answer"] == "2"
    canvas = list(csv.reader((graded / "grades_canvas.csv").open(encoding="utf-8")))
    assert canvas[1][5:] == ["167"]


def test_without_the_sources_the_answers_the_notebook_marks_are_read(graded, tmp_path, monkeypatch):
    # an installed copy of the package has no source/ folder: the grader reads the cells the notebook marks
    monkeypatch.setattr(written, "REPO", tmp_path)
    written.questions.cache_clear()
    try:
        assert written.question_ids() is None
        notebook = next(graded.parent.rglob("alice/module05/m05_assignment_en.ipynb"))
        kind, answers = written.answers_in(notebook, written.question_ids())
        assert kind == "assignment" and answers["q01_answer"] == HOSTILE and len(answers) == 17
    finally:
        monkeypatch.undo()
        written.questions.cache_clear()


@pytest.mark.parametrize("kind", ["dev_zero", "fifo", "directory", "huge", "link"])
def test_a_marks_file_that_is_no_file_or_too_big_is_refused_in_one_line_at_once(graded, tmp_path, kind, capsys):
    import os
    import time

    assert cli.main(["review", str(graded)]) == 0
    before = {p.name: p.read_bytes() for p in graded.glob("grades*")}
    path = {
        "dev_zero": Path("/dev/zero"),
        "fifo": tmp_path / "pipe",
        "directory": tmp_path,
        "huge": tmp_path / "big.csv",
        "link": tmp_path / "l.csv",
    }[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "huge":
        path.write_bytes(b"key,student\n" + b"\n" * (review.MAX_MARKS_BYTES + 1))
    elif kind == "link":
        os.symlink(graded / review.MARKS_FILE, path)
    capsys.readouterr()
    started = time.monotonic()
    assert cli.main(["review", str(graded), "--marks", str(path)]) == cli.EXIT_USAGE
    assert time.monotonic() - started < 5  # answered at once (a FIFO or /dev/zero is never read)
    said = capsys.readouterr().err.strip().splitlines()
    assert (
        len(said) == 1
        and {"dev_zero": "a device", "fifo": "a FIFO", "directory": "a directory", "huge": "more than", "link": "symbolic link"}[kind]
        in said[0]
    )
    assert {p.name: p.read_bytes() for p in graded.glob("grades*")} == before


@pytest.mark.parametrize("dialect", ["excel_bom_semicolon", "tab", "decimal_comma"])
def test_a_marks_file_as_spreadsheets_save_it_is_read(graded, tmp_path, dialect):
    assert cli.main(["review", str(graded)]) == 0
    sheet = list(csv.reader(_filled(graded, tmp_path).open(encoding="utf-8")))
    path = tmp_path / "saved.csv"
    if dialect == "excel_bom_semicolon":  # Excel's "CSV UTF-8" in a locale whose list separator is ";"
        text = "\ufeff" + "\r\n".join(";".join(row) for row in sheet) + "\r\n"
    elif dialect == "tab":
        text = "\n".join("\t".join(row) for row in sheet) + "\n"
    else:
        text = "\n".join(";".join(cell.replace(".", ",") if cell.replace(".", "").isdigit() else cell for cell in row) for row in sheet)
    path.write_text(text, encoding="utf-8")
    assert cli.main(["review", str(graded), "--marks", str(path)]) == cli.EXIT_OK


def test_two_students_whose_names_escape_alike_keep_their_own_rows(tmp_path):
    answers = [
        {"label": f"{name}.ipynb", "student": name, "notebook": "assignment", "answers": {"q01_answer": "yes"}} for name in ("=x", "'=x")
    ]
    by_student = review.students(answers)
    assert report_for_csv_collides() and len({review.student_key(s) for s in by_student}) == 2


def report_for_csv_collides() -> bool:
    from autograder.grade import report

    return report.for_csv("=x") == report.for_csv("'=x")


def test_marks_also_rewrite_an_older_lms_export(graded, tmp_path):
    assert cli.main(["review", str(graded)]) == 0
    (graded / "grades_moodle.csv").write_text("Username,module05\nalice,100\n", encoding="utf-8")
    assert cli.main(["review", str(graded), "--marks", str(_filled(graded, tmp_path))]) == 0
    assert "alice" in (graded / "grades_moodle.csv").read_text(encoding="utf-8")
    assert (graded / "grades_moodle.csv").read_text(encoding="utf-8") != "Username,module05\nalice,100\n"
