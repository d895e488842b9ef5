"""Generate the grading inputs once per run, with their reference outcomes.

For every property, a derandomized Hypothesis run draws up to ``examples`` cases
(the same cases on every machine with the same Hypothesis version); the reference
implementation is run on each call in this (trusted) process. Per kernel, all calls
are encoded once into a single request that every submission's worker receives.
"""

from __future__ import annotations

import contextlib
import functools
import pickle
from dataclasses import dataclass

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings
from sortedcontainers import SortedSet

import reference_impl
from autograder.grade.properties import Call, Property, scale_of
from autograder.grade.worker import wire


@dataclass
class Case:
    prop: Property
    value: object
    first_call: int  # index of this case's first call in the kernel batch
    n_calls: int


@dataclass
class KernelCorpus:
    kernel: str
    properties: list[Property]
    cases: list[Case]
    calls: list[Call]
    expected: list[dict]
    request: bytes  # encoded {"op": "call", ...} with every call above


@contextlib.contextmanager
def context_free_generation():
    """Make Hypothesis' draws depend on the strategy and seed alone.

    Hypothesis mixes literal constants found in the *currently loaded* local modules
    into its draws, and caches them per process. Which modules are loaded depends on
    the caller (pytest with test modules, the CLI, Gradescope), so the same
    derandomized strategy would give another corpus, and a regrade another score.
    Here generation uses only Hypothesis' built-in constants. (Hypothesis is pinned,
    and its version is part of the corpus cache key.)
    """
    try:
        from hypothesis.internal.cache import LRUCache  # private API: another Hypothesis may lack it
        from hypothesis.internal.conjecture import providers  # (the same)

        empty = providers.Constants(
            integers=SortedSet(), floats=SortedSet(key=providers.float_to_int), bytes=SortedSet(), strings=SortedSet()
        )
        saved = providers._get_local_constants, providers.CONSTANTS_CACHE
    except (ImportError, AttributeError):  # another Hypothesis: nothing to neutralise
        yield
        return
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE = LRUCache(1024)
    try:
        yield
    finally:
        providers._get_local_constants, providers.CONSTANTS_CACHE = saved


# The random seed of every draw. Derandomized Hypothesis would take it from a hash of
# ``collect``'s source text, decorators included (the function is nested, so Hypothesis
# cannot strip them), and re-laying out this file would then draw another corpus: it is
# fixed here, to the value that hash had when the corpus was first drawn, so that the
# corpus, and every grade, depends on the strategies and Hypothesis' version only
# (tests/autograder/grade/test_corpus.py pins the result).
CORPUS_SEED = 27705696639751011137660201066246646187641266701242361656502100096673170760233035983923376290152283722703262095508510


def _draw(strategy, examples: int) -> list:
    """Deterministic draws of one strategy (seeded Hypothesis, generate phase only)."""
    drawn: list = []

    @seed(CORPUS_SEED)
    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(case):
        drawn.append(case)

    with context_free_generation():
        collect()
    return drawn


# How far a property's draws may be extended to find distinct cases: up to this many
# times the number wanted (a strategy with fewer distinct cases than that yields fewer).
MAX_DRAW_FACTOR = 8


def case_key(prop: Property, value) -> bytes:
    """What makes two cases the same input: the calls they make, argument for argument
    (types, dtypes and shapes included)."""
    return pickle.dumps([(c.args, sorted(c.kwargs.items())) for c in prop.calls(value)], protocol=pickle.HIGHEST_PROTOCOL)


def _distinct_draws(prop: Property, strategy, wanted: int, seen: set) -> list:
    """``wanted`` draws of ``strategy`` that are new inputs (their keys join ``seen``).

    Hypothesis repeats itself on small spaces (the same minimal batch many times), and a
    repeated input tests nothing new, so more are drawn (with a margin, then doubling;
    still derandomized, so the corpus is the same on every run) until enough are distinct.
    """
    if wanted <= 0:
        return []
    budget = wanted + wanted // 2  # a margin: most properties repeat a few cases
    while True:
        drawn = _draw(strategy, budget)
        picked, keys = [], set()
        for value in drawn:
            key = case_key(prop, value)
            if key not in seen and key not in keys:
                keys.add(key)
                picked.append(value)
                if len(picked) == wanted:
                    break
        # Fewer draws than asked for: Hypothesis has exhausted the strategy.
        if len(picked) == wanted or budget >= MAX_DRAW_FACTOR * wanted or len(drawn) < budget:
            seen |= keys
            return picked
        budget *= 2


def draw_cases(prop: Property, examples: int | None = None) -> list:
    """The cases of one property, no two alike: its small, round cases first, then the
    generated ones.

    ``examples`` (default: the property's own) is the total, small ones included; a
    smaller number (e.g. for quick runs) keeps at least half of it generated.
    """
    n = examples or prop.examples
    seen: set = set()
    small = _distinct_draws(prop, prop.small, min(prop.small_examples, n // 2), seen) if prop.small is not None else []
    return small + _distinct_draws(prop, prop.strategy, n - len(small), seen)


def counts_per_property(corpus: dict[str, KernelCorpus]) -> dict[str, int]:
    """{"kernel.property": number of cases}, all distinct inputs: what the bench and the
    docs report."""
    counts: dict[str, int] = {}
    for kc in corpus.values():
        for case in kc.cases:
            name = f"{kc.kernel}.{case.prop.key}"
            counts[name] = counts.get(name, 0) + 1
    return counts


def reference_outcome(kernel: str, call: Call) -> dict:
    fn = getattr(reference_impl, kernel)
    try:
        value = fn(*call.args, **call.kwargs)
    except ValueError as exc:
        return {"s": "raised", "exc": [c.__name__ for c in type(exc).__mro__], "msg": str(exc)}
    value = np.asarray(value)
    floats = [np.asarray(a) for a in (*call.args, *call.kwargs.values()) if np.asarray(a).dtype.kind in "iuf"]
    return {"s": "ok", "v": value, "scale": scale_of(value, *floats)}


def build_kernel_corpus(kernel: str, properties: list[Property], *, call_timeout: float, examples: int | None = None) -> KernelCorpus:
    cases, calls, expected, watch = [], [], [], []
    for prop in properties:
        for value in draw_cases(prop, examples):
            prop_calls = prop.calls(value)
            if prop.check_mutation:
                watch.extend(range(len(calls), len(calls) + len(prop_calls)))
            cases.append(Case(prop, value, len(calls), len(prop_calls)))
            calls.extend(prop_calls)
            expected.extend(reference_outcome(kernel, c) for c in prop_calls)
    request = wire.encode_request(
        {"op": "call", "kernel": kernel, "call_timeout": call_timeout, "watch": watch, "calls": [[list(c.args), c.kwargs] for c in calls]}
    )
    return KernelCorpus(kernel, properties, cases, calls, expected, request)


@functools.lru_cache(maxsize=4)
def build_corpus(call_timeout: float = 5.0, examples: int | None = None) -> dict[str, KernelCorpus]:
    """Corpus of every kernel, in the order of ``reference_impl.KERNEL_NAMES``."""
    from autograder.hidden.kernels import PROPERTIES  # Hypothesis (0.2 s): m5 grade starts its first worker before it loads

    by_kernel: dict[str, list[Property]] = {name: [] for name in reference_impl.KERNEL_NAMES}
    for prop in PROPERTIES:
        by_kernel[prop.kernel].append(prop)
    return {name: build_kernel_corpus(name, props, call_timeout=call_timeout, examples=examples) for name, props in by_kernel.items()}
