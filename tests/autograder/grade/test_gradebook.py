"""One gradebook per assignment (grade/gradebook.py): every sheet rebuilt from it, nothing lost by a
re-run, adjustments and extensions checked by name, one final mark per student and module.

The gradebooks here are written directly (the rows a class run keeps), so each test costs
milliseconds; tests/autograder/workflows/test_term.py runs the commands on a graded class.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from autograder import cli
from autograder.grade import gradebook, late, shards

POLICY = (
    '[policy]\ndue = "2026-12-20T23:59:00+03:00"\ntimezone = "Europe/Moscow"\ngrace_minutes = 15\n'
    'penalty_percent = 10\nper = "day"\ncap_percent = 50\n'
)


def row(label: str, student: str, assignment: str, score: float, submitted: str = "", error: str = "") -> dict:
    record = {"label": label, "score": score, "maximum": 120.0, "graded": not error, "error": error, "seconds": 1.0}
    record.update(failed=[], mistakes=[], answers=[], limits=[])
    return {
        "label": label,
        "student": student,
        "assignment": assignment,
        "language": assignment[-2:],
        "timestamp": "",
        "score": score,
        "maximum": 120.0,
        "groups": [["dqn_targets", min(score, 10.0)]],
        "error": error,
        "digest": "d" * 64,
        "submitted": submitted,
        "time_source": "nbgrader timestamp.txt" if submitted else "",
        "record": record,
    }


CLASS = [
    row("alice/module05_en/a.ipynb", "alice", "module05_en", 100, "2026-12-20T20:00:00+00:00"),  # on time (23:00 MSK)
    row("alice/module05_ru/a.ipynb", "alice", "module05_ru", 110, "2026-12-20T20:00:00+00:00"),  # the better one
    row("bob/module05_en/a.ipynb", "bob", "module05_en", 90, "2026-12-22T12:00:00+03:00"),  # 2 started days late: 20 %
    row("carol/module05_en/a.ipynb", "carol", "module05_en", 80, "2026-12-22T12:00:00+03:00"),  # late, but extended
    row("dave/module05_en/a.ipynb", "dave", "module05_en", 0, "", error="unreadable"),
]


@pytest.fixture()
def book(tmp_path) -> Path:
    folder = tmp_path / "grades"
    folder.mkdir()
    shards.write_rows_file(
        folder, None, len(CLASS), list(range(len(CLASS))), CLASS, [r["record"] for r in CLASS], {"class": "c"}, root="/x"
    )
    (tmp_path / "m5_course.toml").write_text(POLICY, encoding="utf-8")
    gradebook.set_policy(folder, tmp_path / "m5_course.toml")
    (folder / late.EXTENSIONS_FILE).write_text("student,due,reason\ncarol,2026-12-23T23:59+03:00,illness\n", encoding="utf-8")
    gradebook.save_marks(folder, {"alice": {"q01": 5.0}, "bob": {"q01": 10.0}})
    gradebook.rebuild(folder)
    return folder


def final_sheet(folder: Path) -> dict[tuple[str, str], dict]:
    rows = list(csv.DictReader(io.StringIO((folder / gradebook.FINAL_FILE).read_text(encoding="utf-8"), newline="")))
    assert list(rows[0]) == gradebook.FINAL_COLUMNS
    return {(r["student"], r["module"]): r for r in rows}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_final_sheet_shows_every_term_and_adds_up(book):
    gradebook.add_adjustment(book, "bob", 2, "regrade request: ex13 accepted", "ex13")
    sheet = final_sheet(book)
    assert set(sheet) == {("alice", "module05"), ("bob", "module05"), ("carol", "module05"), ("dave", "module05")}
    for r in sheet.values():  # final = raw - penalty + adjustment, raw = automatic + written, never below 0
        assert float(r["raw"]) == float(r["automatic"]) + float(r["written"])
        assert float(r["final"]) == pytest.approx(max(0.0, float(r["raw"]) - float(r["penalty"]) + float(r["adjustment"])))
        assert r["rule"] == gradebook.FINAL_RULE
    alice, bob, carol = sheet["alice", "module05"], sheet["bob", "module05"], sheet["carol", "module05"]
    assert alice["from"] == "alice/module05_ru/a.ipynb" and alice["final"] == "115"  # the better language, + written 5
    assert (bob["penalty_percent"], bob["penalty"], bob["adjustment"], bob["final"]) == ("20", "20", "2", "82")  # (90+10) x 20 %
    assert (carol["penalty"], carol["late_hours"]) == ("0", "0")  # within her extension
    assert carol["time_source"] == "nbgrader timestamp.txt"


def test_lateness_and_the_policy_in_words(book):
    loaded = gradebook.load(book)
    lag = gradebook.lateness(loaded)
    assert lag["carol/module05_en/a.ipynb"].extension.startswith("2026-12-23T23:59:00+03:00: illness")
    assert lag["bob/module05_en/a.ipynb"].late_hours == pytest.approx(36.0 - 0.25 + 1 / 60, abs=0.01)
    assert lag["dave/module05_en/a.ipynb"].source == "none" and lag["dave/module05_en/a.ipynb"].penalty_points == 0
    assert any("10 %" in line for line in gradebook.policy_lines(loaded, "ru"))


@pytest.mark.parametrize(
    "student, points, reason, says",
    [
        ("mallory", 1.0, "x", "'mallory' is no student"),
        ("bob", float("nan"), "x", "not a finite number"),
        ("bob", 1.0, "  ", "say why"),
    ],
)
def test_a_bad_adjustment_is_refused_and_writes_nothing(book, student, points, reason, says):
    before = snapshot(book)
    with pytest.raises(gradebook.GradebookError, match=says):
        gradebook.add_adjustment(book, student, points, reason)
    assert snapshot(book) == before
    assert cli.main(["adjust", str(book), student, str(points), "--reason", reason]) == cli.EXIT_USAGE
    assert snapshot(book) == before


def test_an_adjustment_keeps_every_earlier_row_byte_for_byte(book):
    gradebook.add_adjustment(book, "bob", 2, 'reason with "quotes", commas\nand a new line')
    first = (book / gradebook.ADJUSTMENTS_FILE).read_bytes()
    gradebook.add_adjustment(book, "alice", -1.5, "late oral")
    assert (book / gradebook.ADJUSTMENTS_FILE).read_bytes().startswith(first)
    entries = gradebook.load(book).adjustments
    assert [(e["student"], e["points"]) for e in entries] == [("bob", 2.0), ("alice", -1.5)]
    assert entries[0]["reason"] == 'reason with "quotes", commas\nand a new line' and entries[0]["by"] and entries[0]["at"]


@pytest.mark.parametrize(
    "file, body, says",
    [
        (late.EXTENSIONS_FILE, "student,due,reason\nmallory,2026-12-23T23:59+03:00,x\n", "row 2, column 'student': 'mallory'"),
        (late.EXTENSIONS_FILE, "student,due,reason\ncarol,on friday,x\n", "row 2, column 'due'"),
        (gradebook.ADJUSTMENTS_FILE, "student,points,item,reason,by,at\nbob,lots,,x,,\n", "row 2, column 'points'"),
        (gradebook.ADJUSTMENTS_FILE, "student,points,item,reason,by,at\nbob,1,,,,\n", "row 2, column 'reason'"),
    ],
)
def test_a_hand_edit_that_breaks_a_file_is_refused_by_name_and_the_sheets_are_kept(book, file, body, says):
    (book / file).write_text(body, encoding="utf-8")
    before = snapshot(book)
    with pytest.raises(gradebook.GradebookError, match=says):
        gradebook.rebuild(book)
    assert cli.main(["sheets", str(book)]) == cli.EXIT_USAGE
    assert snapshot(book) == before


def test_a_policy_that_moved_or_broke_is_named(book, tmp_path):
    policy = tmp_path / "m5_course.toml"
    policy.write_text(POLICY.replace("penalty_percent = 10", "penalty_percent = 150"), encoding="utf-8")
    with pytest.raises(gradebook.GradebookError, match=r"m5_course.toml: \[policy\] penalty_percent"):
        gradebook.load(book)
    policy.unlink()
    with pytest.raises(gradebook.GradebookError, match="is not a file"):
        gradebook.load(book)


def test_changing_the_policy_changes_every_sheet_on_the_next_command(book, tmp_path):
    (tmp_path / "m5_course.toml").write_text(POLICY.replace("penalty_percent = 10", "penalty_percent = 5"), encoding="utf-8")
    assert cli.main(["sheets", str(book)]) == cli.EXIT_OK
    assert final_sheet(book)["bob", "module05"]["penalty"] == "10"


def test_rebuilding_twice_changes_nothing(book):
    first = snapshot(book)
    gradebook.rebuild(book)
    assert snapshot(book) == first


def test_grades_csv_carries_the_penalty_column(book):
    rows = list(csv.DictReader(io.StringIO((book / "grades.csv").read_text(encoding="utf-8"), newline="")))
    bob = next(r for r in rows if r["student"] == "bob")
    assert bob[gradebook.LATE_PENALTY] == "-20" and bob["score"] == "80"


def test_policy_link_is_a_pointer_not_a_copy(book, tmp_path):
    assert json.loads((book / gradebook.POLICY_LINK).read_text())["file"] == str((tmp_path / "m5_course.toml").resolve())


def test_grade_refuses_before_grading_and_writes_nothing(tmp_path, capsys):
    course = tmp_path / "course" / "submitted"
    for name in ("a.py", "b.py"):
        (course / "alice" / "module05_en").mkdir(parents=True, exist_ok=True)
        (course / "alice" / "module05_en" / name).write_text("import numpy as np\n")
    out = tmp_path / "grades"
    assert cli.main(["grade", str(course), "--out", str(out)]) == cli.EXIT_USAGE
    assert "two submissions of 'alice' in 'module05_en'" in capsys.readouterr().err and not out.exists()
    (course / "alice" / "module05_en" / "b.py").unlink()
    bad = tmp_path / "m5_course.toml"
    bad.write_text(POLICY.replace('"2026-12-20T23:59:00+03:00"', '"2026-12-20T23:59:00"'), encoding="utf-8")
    assert cli.main(["grade", str(course), "--out", str(out), "--policy", str(bad)]) == cli.EXIT_USAGE
    assert "[policy] due" in capsys.readouterr().err and not out.exists()
    times = tmp_path / "times.csv"
    times.write_text("student,submitted\nalice,the day after\n", encoding="utf-8")
    assert cli.main(["grade", str(course), "--out", str(out), "--times", str(times)]) == cli.EXIT_USAGE
    assert "times.csv: row 2, column 'submitted'" in capsys.readouterr().err and not out.exists()
    assert cli.main(["grade", str(course), "--out", str(out), "--update"]) == cli.EXIT_USAGE
    assert "--update" in capsys.readouterr().err and not out.exists()


def test_a_gradebook_of_another_version_is_refused(book):
    document = json.loads((book / "grades.json").read_text(encoding="utf-8"))
    document["format"] = 1
    (book / "grades.json").write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(gradebook.GradebookError, match="another version of m5"):
        gradebook.load(book)
