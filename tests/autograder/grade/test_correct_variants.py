"""Correct submissions in every style earn full marks.

Vectorized numpy, plain Python loops, torch float32 (tensors and float32 arrays),
and a notebook with nbgrader cells, a test cell, a heavy lab cell and a magic. A
variant losing points means a tolerance or strategy bug in the hidden suite.
"""

from __future__ import annotations

import nbformat
import pytest
from adversarial import build  # tests/autograder is on sys.path (pytest rootdir-relative import)
from fixture_paths import FIXTURES  # tests/autograder is on sys.path (tests/conftest.py)

import reference_impl
from autograder.demo import CORRECT
from autograder.grade.pipeline import grade_submission  # `corpus`: the session fixture in conftest.py

HERE = FIXTURES
SUBMISSIONS = HERE / "submissions"

FULL = {k: (10.0, 10.0) for k in reference_impl.KERNEL_NAMES}


def _failures(result) -> list[str]:
    return [
        f"{t.group}/{t.key}: {t.failure.message['en'] if t.failure else ''} call={t.failure.call if t.failure else ''}"
        for t in result.tests
        if not t.passed
    ]


@pytest.mark.parametrize(
    "path", [CORRECT, SUBMISSIONS / "correct_loops.py", SUBMISSIONS / "correct_torch.py"], ids=["vectorized", "loops", "torch"]
)
def test_python_variant_gets_full_marks(path, corpus):
    result = grade_submission(path, corpus, shrink=False)
    assert _failures(result) == []
    assert result.by_group() == FULL
    assert (result.score, result.max_score) == (100.0, 100.0)
    assert result.notes == []


def _decorated_notebook(source: str) -> nbformat.NotebookNode:
    """The correct notebook plus what real notebooks carry and the grader must skip."""
    test_cell = nbformat.v4.new_code_cell(
        "assert dqn_targets([0.0], [1], [[5.0]]) == 'never equal'  # instructor test cell",
        metadata={"nbgrader": {"grade": True, "solution": False, "points": 2, "grade_id": "test-dqn", "locked": True, "schema_version": 3}},
    )
    heavy_cell = nbformat.v4.new_code_cell(
        "import time\ntime.sleep(600)  # the lab: never run by the grader", metadata={"m5": {"role": "heavy"}}
    )  # as the notebook builder marks it
    magic_cell = nbformat.v4.new_code_cell("%matplotlib inline\nimport numpy as np")
    return build.notebook_from_source(source, extra_cells=[(1, magic_cell), (4, test_cell), (6, heavy_cell)])


def test_notebook_submission_gets_full_marks(corpus, tmp_path):
    nb = _decorated_notebook(build.BASE_SUBMISSION.read_text())
    path = build.write_notebook(nb, tmp_path / "correct_notebook.ipynb")
    result = grade_submission(path, corpus, shrink=False)
    assert _failures(result) == []
    scores = result.by_group()
    assert {k: scores[k] for k in reference_impl.KERNEL_NAMES} == FULL
    answers = {k: v for k, v in scores.items() if k not in FULL}
    assert answers and all(got == total for got, total in answers.values())  # the answers cell counts
    # At most the note that %matplotlib was not run (extract.cell_notes): no cell failed.
    assert all(note["en"].startswith("Not run by the grader") for note in result.notes)


def test_loops_notebook_in_russian_gets_full_marks(corpus, tmp_path):
    nb = build.notebook_from_source((SUBMISSIONS / "correct_loops.py").read_text(), answers=False)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("Решение модуля 5: ядра на обычных циклах Python, без векторизации."))
    path = build.write_notebook(nb, tmp_path / "loops_ru.ipynb")
    result = grade_submission(path, corpus, shrink=False, answers=False)
    assert _failures(result) == []
    assert result.by_group() == FULL
    assert result.language == "ru"
