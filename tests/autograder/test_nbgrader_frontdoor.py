"""nbgrader front door: `nbgrader autograde` awards the same points as `m5 grade`.

A throw-away course (its own config and sqlite gradebook) gets both assignment
notebooks as its source. Each student submits the whole folder, as handed out, with
one language filled in: alice English and correct, bob Russian with a
``dqn_targets`` that ignores the terminal mask; the other language stays a stub.
nbgrader autogrades in a subprocess. The points per kernel and per numerical
exercise in the gradebook must equal what the grading pipeline gives the same
notebook file (so the hidden cells grade the notebook they run in, not its sibling),
and the feedback HTML must not show the hidden test source.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import reference_impl
from autograder.assign import release
from reference_impl import exercises

REPO = Path(__file__).resolve().parents[2]
SOURCES = {lang: REPO / "source" / "module05" / f"m05_assignment_{lang}.ipynb" for lang in ("en", "ru")}
RELEASE = REPO / "release" / "module05"
# student -> (language filled in, with the terminal-mask bug?)
SUBMISSIONS = {"alice": ("en", False), "bob": ("ru", True)}
TERMINAL_MASK = "np.copyto(next_values, 0.0, where=terminated)"


def _nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    bin_dir = Path(sys.executable).parent  # nbgrader runs `alembic` from PATH
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "M5_PROGRESS": "0"}
    env.pop("M5_NOTEBOOK", None)
    proc = subprocess.run([str(bin_dir / "nbgrader"), *args], cwd=course, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def _filled(release_nb: Path, source_nb: Path, wrong_terminal_mask: bool) -> nbformat.NotebookNode:
    nb = nbformat.read(release_nb, as_version=4)
    solutions = {c.id: c.source for c in nbformat.read(source_nb, as_version=4).cells}
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = solutions[cell.id]
            if wrong_terminal_mask and cell.id == "kernel_dqn_targets":
                assert TERMINAL_MASK in cell.source
                cell.source = cell.source.replace(TERMINAL_MASK, "pass  # bug: bootstraps through terminal states")
    return nb


def _build_course(root: Path, submissions: dict[str, tuple[str, bool]]) -> Path:
    (root / "source" / "module05").mkdir(parents=True)
    for path in SOURCES.values():
        shutil.copyfile(path, root / "source" / "module05" / path.name)
    shutil.copytree(RELEASE / "m5_student", root / "m5_student")  # found by walking up from autograded/
    (root / "nbgrader_config.py").write_text(release.course_config(root, root / "gradebook.db"), encoding="utf-8")
    _nbgrader(root, "generate_assignment", "module05", "--force")
    for student, (lang, wrong) in submissions.items():
        folder = root / "submitted" / student / "module05"
        folder.mkdir(parents=True)
        for other, source in SOURCES.items():
            released = root / "release" / "module05" / source.name
            if other == lang:
                nbformat.write(_filled(released, source, wrong), folder / source.name)
            else:
                shutil.copyfile(released, folder / source.name)  # the untouched other language
    _nbgrader(root, "autograde", "module05", "--create", "--force")
    _nbgrader(root, "generate_feedback", "module05", "--force")
    return root


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """Only bob (Russian, one wrong kernel): partial credit, the sibling stub, feedback."""
    return _build_course(tmp_path_factory.mktemp("course"), {"bob": SUBMISSIONS["bob"]})


def _gradebook_points(course: Path, student: str, notebook_name: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook("sqlite:///" + str(course / "gradebook.db")) as gb:
        notebook = gb.find_submission_notebook(notebook_name, "module05", student)
        return {g.name: float(g.score) for g in notebook.grades if g.cell_type == "code"}


def _pipeline_points(path: Path, corpus) -> dict[str, float]:
    from autograder.grade.pipeline import grade_submission

    result = grade_submission(path, corpus, answers=True, shrink=False)
    points: dict[str, float] = {}
    for test in result.tests:
        # Numerical exercises are grouped "exNN" (cell exNN_tests); kernels by name (cell test_<kernel>).
        key = f"{test.group}_tests" if re.fullmatch(r"ex\d{2}", test.group) else f"test_{test.group}"
        points[key] = points.get(key, 0.0) + test.score
    return points


def _check_student(course: Path, corpus, student: str) -> None:
    for lang, source in SOURCES.items():
        gradebook = _gradebook_points(course, student, source.stem)
        expected_cells = {f"test_{k}" for k in reference_impl.KERNEL_NAMES} | {f"ex{n:02d}_tests" for n in exercises.ANSWER_NAMES}
        assert set(gradebook) == expected_cells
        submitted = course / "submitted" / student / "module05" / source.name
        assert gradebook == _pipeline_points(submitted, corpus), (student, lang)
        filled, wrong = SUBMISSIONS[student][0] == lang, SUBMISSIONS[student][1]
        if not filled:
            assert sum(gradebook.values()) == 0.0
        elif not wrong:
            assert gradebook["test_dqn_targets"] == 10.0 and sum(gradebook.values()) == 120.0
        else:
            assert gradebook["test_dqn_targets"] < 10.0
            assert all(v == (10.0 if k.startswith("test_") else len(exercises.ANSWER_NAMES[int(k[2:4])]))
                       for k, v in gradebook.items() if k != "test_dqn_targets")


def test_autograde_points_equal_m5_grade(course, corpus):
    _check_student(course, corpus, "bob")


@pytest.mark.slow
def test_autograde_points_equal_m5_grade_for_a_class(tmp_path, corpus):
    course = _build_course(tmp_path / "course", SUBMISSIONS)
    for student in SUBMISSIONS:
        _check_student(course, corpus, student)


def test_feedback_shows_no_hidden_test_source(course):
    pages = sorted((course / "feedback").rglob("*.html"))
    assert len(pages) == 2
    for page in pages:
        html = page.read_text(encoding="utf-8")
        for secret in ("BEGIN HIDDEN TESTS", "kernel_points", "answer_points", "nbgrader_bridge"):
            assert secret not in html, f"{page.name} shows {secret!r}"
