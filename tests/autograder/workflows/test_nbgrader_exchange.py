"""Acceptance: the full nbgrader exchange cycle for one English and one Russian student.

An instructor course (``course_config`` with a course id and an exchange folder) and
two students, each with a home folder and their own nbgrader config (course id,
exchange, cache), run nbgrader's own commands as the instructor workflow documents
them:

    generate_assignment -> release_assignment -> fetch_assignment -> (fill, run) -> submit
    -> collect -> autograde -> generate_feedback -> release_feedback -> fetch_feedback

The fetched notebook runs top to bottom in the student's folder (its first cell finds
``m5_student``, which nbgrader's release carried), with the student's own caches
(``__pycache__``, ``.hypothesis``) left in the submission as a real student's would
be. Then: the gradebook's points equal the pipeline's, a correct submission gets the
whole total, nbgrader's maximum is the true one, ``autograded/`` and ``feedback/``
hold no grader traces, and each student fetches a feedback page that shows none.

A fast test covers the other documented way in, ``nbgrader zip_collect`` of files
downloaded from an LMS.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import zipfile
from pathlib import Path

import nbformat
import pytest
from classroom import (
    AUTOGRADED_MAXIMUM,
    HIDDEN_SUITE_MARKERS,
    RELEASE_ROOT,
    TERMINAL_BUG,  # tests/autograder
    TERMINAL_MASK,
    assert_no_grader_traces,
    assert_true_maximum,
    check_student,  # on sys.path
    course_with_assignments,
    filled_notebook,
    gradebook_points,
    notebook,
    run_nbgrader,
)

from autograder.assign import release, sources

COURSE_ID = "m5"
# student -> (language, with the terminal-mask bug?)
STUDENTS = {"anna": ("ru", True), "ben": ("en", False)}
NOTEBOOK_BUDGET = 600  # seconds for a whole notebook: a guard against hangs, not a timing assertion


def student_config(home: Path, exchange: Path) -> str:
    return (
        f"c = get_config()\nc.CourseDirectory.course_id = {COURSE_ID!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\nc.Exchange.cache = {str(home / '.nbgrader-cache')!r}\n"
    )


def run_as_student(home: Path, notebook_path: Path) -> nbformat.NotebookNode:
    """Run the student's notebook top to bottom in its folder (as Jupyter would), saving the outputs."""
    from nbclient import NotebookClient

    nb = nbformat.read(notebook_path, as_version=4)
    client = NotebookClient(nb, timeout=NOTEBOOK_BUDGET, kernel_name="python3", resources={"metadata": {"path": str(notebook_path.parent)}})
    saved = {k: os.environ.get(k) for k in ("HOME", "PYTHONDONTWRITEBYTECODE", "HYPOTHESIS_STORAGE_DIRECTORY")}
    os.environ["HOME"] = str(home)
    for key in ("PYTHONDONTWRITEBYTECODE", "HYPOTHESIS_STORAGE_DIRECTORY"):  # a student's defaults: caches in place
        os.environ.pop(key, None)
    try:
        asyncio.run(asyncio.wait_for(client.async_execute(), NOTEBOOK_BUDGET))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    nbformat.write(nb, notebook_path)
    return nb


@pytest.mark.slow
def test_full_exchange_cycle_for_an_english_and_a_russian_student(tmp_path, corpus):
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    course = course_with_assignments(tmp_path / "course", course_id=COURSE_ID, exchange=exchange)
    for assignment in sources.ASSIGNMENTS.values():
        run_nbgrader(course, "release_assignment", assignment)

    for student, (lang, wrong) in STUDENTS.items():
        home = tmp_path / student
        home.mkdir()
        (home / "nbgrader_config.py").write_text(student_config(home, exchange), encoding="utf-8")
        assignment = sources.ASSIGNMENTS[lang]
        run_nbgrader(home, "fetch_assignment", assignment)
        folder = home / assignment
        name = notebook("assignment", lang).name
        assert (folder / "m5_student" / "__init__.py").is_file() and (folder / "requirements.txt").is_file()
        edits = {"kernel_dqn_targets": (TERMINAL_MASK, TERMINAL_BUG)} if wrong else None
        nbformat.write(filled_notebook(folder / name, notebook("assignment", lang), edits), folder / name)
        ran = run_as_student(home, folder / name)
        errors = [
            f"{c.id}: {o.ename}: {o.evalue}" for c in ran.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
        ]
        assert not errors  # the first cell found m5_student; every cell ran
        assert ran.cells[next(i for i, c in enumerate(ran.cells) if c.id == "setup")].execution_count == 1
        run_nbgrader(home, "submit", assignment, "--student", student)

    for assignment in sources.ASSIGNMENTS.values():
        run_nbgrader(course, "collect", assignment)
        for student, (lang, _) in STUDENTS.items():
            if sources.ASSIGNMENTS[lang] == assignment:  # the exchange's files that release_feedback needs
                submitted = course / "submitted" / student / assignment
                assert (submitted / "timestamp.txt").is_file() and (submitted / "submission_secret.txt").is_file()
        run_nbgrader(course, "autograde", assignment, "--create")
        run_nbgrader(course, "generate_feedback", assignment)
        run_nbgrader(course, "release_feedback", assignment)

    assert_true_maximum(course)
    assert_no_grader_traces(course)
    for student, (lang, wrong) in STUDENTS.items():
        check_student(course, corpus, student, lang, wrong)
        assert (sum(gradebook_points(course, student, lang).values()) == AUTOGRADED_MAXIMUM) != wrong
        home = tmp_path / student
        assignment = sources.ASSIGNMENTS[lang]
        run_nbgrader(home, "fetch_feedback", assignment, "--student", student)
        pages = sorted((home / assignment / "feedback").rglob("*.html"))
        assert notebook("assignment", lang).with_suffix(".html").name in {p.name for p in pages}
        for page in pages:
            html = page.read_text(encoding="utf-8")
            for secret in ("BEGIN HIDDEN TESTS", "kernel_points", "nbgrader_bridge", *HIDDEN_SUITE_MARKERS):
                assert secret not in html, f"{student}: {page.name} shows {secret!r}"


# The documented regular expression for LMS downloads named <student>_<YYYYMMDDTHHMMSS>_<notebook>.ipynb
# (nbgrader matches it against the whole path of the extracted file; its parser reads "2026-11-30-18-05-00",
# the style of nbgrader's own example, as 18:00, so the timestamp is in the compact ISO form).
ZIP_COLLECT_REGEXP = r".*/(?P<student_id>[^/_]+)_(?P<timestamp>\d{8}T\d{6})_(?P<file_id>[^/]+)$"


def test_zip_collect_brings_lms_downloads_into_the_submitted_layout(tmp_path):
    """`nbgrader zip_collect` (docs/instructor/collect.md): submitted/<student>/<assignment>/ with timestamp.txt."""
    course = tmp_path / "course"
    assignment = sources.ASSIGNMENTS["en"]
    name = notebook("assignment", "en").name
    # zip_collect checks the notebook names against nbgrader's release of the assignment.
    shutil.copytree(RELEASE_ROOT / assignment, course / "release" / assignment)
    config = release.course_config(course, course / "gradebook.db")
    config += f"c.FileNameCollectorPlugin.named_regexp = {ZIP_COLLECT_REGEXP!r}\n"
    (course / "nbgrader_config.py").write_text(config, encoding="utf-8")
    archive = course / "downloaded" / assignment / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "lms-export.zip", "w") as zf:
        for student, stamp in (("carla", "20261130T180500"), ("dmitri", "20261201T093000")):
            zf.write(RELEASE_ROOT / assignment / name, f"{student}_{stamp}_{name}")
    run_nbgrader(course, "zip_collect", assignment)
    for student, stamp in (("carla", "2026-11-30 18:05:00"), ("dmitri", "2026-12-01 09:30:00")):
        folder = course / "submitted" / student / assignment
        assert (folder / name).read_bytes() == (RELEASE_ROOT / assignment / name).read_bytes()
        assert (folder / "timestamp.txt").read_text(encoding="utf-8").startswith(stamp)
        assert not (folder / "submission_secret.txt").exists()  # so: feedback goes back through the LMS
