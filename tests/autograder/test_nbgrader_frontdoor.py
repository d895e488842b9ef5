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

import re
import tempfile
import shutil
from pathlib import Path

import nbformat
import pytest

import reference_impl
from autograder.assign import release, sources
from classroom import (REPO, SOURCE_ROOT, TERMINAL_BUG, TERMINAL_MASK, filled_notebook,  # tests/autograder on sys.path
                       notebook, run_nbgrader)
from reference_impl import exercises

# The documented assignment total: 10 kernels x 10 points + one point per numerical answer (code cells).
AUTOGRADED_MAXIMUM = 120.0


def graded_points(lang: str) -> float:
    """Points of every graded cell of one language's notebooks (adds the hand-graded markdown answers)."""
    return sum(float(c.metadata["nbgrader"]["points"]) for kind in ("assignment", "lab")
               for c in nbformat.read(notebook(kind, lang), as_version=4).cells
               if c.metadata.get("nbgrader", {}).get("grade"))
# student -> (language filled in, with the terminal-mask bug?)
SUBMISSIONS = {"alice": ("en", False), "bob": ("ru", True)}
HIDDEN_SUITE_MARKERS = ("autograder/hidden", "hidden/kernels.py", "autograder.hidden", ".hypothesis", str(REPO))


def course_with_assignments(root: Path) -> Path:
    """A course directory with both assignments generated from the committed source folders."""
    for assignment in sources.ASSIGNMENTS.values():
        shutil.copytree(SOURCE_ROOT / assignment, root / "source" / assignment,
                        ignore=shutil.ignore_patterns("__pycache__", ".*"))
    (root / "nbgrader_config.py").write_text(release.course_config(root, root / "gradebook.db"), encoding="utf-8")
    for assignment in sources.ASSIGNMENTS.values():
        run_nbgrader(root, "generate_assignment", assignment, "--force")
    return root


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


def _gradebook_points(course: Path, student: str, lang: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook("sqlite:///" + str(course / "gradebook.db")) as gb:
        nb = gb.find_submission_notebook(notebook("assignment", lang).stem, sources.ASSIGNMENTS[lang], student)
        return {g.name: float(g.score) for g in nb.grades if g.cell_type == "code"}


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
    lang, wrong = SUBMISSIONS[student]
    gradebook = _gradebook_points(course, student, lang)
    expected_cells = {f"test_{k}" for k in reference_impl.KERNEL_NAMES} | {f"ex{n:02d}_tests" for n in exercises.ANSWER_NAMES}
    assert set(gradebook) == expected_cells
    submitted = course / "submitted" / student / sources.ASSIGNMENTS[lang] / notebook("assignment", lang).name
    assert gradebook == _pipeline_points(submitted, corpus), student
    if not wrong:
        assert gradebook["test_dqn_targets"] == 10.0 and sum(gradebook.values()) == AUTOGRADED_MAXIMUM
    else:
        assert gradebook["test_dqn_targets"] < 10.0
        assert all(v == (10.0 if k.startswith("test_") else len(exercises.ANSWER_NAMES[int(k[2:4])]))
                   for k, v in gradebook.items() if k != "test_dqn_targets")


def assert_true_maximum(course: Path) -> None:
    """Each language is its own assignment: nbgrader's maximum is one notebook pair's, not twice it."""
    from nbgrader.api import Gradebook

    with Gradebook("sqlite:///" + str(course / "gradebook.db")) as gb:
        for lang, assignment in sources.ASSIGNMENTS.items():
            found = gb.find_assignment(assignment)
            assert sorted(nb.name for nb in found.notebooks) == sorted(
                notebook(kind, lang).stem for kind in ("assignment", "lab"))
            assert float(found.max_code_score) == AUTOGRADED_MAXIMUM
            assert float(found.max_score) == graded_points(lang) < 2 * AUTOGRADED_MAXIMUM


def assert_no_grader_traces(course: Path) -> None:
    """autograded/ and feedback/ hold what the student was given plus nbgrader's own files, nothing else."""
    handed_out = {}
    for assignment in sources.ASSIGNMENTS.values():
        handed_out[assignment] = set(release.release_files(course / "release" / assignment))
    for stage, extra in (("autograded", {"timestamp.txt"}), ("feedback", {"timestamp.txt"})):
        folders = sorted(p for p in (course / stage).glob("*/*") if p.is_dir())
        assert folders, stage
        for folder in folders:
            present = {p.relative_to(folder).as_posix() for p in folder.rglob("*")}
            files = {p for p in present if (folder / p).is_file()}
            traces = sorted(p for p in present if any(part.startswith(".") or part == "__pycache__"
                                                      for part in Path(p).parts))
            assert not traces, f"{stage}/{folder.parent.name}: {traces[:5]}"
            allowed = handed_out[folder.name] | extra
            if stage == "feedback":
                allowed |= {name.replace(".ipynb", ".html") for name in handed_out[folder.name]}
            assert files <= allowed, f"{stage}/{folder.parent.name}: {sorted(files - allowed)}"
    for page in (course / "feedback").rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        for secret in ("BEGIN HIDDEN TESTS", "kernel_points", "answer_points", "nbgrader_bridge", *HIDDEN_SUITE_MARKERS):
            assert secret not in html, f"{page.name} shows {secret!r}"


def test_the_autograded_maximum_is_the_documented_total():
    answers = sum(len(names) for names in exercises.ANSWER_NAMES.values())
    assert sources.KERNEL_POINTS * len(reference_impl.KERNEL_NAMES) + answers == AUTOGRADED_MAXIMUM


def test_autograde_points_equal_m5_grade(course, corpus):
    _check_student(course, corpus, "bob")


@pytest.mark.slow
def test_autograde_points_equal_m5_grade_for_a_class(tmp_path, corpus):
    course = _build_course(tmp_path / "course", SUBMISSIONS)
    for student in SUBMISSIONS:
        _check_student(course, corpus, student)


def test_gradebook_shows_the_true_maximum(course):
    assert_true_maximum(course)


def test_no_grader_traces_in_autograded_or_feedback(course):
    assert len(list((course / "feedback").rglob("*.html"))) == 2
    assert_no_grader_traces(course)


def test_bridge_keeps_hypothesis_files_out_of_the_working_directory(tmp_path):
    """Hypothesis caches the constants of every local module (the hidden suite too) under ./.hypothesis."""
    import subprocess
    import sys

    script = ("import autograder.nbgrader_bridge as bridge, autograder.hidden.kernels\n"
              "from hypothesis import given, settings, strategies as st\n"
              # Enough examples of a float strategy that Hypothesis reads the local constants (it does without the bridge).
              "@settings(max_examples=100, database=None)\n@given(st.floats())\ndef t(x): pass\n"
              "t()\nprint(bridge.HYPOTHESIS_STORAGE)\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.iterdir()) == []  # nothing in the working directory
    storage = Path(proc.stdout.strip())
    assert storage.parent == Path(tempfile.gettempdir()) and not storage.exists()  # private, removed at exit
