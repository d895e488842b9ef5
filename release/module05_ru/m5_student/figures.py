# Generated from reference_impl/figures.py by the course's release build; do not edit.
# The graded kernels are stubs here: write them in the notebooks.
"""One plotting function per figure of the Module 5 lab.

Every function takes the data as plain arrays, an optional matplotlib ``ax`` (a new
figure is created when it is None) and a ``labels`` dict (one of
``m5_student.labels.LABELS[lang]``; English when None), draws, and returns the
``ax``. Method and action names on the axes are shown by their display names in the
labels' language (:func:`m5_student.labels.display_name`), never as identifiers. The lab runner (:mod:`m5_student.lab`) and the student notebooks call the
same functions, so the figure code lives here only.

Optional ``*_spread`` arguments (same shape as the plotted values) draw error bars:
the lab passes the across-seed standard deviation when it runs several seeds.

Bad input (ragged lengths, empty arrays, a window < 1) raises ValueError naming the
argument.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from m5_student.labels import LABELS, display_name

__all__ = [
    "DQN_WINDOW",
    "moving_mean",
    "plot_environment",
    "plot_dagger_curve",
    "plot_dqn_curves",
    "plot_log_actions",
    "plot_offline_methods",
    "plot_fqe_vs_simulator",
    "plot_dt_sweep",
    "plot_language_exact_match",
]

#: Rolling window of the DQN success curves (episodes).
DQN_WINDOW = 15


# --------------------------------------------------------------------------- helpers
def _labels(labels: Mapping[str, str] | None) -> Mapping[str, str]:
    return LABELS["en"] if labels is None else labels


def _axes(ax, figsize: tuple[float, float]):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=figsize)
    return ax


def _vector(values, name: str, where: str, length: int | None = None) -> np.ndarray:
    """``values`` as a non-empty 1-D float array (of ``length`` when given)."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{where}: `{name}` must be a non-empty 1-D sequence, got shape {arr.shape}")
    if length is not None and arr.size != length:
        raise ValueError(f"{where}: `{name}` has {arr.size} entries, expected {length}")
    return arr


def _names(values, name: str, where: str) -> list[str]:
    names = [str(x) for x in np.asarray(values).reshape(-1)]
    if not names:
        raise ValueError(f"{where}: `{name}` is empty")
    return names


def _shown(labels: Mapping[str, str], names: Sequence[str]) -> list[str]:
    """Tick labels: each raw name's display name in the labels' language."""
    return [display_name(labels, n) for n in names]


def _optional(spread, name: str, where: str, length: int) -> np.ndarray | None:
    return None if spread is None else _vector(spread, name, where, length)


def moving_mean(values, window: int) -> np.ndarray:
    """Trailing mean over ``window`` consecutive entries: shape (N - window + 1,).

    Entry i is mean(values[i : i + window]). When N < window the input is returned
    unchanged (as float), so a short smoke run still draws a curve.
    Raises ValueError when ``window`` < 1 or ``values`` is not 1-D.
    """
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"moving_mean: `window` must be a positive integer, got {window!r}")
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"moving_mean: `values` must be 1-D, got shape {x.shape}")
    if x.size < window:
        return x
    return np.convolve(x, np.ones(window) / window, mode="valid")


# --------------------------------------------------------------------------- figures
def plot_environment(env, ax=None, labels: Mapping[str, str] | None = None):
    """KeyDoorGrid layout (delegates to :func:`m5_student.keydoor.draw_grid`)."""
    from m5_student.keydoor import draw_grid

    lab = _labels(labels)
    return draw_grid(env, _axes(ax, (10, 5.5)), title=lab["grid_title"], xlabel=lab["grid_x"], ylabel=lab["grid_y"])


def plot_dagger_curve(rounds, success_rate, ax=None, labels: Mapping[str, str] | None = None, *, success_spread=None):
    """Greedy success rate after each DAgger round (round 0 = BC on expert data)."""
    where = "plot_dagger_curve"
    lab = _labels(labels)
    x = _vector(rounds, "rounds", where)
    y = _vector(success_rate, "success_rate", where, x.size)
    err = _optional(success_spread, "success_spread", where, x.size)
    ax = _axes(ax, (8.5, 4.8))
    ax.errorbar(x, y, yerr=err, marker="o", capsize=3)
    ax.set_ylim(-0.03, 1.05)
    ax.set_xticks(x)
    ax.set_xlabel(lab["dagger_x"])
    ax.set_ylabel(lab["success"])
    ax.set_title(lab["dagger_title"])
    ax.grid(True, alpha=0.3)
    return ax


def plot_dqn_curves(dqn_success, double_success, ax=None, labels: Mapping[str, str] | None = None, *, window: int = DQN_WINDOW):
    """Rolling success (trailing mean over ``window`` episodes) of DQN and Double DQN.

    ``dqn_success`` and ``double_success`` are per-episode 0/1 flags (their lengths may
    differ). Each curve's x value is the episode that closes its window.
    """
    where = "plot_dqn_curves"
    lab = _labels(labels)
    ax = _axes(ax, (9, 4.8))
    for name, flags, label in (("dqn_success", dqn_success, "DQN"), ("double_success", double_success, "Double DQN")):
        curve = moving_mean(_vector(flags, name, where), window)
        first = len(np.asarray(flags)) - curve.size + 1
        ax.plot(np.arange(first, first + curve.size), curve, label=display_name(lab, label))
    ax.set_ylim(-0.03, 1.05)
    ax.set_xlabel(lab["episode"])
    ax.set_ylabel(lab["rolling_success"])
    ax.set_title(lab["dqn_title"])
    ax.legend()
    ax.grid(True, alpha=0.3)
    return ax


def plot_log_actions(counts, action_names: Sequence[str] | None = None, ax=None, labels: Mapping[str, str] | None = None):
    """Bar chart of how often each action occurs in the fixed log."""
    from m5_student.keydoor import ACTION_NAMES

    where = "plot_log_actions"
    lab = _labels(labels)
    names = list(ACTION_NAMES if action_names is None else action_names)
    values = _vector(counts, "counts", where, len(names))
    ax = _axes(ax, (8, 4.5))
    ax.bar(np.arange(len(names)), values)
    ax.set_xticks(np.arange(len(names)), _shown(lab, names))
    ax.set_ylabel(lab["count"])
    ax.set_title(lab["log_title"])
    ax.grid(True, axis="y", alpha=0.3)
    return ax


def plot_offline_methods(method_names, mean_return, success_rate, ax=None, labels: Mapping[str, str] | None = None, *, return_spread=None):
    """Mean return of each offline learner, each bar annotated with its success rate."""
    where = "plot_offline_methods"
    lab = _labels(labels)
    names = _names(method_names, "method_names", where)
    returns = _vector(mean_return, "mean_return", where, len(names))
    success = _vector(success_rate, "success_rate", where, len(names))
    err = _optional(return_spread, "return_spread", where, len(names))
    ax = _axes(ax, (9, 4.8))
    positions = np.arange(len(names))
    ax.bar(positions, returns, yerr=err, capsize=3 if err is not None else 0)
    ax.axhline(0.0, linewidth=1, color="black")
    ax.set_xticks(positions, _shown(lab, names), rotation=15, ha="right")
    ax.set_ylabel(lab["mean_return"])
    ax.set_title(lab["offline_title"])
    # The text sits just beyond the bar end, above positive bars and below negative ones.
    span = max(float(np.ptp(np.append(returns, 0.0))), 0.5)
    for x, y, s in zip(positions, returns, success):
        above = y >= 0
        ax.text(x, y + (0.03 if above else -0.03) * span, f"{lab['success_short']}={s:.2f}", ha="center",
                va="bottom" if above else "top", fontsize=8)
    ax.margins(y=0.15)
    ax.grid(True, axis="y", alpha=0.3)
    return ax


def plot_fqe_vs_simulator(fqe_names, fqe_values, simulated_values, ax=None, labels: Mapping[str, str] | None = None):
    """Paired bars per policy: the FQE estimate from the log and the simulator's value.

    Both are discounted values over the same start cells (see
    :func:`m5_student.offline.offline_experiment`); the gap is FQE's error.
    """
    where = "plot_fqe_vs_simulator"
    lab = _labels(labels)
    names = _names(fqe_names, "fqe_names", where)
    estimate = _vector(fqe_values, "fqe_values", where, len(names))
    truth = _vector(simulated_values, "simulated_values", where, len(names))
    ax = _axes(ax, (9, 4.8))
    positions = np.arange(len(names))
    width = 0.38
    ax.bar(positions - width / 2, estimate, width, label=lab["fqe_estimate"])
    ax.bar(positions + width / 2, truth, width, label=lab["simulator_value"])
    ax.axhline(0.0, linewidth=1, color="black")
    ax.set_xticks(positions, _shown(lab, names), rotation=15, ha="right")
    ax.set_ylabel(lab["discounted_value"])
    ax.set_title(lab["fqe_title"])
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    return ax


def plot_dt_sweep(target_return, mean_return, ax=None, labels: Mapping[str, str] | None = None, *, return_spread=None, data_range=None):
    """Achieved mean return against the requested return-to-go, with the identity line.

    ``data_range`` = (lowest, highest) episode return in the training log, shaded when
    given: inside it the request can be met, above it the curve is expected to flatten.
    """
    where = "plot_dt_sweep"
    lab = _labels(labels)
    x = _vector(target_return, "target_return", where)
    y = _vector(mean_return, "mean_return", where, x.size)
    err = _optional(return_spread, "return_spread", where, x.size)
    ax = _axes(ax, (8, 4.7))
    if data_range is not None:
        lo, hi = (float(v) for v in data_range)
        if not lo <= hi:
            raise ValueError(f"{where}: `data_range` must be (low, high) with low <= high, got {data_range!r}")
        ax.axvspan(lo, hi, color="0.9", zorder=0)
    ax.errorbar(x, y, yerr=err, marker="o", capsize=3)
    ax.plot(x, x, linestyle="--", color="0.4", label=lab["identity"])
    ax.set_xlabel(lab["requested_return"])
    ax.set_ylabel(lab["achieved_return"])
    ax.set_title(lab["dt_title"])
    ax.legend()
    ax.grid(True, alpha=0.3)
    return ax


def plot_language_exact_match(method_names, exact_match, ax=None, labels: Mapping[str, str] | None = None, *, match_spread=None):
    """Exact-answer rate of each token-level method."""
    where = "plot_language_exact_match"
    lab = _labels(labels)
    names = _names(method_names, "method_names", where)
    values = _vector(exact_match, "exact_match", where, len(names))
    err = _optional(match_spread, "match_spread", where, len(names))
    ax = _axes(ax, (8.8, 4.8))
    positions = np.arange(len(names))
    ax.bar(positions, values, yerr=err, capsize=3 if err is not None else 0)
    ax.set_xticks(positions, _shown(lab, names), rotation=12, ha="right")
    ax.set_ylim(0, 1.08)
    ax.set_ylabel(lab["exact_match"])
    ax.set_title(lab["language_title"])
    ax.grid(True, axis="y", alpha=0.3)
    return ax
