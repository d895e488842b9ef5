"""Grade submissions: extract -> run (sandboxed worker) -> compare -> score -> report.

:func:`grade_submission` grades one file; :func:`grade_many` grades a class with a
process pool, sharing one corpus, and hands each result to a callback as soon as it
is ready. Scores depend only on the fixed corpus; a failed property additionally gets
a shrunk counterexample for its feedback.
"""

from __future__ import annotations

import contextlib
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context, util
from pathlib import Path

from autograder.grade import similarity, written
from autograder.grade.call_forms import prepared
from autograder.grade.corpus_cache import KERNELS, corpus_requests
from autograder.grade.extract import Submission, SubmissionError, cell_notes, extract, library_dirs
from autograder.grade.judge import all_fail, grade_answers, grade_kernel
from autograder.grade.score import SubmissionResult, TestResult
from autograder.grade.worker_session import Budget, SpareWorker, WorkerSession

# A kernel never run because the submission's time ran out before it.
NOT_GRADED = {
    "submission": {
        "en": (
            "{k} was not graded: the submission reached its total time limit ({limit:.0f} s: {base:g} s "
            "plus {factor:g} × the CPU time its code used, at most {cap:g} s) before this kernel"
        ),
        "ru": (
            "{k} не проверена: решение исчерпало общий лимит времени ({limit:.0f} с: {base:g} с "
            "плюс {factor:g} × процессорное время его кода, не более {cap:g} с) до этого ядра"
        ),
    },
    "cells": {
        "en": "{k} was not graded: the submission's cells ran longer than {limit:g} s in all",
        "ru": "{k} не проверена: ячейки решения выполнялись дольше {limit:g} с в сумме",
    },
}
POOL_DIED = "grading failed: the grading process stopped (out of memory or killed)"


# ---------------------------------------------------------------- one submission
def _selected(kernels) -> list[str]:
    wanted = set(KERNELS) if kernels is None else set(kernels)
    if wanted - set(KERNELS):
        raise ValueError(f"kernels: unknown kernel names {sorted(wanted - set(KERNELS))}")
    return [k for k in KERNELS if k in wanted]


def _session(sub: Submission, corpus: dict, budget: Budget, spare, lang: str | None) -> WorkerSession:
    return WorkerSession(
        sub.cells,
        KERNELS,
        budget=budget,
        spare=spare,
        import_dirs=library_dirs(),
        preload=corpus_requests(corpus),
        lang=lang or sub.language,
    )


def _plan(session: WorkerSession, corpus: dict, selected: list[str]) -> None:
    """Hand the worker the batches of every selected kernel it found, in grading order."""
    session.plan([(corpus[k].request, len(corpus[k].calls)) for k in selected if k in corpus and session.report.found.get(k)])


def grade_submission(
    path: Path,
    corpus: dict,
    *,
    lang: str | None = None,
    budget: Budget = Budget(),
    shrink: bool = True,
    shrink_budget: float = 0.3,
    shrink_total: float = 2.0,
    answers: bool | None = None,
    kernels=None,
    spare: SpareWorker | None = None,
    ahead: "NextSubmission | None" = None,
    next_up: "NextSubmission | None" = None,
) -> SubmissionResult:
    """Grade one submission. Raises SubmissionError when the file cannot be read at all.

    ``kernels`` (an iterable of kernel names, default all) grades only those kernels;
    the others are left out of the result (not failed). Unknown names raise ValueError.
    ``spare``: a worker started ahead of time (see :class:`worker_session.SpareWorker`).
    ``ahead``: this submission, made ready while the previous one was graded;
    ``next_up``: the next one, to be made ready while this one is graded (class runs).
    """
    selected = _selected(kernels)
    start = time.monotonic()
    shrink_until = start + shrink_total  # counterexample search is time-boxed per submission
    taken = ahead.take() if ahead is not None else None
    if taken is not None:
        sub, session = taken
        session.resume()
    else:
        sub = extract(Path(path), set(KERNELS))
        session = _session(sub, corpus, budget, spare, lang)
    language = lang or sub.language
    tests: list[TestResult] = []
    notes = []
    outputs: dict[str, str | None] = {}  # kernel -> outputs digest, in grading order
    with session:
        report = session.start()
        notes += cell_notes(sub, report.cells, cell_timeout=budget.cell_timeout)
        if not session.planned:  # the worker runs kernel k+1 while kernel k is judged here
            _plan(session, corpus, selected)
        if next_up is not None:
            next_up.current, session.when_idle = session, next_up.advance
            next_up.advance()
        for kernel in selected:
            if kernel not in corpus:
                continue
            if session.out_of_time:
                tests += _not_graded(corpus[kernel], session)
                outputs[kernel] = None
                continue
            tests += grade_kernel(
                corpus[kernel], session, shrink=shrink, shrink_budget=shrink_budget, shrink_until=shrink_until, outputs=outputs
            )
            if next_up is not None:
                next_up.advance()
        # The front doors (m5 grade, Gradescope) pass answers=True: exNN_ variables count in
        # a .py exactly as in a notebook, one total. Left open, only notebooks are asked.
        if answers if answers is not None else sub.kind == "notebook":
            tests += grade_answers(session)
    return SubmissionResult(
        Path(path).name,
        language,
        tests,
        time.monotonic() - start,
        notes,
        outputs=outputs,
        code=similarity.code_of(sub),
        written=written.answers_of(sub.notebook, written.question_ids()) if sub.notebook is not None else None,
    )


class NextSubmission:
    """The next submission of a one-at-a-time class run, made ready while the current
    one is graded, in a second sandbox (its own :class:`SpareWorker`).

    :meth:`advance` is called between the current submission's steps. Once the spare's
    worker is ready, the next submission is read and its cells start loading. Once they
    are loaded and the current worker has run its last planned batch, the next one's
    batches are planned: its first kernel runs while the grader judges the current
    submission's last one (and, with shrinking, searches its counterexamples). The
    planned kernels of two submissions never run at the same time, and every limit
    counts the student process's own CPU time, so the overlap costs no one a point.
    Anything that goes wrong here is left for :func:`grade_submission` to meet again,
    in order, as if nothing had been made ready.
    """

    def __init__(
        self,
        path: Path,
        corpus: dict,
        spare: SpareWorker,
        *,
        lang: str | None = None,
        budget: Budget = Budget(),
        kernels=None,
        **_ignored,
    ):
        self.path, self.corpus, self.spare = Path(path), corpus, spare
        self.lang, self.budget, self.kernels = lang, budget, kernels
        self.sub: Submission | None = None
        self.session: WorkerSession | None = None
        self.selected: list[str] = []
        self.done = False  # taken, or given up
        self.current: WorkerSession | None = None  # the session being graded now

    def advance(self) -> None:
        if self.done:
            return
        try:
            if self.session is None:
                if not self.spare.ready():
                    return
                self.sub, self.selected = extract(self.path, set(KERNELS)), _selected(self.kernels)
                self.session = _session(self.sub, self.corpus, self.budget, self.spare, self.lang)
                if not self.session.begin():  # the sandbox was not clean: the submission starts afresh
                    self.close()
                    return
            if self.session.planned or (self.current is not None and not self.current.idle):
                return
            if self.session.poll_loaded():
                _plan(self.session, self.corpus, self.selected)
        except Exception:  # noqa: BLE001 - whatever it was, grade_submission meets it again (or starts afresh)
            self.close()

    def take(self) -> tuple[Submission, WorkerSession] | None:
        """The submission and its session, if they were made ready (once)."""
        taken = (self.sub, self.session) if self.session is not None and not self.done else None
        self.session, self.done = None, True
        return taken

    def close(self) -> None:
        self.done = True
        if self.session is not None:
            self.session.close()
            self.session = None


def _not_graded(kc, session: WorkerSession):
    """Every property of a kernel fails: the submission's time ran out before it."""
    if session.report.time_cap:
        return all_fail(kc, NOT_GRADED["cells"], k=kc.kernel, limit=session.budget.load_timeout)
    b = session.budget
    return all_fail(
        kc,
        NOT_GRADED["submission"],
        k=kc.kernel,
        limit=session.time_limit,
        base=b.submission_wall,
        factor=b.wall_factor,
        cap=b.submission_timeout,
    )


# ---------------------------------------------------------------- a class
_POOL_CORPUS: dict | None = None
_POOL_SPARE: SpareWorker | None = None  # a grading process's own recycled sandbox (--jobs > 1)


def _error_result(path, kwargs: dict, error: str) -> SubmissionResult:
    return SubmissionResult(Path(path).name, kwargs.get("lang") or "en", [], 0.0, error=error)


def _pool_init() -> None:
    """In each grading process of a pool: a spare that recycles the process's sandbox
    from one submission to the next, stopped when the process exits."""
    global _POOL_SPARE

    _POOL_SPARE = SpareWorker(import_dirs=library_dirs(), preload=corpus_requests(_POOL_CORPUS), recycle=True)
    _POOL_SPARE.remaining = 1 << 30  # how many this process will get is unknown: the last one is closed at exit
    util.Finalize(_POOL_SPARE, _POOL_SPARE.close, exitpriority=10)


def _pool_grade(args):
    path, kwargs = args
    if _POOL_SPARE is not None and "spare" not in kwargs:
        kwargs = {**kwargs, "spare": _POOL_SPARE}
    try:
        return grade_submission(path, _POOL_CORPUS, **kwargs)
    except SubmissionError as exc:
        return _error_result(path, kwargs, str(exc))
    except Exception as exc:  # noqa: BLE001 - one broken submission, however broken, must not stop a class run
        return _error_result(path, kwargs, f"grading failed: {type(exc).__name__}: {exc}")


def grade_many(
    paths: list[Path],
    corpus: dict,
    *,
    jobs: int = 1,
    progress=None,
    on_result=None,
    recycle: bool = True,
    first: SpareWorker | None = None,
    **kwargs,
) -> list[SubmissionResult]:
    """Grade several submissions; return the results in input order (unreadable ones
    get ``error`` set).

    ``on_result(index, path, result)`` is called in this process as each submission
    finishes (in completion order), so a class run that is killed keeps what it
    graded. A submission whose grading process dies gets an error result; the class
    goes on in a fresh pool. ``recycle`` False: a new sandbox for every submission
    instead of a cleaned one (see :class:`worker_session.SpareWorker`). ``first``: a worker from
    :func:`cache.first_worker` for the first submission (closed here if it does not fit).
    """
    global _POOL_CORPUS
    _POOL_CORPUS = corpus
    for kc in corpus.values():  # prepared once here, inherited by every forked grading process
        prepared(kc.request, keep=True)
    tasks = [(p, kwargs) for p in paths]
    results: list = [None] * len(tasks)

    def deliver(index: int, result: SubmissionResult) -> None:
        results[index] = result
        if on_result is not None:
            on_result(index, paths[index], result)
        if progress:
            progress(1)

    if jobs <= 1 or len(paths) <= 1:
        _grade_in_turn(tasks, corpus, deliver, recycle, first)
        return results
    if first is not None:
        first.close()  # a pool's processes start their own
    # Which task killed a pool is unknown: each lost one is retried alone, once.
    for index in sorted(_grade_in_pool(tasks, list(range(len(tasks))), jobs, deliver, recycle)):
        if _grade_in_pool(tasks, [index], 1, deliver, recycle):
            deliver(index, _error_result(paths[index], kwargs, POOL_DIED))
    return results


def _grade_in_turn(tasks: list, corpus: dict, deliver, recycle: bool, first: SpareWorker | None) -> None:
    """One at a time, in two sandboxes taken in turn: the next submission loads in one
    while this one is graded in the other (see NextSubmission)."""
    with contextlib.ExitStack() as stack:
        spares = _spares_in_turn(stack, len(tasks), corpus, recycle, first)
        ahead = None
        try:
            for index, (path, task_kwargs) in enumerate(tasks):
                next_up = None
                if index + 1 < len(tasks):
                    next_path, next_kwargs = tasks[index + 1]
                    next_up = NextSubmission(next_path, corpus, spares[(index + 1) % len(spares)], **next_kwargs)
                result = _pool_grade((path, {**task_kwargs, "spare": spares[index % len(spares)], "ahead": ahead, "next_up": next_up}))
                if ahead is not None:
                    ahead.close()  # made ready but not taken (grading failed before it)
                ahead = next_up
                deliver(index, result)
        finally:
            if ahead is not None:
                ahead.close()


def _spares_in_turn(stack: contextlib.ExitStack, n_tasks: int, corpus: dict, recycle: bool, first: SpareWorker | None) -> list:
    """The (at most two) spares a one-at-a-time run takes in turn, each told how many
    submissions it will serve; ``first``, if it fits, is the first one's."""
    spares = [
        stack.enter_context(SpareWorker(import_dirs=library_dirs(), preload=corpus_requests(corpus), recycle=recycle))
        for _ in range(min(2, n_tasks))
    ]
    if first is not None:
        stack.enter_context(first)
        if spares and recycle and first.recycle and first.spec == spares[0].spec:
            spares[0] = first  # already starting: the first submission takes it
    for i, spare in enumerate(spares):
        spare.remaining = len(range(i, n_tasks, len(spares))) - 1
    if len(spares) > 1:
        spares[1].remaining += 1
        spares[1].refill()  # the second submission's sandbox starts while the first is graded
    return spares


def _grade_in_pool(tasks: list, indices: list[int], workers: int, deliver, recycle: bool) -> list[int]:
    """Grade ``indices`` in a fresh pool; return those lost when a grading process died."""
    broken = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork"), initializer=_pool_init if recycle else None) as pool:
        futures = {pool.submit(_pool_grade, tasks[i]): i for i in indices}
        for future in as_completed(futures):
            try:
                deliver(futures[future], future.result())
            except BrokenProcessPool:
                broken.append(futures[future])
    return broken
