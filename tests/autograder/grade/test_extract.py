"""Extracting the code to grade from notebooks and .py files (the grader's side: read,
select cells by metadata, decode; never parse student code)."""

import json

import nbformat
import pytest
from fixture_paths import REPO  # tests/autograder is on sys.path (tests/conftest.py)

from autograder.grade.extract import LEFT_OUT, Cell, Submission, SubmissionError, cell_notes, extract, library_dirs
from autograder.grade.worker import cellexec

KERNELS = {"dqn_targets", "return_to_go"}


def notebook(tmp_path, cells, lang=None, name="sub.ipynb"):
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    if lang:
        nb.metadata["m5"] = {"lang": lang}
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


def code(src, role=None, **nbgrader):
    cell = nbformat.v4.new_code_cell(src)
    if nbgrader:
        cell.metadata["nbgrader"] = {"schema_version": 3, **nbgrader}
    if role:
        cell.metadata["m5"] = {"role": role}
    return cell


def test_every_code_cell_runs_except_test_selfcheck_and_heavy_cells(tmp_path):
    path = notebook(
        tmp_path,
        [
            nbformat.v4.new_markdown_cell("Some text"),
            code("import numpy as np\nGAMMA = 0.9\nprint('helpers ready')"),  # helper with a print: kept
            code("def dqn_targets(r, d, q, gamma=0.99):\n    return r", grade_id="a", solution=True, grade=False),
            code("assert dqn_targets(1, 0, 0) == 1", grade_id="t", solution=False, grade=True, points=2),
            code("check(dqn_targets)", role="selfcheck"),
            code("run = train_online_dqn(seed=5, episodes=130)", role="heavy"),
            code("%matplotlib inline\ndef return_to_go(r, gamma=1.0):\n    return r"),  # magic: kept as written
            code("   \n"),  # empty: nothing to run
            code("ex09_active_mean_nll = 1.6 / 3"),
        ],
    )
    sub = extract(path, KERNELS)
    assert [c.number for c in sub.cells] == [2, 3, 7, 9]  # the notebook's cell numbers, markdown counted
    assert sub.cells[1].id == "a" and all(c.kind == "cell" for c in sub.cells)
    assert sub.cells[2].source.startswith("%matplotlib inline\n")  # never rewritten on the grader's side
    assert sub.language == "en" and sub.kind == "notebook"


def test_cell_ids_are_printable_unique_and_short(tmp_path):
    cells = [
        {"cell_type": "code", "id": "same", "source": "x = 1", "metadata": {}},
        {"cell_type": "code", "id": "same", "source": "y = 2", "metadata": {}},  # nbformat would fix this
        {
            "cell_type": "code",
            "source": "z = 3",
            "metadata": {"nbgrader": {"grade_id": "a\x1b[2J\nTotal: 120/120" + "q" * 100, "solution": True}},
        },
    ]
    path = tmp_path / "ids.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    sub = extract(path)
    ids = [c.id for c in sub.cells]
    assert ids[:2] == ["same", "same-2"]
    assert ids[2].startswith("a2JTotal120120") and len(ids[2]) <= 64
    assert len(set(ids)) == 3


def test_outputs_are_ignored_and_language_is_detected(tmp_path):
    cell = code("def dqn_targets(r, d, q, gamma=0.99):\n    return r")
    cell.outputs = [nbformat.v4.new_output("stream", text="fake 100/100")]
    ru = nbformat.v4.new_markdown_cell("Реализуйте функцию целей DQN и проверьте её на примерах из лабораторной работы.")
    sub = extract(notebook(tmp_path, [ru, cell]), KERNELS)
    assert sub.language == "ru"
    assert "fake" not in sub.cells[0].source
    assert extract(notebook(tmp_path, [ru, cell], lang="en", name="b.ipynb"), KERNELS).language == "en"


def test_hostile_metadata_shapes_are_tolerated(tmp_path):
    raw = {
        "cells": [
            {"cell_type": "code", "source": ["x = ", 1], "metadata": ["not", "a", "dict"]},
            {"cell_type": "code", "source": "y = 2", "metadata": {"nbgrader": "x", "m5": 3}},
            "not a cell",
        ],
        "metadata": {"m5": ["lang"]},
    }
    path = tmp_path / "odd.ipynb"
    path.write_text(json.dumps(raw))
    sub = extract(path)
    assert [c.source for c in sub.cells] == ["x = 1", "y = 2"]


def test_a_python_file_is_one_cell_run_statement_by_statement_in_the_sandbox(tmp_path):
    path = tmp_path / "sub.py"
    source = "import numpy as np\n\ndef dqn_targets(r, d, q, gamma=0.99):\n    return r +\n"
    path.write_text(source)
    sub = extract(path, KERNELS)
    assert sub.kind == "python" and len(sub.cells) == 1
    assert sub.cells[0].source == source and sub.cells[0].kind == "python"
    assert cellexec.cell_kind({"id": sub.cells[0].id, "source": source}) == "python"  # even with id and source only


@pytest.mark.parametrize(
    "data,expected",
    [
        ("# -*- coding: cp1251 -*-\nNAME = 'Иван'\n".encode("cp1251"), "NAME = 'Иван'"),
        ("\ufeffNAME = 'Иван'\r\n".encode("utf-8"), "NAME = 'Иван'\r\n"),
        ("#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\nx = 'é'\n".encode("latin-1"), "x = 'é'"),
    ],
    ids=["cp1251-coding-line", "utf8-bom-crlf", "latin1-second-line"],
)
def test_python_files_are_decoded_as_python_decodes_them(tmp_path, data, expected):
    path = tmp_path / "sub.py"
    path.write_bytes(data)
    source = extract(path).cells[0].source
    assert expected in source and not source.startswith("\ufeff")


@pytest.mark.parametrize(
    "data,problem",
    [
        ("x = 'Иван'\n".encode("cp1251"), "cannot read the file"),  # not UTF-8 and no coding line
        (b"# -*- coding: no-such-codec -*-\nx = 1\n", "cannot read the file"),
    ],
)
def test_undecodable_python_files_raise_submission_error(tmp_path, data, problem):
    path = tmp_path / "sub.py"
    path.write_bytes(data)
    with pytest.raises(SubmissionError, match=problem):
        extract(path)


@pytest.mark.parametrize(
    "content,problem",
    [
        ("{not json", "invalid JSON"),
        (json.dumps({"cells": "nope"}), "no list of cells"),
        ("[" * 100_000 + "]" * 100_000, "not a valid notebook"),
    ],
)
def test_unreadable_notebooks_raise_submission_error(tmp_path, content, problem):
    path = tmp_path / "bad.ipynb"
    path.write_text(content)
    with pytest.raises(SubmissionError, match=problem):
        extract(path, KERNELS)


def test_missing_file_and_wrong_suffix(tmp_path):
    with pytest.raises(SubmissionError, match="no such file"):
        extract(tmp_path / "nothing.py", KERNELS)
    other = tmp_path / "notes.txt"
    other.write_text("x")
    with pytest.raises(SubmissionError, match="expected a .ipynb"):
        extract(other, KERNELS)


def test_cell_notes_name_the_cell_number_and_line_in_both_languages(tmp_path):
    sub = Submission(tmp_path / "hw.ipynb", [Cell("setup", "x", "cell", 3), Cell("kernel_a", "y", "cell", 7)], "en", "notebook")
    notes = cell_notes(
        sub,
        [
            {"id": "setup", "ok": True, "error": None, "line": None, "ignored": ["%matplotlib", "!pip"]},
            {"id": "kernel_a", "ok": False, "error": "NameError: name 'np' is not defined", "line": 4, "ignored": []},
            {"id": "kernel_a", "ok": False, "error": "x", "line": None, "ignored": [], "timed_out": True},
        ],
    )
    assert notes[0]["en"].startswith("cell 7 (kernel_a), line 4 could not run: NameError: name 'np'")
    assert notes[0]["ru"].startswith("ячейка 7 (kernel_a), строка 4 не выполнилась: NameError")
    assert "time limit" in notes[1]["en"] and "лимит времени" in notes[1]["ru"]
    assert notes[2]["en"] == (
        "Not run by the grader (environment, display and shell commands of the notebook): %matplotlib, !pip (cell 3)."
    )
    assert "%matplotlib, !pip (ячейка 3)" in notes[2]["ru"]
    assert cell_notes(sub, [{"id": "setup", "ok": True, "ignored": ["%pip"]}], ignored=False) == []


def test_cell_notes_of_a_python_file_give_the_file_line(tmp_path):
    sub = Submission(tmp_path / "hw.py", [Cell(cellexec.PYTHON_FILE_ID, "", "python", 0)], "ru", "python")
    notes = cell_notes(sub, [{"id": cellexec.PYTHON_FILE_ID, "ok": False, "error": "EOFError: EOF", "line": 12, "ignored": ["!ls"]}])
    assert notes[0]["en"].startswith("the statement at line 12 could not run: EOFError")
    assert notes[0]["ru"].startswith("инструкция в строке 12 не выполнилась")
    assert notes[1]["en"].endswith("!ls (hw.py).")


def test_cell_notes_say_in_both_languages_that_the_grader_stopped_a_statement_or_a_cell(tmp_path):
    """What the worker stopped (an exit, a crash, a kill; a deadline) is said in the
    submission's words, with the time limit where there is one."""
    py = Submission(tmp_path / "hw.py", [Cell(cellexec.PYTHON_FILE_ID, "", "python", 0)], "ru", "python")
    notes = cell_notes(
        py,
        [
            {
                "id": cellexec.PYTHON_FILE_ID,
                "ok": False,
                "error": "this statement stopped the grading process",
                "line": 40,
                "timed_out": False,
                "reason": "stopped",
            },
            {
                "id": cellexec.PYTHON_FILE_ID,
                "ok": False,
                "error": "the statement ran longer than 20 s",
                "line": 52,
                "timed_out": True,
                "reason": "timed_out",
            },
        ],
        cell_timeout=20.0,
    )
    assert notes[0]["en"].startswith("the statement at line 40 could not run: it stopped the grading process")
    assert notes[0]["ru"].startswith("инструкция в строке 40 не выполнилась: она остановила процесс проверки")
    assert "time limit of one statement (20 s)" in notes[1]["en"]
    assert "лимит времени на одну инструкцию (20 с)" in notes[1]["ru"]
    nb = Submission(tmp_path / "hw.ipynb", [Cell("setup", "x", "cell", 3)], "en", "notebook")
    note = cell_notes(
        nb, [{"id": "setup", "ok": False, "error": "the cell ran longer than 1 s", "line": None, "timed_out": True}], cell_timeout=1.0
    )[0]
    assert "cell 3 (setup)" in note["en"] and "time limit of one cell (1 s)" in note["en"]
    assert "одну ячейку (1 с)" in note["ru"]


def test_every_reason_the_worker_stops_a_cell_is_said_in_both_languages(tmp_path):
    from autograder.grade.worker.parent import LEFT_OUT_REASONS

    assert set(LEFT_OUT) == set(LEFT_OUT_REASONS) - {"timed_out"}  # timed_out: CELL_TIMED_OUT, with the limit
    sub = Submission(tmp_path / "hw.ipynb", [Cell("setup", "x", "cell", 3)], "ru", "notebook")
    for reason in LEFT_OUT:
        note = cell_notes(
            sub, [{"id": "setup", "ok": False, "error": "English message", "line": None, "timed_out": False, "reason": reason}]
        )[0]
        assert "English message" not in note["ru"] and LEFT_OUT[reason]["ru"] in note["ru"], reason


def test_the_student_library_folder_is_the_release_one():
    assert [d / "m5_student" / "checks.py" for d in library_dirs()] == [REPO / "release" / "module05_en" / "m5_student" / "checks.py"]
