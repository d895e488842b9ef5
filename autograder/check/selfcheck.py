"""`m5 check`: run the public self-check tests on a student's notebook or .py file.

Runs in the student's own environment (it is their code on their machine): the
kernel cells are extracted exactly as the grader extracts them, executed in a fresh
namespace, and each kernel found is checked with :mod:`autograder.check.public`.
"""
from __future__ import annotations

import contextlib
import io
from pathlib import Path

from autograder.check import public
from autograder.grade.extract import SubmissionError, extract


def load_namespace(path: Path) -> tuple[dict, list[str], str]:
    """Execute the extracted cells; return the namespace, cell errors and language."""
    sub = extract(path, set(public.KERNEL_NAMES))
    namespace: dict = {"__name__": "__m5_check__"}
    errors = []
    for cell in sub.cells:
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(cell.source, f"<{cell.id}>", "exec"), namespace)
        except Exception as exc:  # report and go on: one broken cell costs only its kernels
            errors.append(f"{cell.id}: {type(exc).__name__}: {exc}")
    return namespace, errors, sub.language


def main(path: Path, lang: str | None = None) -> int:
    try:
        namespace, errors, detected = load_namespace(path)
    except SubmissionError as exc:
        print(f"m5 check: {exc}")
        return 2
    lang = lang or detected
    text = public.TEXT[lang]
    for error in errors:
        print(error)
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
