"""The class outputs under hostile text (``autograder/grade/outputs.py`` and every writer that uses it).

Any string the grader can read (lone surrogates from a JSON escape or a file name that is not
UTF-8, NUL, control and bidi characters) is data: a class run completes with every other row
intact, every file it writes re-reads, and ``m5 review`` and ``m5 merge`` work on its output.
"""

from __future__ import annotations

import json
import os
import string
from pathlib import Path

import nbformat
import pytest

# tests/autograder is on sys.path
from classroom import RELEASE_ROOT, filled_notebook, notebook
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder import cli
from autograder.export import review
from autograder.grade import class_report, merge, outputs, report, shards, written
from autograder.grade.score import SubmissionResult

HOSTILE = ["\ud800", "\udcff", "\x00", "\u202e", "\u2066", "\x1b[31m", "\r\n", "=cmd|' /C calc'!A0"]
TEXT = st.lists(st.one_of(st.characters(), st.sampled_from(HOSTILE)), max_size=12).map("".join)


def reread(folder: Path) -> None:
    """Every JSON file under ``folder`` parses; every text file decodes as UTF-8."""
    for path in folder.rglob("*"):
        if path.is_file():
            text = path.read_bytes().decode("utf-8")
            if path.suffix == ".json":
                json.loads(text)


# ------------------------------------------------------------------ the writers, on random text
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(TEXT, TEXT, TEXT, TEXT), min_size=2, max_size=4))
def test_random_text_in_names_answers_and_code_never_breaks_a_class_output_or_a_merge(tmp_path_factory, people):
    base = tmp_path_factory.mktemp("hostile")
    results, records, answers = [], [], []
    for i, (name, error, code, answer) in enumerate(people):
        label = f"{i}/{name}"
        result = SubmissionResult(f"{name}.py", "en", [], error=error or None, relative=label, student=name)
        results.append(result)
        records.append(class_report.record(result, code))
        answers.append({"label": label, "student": name, "notebook": "assignment", "answers": {"q01_answer": answer}})
    size = len(results)
    shard_dirs = []
    for k in (1, 2):
        folder = base / f"part{k}"
        folder.mkdir()
        mine = [i for i in range(size) if i % 2 == k - 1]
        report.write_grades_csv([results[i] for i in mine], folder / "grades.csv")
        class_report.write([records[i] for i in mine], folder, "ru")
        written.write_class_answers(folder, [answers[i] for i in mine])
        shards.write_rows_file(
            folder, (k, 2), size, mine, [results[i] for i in mine], [records[i] for i in mine], {"class": "c", "grader": "g"}
        )
        reread(folder)
        shard_dirs.append(folder)
    merged = base / "merged"
    rows = merge.merge_shards(shard_dirs, merged, "moodle")
    assert len(rows) == size
    review.write_review(merged)
    reread(merged)
    sheet = (merged / "grades.csv").read_text(encoding="utf-8").splitlines()
    assert len(sheet) == size + 1


def test_a_lone_surrogate_is_written_as_a_visible_escape_and_re_reads():
    assert outputs.json_safe({"a\ud800": ["x\udcff"]}) == {"a\\ud800": ["x\\udcff"]}
    assert json.loads(json.dumps(outputs.json_safe("\udcff\x00"), ensure_ascii=False)) == "\\udcff\x00"


def test_the_side_by_side_code_shows_bidi_controls_instead_of_obeying_them():
    page = class_report.to_html(
        class_report.build(
            [
                {**class_report.record(SubmissionResult(f"{n}.py", "en", [], relative=n), code), "fingerprints": list(range(40))}
                for n, code in (("a", "x = 1  # \u202eevil\u202c\ny = 2"), ("b", "x = 1  # \u202eevil\u202c\ny = 2"))
            ]
        )
    )
    assert "\u202e" not in page and "\\u202e" in page


# ------------------------------------------------------------------ a real class run
def _hostile_notebook(folder: Path) -> Path:
    """The correct assignment with answers and code holding lone surrogates, NUL and bidi controls."""
    nb = filled_notebook(notebook("assignment", "en", RELEASE_ROOT), notebook("assignment", "en"))
    for cell in nb.cells:
        if cell.id == "q01_answer":
            cell.source = "answer MARK"
        if cell.id == "kernel_return_to_go":
            cell.source += "\n# CODE\n"  # Python cannot compile a lone surrogate: this cell fails, as in Jupyter
    text = nbformat.writes(nb).replace("MARK", "\\ud800 \\udcff \\u0000 \\u202e rtl").replace("CODE", "\\ud800 \\u202e rtl")
    folder.mkdir(parents=True)
    path = folder / "m05_assignment_en.ipynb"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_class_with_hostile_names_and_text_grades_every_row_and_its_outputs_work(tmp_path, correct_source):
    submitted = tmp_path / "class"
    (submitted / "ok").mkdir(parents=True)
    (submitted / "ok" / "homework.py").write_text(correct_source)
    bad = os.fsencode(submitted) + b"/bad\xff\xfename"
    os.mkdir(bad)
    with open(bad + b"/homework.py", "w", encoding="utf-8") as fh:
        fh.write(correct_source)
    _hostile_notebook(submitted / "surr")
    (submitted / "nul").mkdir()
    (submitted / "nul" / "homework.py").write_bytes(correct_source.encode() + b"\n# \x00\n")
    out = tmp_path / "out"
    assert cli.main(["grade", str(submitted), "--no-shrink", "--out", str(out)]) in (cli.EXIT_OK, 1)
    reread(out)
    rows = json.loads((out / shards.ROWS_FILE).read_text(encoding="utf-8"))["rows"]
    by_label = {row["label"]: row for row in rows}
    assert len(rows) == 4
    assert by_label["ok/homework.py"]["score"] == 120 and by_label["bad\\udcff\\udcfename/homework.py"]["score"] == 120
    # only the cell Python cannot compile is lost: return_to_go's 10 points, nothing else
    assert by_label["surr/m05_assignment_en.ipynb"]["score"] == 110 and by_label["nul/homework.py"]["error"] == ""
    answers = json.loads((out / written.ANSWERS_FILE).read_text(encoding="utf-8"))["submissions"]
    assert "\\ud800 \\udcff" in answers[0]["answers"]["q01_answer"]
    assert cli.main(["review", str(out)]) == cli.EXIT_OK and (out / review.MARKS_FILE).is_file()
    # the same class in two shards merges into the same sheet
    parts = [tmp_path / f"part{k}" for k in (1, 2)]
    for k, part in enumerate(parts, 1):
        assert cli.main(["grade", str(submitted), "--no-shrink", "--out", str(part), "--shard", f"{k}/2"]) in (cli.EXIT_OK, 1)
    assert cli.main(["merge", *map(str, parts), "--out", str(tmp_path / "merged")]) == cli.EXIT_OK
    assert (tmp_path / "merged" / "grades.csv").read_bytes() == (out / "grades.csv").read_bytes()


@pytest.mark.parametrize("name", ["bad\ud800name", "x\u202ey", "".join(string.printable)])
def test_output_folders_for_hostile_names_stay_under_the_class_folder(name):
    folder = report.output_dirs([f"{name}/homework.py"])[0]
    assert ".." not in folder.parts and not folder.is_absolute()


def test_errors_name_a_file_by_its_place_in_the_class_not_the_graders_path(tmp_path, correct_source):
    submitted = tmp_path / "a class"
    (submitted / "alice").mkdir(parents=True)
    (submitted / "alice" / "m05_assignment_en.ipynb").write_text("{not json")
    (submitted / "bob").mkdir()
    os.symlink("/etc/hostname", submitted / "bob" / "homework.py")
    (submitted / "carol").mkdir()
    (submitted / "carol" / "homework.py").write_text(correct_source)
    out = tmp_path / "out"
    assert cli.main(["grade", str(submitted), "--no-shrink", "--out", str(out)]) in (cli.EXIT_OK, 1)
    for path in out.rglob("*"):
        if path.is_file() and path.name != "grades.json":  # the gradebook itself records its class folder
            assert str(tmp_path) not in path.read_text(encoding="utf-8"), path
    rows = {row["label"]: row for row in json.loads((out / shards.ROWS_FILE).read_text(encoding="utf-8"))["rows"]}
    assert rows["alice/m05_assignment_en.ipynb"]["error"].startswith("alice/m05_assignment_en.ipynb: not a valid notebook")
    assert "bob/homework.py" in rows["bob/homework.py"]["error"] and "symbolic link" in rows["bob/homework.py"]["error"]
