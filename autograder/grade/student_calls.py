"""Call a submission's kernels one call at a time, in its sandboxed worker.

What the pytest plugin's ``m5_student`` fixture hands an instructor's property
(docs/pytest_plugin.md): ``kernels.dqn_targets(rewards, terminated, next_q)`` runs the
student's ``dqn_targets`` in the same sandbox, worker and limits as grading, and returns
what came back (a numpy array) or raises what the student's code raised. The student's
code never runs in the calling process; only plain arrays and error names come back.
"""

from __future__ import annotations

from pathlib import Path

import reference_impl
from autograder.grade.extract import extract, library_dirs
from autograder.grade.judge import LOST
from autograder.grade.properties import MESSAGES, Call
from autograder.grade.worker.wire import BATCH_IDLE
from autograder.grade.worker_handle import WorkerLost
from autograder.grade.worker_session import Budget, WorkerSession, call_request


class StudentError(Exception):
    """The student's call did not return a value: ``reason`` says why, in English."""


class StudentRaised(StudentError):
    """The student's code raised: ``names`` are its exception's classes, most derived first."""

    def __init__(self, names: list[str], message: str):
        super().__init__(message)
        self.names = names


class StudentValueError(StudentRaised, ValueError):
    """The student's code raised a ValueError (or a subclass): ``pytest.raises(ValueError)`` catches it."""


def raised(outcome: dict) -> StudentRaised:
    """The exception to raise here for a call that raised in the sandbox."""
    names = [str(name) for name in outcome.get("exc") or []]
    kind = StudentValueError if "ValueError" in names else StudentRaised
    return kind(names, str(outcome.get("msg", "?")))


def value_of(outcome: dict):
    """What one call gave: its array, or the exception it stands for, raised."""
    status = outcome.get("s")
    if status == "ok":
        return outcome["v"]
    if status == "raised":
        raise raised(outcome)
    if status in ("timeout", "idle"):
        raise StudentError(MESSAGES[status]["en"])
    raise StudentError(MESSAGES["bad_return"]["en"].format(msg=outcome.get("msg", "?")))


class StudentKernels:
    """A submission's kernels as attributes (``kernels.return_to_go(r, d)``), each call run in
    its sandboxed worker. The worker starts on the first call and loads the submission's cells
    once; a call that kills it costs a fresh worker, as in grading. Close it when done."""

    def __init__(self, path: Path, *, lang: str | None = None, budget: Budget | None = None):
        submission = extract(Path(path))
        self._names = list(reference_impl.KERNEL_NAMES)
        self._session = WorkerSession(
            submission.cells, self._names, budget=budget or Budget(), import_dirs=library_dirs(), lang=lang or submission.language
        )
        self._started = False

    def __getattr__(self, kernel: str):
        if kernel.startswith("_") or kernel not in self._names:
            raise AttributeError(f"{kernel!r} is not a kernel of the assignment (one of {', '.join(self._names)})")
        return lambda *args, **kwargs: self.call(kernel, *args, **kwargs)

    def call(self, kernel: str, *args, **kwargs):
        """The student's ``kernel(*args, **kwargs)``, run in the sandbox."""
        if not self._started:
            self._session.start()
            self._started = True
        if not self._session.report.found.get(kernel):
            raise StudentError(LOST["missing"]["en"].format(k=kernel))
        try:
            (outcome,) = self._session.call_batch(call_request(kernel, [Call(args, kwargs)], self._session.budget), 1)
        except WorkerLost as lost:
            self._session.restart()
            idle = self._session.budget.idle_wall
            raise StudentError(LOST[lost.reason]["en"].format(k=kernel, limit=idle, total=idle * BATCH_IDLE)) from None
        return value_of(outcome)

    def close(self) -> None:
        self._session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
