"""Where a `m5 grade --jobs 1` run's time goes: the command's start, the first
submission, and the rest, timed from inside the command (same process, same options).

    .venv/bin/python bench/cli_phases.py SUBMISSION [SUBMISSION ...]

Prints seconds since start at each mark: the CLI imported, the grading modules
imported, the corpus cache loaded, the first submission graded, the class graded, and
the command done; then the per-submission rate after the first one.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import tempfile
import time

START = time.perf_counter()
MARKS: list[tuple[str, float]] = []


def mark(label: str) -> None:
    MARKS.append((label, time.perf_counter() - START))


class _MarkOnImport(importlib.abc.MetaPathFinder):
    """Patches the grading pipeline when `m5 grade` itself imports it (after the CLI has
    started its sandbox probe and first worker), so the timing keeps the command's order."""

    def __init__(self, patch):
        self.patch = patch

    def find_spec(self, name, path=None, target=None):
        if name != "autograder.grade.pipeline":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        real_exec = spec.loader.exec_module

        def exec_module(module):
            real_exec(module)
            mark("grading modules imported")
            self.patch(module)

        spec.loader.exec_module = exec_module
        return spec


def main(paths: list[str]) -> int:
    from autograder import cli

    mark("CLI imported")
    graded = []

    def patch(pipeline):
        def timed(name, after):
            real = getattr(pipeline, name)

            def wrapper(*args, **kwargs):
                result = real(*args, **kwargs)
                mark(after)
                return result

            setattr(pipeline, name, wrapper)

        timed("load_corpus", "corpus cache loaded")
        timed("grade_many", "class graded")
        real_grade = pipeline.grade_submission

        def grade_submission(*args, **kwargs):
            result = real_grade(*args, **kwargs)
            graded.append(time.perf_counter() - START)
            if len(graded) == 1:
                mark("first submission graded")
            return result

        pipeline.grade_submission = grade_submission

    sys.meta_path.insert(0, _MarkOnImport(patch))
    with tempfile.TemporaryDirectory() as out:
        code = cli.main(["grade", *paths, "--jobs", "1", "--out", out])
    mark("command done")
    for label, seconds in MARKS:
        print(f"{seconds:8.3f} s  {label}")
    if len(graded) > 1:
        print(
            f"after the first: {(graded[-1] - graded[0]) / (len(graded) - 1):.3f} s per submission "
            f"({len(graded)} submissions, {MARKS[-1][1] / len(graded):.3f} s each in all)"
        )
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
