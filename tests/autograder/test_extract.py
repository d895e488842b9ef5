"""Extracting the code to grade from notebooks and .py files."""
import json

import nbformat
import pytest

from autograder.grade.extract import SubmissionError, extract

KERNELS = {"dqn_targets", "return_to_go"}


def notebook(tmp_path, cells, lang=None, name="sub.ipynb"):
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    if lang:
        nb.metadata["m5"] = {"lang": lang}
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


def code(src, **nbgrader):
    cell = nbformat.v4.new_code_cell(src)
    if nbgrader:
        cell.metadata["nbgrader"] = {"schema_version": 3, **nbgrader}
    return cell


def test_notebook_keeps_answers_and_setup_and_drops_tests_and_heavy_cells(tmp_path):
    path = notebook(tmp_path, [
        code("import numpy as np\nGAMMA = 0.9"),                                   # setup: kept
        code("def dqn_targets(r, d, q, gamma=0.99):\n    return r", grade_id="a", solution=True, grade=False),
        code("assert dqn_targets(1, 0, 0) == 1", grade_id="t", solution=False, grade=True, points=2),
        code("run = train_online_dqn(seed=5, episodes=130)"),                       # heavy lab cell: dropped
        code("%matplotlib inline\ndef return_to_go(r, gamma=1.0):\n    return r"),  # defines a kernel: kept
        code("ex09_active_mean_nll = 1.6 / 3"),                                     # a numerical answer: kept
        nbformat.v4.new_markdown_cell("Some text"),
    ])
    sub = extract(path, KERNELS)
    sources = [c.source for c in sub.cells]
    assert len(sources) == 4
    assert sub.cells[1].id == "a"
    assert not any("assert" in s or "train_online_dqn" in s for s in sources)
    assert "# (removed) %matplotlib inline" in sources[2]
    assert sub.language == "en" and sub.kind == "notebook"


def test_outputs_are_ignored_and_language_is_detected(tmp_path):
    cell = code("def dqn_targets(r, d, q, gamma=0.99):\n    return r")
    cell.outputs = [nbformat.v4.new_output("stream", text="fake 100/100")]
    ru = nbformat.v4.new_markdown_cell("Реализуйте функцию целей DQN и проверьте её на примерах из лабораторной работы.")
    sub = extract(notebook(tmp_path, [ru, cell]), KERNELS)
    assert sub.language == "ru"
    assert "fake" not in sub.cells[0].source
    assert extract(notebook(tmp_path, [ru, cell], lang="en", name="b.ipynb"), KERNELS).language == "en"


def test_python_file_with_a_syntax_error_is_split_into_top_level_chunks(tmp_path):
    path = tmp_path / "sub.py"
    path.write_text("import numpy as np\n\ndef dqn_targets(r, d, q, gamma=0.99):\n    return r +\n\n"
                    "def return_to_go(r, gamma=1.0):\n    return np.asarray(r)\n")
    sub = extract(path, KERNELS)
    assert len(sub.cells) == 3
    assert sub.cells[2].source.startswith("def return_to_go")


@pytest.mark.parametrize("content,problem", [
    ("{not json", "invalid JSON"),
    (json.dumps({"cells": "nope"}), "no list of cells"),
])
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
