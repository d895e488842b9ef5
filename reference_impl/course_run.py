"""The course's run as the lab notebook shows it: one value per quantity, with its interval.

The kit ships the course's full-profile run (``M5_lab_seeds.npz``: every quantity of every
run; ``M5_course_numbers.json``: the report's claims and comparisons). Wherever the lab
shows a number of that run (a table, a figure, a model answer) it is the **mean over the
runs with its 95 % t-interval**, computed here, so a quantity has one value everywhere;
a difference between methods is paired by run (``stats.paired_difference``). Your own
run is one run, shown beside it and named as such.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import numpy as np

from reference_impl.stats import student_t_quantile

CONFIDENCE = 0.95


def interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(mean, low, high) of the runs' values: the two-sided t-interval of the mean.

    One run gives a zero-width interval at its value. Raises ValueError on no value or a
    non-finite one.
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size == 0 or not np.isfinite(x).all():
        raise ValueError(f"interval: `values` must be finite and non-empty, got {x.tolist()!r}")
    mean = float(x.mean())
    if x.size == 1:
        return mean, mean, mean
    half = student_t_quantile(0.5 + confidence / 2.0, x.size - 1) * float(x.std(ddof=1)) / math.sqrt(x.size)
    return mean, mean - half, mean + half


def bands(per_run: np.ndarray, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """(mean, half-width of the 95 % interval) along the first axis (runs): what a figure draws.

    NaN entries (a run without that value) are left out of their column; a column with one
    value has a zero half-width, a column with none is NaN.
    """
    runs = np.asarray(per_run, dtype=np.float64)
    if runs.ndim < 1 or runs.shape[0] < 1:
        raise ValueError(f"bands: `per_run` must have a first axis of runs, got shape {runs.shape}")
    counts = np.sum(~np.isnan(runs), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.nansum(runs, axis=0)
        mean = np.where(counts > 0, total / np.maximum(counts, 1), np.nan)
        squares = np.nansum((runs - mean) ** 2, axis=0)
        sd = np.sqrt(squares / np.maximum(counts - 1, 1))
    t = np.vectorize(lambda n: student_t_quantile(0.5 + confidence / 2.0, n - 1) if n > 1 else 0.0, otypes=[float])(counts)
    half = np.where(counts > 1, t * sd / np.sqrt(np.maximum(counts, 1)), np.where(counts == 1, 0.0, np.nan))
    return mean, half


#: The claims that are shares or probabilities (a success rate, a share of states or
#: prompts): their values lie in [0, 1], and so must their intervals.
SHARE_CLAIM = re.compile(r"success|_share|error_(un)?seen|exact_match")


def claim_bounds(claim_id: str) -> tuple[float, float] | None:
    """(0, 1) for a share or probability claim (:data:`SHARE_CLAIM`), else None (unbounded)."""
    return (0.0, 1.0) if SHARE_CLAIM.search(claim_id) else None


def clip_to_bounds(low: float, high: float, bounds: tuple[float, float] | None) -> tuple[float, float]:
    """An interval's ends moved inside the quantity's ``bounds`` (None: unbounded).

    A t-interval is symmetric and can pass a bound a share or a rate cannot (a success rate
    above 1); the part outside holds no possible value, so cutting it keeps every value the
    interval allows and states no more. The verdict of a difference never changes by it:
    zero lies inside the bounds of a difference of two bounded quantities.
    """
    if bounds is None:
        return low, high
    return max(low, bounds[0]), min(high, bounds[1])


def format_interval(values: Sequence[float], digits: int = 2, *, signed: bool = False, bounds: tuple[float, float] | None = None) -> str:
    """``0.72 [0.55, 0.90]``: the mean of the runs and its 95 % interval (``signed``: ``+0.16 [+0.15, +0.18]``),
    cut to ``bounds`` where the quantity has them (:func:`clip_to_bounds`)."""
    mean, low, high = interval(values)
    low, high = clip_to_bounds(low, high, bounds)
    spec = f"{'+' if signed else ''}.{digits}f"
    if low == high:
        return format(mean, spec)
    return f"{format(mean, spec)} [{format(low, spec)}, {format(high, spec)}]"


def compare_table(
    labels: Mapping[str, str],
    rows: Sequence[tuple[str, float | None, Sequence[float] | str | None]],
    digits: int = 2,
    bounds: tuple[float, float] | None = None,
) -> str:
    """Your run beside the course's: one row per quantity, ``name | your run | mean [95 % interval]``.

    ``rows`` holds ``(name, yours, course)``: your value (None: your run has no such row)
    and the course's value in each of its runs, or already written as the report states it
    (a string), or None (the course has none). The column headers come from ``labels``,
    in the notebook's language. ``bounds``: the quantity's range (a share: (0, 1)), which
    the course's intervals are cut to (:func:`clip_to_bounds`).
    """

    def yours(value) -> str:
        return "—" if value is None else f"{float(value):.{digits}f}"

    def course(values) -> str:
        if values is None:
            return "—"
        return values if isinstance(values, str) else format_interval(values, digits, bounds=bounds)

    table = [("", labels["nb.your_run"], labels["nb.course_run"])] + [(str(n), yours(a), course(b)) for n, a, b in rows]
    widths = [max(len(row[i]) for row in table) for i in range(3)]
    return "\n".join(f"{row[0]:<{widths[0]}} | {row[1]:>{widths[1]}} | {row[2]:>{widths[2]}}" for row in table)


def course_table(course: Mapping, ids: Sequence[str], lang: str) -> str:
    """The course's numbers ``ids`` (claims and comparisons of ``M5_course_numbers.json``) as
    ``value | what it is`` rows, values aligned; raises KeyError naming an unknown id."""
    rows = course["rows"]
    missing = [cid for cid in ids if cid not in rows]
    if missing:
        raise KeyError(f"course_table: no course number {missing}; known: {sorted(rows)[:5]}...")
    cells = [(rows[cid]["value"][lang], rows[cid]["text"][lang]) for cid in ids]
    width = max(len(value) for value, _ in cells)
    return "\n".join(f"{value:>{width}} | {text}" for value, text in cells)
