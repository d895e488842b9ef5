"""Shared fixtures of the grader tests: one corpus per test session (disk-cached)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SUBMISSIONS = Path(__file__).parent / "submissions"
# What cellexec.prepare_environment sets when a test loads cells in this process.
GRADING_VARIABLES = ("M5_GRADING", "M5_LANG", "MPLBACKEND")


@pytest.fixture(autouse=True)
def _grading_environment_stays_in_its_test():
    """A test that runs cells the way the worker does (in this process) sets the grading
    variables; the notebooks later tests start (nbclient, nbgrader) must not inherit them."""
    saved = {name: os.environ.get(name) for name in GRADING_VARIABLES}
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def corpus():
    from autograder.grade.corpus_cache import load_corpus

    return load_corpus()


@pytest.fixture(scope="module")
def recycled(corpus):
    """A spare worker that a module's benign submissions are graded in one after another
    (``grade_submission(..., spare=recycled)``), as a class run grades them: each test
    then takes the previous one's sandbox once it has come back clean (docs/sandbox.md,
    "Recycling") instead of starting one. Never for attacks: those get fresh sandboxes."""
    from autograder.grade.extract import library_dirs
    from autograder.grade.pipeline import corpus_requests
    from autograder.grade.worker_session import SpareWorker

    with SpareWorker(import_dirs=library_dirs(), preload=corpus_requests(corpus), recycle=True) as spare:
        spare.remaining = 1 << 30  # every later submission of the module wants it back
        yield spare


@pytest.fixture(scope="session")
def correct_source() -> str:
    from autograder.demo import CORRECT

    return CORRECT.read_text()


@pytest.fixture
def handed_over(monkeypatch) -> list:
    """(spare worker, whether it served) for each SpareWorker.hand_over, in order."""
    from autograder.grade import worker_session

    handed = []
    real = worker_session.SpareWorker.hand_over

    def hand_over(self, session):
        given = real(self, session)
        handed.append((self, given))
        return given

    monkeypatch.setattr(worker_session.SpareWorker, "hand_over", hand_over)
    return handed


@pytest.fixture
def recycles(monkeypatch) -> list:
    """Whether each sandbox handed on came back clean (WorkerProcess.came_back_clean), in order."""
    from autograder.grade import worker_handle

    counted = []
    real = worker_handle.WorkerProcess.came_back_clean

    def counting(worker):
        clean = real(worker)
        counted.append(clean)
        return clean

    monkeypatch.setattr(worker_handle.WorkerProcess, "came_back_clean", counting)
    return counted
