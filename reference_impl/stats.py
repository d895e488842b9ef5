"""Intervals over seeds, and the words a comparison may use.

The lab compares methods over seeds. A count ("ahead on 4 of 5 seeds") says nothing
about noise; a 95 % confidence interval of the mean difference does. Where two
methods run on the same seeds (same log, same evaluation starts), the differences
pair up and the interval is the paired Student t one:

    d_i = a_i - b_i,   mean d  ±  t_{0.975, n-1} * sd(d) / sqrt(n)

The wording follows the interval and nothing else: "ahead" when it lies above zero,
"behind" when below, "no detectable difference" when it contains zero (including the
degenerate case of identical results on every seed, a tie).

No scipy here: the t quantile comes from the regularized incomplete beta function
(Lentz's continued fraction) and bisection, checked against published tables in the
tests.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "VERDICTS",
    "student_t_cdf",
    "student_t_quantile",
    "paired_difference",
    "verdict",
    "episode_return_bounds",
    "episodes_for_standard_error",
    "standard_error_bound",
    "bootstrap_mean_interval",
]

#: Every word a comparison may end in.
VERDICTS = ("ahead", "behind", "no detectable difference")


def _incomplete_beta_fraction(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz method)."""
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)), -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= c * d
        if abs(c * d - 1.0) < eps:
            break
    return h


def _regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b) for x in [0, 1]."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _incomplete_beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _incomplete_beta_fraction(b, a, 1.0 - x) / b


def student_t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` > 0 degrees of freedom."""
    if not df > 0:
        raise ValueError(f"student_t_cdf: `df` must be positive, got {df!r}")
    tail = 0.5 * _regularized_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def student_t_quantile(p: float, df: float) -> float:
    """The t with P(T <= t) = ``p`` (0 < p < 1), by bisection on :func:`student_t_cdf`."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"student_t_quantile: `p` must lie in (0, 1), got {p!r}")
    if p < 0.5:
        return -student_t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while student_t_cdf(high, df) < p:
        high *= 2.0
    for _ in range(200):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if student_t_cdf(mid, df) < p else (low, mid)
        if high - low < 1e-12:
            break
    return 0.5 * (low + high)


def paired_difference(a: Sequence[float], b: Sequence[float], confidence: float = 0.95) -> dict:
    """Mean of ``a - b`` over paired seeds with its two-sided t interval.

    Returns ``{"effect", "low", "high", "n_seeds", "paired": True, "confidence",
    "verdict"}``. Needs at least two pairs of finite numbers (ValueError otherwise,
    naming the argument). Identical differences on every seed give a zero-width
    interval at that difference.
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"paired_difference: `a` {x.shape} and `b` {y.shape} must be 1-D of equal length")
    if x.size < 2:
        raise ValueError(f"paired_difference: need at least 2 paired seeds, got {x.size}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("paired_difference: `a` and `b` must be finite")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"paired_difference: `confidence` must lie in (0, 1), got {confidence!r}")
    d = x - y
    effect = float(d.mean())
    half = student_t_quantile(0.5 + confidence / 2.0, d.size - 1) * float(d.std(ddof=1)) / math.sqrt(d.size)
    low, high = effect - half, effect + half
    return {
        "effect": effect,
        "low": low,
        "high": high,
        "n_seeds": int(d.size),
        "paired": True,
        "confidence": confidence,
        "verdict": verdict(low, high),
    }


def verdict(low: float, high: float) -> str:
    """The word an interval allows: "ahead" (> 0), "behind" (< 0), else "no detectable difference"."""
    if not low <= high:
        raise ValueError(f"verdict: need low <= high, got {low!r} > {high!r}")
    if low > 0:
        return "ahead"
    if high < 0:
        return "behind"
    return "no detectable difference"


def episode_return_bounds(
    *, step_cost: float, goal_reward: float, trap_reward: float, max_steps: int, shortest_goal_steps: int
) -> tuple[float, float]:
    """(lowest, highest) return any episode can have under a step-cost reward design.

    An episode of k steps (1 <= k <= M = ``max_steps``) earns -c (c = ``step_cost``) on
    its first k - 1 steps and on the last one the goal's reward (k >= L =
    ``shortest_goal_steps``), the trap's, or -c when the time limit cuts it (k = M):

        low  = min(goal_reward - c (M - 1), trap_reward - c (M - 1), -c M)
        high = max(goal_reward - c (L - 1), trap_reward, -c M)

    (the goal terms only when L <= M; ``trap_reward`` bounds a trap entered at step 1).
    Raises ValueError on a negative or non-finite reward term or non-positive step counts.
    """
    for name, value in (("step_cost", step_cost), ("goal_reward", goal_reward), ("trap_reward", trap_reward)):
        if not math.isfinite(value):
            raise ValueError(f"episode_return_bounds: `{name}` must be finite, got {value!r}")
    if step_cost < 0:
        raise ValueError(f"episode_return_bounds: `step_cost` must be >= 0, got {step_cost!r}")
    for name, value in (("max_steps", max_steps), ("shortest_goal_steps", shortest_goal_steps)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"episode_return_bounds: `{name}` must be a positive int, got {value!r}")
    c, m = float(step_cost), int(max_steps)
    lows, highs = [trap_reward - c * (m - 1), -c * m], [float(trap_reward), -c * m]
    if shortest_goal_steps <= m:
        lows.append(goal_reward - c * (m - 1))
        highs.append(goal_reward - c * (shortest_goal_steps - 1))
    return float(min(lows)), float(max(highs))


def episodes_for_standard_error(low: float, high: float, max_se: float) -> int:
    """Fewest episodes n whose mean has standard error <= ``max_se`` whatever the policy does.

    Returns lie in [low, high], so by Popoviciu's inequality their standard deviation is
    at most (high - low) / 2; the sample sd of n of them (ddof = 1) at most
    (high - low) / 2 * sqrt(n / (n - 1)). So the measured SE = sample sd / sqrt(n) is at
    most (high - low) / 2 / sqrt(n - 1), which is <= max_se once

        n = ceil(((high - low) / 2 / max_se)^2) + 1.

    Raises ValueError on non-finite bounds, ``low > high`` or a non-positive ``max_se``.
    """
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        raise ValueError(f"episodes_for_standard_error: need finite `low` <= `high`, got {low!r}, {high!r}")
    if not (math.isfinite(max_se) and max_se > 0):
        raise ValueError(f"episodes_for_standard_error: `max_se` must be a positive finite number, got {max_se!r}")
    return math.ceil(((high - low) / 2.0 / max_se) ** 2) + 1


def standard_error_bound(low: float, high: float, episodes: int) -> float:
    """Largest measured standard error (sample sd, ddof = 1, over sqrt(n)) of the mean of
    n = ``episodes`` returns in [low, high], whatever they are (Popoviciu, as in
    :func:`episodes_for_standard_error`, which inverts it):

        SE <= (high - low) / 2 / sqrt(n - 1)      (n >= 2).

    Raises ValueError on non-finite bounds, ``low > high`` or fewer than 2 episodes.
    """
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        raise ValueError(f"standard_error_bound: need finite `low` <= `high`, got {low!r}, {high!r}")
    if isinstance(episodes, bool) or not isinstance(episodes, (int, np.integer)) or episodes < 2:
        raise ValueError(f"standard_error_bound: `episodes` must be an int >= 2, got {episodes!r}")
    return (high - low) / 2.0 / math.sqrt(episodes - 1)


def bootstrap_mean_interval(
    values: Sequence[float], rng: np.random.Generator, resamples: int, confidence: float = 0.95
) -> tuple[float, float, float]:
    """(mean, low, high): the percentile bootstrap of the mean over seeds.

    The seeds are resampled with replacement ``resamples`` times; low and high are the
    (1 -+ confidence) / 2 quantiles of the resampled means, widened to contain the mean. Every
    resampled mean lies in [min, max] of the values, so the interval of a share stays in [0, 1]
    (where a t interval can leave it). Deterministic given ``rng``'s seed.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.size == 0 or not np.isfinite(x).all():
        raise ValueError(f"bootstrap_mean_interval: `values` must be finite and non-empty, got {x.tolist()!r}")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise ValueError(f"bootstrap_mean_interval: `resamples` must be a positive int, got {resamples!r}")
    means = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    mean = float(x.mean())
    return mean, float(min(low, mean)), float(max(high, mean))
