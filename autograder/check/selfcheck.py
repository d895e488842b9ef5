"""`m5 check`: run the public self-check tests on a student's notebook or .py file.

Runs in the student's own environment (it is their code on their machine): the
kernel and answer cells are extracted exactly as the grader extracts them, run in a
fresh namespace, and reported by the same code as the student kit's
``python -m m5_student check`` (:mod:`autograder.check.kit`): the public checks of
each kernel and the format of each graded numerical answer.
"""
from __future__ import annotations

from pathlib import Path

from autograder.check import kit, public
from autograder.grade.extract import SubmissionError, extract


def answer_formats() -> dict[str, int | None]:
    """Graded answer name -> None (a number) or n (a list of n numbers); shipped as answer_format.json."""
    from reference_impl import exercises

    return {name: None if isinstance(answer.value, float) else len(answer.value)
            for name, answer in exercises.all_graded_answers().items()}


def load_namespace(path: Path) -> tuple[dict, list[str], str, str]:
    """Execute the extracted cells; return the namespace, cell errors, language and kind ("notebook" or "python")."""
    sub = extract(path, set(public.KERNEL_NAMES))
    namespace, errors = kit.run_cells((cell.id, cell.source) for cell in sub.cells)
    return namespace, errors, sub.language, sub.kind


def main(path: Path, lang: str | None = None) -> int:
    try:
        namespace, errors, detected, kind = load_namespace(path)
    except SubmissionError as exc:
        print(f"m5 check: {exc}")
        return 2
    # A notebook has a cell for every answer; a .py file may hold the kernels only.
    return kit.report(namespace, errors, lang or detected, answer_formats(), require_answers=kind == "notebook")
