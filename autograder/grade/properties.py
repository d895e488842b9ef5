"""What a graded property is, and how one outcome is judged against the reference.

A :class:`Property` belongs to one kernel and is worth some points. It draws a
*case* from a Hypothesis strategy, turns the case into one or more calls of the
student's kernel, and judges the outcomes:

* differential (``relation=None``): every call must agree with the reference
  implementation on the same arguments (values within a scale-aware tolerance, or
  both raising ``ValueError``);
* relational: ``relation(case, outcomes, expected)`` checks a metamorphic law
  (e.g. adding a constant to a row leaves the CQL penalty unchanged) and returns a
  :class:`Failure` or ``None``.

Outcomes are the plain dicts the worker sends back (see ``worker/wire.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

RTOL = 1e-5  # float32 implementations (e.g. torch) must get full marks
ATOL_PER_SCALE = 1e-5


@dataclass(frozen=True)
class Call:
    args: tuple
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Failure:
    """Why one case failed: a message per language, plus what was expected and got."""

    message: dict[str, str]
    expected: Any = None
    got: Any = None
    call: Call | None = None
    # The catalog's name for what went wrong ({"id": ..., "en": ..., "ru": ...}), when one
    # known misconception explains the kernel's failing calls ("explained" of "failing"); ``message`` leads with it.
    likely_mistake: dict[str, object] | None = None


@dataclass(frozen=True)
class Property:
    kernel: str
    key: str  # stable id, e.g. "terminal_rows"
    title: dict[str, str]  # {"en": ..., "ru": ...}
    points: float
    strategy: st.SearchStrategy
    calls: Callable[[Any], list[Call]]
    hint: dict[str, str]
    relation: Callable[[Any, list[dict], list[dict]], Failure | None] | None = None
    check_mutation: bool = False
    examples: int = 200  # generated inputs in all, small ones included
    # Small, round cases of the same kind, drawn first (``small_examples`` of them) so
    # that the failing input a student is shown is one they could have written by hand.
    small: st.SearchStrategy | None = None
    small_examples: int = 25
    # Earned only when a value-checking property of the same kernel holds too: a
    # constant or input-ignoring function must not collect invariance points.
    needs_correct_values: bool = False
    # Ids of the contract clauses this property tests ("<kernel>.<clause>", see
    # autograder/hidden/suite.toml and docs/contracts.md).
    clauses: tuple[str, ...] = ()

    def name(self, lang: str) -> str:
        """Test name as students see it: begins with the kernel's function name."""
        return f"{self.kernel}: {self.title[lang]}"

    def judge(self, case, outcomes: list[dict], expected: list[dict]) -> Failure | None:
        for call, got in zip(self.calls(case), outcomes):
            if got.get("s") in ("timeout", "idle"):
                return Failure(MESSAGES[got["s"]], call=call)
        if self.check_mutation:
            # Judged on writes alone: wrong values, errors and crashes are other
            # properties' business, and a call that raised did not mutate anything.
            for call, got in zip(self.calls(case), outcomes):
                if got.get("mut"):
                    return Failure(MESSAGES["mutated"], call=call)
            return None
        if self.relation is not None:
            return self.relation(case, outcomes, expected)
        for call, got, want in zip(self.calls(case), outcomes, expected):
            failure = compare(got, want)
            if failure is not None:
                return Failure(failure.message, failure.expected, failure.got, call)
        return None


MESSAGES = {
    "timeout": {"en": "the call did not finish within its time limit", "ru": "вызов не завершился за отведённое время"},
    "idle": {
        "en": "the call slept or waited instead of running, past the limit on time not running",
        "ru": "вызов спал или ждал вместо вычислений дольше допустимого времени простоя",
    },
    "mutated": {
        "en": "the function modified its input arrays (inputs must stay untouched)",
        "ru": "функция изменила входные массивы (входы должны оставаться нетронутыми)",
    },
    "should_raise": {
        "en": "expected a ValueError for this invalid input, but the call returned a value",
        "ru": "для некорректного входа ожидалась ошибка ValueError, но функция вернула значение",
    },
    "wrong_exception": {"en": "raised {exc} where a ValueError was expected", "ru": "выброшено {exc}, а ожидалось ValueError"},
    "raised": {"en": "raised an error on valid input: {msg}", "ru": "ошибка на корректном входе: {msg}"},
    "bad_return": {"en": "the returned value is not an array of numbers: {msg}", "ru": "возвращено не число и не массив чисел: {msg}"},
    "shape": {"en": "wrong output shape: expected {want}, got {got}", "ru": "неверная форма результата: ожидалась {want}, получена {got}"},
    "unseen": {"en": "an entry with count 0 is not -inf", "ru": "элемент со счётчиком 0 не равен -inf"},
    "gated": {
        "en": "this point is earned once the kernel computes correct values (no value check passed)",
        "ru": "этот балл начисляется, когда ядро вычисляет верные значения (ни одна проверка значений не пройдена)",
    },
    "values": {"en": "wrong values", "ru": "неверные значения"},
}


def message(key: str, **fields) -> dict[str, str]:
    return {lang: text.format(**fields) for lang, text in MESSAGES[key].items()}


def scale_of(*arrays) -> float:
    """Magnitude that sets the absolute tolerance: max |finite value|, at least 1."""
    scale = 1.0
    for a in arrays:
        a = np.asarray(a)
        if a.dtype.kind in "iuf" and a.size:
            finite = a[np.isfinite(a)] if a.dtype.kind == "f" else a
            if finite.size:
                scale = max(scale, float(np.max(np.abs(finite))))
    return scale


def values_close(got: np.ndarray, want: np.ndarray, scale: float | None = None) -> bool:
    """Scale-aware closeness; infinities must match exactly, NaN never matches."""
    if want.dtype == np.bool_:
        return bool(np.array_equal(got.astype(np.float64), want.astype(np.float64)))
    got = got.astype(np.float64, copy=False)
    want = want.astype(np.float64, copy=False)
    if scale is None:
        scale = scale_of(want)
    finite = np.isfinite(want)
    if not finite.all():
        if not np.array_equal(got[~finite], want[~finite]):
            return False
        got, want = got[finite], want[finite]
    if not np.isfinite(got).all():
        return False
    return bool((np.abs(got - want) <= ATOL_PER_SCALE * scale + RTOL * np.abs(want)).all())


def compare(got: dict, want: dict) -> Failure | None:
    """Judge one student outcome against the reference outcome of the same call."""
    status = got.get("s")
    if want["s"] == "raised":
        if status == "raised":
            if "ValueError" in got.get("exc", []):
                return None
            return Failure(message("wrong_exception", exc=got.get("msg", "?")))
        return Failure(message("should_raise"), expected="ValueError", got=got.get("v"))
    if status == "raised":
        return Failure(message("raised", msg=got.get("msg", "?")), expected=want["v"])
    if status in ("timeout", "idle"):
        return Failure(MESSAGES[status], expected=want["v"])
    if status != "ok":
        return Failure(message("bad_return", msg=got.get("msg", "?")), expected=want["v"])
    g, w = got["v"], want["v"]
    if g.shape != w.shape:
        if not (w.ndim == 0 and g.size == 1):  # a scalar may come back as shape (1,)
            return Failure(message("shape", want=w.shape, got=g.shape), expected=w, got=g)
        g = g.reshape(())
    if not values_close(g, w, want.get("scale")):
        return Failure(MESSAGES["values"], expected=w, got=g)
    return None


def _error_kind(outcome: dict) -> str:
    """ValueError for any ValueError subclass (the contract's error), else the class name."""
    exc = outcome.get("exc") or ["?"]
    return "ValueError" if "ValueError" in exc else exc[0]


def same_outcome(got: dict, want: dict, scale: float | None = None) -> bool:
    """Whether two outcomes of one call agree: the same kind of error, or close values.

    Symmetric where :func:`compare` is not: it tells whether a catalog mistake
    reproduces what a student's kernel did, errors included (e.g. a TypeError).
    """
    if got.get("s") == "raised" or want.get("s") == "raised":
        return got.get("s") == want.get("s") == "raised" and _error_kind(want) in got.get("exc", [])
    if got.get("s") != "ok" or want.get("s") != "ok":
        return False
    g, w = np.asarray(got["v"]), np.asarray(want["v"])
    if g.dtype.kind in "fc" and w.dtype.kind in "fc" and g.shape == w.shape:
        nan = np.isnan(w)
        if not np.array_equal(nan, np.isnan(g)):
            return False
        if nan.any():  # NaN where the mistake gives NaN is a match here (never in grading)
            got, want = {**got, "v": g[~nan]}, {**want, "v": w[~nan]}
    return compare(got, {"s": "ok", "v": want["v"], "scale": scale if scale is not None else want.get("scale")}) is None


def same_values(pairs: list[tuple[np.ndarray, np.ndarray, float | None]]) -> np.ndarray:
    """:func:`same_outcome` of many pairs of value outcomes at once: per (got, want, scale),
    whether ``{"s": "ok", "v": got}`` and ``{"s": "ok", "v": want}`` agree at ``scale``
    (None: the want's own, :func:`scale_of`). The same rule, element by element: the
    shapes agree (or a scalar want and a one-value got), NaN matches NaN only where
    same_outcome allows it (float arrays of one shape), a bool or non-finite want
    element must be matched exactly, any other within ATOL_PER_SCALE * scale + RTOL * |want|."""
    agree = np.zeros(len(pairs), dtype=bool)
    rows, gots, wants, scales, exact, nan_ok = [], [], [], [], [], []
    for row, (got, want, scale) in enumerate(pairs):
        g, w = np.asarray(got), np.asarray(want)
        if g.shape != w.shape and not (w.ndim == 0 and g.size == 1):
            continue  # compare's shape rule: not the same outcome
        rows.append(row)
        gots.append(g.astype(np.float64).ravel())
        wants.append(w.astype(np.float64).ravel())
        scales.append(scale if scale is not None else scale_of(w))
        exact.append(w.dtype == np.bool_)
        nan_ok.append(g.dtype.kind in "fc" and w.dtype.kind in "fc" and g.shape == w.shape)
    if not rows:
        return agree
    sizes = np.fromiter((w.size for w in wants), dtype=np.intp, count=len(wants))
    g, w = np.concatenate(gots), np.concatenate(wants)
    with np.errstate(invalid="ignore"):
        exactly = np.repeat(np.asarray(exact), sizes) | ~np.isfinite(w)
        tolerance = np.where(exactly, 0.0, ATOL_PER_SCALE * np.repeat(np.asarray(scales, dtype=np.float64), sizes) + RTOL * np.abs(w))
        same = (g == w) | (np.abs(g - w) <= tolerance) | (np.repeat(np.asarray(nan_ok), sizes) & np.isnan(g) & np.isnan(w))
    bad = np.bincount(np.repeat(np.arange(len(rows)), sizes)[~same], minlength=len(rows))
    agree[np.asarray(rows, dtype=np.intp)] = bad == 0
    return agree


@dataclass(frozen=True)
class FlatExpected:
    """The reference values of many calls, flattened once, for one vectorised check.

    ``calls`` are the indices (into the kernel's outcome list) of calls whose reference
    outcome is a value; ``raising`` those whose reference raised.
    """

    calls: np.ndarray
    shapes: tuple
    starts: np.ndarray
    want: np.ndarray
    tolerance: np.ndarray  # per element; 0 where the value must match exactly
    raising: np.ndarray


def flatten_expected(expected: list[dict], indices) -> FlatExpected:
    """Precompute what :func:`passing_calls` needs (trusted side, once per corpus).

    An element's tolerance is ATOL_PER_SCALE * scale + RTOL * |want| (its call's scale),
    or 0 where it must match exactly (a bool output, an infinity): :func:`values_close`'s
    rule, computed over all the calls' values at once.
    """
    calls = [i for i in indices if expected[i]["s"] == "ok"]
    raising = [i for i in indices if expected[i]["s"] != "ok"]
    values = [np.asarray(expected[i]["v"]) for i in calls]
    flats = [v.astype(np.float64).ravel() for v in values]
    sizes = np.fromiter((f.size for f in flats), dtype=np.intp, count=len(flats))
    want = np.concatenate(flats) if flats else np.zeros(0)
    scales = np.fromiter((expected[i].get("scale") or scale_of(v) for i, v in zip(calls, values)), dtype=np.float64, count=len(calls))
    boolean = np.fromiter((v.dtype == np.bool_ for v in values), dtype=bool, count=len(values))
    exact = np.repeat(boolean, sizes) | ~np.isfinite(want)
    with np.errstate(invalid="ignore"):
        tolerance = np.where(exact, 0.0, ATOL_PER_SCALE * np.repeat(scales, sizes) + RTOL * np.abs(want))
    starts = (np.cumsum(sizes) - sizes).astype(np.intp)
    return FlatExpected(
        np.asarray(calls, dtype=np.intp), tuple(v.shape for v in values), starts, want, tolerance, np.asarray(raising, dtype=np.intp)
    )


def passing_calls(flat: FlatExpected, outcomes: list[dict]) -> set[int]:
    """Indices of the calls whose outcome :func:`compare` accepts, checked in one pass.

    Exactly as strict as :func:`compare` (same tolerance, shapes, exact infinities, NaN
    never matching); a call it does not list is judged one by one for its message.
    """
    passed = {int(i) for i in flat.raising if outcomes[i].get("s") == "raised" and "ValueError" in outcomes[i].get("exc", [])}
    shaped, got = [], []
    for j, (i, shape) in enumerate(zip(flat.calls.tolist(), flat.shapes)):
        o = outcomes[i]
        if o.get("s") != "ok":
            continue
        v = o["v"]
        if v.shape != shape and not (shape == () and v.size == 1):
            continue
        shaped.append(j)
        got.append(v)
    if not shaped:
        return passed
    sizes = np.fromiter((g.size for g in got), dtype=np.intp, count=len(got))
    if len(shaped) == len(flat.calls):  # the usual case: every call came back well-formed
        w, tol = flat.want, flat.tolerance
    else:
        take = np.concatenate([np.arange(flat.starts[j], flat.starts[j] + n) for j, n in zip(shaped, sizes)])
        w, tol = flat.want[take], flat.tolerance[take]
    g = np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in got])
    with np.errstate(invalid="ignore"):
        elem_ok = (g == w) | (np.abs(g - w) <= tol)
    bad = np.bincount(np.repeat(np.arange(len(shaped)), sizes)[~elem_ok], minlength=len(shaped))
    passed.update(int(flat.calls[j]) for j, b in zip(shaped, bad.tolist()) if b == 0)
    return passed
