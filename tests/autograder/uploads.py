"""Release notebooks as students hand them in, for the front-door tests (m5 grade,
discovery, Gradescope). Found by file name, whatever the release layout
(``release/module05/`` or one folder per language)."""

from __future__ import annotations

from pathlib import Path

import nbformat

try:  # the classroom helpers, when present, own filling a release notebook
    from classroom import filled_notebook
except ImportError:
    from tests.autograder.assign.test_release import filled_notebook

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENT = ("m05_assignment_en.ipynb", "m05_assignment_ru.ipynb")
LAB = ("m05_lab_en.ipynb", "m05_lab_ru.ipynb")


def _one(root: Path, name: str) -> Path:
    found = sorted(root.rglob(name))
    assert found, f"{name} not found under {root}: run `m5 release`"
    return found[0]


def release_notebook(name: str) -> Path:
    """The committed release (student) version of notebook ``name``."""
    return _one(REPO / "release", name)


def support_library() -> Path:
    """The student support library folder (``m5_student``) of the release."""
    return _one(REPO / "release", "m5_student")


def filled(name: str) -> nbformat.NotebookNode:
    """The release notebook ``name`` with every answer cell filled by the instructor's solution."""
    return filled_notebook(release_notebook(name), _one(REPO / "source", name))


def nbgrader_course(folder: Path, answered: dict[str, int | None], extra: tuple[str, ...] = ()) -> Path:
    """nbgrader's ``submitted/<student>/module05/`` under ``folder``: per student both
    assignment notebooks (``answered[student]`` indexes the one filled in, None: both
    untouched), the ``extra`` release notebooks, the support library and a
    ``timestamp.txt`` (day = the student's position, from 1). Returns ``submitted``."""
    import shutil

    submitted = folder / "submitted"
    for day, (student, which) in enumerate(answered.items(), start=1):
        target = submitted / student / "module05"
        target.mkdir(parents=True)
        for name in (*ASSIGNMENT, *extra):
            shutil.copy(release_notebook(name), target / name)
        if which is not None:
            nbformat.write(filled(ASSIGNMENT[which]), target / ASSIGNMENT[which])
        shutil.copytree(support_library(), target / "m5_student")
        (target / "timestamp.txt").write_text(f"2026-12-{day:02d} 10:00:00.000000 UTC\n")
    return submitted
