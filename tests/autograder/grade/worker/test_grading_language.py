"""Under `m5 grade`, the support library in the sandbox speaks the submission's language.

The sandbox holds one kit (``release/module05_en/m5_student``) for every submission; the
grader passes the language it read from the notebook's metadata (``m5.lang``) into the
worker (``cellexec.prepare_environment``), and ``m5_student.notebook_language()`` reports
it there. Observed from outside through a graded answer whose value depends on it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import nbformat
import pytest

from autograder.grade import pipeline
from autograder.grade.worker import cellexec
from reference_impl import exercises

NAME = "ex09_active_mean_nll"


def _submission(path, lang: str):
    """An assignment notebook in ``lang`` whose one answer is right only if the kit says "ru"."""
    value = exercises.answers(9)[NAME]
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"m5": {"kind": "assignment", "lang": lang}}
    nb.cells = [nbformat.v4.new_code_cell(f"import m5_student\n\n{NAME} = {value!r} if m5_student.notebook_language() == 'ru' else -1.0")]
    nbformat.write(nb, path)
    return path


@pytest.mark.parametrize("lang, earned", [("ru", 1.0), ("en", 0.0)])
def test_the_kit_in_the_sandbox_reports_the_submissions_language(tmp_path, corpus, lang, earned):
    if not pipeline.library_dirs():
        pytest.skip("release/module05_en is not built: run `m5 release`")
    result = pipeline.grade_submission(
        _submission(tmp_path / f"m05_assignment_{lang}.ipynb", lang), corpus, answers=True, shrink=False, kernels=[]
    )
    assert result.language == lang
    assert [t.score for t in result.tests if t.key == NAME] == [earned]


@pytest.mark.parametrize("given, expected", [("ru", "ru"), ("en", "en"), ("de", None), (None, None)])
def test_prepare_environment_sets_the_language_only_to_a_course_language(given, expected):
    script = (
        "import os, sys; sys.path.insert(0, sys.argv[1]); import cellexec; "
        "os.environ['M5_LANG'] = 'stale'; "
        f"cellexec.prepare_environment((), {given!r}); print(os.environ.get('M5_LANG'))"
    )
    proc = subprocess.run([sys.executable, "-c", script, os.path.dirname(cellexec.__file__)], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == str(expected), proc.stderr
