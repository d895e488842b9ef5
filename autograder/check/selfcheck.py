"""`m5 check`: run the public self-check tests on a student's notebook or .py file.

Runs in the student's own environment (it is their code on their machine): the
kernel cells are extracted exactly as the grader extracts them, executed in a fresh
namespace, and each kernel found is checked with :mod:`autograder.check.public`.
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
from pathlib import Path

from autograder.check import public
from autograder.grade import cellexec
from autograder.grade.extract import SubmissionError, cell_notes, extract, library_dirs


class _NeverTimesOut(BaseException):
    """The student's own machine: no per-cell time limit."""


def student_library_dirs(path: Path) -> list[Path]:
    """Where m5_student is for this submission: next to it (the module05 folder the
    student works in), else this checkout's release. The notebook's own setup cell,
    which finds it, is skipped like under grading."""
    folder = Path(path).resolve().parent
    return [folder] if (folder / "m5_student" / "__init__.py").is_file() else library_dirs()


def load_namespace(path: Path) -> tuple[dict, list[dict], str]:
    """Run the extracted cells as the grader runs them (:func:`cellexec.load_cells`: IPython
    syntax, .py statement by statement); return the namespace, the cells' error notes
    ({"en", "ru"}) and the language."""
    sub = extract(path)
    with contextlib.redirect_stdout(io.StringIO()):
        loaded = cellexec.load_cells([dataclasses.asdict(c) for c in sub.cells], public.KERNEL_NAMES, 0.0,
                                     lambda message: None, timed=lambda seconds: None, untimed=lambda: None,
                                     timeout_exc=_NeverTimesOut,
                                     request={"import_dirs": [str(d) for d in student_library_dirs(path)]})
    errors = cell_notes(sub, loaded["cells"], ignored=False)
    return loaded["namespace"], errors, sub.language


def main(path: Path, lang: str | None = None) -> int:
    try:
        namespace, errors, detected = load_namespace(path)
    except SubmissionError as exc:
        print(f"m5 check: {exc}")
        return 2
    lang = lang or detected
    text = public.TEXT[lang]
    for error in errors:
        print(error[lang])
    all_passed = True
    for name in public.KERNEL_NAMES:
        fn = namespace.get(name)
        if not callable(fn):
            print(text["missing"].format(name=name))
            all_passed = False
            continue
        results = public.run_checks(fn, name)
        if results and all(r.detail == "NotImplementedError" for r in results):
            print(text["not_impl"].format(name=name))
            all_passed = False
            continue
        print(public.format_results(name, results, lang))
        all_passed &= all(r.passed for r in results)
    print()
    print(text["disclaimer"])
    return 0 if all_passed else 1
