"""A term, scripted end to end from a Moodle download, with the commands an instructor types.

course init with a late policy; grade the class with Moodle's grading worksheet for the times
(two late, one of them extended); regrade one student (every other row, result and mark
unchanged byte for byte); adjust one; mark the written answers; then the final sheet's
totals equal raw - penalty + adjustment + written marks for every row, in each language.
`m5 feedback` then writes a page per student and Moodle's bulk-feedback zip. `make test` runs a
class of 6 per language; `make test-slow` the class of 30.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import nbformat
import pytest

# tests/autograder is on sys.path
from classroom import RELEASE_ROOT, TERMINAL_BUG, TERMINAL_MASK, filled_notebook, notebook

from autograder import cli
from autograder.export.feedback import page_name
from autograder.grade import gradebook, late, report

DUE = "2026-12-20T23:59:00+03:00"
NAMES = {
    "en": ["Ann Lee", "Bo Chen", "Cy Díaz", "Dee O'Neil", "Eve <b>Ng", "Fay Roe"],
    "ru": ["Анна Ли", "Борис Ким", "Вера Ёж", "Глеб Юн", "Дина <i>Ра", "Егор Ан"],
}
ON_TIME = "Sunday, 20 December 2026, 9:00 PM"  # the worksheet's own English form (Moscow time)
LATE = {1: "Tuesday, 22 December 2026, 11:00 AM", 2: "Monday, 21 December 2026, 3:00 AM"}  # 2 started days; 1 (extended)


def names(lang: str, size: int) -> list[str]:
    base = NAMES[lang]
    return [base[i % len(base)] + (f" {i // len(base)}" if i >= len(base) else "") for i in range(size)]


def moodle_download(root: Path, lang: str, size: int) -> tuple[Path, Path]:
    """The folder of Moodle's "Download all submissions" and its grading worksheet (with times)."""
    download = root / "download"
    rows = [["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade", "Grade can be changed",
             "Last modified (submission)", "Last modified (grade)", "Feedback comments"]]  # fmt: skip
    for i, name in enumerate(names(lang, size)):
        folder = download / f"{name}_{500 + i}_assignsubmission_file_"
        folder.mkdir(parents=True)
        edits = {"kernel_dqn_targets": (TERMINAL_MASK, TERMINAL_BUG)} if i % 3 == 0 else None
        nb = filled_notebook(notebook("assignment", lang, RELEASE_ROOT), notebook("assignment", lang), edits)
        nb.metadata["m5_term_student"] = i  # each file its own
        nbformat.write(nb, folder / notebook("assignment", lang).name)
        rows.append([f"Participant {500 + i}", name, f"s{i}@uni.example", "Submitted for grading", "", "167", "Yes",
                     LATE.get(i, ON_TIME), "-", ""])  # fmt: skip
    worksheet = root / "Grades-Module 5.csv"
    with worksheet.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return download, worksheet


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def sheet(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


def fill_marks(path: Path, points: float) -> None:
    lines = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    header, maximum = lines[0], lines[1]
    for line in lines[2:]:
        for j, cell in enumerate(line[2:], 2):
            if cell == "":
                line[j] = f"{min(points, float(maximum[j])):g}"
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([header, maximum, *lines[2:]])


def run_term(tmp_path: Path, lang: str, size: int) -> None:
    course = tmp_path / "курс M5"
    assert (
        cli.main(
            ["course", "init", str(course), "--lang", lang, "--due", DUE, "--timezone", "Europe/Moscow", "--grace-minutes", "15"]
            + ["--penalty-percent", "10", "--per", "day", "--cap-percent", "50"]
        )
        == 0
    )
    policy = course / late.COURSE_FILE
    assert "autograder.assign.nbgrader_late.PolicyLatePenalty" in (course / "nbgrader_config.py").read_text(encoding="utf-8")
    download, worksheet = moodle_download(tmp_path, lang, size)
    out = tmp_path / "grades"
    grade = ["grade", str(download), "--out", str(out), "--jobs", "2", "--no-shrink"]
    assert cli.main([*grade, "--policy", str(policy), "--times", str(worksheet)]) == 0
    assert cli.main(grade) == cli.EXIT_USAGE  # a second run into the gradebook needs --update
    students = [f"{name}_{500 + i}" for i, name in enumerate(names(lang, size))]
    # student 2 was late by 3 hours but has an extension; student 1 is late with none
    (out / late.EXTENSIONS_FILE).write_text(f"student,due,reason\n{students[2]},2026-12-21T12:00+03:00,illness\n", encoding="utf-8")
    assert cli.main(["sheets", str(out)]) == 0

    # written answers: pages and marks.csv, filled, merged
    assert cli.main(["review", str(out), "--lang", lang]) == 0
    fill_marks(out / "marks.csv", 1)
    assert cli.main(["review", str(out), "--marks", str(out / "marks.csv")]) == 0
    assert cli.main(["review", str(out)]) == cli.EXIT_USAGE  # a filled marks.csv is never overwritten without --force
    assert cli.main(["adjust", str(out), students[3], "2", "--reason", "regrade request accepted", "--item", "ex13"]) == 0

    # regrade student 0 after fixing the file: every other row, result and mark stays as it was
    before = snapshot(out)
    book = gradebook.load(out)
    target = book.rows[0]["label"]
    path = download / target
    nbformat.write(filled_notebook(notebook("assignment", lang, RELEASE_ROOT), notebook("assignment", lang)), path)
    assert cli.main(["grade", str(path.parent), "--out", str(out), "--update", "--no-shrink", "--times", str(worksheet)]) == 0
    after = snapshot(out)
    others = [row for row in book.rows if row["label"] != target]
    new_rows = {row["label"]: row for row in gradebook.load(out).rows}
    for row in others:
        assert new_rows[row["label"]] == row  # byte for byte in grades.json's terms
    folders = report.output_dirs([row["label"] for row in book.rows], reserved=report.CLASS_FILES)
    for row, folder in zip(book.rows, folders):
        if row["label"] != target:
            assert after[f"{folder}/results.json"] == before[f"{folder}/results.json"]
    for name in (gradebook.MARKS_FILE, gradebook.ADJUSTMENTS_FILE, late.EXTENSIONS_FILE, "marks.csv"):
        assert after[name] == before[name], name
    assert new_rows[target]["score"] == 120 > book.rows[0]["score"]  # graded again: the bug is fixed
    grades_before = {r["submission"]: r for r in sheet_text(before["grades.csv"])}
    for r in sheet_text(after["grades.csv"]):
        if r["submission"] != target:
            assert r == grades_before[r["submission"]]
    assert cli.main(["grade", str(path.parent), "--out", str(out), "--update", "--no-shrink", "--times", str(worksheet)]) == 0
    again = gradebook.load(out).rows  # the same file again: the same score (only the timing may differ)
    assert [(r["label"], r["score"], r["groups"], r["digest"]) for r in again] == [
        (r["label"], r["score"], r["groups"], r["digest"]) for r in new_rows.values()
    ]

    # the final sheet: one row per student, every term shown, and it adds up
    final = {r["student"]: r for r in sheet(out / gradebook.FINAL_FILE)}
    assert set(final) == set(students)
    marks = gradebook.load(out).marks
    for student, r in final.items():
        written_points = sum(marks[student].values())
        assert float(r["written"]) == pytest.approx(written_points)
        assert float(r["raw"]) == pytest.approx(float(r["automatic"]) + written_points)
        assert float(r["final"]) == pytest.approx(max(0.0, float(r["raw"]) - float(r["penalty"]) + float(r["adjustment"])))
        assert r["time_source"] == "Moodle worksheet"
    assert final[students[1]]["penalty_percent"] == "20" and float(final[students[1]]["penalty"]) > 0
    assert final[students[2]]["penalty"] == "0"  # extended
    assert final[students[3]]["adjustment"] == "2"
    assert sum(float(r["penalty"]) > 0 for r in final.values()) == 1
    document = json.loads((out / "grades.json").read_text(encoding="utf-8"))
    assert all(row["submitted"] for row in document["rows"])

    # feedback every student can open, and Moodle's bulk-feedback zip with one file per participant
    assert cli.main(["feedback", str(out)]) == 0
    pages = sorted(p for p in (out / "feedback").glob("*.html") if p.name != "index.html")
    assert len(pages) == size
    with zipfile.ZipFile(out / "feedback" / "feedback_moodle.zip") as archive:
        entries = archive.namelist()
    assert len(entries) == size and all(f"_{500 + i}_assignsubmission_file" in " ".join(entries) for i in range(size))
    late_page = (out / "feedback" / page_name(students[1])).read_text(encoding="utf-8")
    assert f"−{final[students[1]]['penalty']} (20 %)" in late_page  # the late penalty, with the policy beside it
    assert "illness" in (out / "feedback" / page_name(students[2])).read_text(encoding="utf-8")  # the extension


def sheet_text(data: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_a_small_term_from_a_moodle_download(tmp_path, lang):
    run_term(tmp_path, lang, 6)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "ru"])
def test_a_term_of_thirty_from_a_moodle_download(tmp_path, lang):
    run_term(tmp_path, lang, 30)
