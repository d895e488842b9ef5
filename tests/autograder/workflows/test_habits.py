"""Correct submissions in students' real habits get full marks through the real pipeline
(issue #12), and a notebook with a real error loses exactly the kernels it breaks.

The corpus is tests/autograder/habits/corpus.py; each submission is graded by
grade_submission in the sandbox with the session corpus (conftest.py).
"""

from __future__ import annotations

import pytest
from habits import corpus as habits  # tests/autograder is on sys.path (pytest rootdir-relative import)

import reference_impl
from autograder.grade.extract import cell_notes, extract
from autograder.grade.pipeline import grade_submission  # `corpus`: the session fixture in conftest.py
from autograder.grade.worker_session import WorkerSession

KERNELS = list(reference_impl.KERNEL_NAMES)
FULL = (10.0, 10.0)


def _failures(result) -> list[str]:
    return [f"{t.group}/{t.key}: {t.failure.message['en'] if t.failure else ''}" for t in result.tests if not t.passed]


def test_the_corpus_covers_the_habits_of_the_issue():
    names = [h.name for h in habits.HABITS]
    assert len(names) >= 25 and len(set(names)) == len(names)
    assert sum(h.suffix == ".py" for h in habits.HABITS) >= 6
    assert sum(h.suffix == ".ipynb" for h in habits.HABITS) >= 15
    for habit in (
        "black_formatted",
        "pip_in_try_in_answer_cell",
        "helper_cell_prints_constants_plot",
        "copied_into_fresh_notebook",
        "colab_export",
        "vscode_export_crlf",
        "nbconvert_export",
        "cp1251_coding_line",
        "utf8_bom_crlf",
        "module_level_io",
        "check_call_in_answer_cell",
    ):
        assert habit in names


@pytest.mark.parametrize("habit", habits.HABITS, ids=[h.name for h in habits.HABITS])
def test_a_correct_submission_in_a_real_habit_gets_full_marks(habit, corpus, tmp_path, recycled):
    path = habit.write(tmp_path)
    result = grade_submission(path, corpus, shrink=False, spare=recycled)
    assert _failures(result) == []
    scores = result.by_group()
    assert {k: scores[k] for k in KERNELS} == {k: FULL for k in KERNELS}
    if habit.suffix == ".ipynb":  # the numerical answers are graded too, and all right
        answers = {k: v for k, v in scores.items() if k not in KERNELS}
        assert answers and all(got == total for got, total in answers.values())
    assert result.score == result.max_score
    assert result.language == habit.lang


@pytest.mark.parametrize("habit", habits.BROKEN, ids=lambda h: h.name)
def test_a_real_error_loses_exactly_its_kernels(habit, corpus, tmp_path, recycled):
    result = grade_submission(habit.write(tmp_path), corpus, shrink=False, spare=recycled)
    scores = result.by_group()
    assert {k: scores[k] for k in KERNELS} == {k: (0.0, 10.0) if k in habit.lost else FULL for k in KERNELS}
    assert all(got == total for group, (got, total) in scores.items() if group not in KERNELS)


def _load_report(path):
    sub = extract(path)
    with WorkerSession(sub.cells, KERNELS) as session:
        return sub, session.start()


def test_feedback_names_the_broken_cell_by_its_number_and_line(tmp_path):
    sub, report = _load_report(habits.BROKEN[0].write(tmp_path))
    broken = next(c for c in sub.cells if c.id == "kernel_expectile_loss")
    line = 1 + next(i for i, text in enumerate(broken.source.splitlines()) if "return float((" in text)
    notes = cell_notes(sub, report.cells)
    failed = [n for n in notes if "kernel_expectile_loss" in n["en"]]
    assert len(failed) == 1
    assert failed[0]["en"].startswith(f"cell {broken.number} (kernel_expectile_loss), line {line} could not run: SyntaxError")
    assert failed[0]["ru"].startswith(f"ячейка {broken.number} (kernel_expectile_loss), строка {line} не выполнилась")


def test_feedback_lists_the_magics_the_grader_did_not_run(tmp_path):
    habit = next(h for h in habits.HABITS if h.name == "magics_in_setup_cell")
    sub, report = _load_report(habit.write(tmp_path))
    ignored = [n for n in cell_notes(sub, report.cells) if n["en"].startswith("Not run by the grader")]
    assert len(ignored) == 1
    # `!pip install` sits in `except ImportError:` and gymnasium is installed: never reached, never listed.
    assert "!pip" not in ignored[0]["en"]
    for item in ("%matplotlib", "%load_ext", "%autoreload", "%config", "!nvidia-smi"):
        assert item in ignored[0]["en"] and item in ignored[0]["ru"]
    assert all(entry["ok"] for entry in report.cells if entry["ignored"])  # ignoring them never fails the cell
