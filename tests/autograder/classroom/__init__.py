"""Helpers of the classroom tests (release, student kit, nbgrader front door and exchange).

``tests/autograder`` is on ``sys.path`` (pytest's rootdir-relative import), so tests
import this as ``classroom``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
import numpy as np

import reference_impl
from autograder.assign import release, sources
from reference_impl import exercises

REPO = Path(__file__).resolve().parents[3]
SOURCE_ROOT = REPO / "source"
RELEASE_ROOT = REPO / "release"
# The bug a "wrong" submission has: dqn_targets bootstraps through terminal states.
TERMINAL_MASK = "np.copyto(next_values, 0.0, where=terminated)"
TERMINAL_BUG = "pass  # bug: bootstraps through terminal states"


def notebook(kind: str, lang: str, root: Path = SOURCE_ROOT) -> Path:
    """A notebook of the committed source (default) or release (``root=RELEASE_ROOT``)."""
    return sources.notebook_path(kind, lang, root)


def filled_notebook(release_path: Path, source_path: Path, edits: dict[str, tuple[str, str]] | None = None) -> nbformat.NotebookNode:
    """The release notebook with every solution cell replaced by the instructor's version.

    ``edits`` maps a cell id to (old, new): a text replaced in that cell afterwards (to
    plant a bug or a wrong answer); the old text must be there.
    """
    nb = nbformat.read(release_path, as_version=4)
    solutions = {c.id: c.source for c in nbformat.read(source_path, as_version=4).cells}
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = solutions[cell.id]
        if cell.id in (edits or {}):
            old, new = edits[cell.id]
            assert old in cell.source, (cell.id, old)
            cell.source = cell.source.replace(old, new)
    return nb


# Where the kit's packages are installed: the venv's site-packages, and the one numpy actually
# comes from (a worktree's venv may reach the main venv's through a .pth file, which -S skips).
SITE_PACKAGES = os.pathsep.join(dict.fromkeys([sysconfig.get_paths()["purelib"], str(Path(np.__file__).parents[1])]))


def kit_python(folder: Path, *args: str, env: dict[str, str] | None = None, text: bool = True) -> subprocess.CompletedProcess:
    """The venv's Python without site (no course package) in ``folder``, with a clean
    environment (plus ``env``); ``text`` False returns the output as bytes."""
    full_env = {
        "PATH": os.defpath,
        "PYTHONPATH": SITE_PACKAGES,
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": str(folder.parent),
        "MPLBACKEND": "Agg",
        "HYPOTHESIS_STORAGE_DIRECTORY": str(folder.parent / "hyp"),
        **(env or {}),
    }
    return subprocess.run([sys.executable, "-S", *args], cwd=folder, env=full_env, capture_output=True, text=text, timeout=600)


def released_copy(parent: Path, lang: str) -> Path:
    """A copy of the committed release folder of ``lang`` under ``parent`` (created if missing)."""
    folder = Path(parent) / sources.ASSIGNMENTS[lang]
    shutil.copytree(RELEASE_ROOT / sources.ASSIGNMENTS[lang], folder)
    return folder


def fill(folder: Path, lang: str, edits: dict[str, tuple[str, str]] | None = None) -> str:
    """Write the filled assignment notebook into ``folder``; returns its file name."""
    path = folder / notebook("assignment", lang).name
    nbformat.write(filled_notebook(notebook("assignment", lang, RELEASE_ROOT), notebook("assignment", lang), edits), path)
    return path.name


def run_nbgrader(course: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    """``nbgrader ARGS`` in ``course``; fails the test with its output when it fails."""
    bin_dir = Path(sys.executable).parent  # nbgrader runs `alembic` from PATH
    # The notebook kernels import the bridge of this checkout, not whichever one is installed.
    python_path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    full_env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "M5_PROGRESS": "0",
        "PYTHONPATH": python_path,
        **(env or {}),
    }
    full_env.pop("M5_NOTEBOOK", None)
    proc = subprocess.run([str(bin_dir / "nbgrader"), *args], cwd=course, env=full_env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"nbgrader {' '.join(args)}:\n" + proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


# The documented assignment total: 10 kernels x 10 points + one point per numerical answer (code cells).
AUTOGRADED_MAXIMUM = 120.0


def graded_points(lang: str) -> float:
    """Points of every graded cell of one language's notebooks (adds the hand-graded markdown answers)."""
    return sum(
        float(c.metadata["nbgrader"]["points"])
        for kind in ("assignment", "lab")
        for c in nbformat.read(notebook(kind, lang), as_version=4).cells
        if c.metadata.get("nbgrader", {}).get("grade")
    )


HIDDEN_SUITE_MARKERS = ("autograder/hidden", "hidden/kernels.py", "autograder.hidden", ".hypothesis", str(REPO))


def course_with_assignments(root: Path, course_id: str | None = None, exchange: Path | None = None) -> Path:
    """A course directory made as the instructor makes it, with ``m5 course init`` (sources
    with their kit, config, gradebook), and both assignments generated by nbgrader.

    ``course_id`` and ``exchange``: as ``m5 course init --course-id --exchange``.
    """
    from autograder.assign.course import init_course

    init_course(root, course_id=course_id, exchange=exchange)
    for assignment in sources.ASSIGNMENTS.values():
        run_nbgrader(root, "generate_assignment", assignment, "--force")
    return root


def gradebook_points(course: Path, student: str, lang: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook("sqlite:///" + str(course / "gradebook.db")) as gb:
        nb = gb.find_submission_notebook(notebook("assignment", lang).stem, sources.ASSIGNMENTS[lang], student)
        return {g.name: float(g.score) for g in nb.grades if g.cell_type == "code"}


def pipeline_points(path: Path, corpus) -> dict[str, float]:
    from autograder.grade.pipeline import grade_submission

    result = grade_submission(path, corpus, answers=True, shrink=False)
    points: dict[str, float] = {}
    for test in result.tests:
        # Numerical exercises are grouped "exNN" (cell exNN_tests); kernels by name (cell test_<kernel>).
        key = f"{test.group}_tests" if re.fullmatch(r"ex\d{2}", test.group) else f"test_{test.group}"
        points[key] = points.get(key, 0.0) + test.score
    return points


def check_student(course: Path, corpus, student: str, lang: str, wrong: bool) -> None:
    """The gradebook's points of one submission equal the pipeline's; a correct one gets the whole total."""
    gradebook = gradebook_points(course, student, lang)
    expected_cells = {f"test_{k}" for k in reference_impl.KERNEL_NAMES} | {f"ex{n:02d}_tests" for n in exercises.ANSWER_NAMES}
    assert set(gradebook) == expected_cells
    submitted = course / "submitted" / student / sources.ASSIGNMENTS[lang] / notebook("assignment", lang).name
    assert gradebook == pipeline_points(submitted, corpus), student
    if not wrong:
        assert gradebook["test_dqn_targets"] == 10.0 and sum(gradebook.values()) == AUTOGRADED_MAXIMUM
    else:
        assert gradebook["test_dqn_targets"] < 10.0
        assert all(
            v == (10.0 if k.startswith("test_") else len(exercises.ANSWER_NAMES[int(k[2:4])]))
            for k, v in gradebook.items()
            if k != "test_dqn_targets"
        )


def assert_true_maximum(course: Path) -> None:
    """Each language is its own assignment: nbgrader's maximum is one notebook pair's, not twice it."""
    from nbgrader.api import Gradebook

    with Gradebook("sqlite:///" + str(course / "gradebook.db")) as gb:
        for lang, assignment in sources.ASSIGNMENTS.items():
            found = gb.find_assignment(assignment)
            assert sorted(nb.name for nb in found.notebooks) == sorted(notebook(kind, lang).stem for kind in ("assignment", "lab"))
            assert float(found.max_code_score) == AUTOGRADED_MAXIMUM
            assert float(found.max_score) == graded_points(lang) < 2 * AUTOGRADED_MAXIMUM


def assert_no_grader_traces(course: Path) -> None:
    """autograded/ and feedback/ hold what the student was given plus nbgrader's own files, nothing else."""
    handed_out = {}
    for assignment in sources.ASSIGNMENTS.values():
        handed_out[assignment] = set(release.release_files(course / "release" / assignment))
    extra = {"timestamp.txt", "submission_secret.txt"}  # nbgrader's own (the second with its exchange)
    for stage in ("autograded", "feedback"):
        folders = sorted(p for p in (course / stage).glob("*/*") if p.is_dir())
        assert folders, stage
        for folder in folders:
            present = {p.relative_to(folder).as_posix() for p in folder.rglob("*")}
            files = {p for p in present if (folder / p).is_file()}
            traces = sorted(p for p in present if any(part.startswith(".") or part == "__pycache__" for part in Path(p).parts))
            assert not traces, f"{stage}/{folder.parent.name}: {traces[:5]}"
            allowed = handed_out[folder.name] | extra
            if stage == "feedback":
                allowed |= {name.replace(".ipynb", ".html") for name in handed_out[folder.name]}
            assert files <= allowed, f"{stage}/{folder.parent.name}: {sorted(files - allowed)}"
    for page in (course / "feedback").rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        for secret in ("BEGIN HIDDEN TESTS", "kernel_points", "answer_points", "nbgrader_bridge", *HIDDEN_SUITE_MARKERS):
            assert secret not in html, f"{page.name} shows {secret!r}"
