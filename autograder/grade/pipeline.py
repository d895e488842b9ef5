"""Grade submissions: extract -> run (sandboxed worker) -> compare -> score -> report.

:func:`grade_submission` grades one file; :func:`grade_many` grades a class with a
process pool, sharing one corpus. Scores depend only on the fixed corpus; a failed
property additionally gets a shrunk counterexample for its feedback.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import pickle
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

import hypothesis
import numpy as np

import reference_impl
from autograder.grade import corpus as corpus_mod
from autograder.grade.extract import Submission, SubmissionError, extract
from autograder.grade.run import Budget, WorkerSession
from autograder.grade.score import SubmissionResult, TestResult
from autograder.grade.judge import CELL_FAILED, grade_answers, grade_kernel

KERNELS = list(reference_impl.KERNEL_NAMES)


# ---------------------------------------------------------------- corpus cache
def _corpus_key(examples: int | None) -> str:
    digest = hashlib.sha256()
    for module in ("autograder/hidden/kernels.py", "autograder/grade/properties.py", "autograder/grade/corpus.py",
                   "reference_impl/kernels.py", "reference_impl/validation.py"):
        digest.update((Path(__file__).resolve().parents[2] / module).read_bytes())
    digest.update(f"{hypothesis.__version__}|{np.__version__}|{examples}".encode())
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    return Path(os.environ.get("M5_CACHE_DIR") or Path.home() / ".cache" / "m5")


def load_corpus(examples: int | None = None, budget: Budget = Budget()) -> dict:
    """The corpus, from the disk cache when fresh (building it takes ~30 s).

    A lock file serialises builders, so parallel graders (or test workers) build once.
    """
    path = cache_dir() / f"corpus-{_corpus_key(examples)}-{budget.call_timeout:g}.pkl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            try:
                with path.open("rb") as fh:
                    return _attach(pickle.load(fh), examples)
            except Exception:  # a stale or partial cache file: rebuild
                pass
        built = corpus_mod.build_corpus(call_timeout=budget.call_timeout, examples=examples)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as tmp:
            pickle.dump(_detach(built), tmp, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp.name, path)
        return built


def _detach(built: dict) -> dict:
    """Strip Property objects (strategies, lambdas) for pickling; keep their keys."""
    return {k: {"cases": [(c.prop.key, c.value, c.first_call, c.n_calls) for c in kc.cases],
                "calls": kc.calls, "expected": kc.expected, "request": kc.request}
            for k, kc in built.items()}


def _attach(raw: dict, examples: int | None) -> dict:
    from autograder.hidden.kernels import PROPERTIES

    out = {}
    for kernel in KERNELS:
        props = [p for p in PROPERTIES if p.kernel == kernel]
        by_key = {p.key: p for p in props}
        entry = raw[kernel]
        cases = [corpus_mod.Case(by_key[key], value, first, n) for key, value, first, n in entry["cases"]]
        out[kernel] = corpus_mod.KernelCorpus(kernel, props, cases, entry["calls"], entry["expected"], entry["request"])
    return out


# ---------------------------------------------------------------- one submission
def grade_submission(path: Path, corpus: dict, *, lang: str | None = None, budget: Budget = Budget(),
                     shrink: bool = True, shrink_budget: float = 0.3, shrink_total: float = 2.0,
                     answers: bool | None = None, kernels=None) -> SubmissionResult:
    """Grade one submission. Raises SubmissionError when the file cannot be read at all.

    ``kernels`` (an iterable of kernel names, default all) grades only those kernels;
    the others are left out of the result (not failed). Unknown names raise ValueError.
    """
    wanted = set(KERNELS) if kernels is None else set(kernels)
    if wanted - set(KERNELS):
        raise ValueError(f"kernels: unknown kernel names {sorted(wanted - set(KERNELS))}")
    selected = [k for k in KERNELS if k in wanted]
    start = time.monotonic()
    shrink_until = start + shrink_total  # counterexample search is time-boxed per submission
    sub: Submission = extract(Path(path), set(KERNELS))
    language = lang or sub.language
    tests: list[TestResult] = []
    notes = []
    with WorkerSession(sub.cells, KERNELS, budget=budget) as session:
        report = session.start()
        for cell in report.cells:
            if not cell.get("ok"):
                notes.append({l: t.format(id=cell.get("id"), error=cell.get("error")) for l, t in CELL_FAILED.items()})
        for kernel in selected:
            if kernel in corpus:
                tests += grade_kernel(corpus[kernel], session, shrink=shrink, shrink_budget=shrink_budget,
                                      shrink_until=shrink_until)
        if answers if answers is not None else sub.kind == "notebook":
            tests += grade_answers(session)
    return SubmissionResult(Path(path).name, language, tests, time.monotonic() - start, notes)


# ---------------------------------------------------------------- a class
_POOL_CORPUS: dict | None = None


def _pool_grade(args):
    path, kwargs = args
    try:
        return grade_submission(path, _POOL_CORPUS, **kwargs)
    except SubmissionError as exc:
        return SubmissionResult(Path(path).name, kwargs.get("lang") or "en", [], 0.0, error=str(exc))
    except Exception as exc:  # one broken submission must not stop a class run
        return SubmissionResult(Path(path).name, kwargs.get("lang") or "en", [], 0.0,
                                error=f"grading failed: {type(exc).__name__}: {exc}")


def grade_many(paths: list[Path], corpus: dict, *, jobs: int = 1, progress=None, **kwargs) -> list[SubmissionResult]:
    """Grade several submissions (in input order); unreadable ones get ``error`` set."""
    global _POOL_CORPUS
    _POOL_CORPUS = corpus
    tasks = [(p, kwargs) for p in paths]
    if jobs <= 1 or len(paths) <= 1:
        results = []
        for task in tasks:
            results.append(_pool_grade(task))
            if progress:
                progress(1)
        return results
    results: list = [None] * len(tasks)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("fork")) as pool:
        futures = {pool.submit(_pool_grade, task): i for i, task in enumerate(tasks)}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            if progress:
                progress(1)
    return results
