"""The corpus, from its disk cache when fresh, else built and cached (about a minute).

The cache file's name carries its key (:func:`cache.corpus_path`: the sources the corpus
is made from), so a file of another corpus is never read. What is read is trusted only
as far as its layout: a missing, partial or differently laid out file is rebuilt
quietly; any other error (a bug) propagates, so it is seen instead of costing a minute
of rebuild on every run.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import pickle
from pathlib import Path

import reference_impl
from autograder.grade import cache
from autograder.grade import corpus as corpus_mod
from autograder.grade.call_forms import worker_forms
from autograder.grade.worker_session import Budget

KERNELS = list(reference_impl.KERNEL_NAMES)
ENTRY_FIELDS = {"cases", "calls", "expected", "request"}  # one kernel's entry in the file


class StaleCache(Exception):
    """The cache file is partial or laid out otherwise than :func:`detach` lays it out."""


def load_corpus(examples: int | None = None, budget: Budget = Budget()) -> dict:
    """The corpus, from the disk cache when fresh.

    A lock file serialises builders, so parallel graders (or test workers) build once.
    The worker forms of its requests are cached in a file of their own, which
    :func:`cache.first_worker` reads before the corpus is loaded.
    """
    path = cache.corpus_path(examples, budget)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            corpus = read_cached(path, examples)
        except (FileNotFoundError, StaleCache):
            corpus = None
        if corpus is not None:
            _refresh_forms(path, corpus)
            return corpus
        built = corpus_mod.build_corpus(call_timeout=budget.call_timeout, examples=examples)
        cache.write_atomically(path, detach(built))
        _write_forms(path, corpus_requests(built))
        return built


def read_cached(path: Path, examples: int | None) -> dict:
    """The corpus in the cache file ``path``. Raises FileNotFoundError when there is none,
    StaleCache when it is partial or laid out otherwise; anything else is a bug."""
    with path.open("rb") as fh, collections_paused():
        try:
            raw = pickle.load(fh)
        except (EOFError, pickle.UnpicklingError) as exc:  # cut short, or not a pickle
            raise StaleCache(f"{path}: {exc}") from None
        check_layout(raw)
        return attach(raw, examples)


def check_layout(raw) -> None:
    """Raise StaleCache unless ``raw`` is laid out as :func:`detach` lays out a corpus."""
    if type(raw) is not dict or set(raw) != set(KERNELS):
        raise StaleCache("the cached kernels are not the grader's")
    for kernel, entry in raw.items():
        if type(entry) is not dict or set(entry) != ENTRY_FIELDS:
            raise StaleCache(f"the cached entry of {kernel} is laid out otherwise")
        if not all(type(case) is tuple and len(case) == 4 for case in entry["cases"]):
            raise StaleCache(f"the cached cases of {kernel} are laid out otherwise")


def _refresh_forms(path: Path, corpus: dict) -> None:
    """The worker forms beside a cached corpus, made again if missing or not for it
    (:func:`cache.first_worker` may have read them already)."""
    requests = corpus_requests(corpus)
    if cache.adopt_cached_forms(path) != requests:
        _write_forms(path, requests)


def _write_forms(path: Path, requests: tuple[bytes, ...]) -> None:
    cache.write_atomically(cache.forms_path(path), worker_forms(requests))
    cache.FORMS_READ[path] = requests


@contextlib.contextmanager
def collections_paused():
    """No cyclic garbage collection while the corpus' ~130,000 objects are created: each
    full collection the allocations would trigger walks all of them again (two, 40-50 ms)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def detach(built: dict) -> dict:
    """Strip Property objects (strategies, lambdas) for pickling; keep their keys."""
    return {
        k: {
            "cases": [(c.prop.key, c.value, c.first_call, c.n_calls) for c in kc.cases],
            "calls": kc.calls,
            "expected": kc.expected,
            "request": kc.request,
        }
        for k, kc in built.items()
    }


def attach(raw: dict, examples: int | None) -> dict:
    """The inverse of :func:`detach`: each case joined to its Property again by key."""
    from autograder.hidden.kernels import PROPERTIES  # Hypothesis (0.2 s): m5 grade starts its first worker before it loads

    out = {}
    for kernel in KERNELS:
        props = [p for p in PROPERTIES if p.kernel == kernel]
        by_key = {p.key: p for p in props}
        entry = raw[kernel]
        cases = [corpus_mod.Case(by_key[key], value, first, n) for key, value, first, n in entry["cases"]]
        out[kernel] = corpus_mod.KernelCorpus(kernel, props, cases, entry["calls"], entry["expected"], entry["request"])
    return out


def corpus_requests(corpus: dict) -> tuple[bytes, ...]:
    """The corpus' call requests, whose calls every worker gets when it starts."""
    return tuple(kc.request for kc in corpus.values())
