"""One plotting function per figure of the Module 5 lab.

Every function takes the data as plain arrays, an optional matplotlib ``ax`` (a new
figure is created when it is None) and a ``labels`` dict (one of
``reference_impl.lab.labels.LABELS[lang]``; English when None), draws, and returns the
``ax``. Method and action names on the axes are shown by their display names in the
labels' language (:func:`reference_impl.lab.labels.display_name`), never as identifiers. The lab runner (:mod:`reference_impl.lab`) and the student notebooks call the
same functions, so the figure code lives here only.

Optional ``*_spread`` arguments (same shape as the plotted values) draw error bars:
the lab passes the half-width of the 95 % interval of the across-seed mean
(:func:`reference_impl.course_run.bands`) when it runs several seeds.

Every function also takes ``run_label``: which run the figure shows ("your run",
"pinned full run", "m5 lab run: profile smoke, ..."), drawn as the title's second
line, so a figure never leaves its reader guessing whether it shows their own smoke
run or the pinned full-profile artifacts.

Bad input (ragged lengths, empty arrays, a window < 1) raises ValueError naming the
argument.
"""  # noqa: E501  (the wording is kept: translations are keyed to this docstring)

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from reference_impl.course_run import bands
from reference_impl.keydoor import ACTION_NAMES, draw_grid
from reference_impl.lab.claims import DT_LOG_GROUPS, log_return_groups
from reference_impl.lab.labels import LABELS, display_name

__all__ = [
    "plot_q_errors",
    "plot_overestimation",
    "DQN_WINDOW",
    "moving_mean",
    "plot_environment",
    "plot_dagger_curve",
    "plot_distribution_shift",
    "SHIFT_KEYS",
    "plot_dqn_curves",
    "plot_log_actions",
    "plot_offline_methods",
    "plot_fqe_vs_simulator",
    "plot_dt_sweep",
    "plot_dt_log_returns",
    "plot_dt_panel",
    "plot_offline_values",
    "plot_language_exact_match",
]

#: Rolling window of the DQN success curves (episodes).
DQN_WINDOW = 15


# --------------------------------------------------------------------------- helpers
def _labels(labels: Mapping[str, str] | None) -> Mapping[str, str]:
    return LABELS["en"] if labels is None else labels


def _axes(ax, figsize: tuple[float, float]):
    if ax is None:
        import matplotlib.pyplot as plt  # pyplot only when no axes are given (0.3 s, a backend)

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


def _title(ax, title: str, run_label: str | None) -> None:
    """The figure's title with, on a second line, which run it shows."""
    ax.set_title(title if not run_label else f"{title}\n{run_label}", fontsize=10)


def _finish_value_bars(ax, lab: Mapping[str, str], names: Sequence[str], ylabel: str, title: str, run_label: str | None):
    """Zero line, method ticks, labels, legend and grid of a grouped bar chart of values per method."""
    ax.axhline(0.0, linewidth=1, color="black")
    ax.set_xticks(np.arange(len(names)), _shown(lab, names), rotation=15, ha="right")
    ax.set_ylabel(lab[ylabel])
    _title(ax, lab[title], run_label)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    return ax


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
def plot_environment(env, ax=None, labels: Mapping[str, str] | None = None, *, run_label: str | None = None):
    """KeyDoorGrid layout (delegates to :func:`reference_impl.keydoor.draw_grid`)."""
    lab = _labels(labels)
    title = lab["grid_title"] if not run_label else f"{lab['grid_title']}\n{run_label}"
    return draw_grid(env, _axes(ax, (10, 5.5)), title=title, xlabel=lab["grid_x"], ylabel=lab["grid_y"])


def plot_dagger_curve(
    rounds, success_rate, ax=None, labels: Mapping[str, str] | None = None, *, success_spread=None, run_label: str | None = None
):
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
    _title(ax, lab["dagger_title"], run_label)
    ax.grid(True, alpha=0.3)
    return ax


def plot_label_budget(
    budgets,
    bc_success,
    dagger_success,
    ax=None,
    labels: Mapping[str, str] | None = None,
    *,
    bc_spread=None,
    dagger_spread=None,
    setting: Mapping | None = None,
    run_label: str | None = None,
):
    """Greedy success of behavior cloning and of DAgger trained on the same number of expert labels.

    ``setting`` (:meth:`reference_impl.imitation.LabelBudgetConfig.describe`: ``slip``,
    ``rows``, ``cols``, ``starts``), when given, adds a title line naming the setting,
    which differs from the DAgger curve's.
    """
    where = "plot_label_budget"
    lab = _labels(labels)
    x = _vector(budgets, "budgets", where)
    ax = _axes(ax, (8.5, 4.8))
    for values, spread, name, key, marker in (
        (bc_success, bc_spread, "bc_success", "budget_bc", "o"),
        (dagger_success, dagger_spread, "dagger_success", "budget_dagger", "s"),
    ):
        y = _vector(values, name, where, x.size)
        err = _optional(spread, name.replace("success", "spread"), where, x.size)
        ax.errorbar(x, y, yerr=err, marker=marker, capsize=3, label=lab[key])
    ax.set_ylim(-0.03, 1.05)
    ax.set_xlabel(lab["budget_x"])
    ax.set_ylabel(lab["success"])
    ax.legend(loc="lower right")
    title = lab["budget_title"]
    if setting is not None:
        title += "\n" + lab["budget_note"].format(**setting)
    _title(ax, title, run_label)
    ax.grid(True, alpha=0.3)
    return ax


#: The per-seed arrays :func:`plot_distribution_shift` draws (``label_budget_curve``'s shift measures).
SHIFT_KEYS = tuple(f"{who}_{m}" for who in ("bc", "dagger") for m in ("unseen_share", "error_unseen", "error_seen"))


def _seed_matrix(values, name: str, where: str, length: int) -> np.ndarray:
    """``values`` as a (seeds, length) float array (a 1-D input is one seed)."""
    arr = np.atleast_2d(np.asarray(values, dtype=np.float64))
    if arr.ndim != 2 or arr.shape[1] != length or arr.shape[0] == 0:
        raise ValueError(f"{where}: `{name}` must have shape (seeds, {length}), got {np.shape(values)}")
    return arr


def _nan_mean(arr: np.ndarray) -> np.ndarray:
    """Column means ignoring NaN; NaN (a gap in the curve) where a column has no value."""
    counts = np.sum(~np.isnan(arr), axis=0)
    sums = np.nansum(arr, axis=0)
    return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def plot_distribution_shift(
    budgets, per_seed: Mapping[str, Sequence], axes=None, labels: Mapping[str, str] | None = None, *, run_label: str | None = None
):
    """Distribution shift of each learner at each label budget, on its own evaluation episodes.

    ``per_seed`` maps every key of :data:`SHIFT_KEYS` to a (seeds, budgets) array (one row
    per seed). Top: the mean share of the learner's visits whose state is absent from its
    training labels (error bars: the 95 % interval of the mean over seeds). Bottom: the share of visits where
    its action is not optimal, on those unseen states and on trained ones, averaged over
    the seeds that have such visits (a gap where none has). ``axes``: two axes, or None
    for a new figure.
    """
    where = "plot_distribution_shift"
    lab = _labels(labels)
    x = _vector(budgets, "budgets", where)
    missing = [k for k in SHIFT_KEYS if k not in per_seed]
    if missing:
        raise ValueError(f"{where}: `per_seed` lacks {missing}")
    data = {k: _seed_matrix(per_seed[k], f"per_seed[{k!r}]", where, x.size) for k in SHIFT_KEYS}
    if axes is None:
        import matplotlib.pyplot as plt  # pyplot only when no axes are given (0.3 s, a backend)

        _, axes = plt.subplots(2, 1, figsize=(8.5, 7.5), sharex=True)
    top, bottom = axes
    for who, marker, color in (("bc", "o", "C0"), ("dagger", "s", "C1")):
        unseen = data[f"{who}_unseen_share"]
        mean, half = bands(unseen)
        top.errorbar(x, mean, yerr=half if unseen.shape[0] > 1 else None, marker=marker, capsize=3, color=color, label=lab[f"budget_{who}"])
        # one color per learner: solid on states absent from its labels, dotted on labeled ones
        for part, style, fill in (("unseen", "-", color), ("seen", ":", "white")):
            bottom.plot(
                x,
                _nan_mean(data[f"{who}_error_{part}"]),
                style,
                marker=marker,
                color=color,
                markerfacecolor=fill,
                label=lab[f"shift_error_{part}"].format(who=lab["shift_bc"] if who == "bc" else "DAgger"),
            )
    top.set_ylim(-0.03, 1.05)
    top.set_ylabel(lab["shift_unseen"])
    top.legend(loc="upper right", fontsize=8)
    _title(top, lab["shift_title"], run_label)
    bottom.set_ylim(-0.03, 1.05)
    bottom.set_xlabel(lab["budget_x"])
    bottom.set_ylabel(lab["shift_error"])
    bottom.legend(loc="center right", fontsize=8)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    return axes


def plot_dqn_curves(
    dqn_success, double_success, ax=None, labels: Mapping[str, str] | None = None, *, window: int = DQN_WINDOW, run_label: str | None = None
):
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
    _title(ax, lab["dqn_title"], run_label)
    ax.legend()
    ax.grid(True, alpha=0.3)
    return ax


def plot_overestimation(episodes, dqn, double, ax=None, labels: Mapping[str, str] | None = None, *, run_label: str | None = None):
    """Learned minus exact Q of the greedy action over training, DQN against Double DQN.

    ``episodes`` (T,) are the checkpoints; ``dqn`` and ``double`` are (seeds, T) arrays
    (or one seed's (T,)). Lines: across-seed means; bands: their 95 % interval. Zero is an
    unbiased critic; above zero the network believes its choices are worth more than
    they are.
    """
    where = "plot_overestimation"
    lab = _labels(labels)
    x = _vector(episodes, "episodes", where)
    ax = _axes(ax, (9, 4.8))
    for name, values, label in (("dqn", dqn, "DQN"), ("double", double, "Double DQN")):
        curves = _per_seed_matrix(values, name, where, len(x))
        mean, half = bands(curves)
        line = ax.plot(x, mean, marker="o", markersize=3, label=display_name(lab, label))[0]
        if curves.shape[0] > 1:
            ax.fill_between(x, mean - half, mean + half, color=line.get_color(), alpha=0.2)
    ax.axhline(0.0, linewidth=1, color="black")
    ax.set_xlabel(lab["episode"])
    ax.set_ylabel(lab["overestimation_axis"])
    _title(ax, lab["overestimation_title"], run_label)
    ax.legend()
    ax.grid(True, alpha=0.3)
    return ax


def plot_log_actions(
    counts, action_names: Sequence[str] | None = None, ax=None, labels: Mapping[str, str] | None = None, *, run_label: str | None = None
):
    """Bar chart of how often each action occurs in the fixed log."""
    where = "plot_log_actions"
    lab = _labels(labels)
    names = list(ACTION_NAMES if action_names is None else action_names)
    values = _vector(counts, "counts", where, len(names))
    ax = _axes(ax, (8, 4.5))
    ax.bar(np.arange(len(names)), values)
    ax.set_xticks(np.arange(len(names)), _shown(lab, names))
    ax.set_ylabel(lab["count"])
    _title(ax, lab["log_title"], run_label)
    ax.grid(True, axis="y", alpha=0.3)
    return ax


def plot_offline_methods(
    method_names,
    mean_return,
    success_rate,
    ax=None,
    labels: Mapping[str, str] | None = None,
    *,
    return_spread=None,
    run_label: str | None = None,
    optimum: float | None = None,
):
    """Mean return of each offline learner, each bar annotated with its success rate;
    ``optimum`` (the expert's return from the same starts) is drawn as a dashed line."""
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
    if optimum is not None:
        ax.axhline(float(optimum), linestyle="--", color="tab:green", label=lab["optimum"].format(value=float(optimum)))
        ax.legend(fontsize=8, loc="lower right")
    ax.set_xticks(positions, _shown(lab, names), rotation=15, ha="right")
    ax.set_ylabel(lab["mean_return"])
    _title(ax, lab["offline_title"], run_label)
    # The text sits just beyond the bar end, above positive bars and below negative ones.
    span = max(float(np.ptp(np.append(returns, 0.0))), 0.5)
    for x, y, s in zip(positions, returns, success):
        above = y >= 0
        ax.text(
            x,
            y + (0.03 if above else -0.03) * span,
            f"{lab['success_short']}={s:.2f}",
            ha="center",
            va="bottom" if above else "top",
            fontsize=8,
        )
    ax.margins(y=0.15)
    ax.grid(True, axis="y", alpha=0.3)
    return ax


def plot_fqe_vs_simulator(
    fqe_names,
    fqe_values,
    simulated_values,
    ax=None,
    labels: Mapping[str, str] | None = None,
    *,
    fqe_spread=None,
    simulated_spread=None,
    run_label: str | None = None,
):
    """Paired bars per policy: the FQE estimate from the log and the simulator's value.

    Both are discounted values over the same start cells (see
    :func:`reference_impl.offline.offline_experiment`); the gap is FQE's error.
    """
    where = "plot_fqe_vs_simulator"
    lab = _labels(labels)
    names = _names(fqe_names, "fqe_names", where)
    estimate = _vector(fqe_values, "fqe_values", where, len(names))
    truth = _vector(simulated_values, "simulated_values", where, len(names))
    est_err = _optional(fqe_spread, "fqe_spread", where, len(names))
    sim_err = _optional(simulated_spread, "simulated_spread", where, len(names))
    ax = _axes(ax, (9, 4.8))
    positions = np.arange(len(names))
    width = 0.38
    ax.bar(positions - width / 2, estimate, width, yerr=est_err, capsize=3 if est_err is not None else 0, label=lab["fqe_estimate"])
    ax.bar(positions + width / 2, truth, width, yerr=sim_err, capsize=3 if sim_err is not None else 0, label=lab["simulator_value"])
    return _finish_value_bars(ax, lab, names, "discounted_value", "fqe_title", run_label)


def plot_dt_sweep(
    target_return,
    mean_return,
    ax=None,
    labels: Mapping[str, str] | None = None,
    *,
    return_spread=None,
    data_range=None,
    run_label: str | None = None,
):
    """Achieved mean return against the requested return-to-go, with the identity line.

    ``data_range`` = (lowest, highest) episode return in the training log, shaded when
    given: above it the curve is expected to flatten. Inside it the log need not have
    episodes at every return (see :func:`plot_dt_panel`, which draws the histogram under it).
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
        ax.axvspan(lo, hi, color="0.9", zorder=0, label=lab["dt_data_range"].format(lo=lo, hi=hi))
    ax.errorbar(x, y, yerr=err, marker="o", capsize=3)
    ax.plot(x, x, linestyle="--", color="0.4", label=lab["identity"])
    ax.set_xlabel(lab["requested_return"])
    ax.set_ylabel(lab["achieved_return"])
    _title(ax, lab["dt_title"], run_label)
    ax.legend()
    ax.grid(True, alpha=0.3)
    return ax


def plot_language_exact_match(
    method_names,
    exact_match,
    ax=None,
    labels: Mapping[str, str] | None = None,
    *,
    match_spread=None,
    run_label: str | None = None,
    heldout_exact_match=None,
    heldout_spread=None,
):
    """Exact-answer rate of each token-level method on the training prompts and, when
    ``heldout_exact_match`` is given, next to it on the held-out prompts."""
    where = "plot_language_exact_match"
    lab = _labels(labels)
    names = _names(method_names, "method_names", where)
    values = _vector(exact_match, "exact_match", where, len(names))
    err = _optional(match_spread, "match_spread", where, len(names))
    ax = _axes(ax, (8.8, 4.8))
    positions = np.arange(len(names))
    if heldout_exact_match is None:
        if heldout_spread is not None:
            raise ValueError(f"{where}: `heldout_spread` needs `heldout_exact_match`")
        ax.bar(positions, values, yerr=err, capsize=3 if err is not None else 0)
    else:
        held = _vector(heldout_exact_match, "heldout_exact_match", where, len(names))
        held_err = _optional(heldout_spread, "heldout_spread", where, len(names))
        width = 0.38
        ax.bar(positions - width / 2, values, width, yerr=err, capsize=3 if err is not None else 0, label=lab["language_train"])
        ax.bar(
            positions + width / 2,
            held,
            width,
            yerr=held_err,
            capsize=3 if held_err is not None else 0,
            label=lab["language_heldout"],
            hatch="//",
        )
        ax.legend(fontsize=8, loc="upper left")
    ax.set_xticks(positions, _shown(lab, names), rotation=12, ha="right")
    ax.set_ylim(0, 1.08)
    ax.set_ylabel(lab["exact_match"])
    _title(ax, lab["language_title"], run_label)
    ax.grid(True, axis="y", alpha=0.3)
    return ax


def _per_seed_matrix(values, name: str, where: str, n_methods: int) -> np.ndarray:
    """``values`` as a (seeds, methods) float array; a 1-D input is one seed."""
    arr = np.asarray(values, dtype=np.float64)
    arr = arr[None, :] if arr.ndim == 1 else arr
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] != n_methods:
        raise ValueError(f"{where}: `{name}` must be (seeds, {n_methods}) or ({n_methods},), got shape {np.shape(values)}")
    return arr


def plot_offline_values(
    method_names, learned, true, ax=None, labels: Mapping[str, str] | None = None, *, fqe=None, run_label: str | None = None
):
    """Each learner's own value of its greedy action next to the true value of that policy.

    ``learned``, ``true`` and ``fqe`` are (seeds, methods) arrays (or one seed's (methods,)):
    the learner's mean Q(s, pi(s)) over the log's states (NaN where a method has no Q,
    e.g. behavior cloning), the exact V^pi(s) over the same states, and FQE's value of
    the policy there. Bars are across-seed means with one standard deviation; dots are
    the seeds. A learned bar far above the true one is extrapolation the learner believes.
    """
    where = "plot_offline_values"
    lab = _labels(labels)
    names = _names(method_names, "method_names", where)
    series = [
        ("value_learned", _per_seed_matrix(learned, "learned", where, len(names))),
        ("value_true", _per_seed_matrix(true, "true", where, len(names))),
    ]
    if fqe is not None:
        series.append(("value_fqe", _per_seed_matrix(fqe, "fqe", where, len(names))))
    ax = _axes(ax, (9.5, 5))
    _grouped_bars(ax, lab, len(names), series)
    return _finish_value_bars(ax, lab, names, "value_axis", "values_title", run_label)


def plot_q_errors(
    method_names, logged_error, unlogged_error, ax=None, labels: Mapping[str, str] | None = None, *, run_label: str | None = None
):
    """Learned minus true Q, on the (state, action) pairs the log holds and on those it never shows.

    ``logged_error`` and ``unlogged_error`` are (seeds, methods) arrays (or one seed's
    (methods,)), NaN where a method has no Q. Bars: across-seed means; dots: seeds.
    The y axis is symmetric-logarithmic, so a learner that overestimates by thousands
    and one that is off by tenths fit on one figure. A maximum over actions the log never
    shows inflates the unlogged pairs first; bootstrapping then carries the excess to the
    logged ones.
    """
    where = "plot_q_errors"
    lab = _labels(labels)
    names = _names(method_names, "method_names", where)
    series = [
        ("q_error_logged", _per_seed_matrix(logged_error, "logged_error", where, len(names))),
        ("q_error_unlogged", _per_seed_matrix(unlogged_error, "unlogged_error", where, len(names))),
    ]
    ax = _axes(ax, (9.5, 5))
    # No interval bars: on a log scale a bar reaching below zero cannot be drawn; the dots show every seed.
    _grouped_bars(ax, lab, len(names), series, spread=False)
    ax.set_yscale("symlog", linthresh=1.0)
    return _finish_value_bars(ax, lab, names, "q_error_axis", "q_error_title", run_label)


def _grouped_bars(ax, lab: Mapping[str, str], n_methods: int, series, *, spread: bool = True) -> None:
    """One bar group per method, one bar per ``(label key, (seeds, methods) values)`` series:
    the across-seed mean (with its 95 % interval when ``spread``), with each seed as a dot; all-NaN columns are left out."""
    positions = np.arange(n_methods)
    width = 0.8 / len(series)
    for k, (key, values) in enumerate(series):
        x = positions + (k - (len(series) - 1) / 2) * width
        mean, half = bands(values)  # an all-NaN column (no Q) is simply not drawn
        drawn = ~np.isnan(mean)
        err = half[drawn] if spread and values.shape[0] > 1 else None
        ax.bar(x[drawn], mean[drawn], width, yerr=err, capsize=3, label=lab[key])
        if values.shape[0] > 1:
            jitter = np.linspace(-0.25, 0.25, values.shape[0]) * width
            for j in range(n_methods):
                ax.scatter(x[j] + jitter, values[:, j], s=10, color="black", zorder=3)


def plot_dt_log_returns(
    returns,
    ax=None,
    labels: Mapping[str, str] | None = None,
    *,
    outcomes=None,
    bins: int = 40,
    value_range=None,
    run_label: str | None = None,
):
    """Histogram of the training log's episode returns (the requests' x axis, drawn under the sweep).

    ``outcomes`` (one per return: "trap", "timeout" or "goal", as the episodes ended)
    stacks the histogram by group, each with its count, share and return range in the
    legend; without it one grey histogram is drawn. ``value_range`` fixes the
    histogram's x range so it lines up with the sweep above it.
    """
    where = "plot_dt_log_returns"
    lab = _labels(labels)
    values = _vector(returns, "returns", where)
    ax = _axes(ax, (8, 2.8))
    if outcomes is None:
        ax.hist(values, bins=bins, range=value_range, color="0.35")
    else:
        ends = [str(o) for o in outcomes]
        if len(ends) != values.size:
            raise ValueError(f"{where}: `outcomes` has {len(ends)} entries for {values.size} returns")
        summary = log_return_groups(values, ends)
        colors = {"trap": "tab:red", "timeout": "tab:orange", "goal": "tab:green"}
        edges = np.histogram_bin_edges(values, bins=bins, range=value_range)
        groups = [g for g in DT_LOG_GROUPS if summary[g]["count"]]
        ax.hist(
            [values[np.asarray(ends) == g] for g in groups],
            bins=edges,
            stacked=True,
            color=[colors[g] for g in groups],
            label=[
                lab["dt_group"].format(
                    group=display_name(lab, g),
                    count=summary[g]["count"],
                    share=summary[g]["share"],
                    lo=summary[g]["min"],
                    hi=summary[g]["max"],
                )
                for g in groups
            ],
        )
        for g in DT_LOG_GROUPS:
            if not summary[g]["count"]:
                ax.plot([], [], color=colors[g], label=lab["dt_group_empty"].format(group=display_name(lab, g)))
        ax.legend(fontsize=8)
    ax.set_xlabel(lab["log_episode_return"])
    ax.set_ylabel(lab["episodes"])
    _title(ax, lab["dt_log_title"], run_label)
    ax.grid(True, axis="y", alpha=0.3)
    return ax


def plot_dt_panel(
    target_return,
    mean_return,
    log_returns,
    axes=None,
    labels: Mapping[str, str] | None = None,
    *,
    return_spread=None,
    log_outcomes=None,
    run_label: str | None = None,
):
    """The request sweep (top) over the histogram of the log's episode returns (bottom), one x axis.

    The shaded band of the sweep is the log's [min, max] return; ``log_outcomes`` (how
    each logged episode ended) splits the histogram into its groups (trap, timeout,
    goal; see :func:`plot_dt_log_returns`), so a reader sees which requests the log
    backs and where the model interpolates between groups.
    ``axes`` = (top, bottom); a new figure is made when None. Returns the two axes.
    """
    returns = _vector(log_returns, "log_returns", "plot_dt_panel")
    if axes is None:
        import matplotlib.pyplot as plt  # pyplot only when no axes are given (0.3 s, a backend)

        # constrained layout keeps the top axis label clear of the lower panel's title
        _, axes = plt.subplots(2, 1, figsize=(8, 7.5), gridspec_kw={"height_ratios": (3, 1.6)}, layout="constrained")
    top, bottom = axes
    plot_dt_sweep(
        target_return,
        mean_return,
        top,
        labels,
        return_spread=return_spread,
        data_range=(float(returns.min()), float(returns.max())),
        run_label=run_label,
    )
    plot_dt_log_returns(returns, bottom, labels, outcomes=log_outcomes, value_range=top.get_xlim())
    bottom.set_xlim(top.get_xlim())
    return top, bottom
