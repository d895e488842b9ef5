"""`m5 check`: run the public self-check tests on a student's notebook or .py file.

Runs in the student's own environment (it is their code on their machine): the
kernel and answer cells are extracted exactly as the grader extracts them, run in a
fresh namespace, and reported by the same code as the student kit's
``python -m m5_student check`` (:mod:`autograder.check.kit`): the public checks of
each kernel and the format of each graded numerical answer.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import sys
from pathlib import Path

from autograder.check import kit, public
from autograder.grade.extract import SubmissionError, cell_notes, extract, library_dirs
from autograder.grade.worker import cellexec
from reference_impl import exercises


def answer_formats() -> dict[str, int | None]:
    """Graded answer name -> None (a number) or n (a list of n numbers); shipped as answer_format.json."""
    return {name: None if isinstance(answer.value, float) else len(answer.value) for name, answer in exercises.all_graded_answers().items()}


@contextlib.contextmanager
def _restored_environ(saved: dict):
    path = list(sys.path)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
        sys.path[:] = path


class _NeverTimesOut(BaseException):
    """The student's own machine: no per-cell time limit."""


def student_library_dirs(path: Path) -> list[Path]:
    """Where m5_student is for this submission: next to it (the module05 folder the
    student works in), else this checkout's release. The notebook's own setup cell,
    which finds it, is skipped like under grading."""
    folder = Path(path).resolve().parent
    return [folder] if (folder / "m5_student" / "__init__.py").is_file() else library_dirs()


def load_namespace(path: Path) -> tuple[dict, list[dict], str, str]:
    """Run the extracted cells as the grader runs them (:func:`cellexec.load_cells`: IPython
    syntax, .py statement by statement); return the namespace, the cells' error notes
    ({"en", "ru"}), the language and the kind ("notebook" or "python")."""
    sub = extract(path)
    # load_cells marks its process as "under grading" (M5_GRADING, MPLBACKEND, sys.path); here
    # that process is the student's own: give the environment back as it was.
    saved = dict(os.environ)
    with contextlib.redirect_stdout(io.StringIO()), _restored_environ(saved):
        loaded = cellexec.load_cells(
            [dataclasses.asdict(c) for c in sub.cells],
            public.KERNEL_NAMES,
            0.0,
            lambda message: None,
            timed=lambda seconds: None,
            untimed=lambda: None,
            timeout_exc=_NeverTimesOut,
            request={"import_dirs": [str(d) for d in student_library_dirs(path)]},
        )
    errors = cell_notes(sub, loaded["cells"], ignored=False)
    return loaded["namespace"], errors, sub.language, sub.kind


def main(path: Path, lang: str | None = None) -> int:
    try:
        namespace, errors, detected, kind = load_namespace(path)
    except SubmissionError as exc:
        print(f"m5 check: {exc}")
        return 2
    # A notebook has a cell for every answer; a .py file may hold the kernels only.
    lang = lang or detected
    return kit.report(namespace, [error[lang] for error in errors], lang, answer_formats(), require_answers=kind == "notebook")
