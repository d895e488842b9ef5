"""nbgrader front door: `nbgrader autograde` awards the same points as `m5 grade`.

A throw-away course (its own config and sqlite gradebook) gets both assignments,
``module05_en`` and ``module05_ru``, as ``m5 release`` writes their source folders
(notebooks and student kit). Each student submits the released folder of one language
with the assignment filled in: alice English and correct, bob Russian with a
``dqn_targets`` that ignores the terminal mask. nbgrader autogrades in a subprocess.
The points per kernel and per numerical exercise in the gradebook must equal what
the grading pipeline gives the same notebook file; the gradebook's maximum is the
true one (one language per assignment); the feedback must not show the hidden test
source, and neither ``autograded/`` nor ``feedback/`` may hold grader traces
(Hypothesis' files, caches, paths of the hidden suite).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest
from classroom import (
    AUTOGRADED_MAXIMUM,
    REPO,
    TERMINAL_BUG,
    TERMINAL_MASK,  # tests/autograder is on sys.path
    assert_no_grader_traces,
    assert_true_maximum,
    check_student,
    course_with_assignments,
    filled_notebook,
    notebook,
    run_nbgrader,
)

import reference_impl
from autograder.assign import sources
from reference_impl import exercises

# student -> (language filled in, with the terminal-mask bug?)
SUBMISSIONS = {"alice": ("en", False), "bob": ("ru", True)}


def _build_course(root: Path, submissions: dict[str, tuple[str, bool]]) -> Path:
    course_with_assignments(root)
    for student, (lang, wrong) in submissions.items():
        assignment = sources.ASSIGNMENTS[lang]
        folder = root / "submitted" / student / assignment
        shutil.copytree(root / "release" / assignment, folder)  # the whole folder, as handed out
        edits = {"kernel_dqn_targets": (TERMINAL_MASK, TERMINAL_BUG)} if wrong else None
        name = notebook("assignment", lang).name
        nbformat.write(filled_notebook(folder / name, notebook("assignment", lang), edits), folder / name)
    for assignment in sorted({sources.ASSIGNMENTS[lang] for lang, _ in submissions.values()}):
        run_nbgrader(root, "autograde", assignment, "--create", "--force")
        run_nbgrader(root, "generate_feedback", assignment, "--force")
    return root


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """Only bob (Russian, one wrong kernel): partial credit and feedback."""
    return _build_course(tmp_path_factory.mktemp("course"), {"bob": SUBMISSIONS["bob"]})


def test_the_autograded_maximum_is_the_documented_total():
    answers = sum(len(names) for names in exercises.ANSWER_NAMES.values())
    assert sources.KERNEL_POINTS * len(reference_impl.KERNEL_NAMES) + answers == AUTOGRADED_MAXIMUM


def test_autograde_points_equal_m5_grade(course, corpus):
    check_student(course, corpus, "bob", *SUBMISSIONS["bob"])


@pytest.mark.slow
def test_autograde_points_equal_m5_grade_for_a_class(tmp_path, corpus):
    course = _build_course(tmp_path / "course", SUBMISSIONS)
    for student, (lang, wrong) in SUBMISSIONS.items():
        check_student(course, corpus, student, lang, wrong)


def test_gradebook_shows_the_true_maximum(course):
    assert_true_maximum(course)


def test_no_grader_traces_in_autograded_or_feedback(course):
    assert len(list((course / "feedback").rglob("*.html"))) == 2
    assert_no_grader_traces(course)


def test_russian_feedback_is_russian_throughout(course):
    """The self-check and answer-report lines come from the kit nbgrader copied from
    source/module05_ru (its language, not the environment's); the hidden tests' lines
    from the grader: all Russian, no English self-check line left, the stubs localised."""
    import html

    from autograder.assign.student_extras import notebook as glue
    from autograder.check import public

    page = html.unescape((course / "feedback" / "bob" / "module05_ru" / "m05_assignment_ru.html").read_text("utf-8"))
    assert public.TEXT["ru"]["disclaimer"] in page and glue.TEXT["ru"]["assigned"] in page
    assert "пройдено" in page and "численный ответ" in page
    for english in (
        public.TEXT["en"]["disclaimer"],
        "public checks passed",
        glue.TEXT["en"]["assigned"],
        "numerical answer",
        "YOUR ANSWER HERE",
        "YOUR CODE HERE",
    ):
        assert english not in page, english


def test_bridge_keeps_hypothesis_files_out_of_the_working_directory(tmp_path):
    """Hypothesis caches the constants of every local module (the hidden suite too) under ./.hypothesis."""
    script = (
        "import autograder.nbgrader_bridge as bridge, autograder.hidden.kernels\n"
        "from hypothesis import given, settings, strategies as st\n"
        # Enough examples of a float strategy that Hypothesis reads the local constants (it does without the bridge).
        "@settings(max_examples=100, database=None)\n@given(st.floats())\ndef t(x): pass\n"
        "t()\nprint(bridge.HYPOTHESIS_STORAGE)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": tempfile.gettempdir()}
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.iterdir()) == []  # nothing in the working directory
    storage = Path(proc.stdout.strip())
    assert storage.parent == Path(tempfile.gettempdir()) and not storage.exists()  # private, removed at exit
