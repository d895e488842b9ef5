"""The lab's report: figures, tables and the per-seed Decision Transformer check,
one markdown section per lab section, in the language of the labels given.

``REPORTERS[section](runs, render)`` returns a section's markdown lines and draws its
figures with ``render`` (a :class:`Render`: the output folder, the labels and the run
label every figure title carries); :func:`claims_lines` checks the Decision
Transformer's claim on every seed (:func:`dt_claims`). Figures are imported inside
each reporter so that matplotlib loads only when a report is written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from reference_impl.course_run import bands, format_interval, interval
from reference_impl.keydoor import ACTION_NAMES
from reference_impl.lab import pins
from reference_impl.lab.claims import DT_LOG_GROUPS, log_return_groups
from reference_impl.lab.comparisons import phrase
from reference_impl.lab.figures import (
    SHIFT_KEYS,
    plot_dagger_curve,
    plot_distribution_shift,
    plot_dqn_curves,
    plot_dt_panel,
    plot_environment,
    plot_fqe_vs_simulator,
    plot_label_budget,
    plot_language_exact_match,
    plot_log_actions,
    plot_offline_methods,
    plot_offline_values,
    plot_overestimation,
    plot_q_errors,
)
from reference_impl.lab.labels import display_name
from reference_impl.lab.pins import nan_none
from reference_impl.lab.profiles import dt_return_bounds
from reference_impl.lab.side_studies import FIGURES, SIDE_FILE, side_table
from reference_impl.language_task import HELDOUT_PROMPTS
from reference_impl.stats import paired_difference, standard_error_bound

__all__ = ["Render", "REPORTERS", "claims_lines", "dt_claims", "report_text", "header", "fmt", "table"]


def _stats(values) -> dict:
    """Across-seed mean and spread (sample std; zeros for one seed) of stacked values."""
    arr = np.asarray(values, dtype=np.float64)
    mean = arr.mean(axis=0)
    std = arr.std(axis=0, ddof=1) if len(arr) > 1 else np.zeros_like(mean)
    return {"mean": mean, "std": std, "values": arr}


def fmt(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}f}"


def _cell(values: Sequence[float], digits: int = 3) -> str:
    """``mean ± std`` for several seeds, the value alone for one."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 1:
        return fmt(float(arr[0]), digits)
    return f"{fmt(float(arr.mean()), digits)} ± {fmt(float(arr.std(ddof=1)), digits)}"


def _per_seed(values: Sequence[float], digits: int = 2) -> str:
    return ", ".join(fmt(float(v), digits) for v in values)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


# --------------------------------------------------------------------------- claims
def dt_claims(target_return, mean_return, data_max: float, *, standard_error=None, z: float = 2.0) -> dict:
    """The lab's Decision Transformer claim for one sweep, as numbers and a verdict.

    ``rises``: inside the log's range (requests <= ``data_max``) the achieved return
    at the highest request exceeds the one at the lowest, and the least-squares slope
    is positive. ``saturates``: the curve stops rising once the request leaves the
    log's range. With y_top, SE_top the achieved return and its standard error at the
    highest request inside the range, every request a above ``data_max`` has

        y_a - y_top <= z * sqrt(SE_a^2 + SE_top^2)

    (``standard_error``: each point's SE, default all zero, i.e. exact values; the two
    means are treated as independent, which can only widen the allowance since the
    requests share their episode seeds). A curve that keeps following the request
    above the log fails it. ``excess_above`` is the largest y_a - y_top and
    ``excess_allowance`` the z * sqrt(...) of that same request a.
    Needs at least two requests inside and one above the range, finite SEs >= 0 and
    ``z`` > 0 (ValueError otherwise, naming the argument).
    """
    x = np.asarray(target_return, dtype=np.float64)
    y = np.asarray(mean_return, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"dt_claims: `target_return` {x.shape} and `mean_return` {y.shape} must be equal 1-D shapes")
    se = np.zeros_like(y) if standard_error is None else np.asarray(standard_error, dtype=np.float64)
    if se.shape != y.shape or not np.all(np.isfinite(se)) or np.any(se < 0):
        raise ValueError(f"dt_claims: `standard_error` must be finite, >= 0 and shaped like `mean_return` {y.shape}")
    if not (np.isfinite(z) and z > 0):
        raise ValueError(f"dt_claims: `z` must be a positive finite number, got {z!r}")
    inside, above = x <= data_max, x > data_max
    if inside.sum() < 2 or above.sum() < 1:
        raise ValueError(f"dt_claims: need >= 2 requests <= data_max ({data_max}) and >= 1 above it, got {x.tolist()}")
    slope_inside = float(np.polyfit(x[inside], y[inside], 1)[0])
    rise = float(y[inside][np.argmax(x[inside])] - y[inside][np.argmin(x[inside])])
    top = np.flatnonzero(inside)[np.argmax(x[inside])]
    excess = y[above] - y[top]
    allowance = z * np.sqrt(se[above] ** 2 + se[top] ** 2)
    worst = int(np.argmax(excess - allowance))
    return {
        "slope_inside": slope_inside,
        "rise_inside": rise,
        "max_achieved_above": float(y[above].max()),
        "top_inside_request": float(x[top]),
        "excess_above": float(excess[worst]),
        "excess_allowance": float(allowance[worst]),
        "rises": bool(rise > 0 and slope_inside > 0),
        "saturates": bool(np.all(excess <= allowance)),
    }


# --------------------------------------------------------------------------- figures and report
@dataclass(frozen=True)
class Render:
    """Where and in which language one report is written, and which run its figures show."""

    out: Path
    labels: dict
    run_label: str
    suffix: str = ""  # "" for English, ".ru" for Russian: both reports can share a folder

    @property
    def lang(self) -> str:
        return self.suffix.lstrip(".") or "en"

    def figure(self, name: str, draw: Callable, figsize=(9, 4.8), rows: int = 1, height_ratios=None) -> str:
        """Draw with ``draw(ax)`` (or ``draw(axes)`` for several rows), save, return the file name."""
        # A bare Figure renders with Agg and never touches pyplot's backend or state, so
        # running the lab from a notebook leaves its inline plotting alone.
        from matplotlib.figure import Figure  # matplotlib only when figures are drawn

        fig = Figure(figsize=figsize)
        axes = fig.subplots(rows, 1, gridspec_kw={"height_ratios": height_ratios} if height_ratios else None)
        draw(axes)
        fig.tight_layout()
        file = f"{name}{self.suffix}.png"
        fig.savefig(self.out / file, dpi=110)
        return file


def report_text(labels: Mapping[str, str], key: str, **fields) -> str:
    """The report text ``report.<key>`` in the labels' language, with ``fields`` filled in."""
    text = labels[f"report.{key}"]
    return text.format(**fields) if fields else text


def header(labels: Mapping[str, str], *keys: str) -> tuple[str, ...]:
    return tuple(report_text(labels, k) for k in keys)


def _yes_no(labels: Mapping[str, str], flag) -> str:
    return report_text(labels, "yes" if bool(flag) else "no")


def _spread(stats: dict, runs: list) -> np.ndarray | None:
    """The half-width of the 95 % interval of the across-seed mean to draw, or None for one seed (no error bars)."""
    return bands(stats["values"])[1] if len(runs) > 1 else None


def _report_environment(runs: list[dict], r: Render) -> list[str]:
    labels, run = r.labels, runs[0]
    png = r.figure("environment", lambda ax: plot_environment(run["env"], ax, labels, run_label=r.run_label), (10, 5.5))
    lines = [f"![environment]({png})", ""]
    expert = report_text(
        labels,
        "expert_run",
        outcome=display_name(labels, run["expert_outcome"]),
        steps=run["expert_steps"],
        ret=f"{run['expert_return']:.2f}",
    )
    lines += table(
        header(labels, "quantity", "value"),
        [
            (report_text(labels, "observation_dim"), run["observation_dim"]),
            (report_text(labels, "action_dim"), run["action_dim"]),
            (report_text(labels, "initial_state"), f"`{run['initial_state']}`"),
            (report_text(labels, "expert_from_start"), expert),
        ],
    )
    return lines


def _report_dagger(runs: list[dict], r: Render) -> list[str]:
    labels = r.labels
    success = _stats([x["success_rate"] for x in runs])
    png = r.figure(
        "dagger",
        lambda ax: plot_dagger_curve(
            runs[0]["rounds"], success["mean"], ax, labels, success_spread=_spread(success, runs), run_label=r.run_label
        ),
    )
    rows = []
    for i, rnd in enumerate(runs[0]["rounds"]):
        per = [x["success_rate"][i] for x in runs]
        rows.append((int(rnd), int(runs[0]["dataset_size"][i]), _cell(per), _cell([x["mean_return"][i] for x in runs]), _per_seed(per)))
    lines = [f"![dagger]({png})", ""] + table(
        header(labels, "round", "dataset_size", "success_rate", "mean_return", "success_per_seed"), rows
    )
    return lines + ["", ""] + _report_label_budget(runs, r)


def _report_label_budget(runs: list[dict], r: Render) -> list[str]:
    """BC and DAgger trained on the same number of expert labels (its own setting), and their shift."""
    labels = r.labels
    budgets = runs[0]["budget_labels"]
    setting = runs[0]["budget_setting"]
    bc, dagger = _stats([x["budget_bc_success"] for x in runs]), _stats([x["budget_dagger_success"] for x in runs])
    png = r.figure(
        "dagger_budget",
        lambda ax: plot_label_budget(
            budgets,
            bc["mean"],
            dagger["mean"],
            ax,
            labels,
            bc_spread=_spread(bc, runs),
            dagger_spread=_spread(dagger, runs),
            setting=setting,
            run_label=r.run_label,
        ),
    )
    shift = {k: np.stack([x[f"budget_{k}"] for x in runs]) for k in SHIFT_KEYS}
    shift_png = r.figure(
        "dagger_shift", lambda axes: plot_distribution_shift(budgets, shift, axes, labels, run_label=r.run_label), figsize=(9, 7.5), rows=2
    )
    rows = [
        (
            int(b),
            _cell([x["budget_bc_labels"][i] for x in runs], 0),
            _cell([x["budget_dagger_labels"][i] for x in runs], 0),
            _cell(bc["values"][:, i]),
            _cell(dagger["values"][:, i]),
            _difference(dagger["values"][:, i], bc["values"][:, i], r),
        )
        for i, b in enumerate(budgets)
    ]
    shift_rows = [
        (int(b), *(_cell(v) if (v := _finite(shift[k][:, i])).size else report_text(labels, "not_available") for k in SHIFT_KEYS))
        for i, b in enumerate(budgets)
    ]
    expert = _cell([x["budget_expert_success"] for x in runs])
    return (
        [report_text(labels, "budget_intro", expert=expert, **setting), "", f"![dagger_budget]({png})", ""]
        + table(
            header(
                labels, "expert_labels", "bc_distinct_labels", "dagger_distinct_labels", "bc_success", "dagger_success", "dagger_minus_bc"
            ),
            rows,
        )
        + ["", report_text(labels, "shift_intro"), "", f"![dagger_shift]({shift_png})", ""]
        + table(header(labels, "expert_labels", *(f"shift_{k}" for k in SHIFT_KEYS)), shift_rows)
    )


def _finite(values) -> np.ndarray:
    """The finite entries (a learner with no visits of a kind has NaN there, and no value to average)."""
    arr = np.asarray(values, dtype=np.float64)
    return arr[np.isfinite(arr)]


def _difference(a, b, r: Render) -> str:
    """``a - b`` over paired seeds as the report words it (interval and verdict), or n/a for one seed."""
    if len(a) < 2:
        return report_text(r.labels, "not_available")
    return phrase(paired_difference(a, b), r.lang)


def _report_dqn(runs: list[dict], r: Render) -> list[str]:
    labels = r.labels
    # Several seeds: the curve of the across-seed mean success flag.
    dqn = np.mean([x["dqn_success"] for x in runs], axis=0)
    double = np.mean([x["double_success"] for x in runs], axis=0)
    png = r.figure("dqn", lambda ax: plot_dqn_curves(dqn, double, ax, labels, run_label=r.run_label))
    over_png = r.figure(
        "dqn_overestimation",
        lambda ax: plot_overestimation(
            runs[0]["overestimation_episodes"],
            np.stack([x["dqn_overestimation"] for x in runs]),
            np.stack([x["double_overestimation"] for x in runs]),
            ax,
            labels,
            run_label=r.run_label,
        ),
    )
    rows = []
    for key, name in (("dqn", "DQN"), ("double", "Double DQN")):
        late = [float(np.mean(x[f"{key}_success"][-15:])) for x in runs]
        rows.append(
            (
                display_name(labels, name),
                _cell([x[f"{key}_eval_success"] for x in runs]),
                _cell([x[f"{key}_eval_return"] for x in runs]),
                _cell(late),
                _per_seed([x[f"{key}_eval_success"] for x in runs]),
                _cell([float(np.mean(x[f"{key}_overestimation"])) for x in runs]),
                _cell([float(x[f"{key}_overestimation"][-1]) for x in runs]),
            )
        )
    return (
        [f"![dqn]({png})", "", f"![dqn_overestimation]({over_png})", "", report_text(labels, "overestimation_intro"), ""]
        + table(
            header(
                labels,
                "method",
                "greedy_eval_success",
                "greedy_eval_return",
                "late_success",
                "eval_success_per_seed",
                "overestimation_mean",
                "overestimation_final",
            ),
            rows,
        )
        + side_study_lines(r, "maxbias")
    )


def side_study_lines(r: Render, study: str) -> list[str]:
    """The side study's pinned table (:mod:`reference_impl.lab.side_studies`) and, when the report's
    folder holds it, its figure; nothing where the study was never pinned."""
    path = pins.DATA_DIR / SIDE_FILE
    if not path.is_file():
        return []
    lines = ["", *side_table(json.loads(path.read_text(encoding="utf-8"))[study], r.lang)]
    figure = f"{FIGURES[study]}{r.suffix}.png"
    return lines + (["", f"![{study}]({figure})"] if (r.out / figure).is_file() else [])


def _outcomes(labels: Mapping[str, str], outcomes: Mapping[str, float]) -> str:
    """Outcome counts of sampled episodes, or probabilities of an exact evaluation (two decimals)."""
    shown = {name: count if isinstance(count, int) else f"{count:.2f}" for name, count in outcomes.items()}
    return ", ".join(f"{display_name(labels, name)} {value}" for name, value in shown.items())


def _report_log(runs: list[dict], r: Render) -> list[str]:
    labels, run = r.labels, runs[0]
    png = r.figure("log", lambda ax: plot_log_actions(run["counts"], ACTION_NAMES, ax, labels, run_label=r.run_label), (8, 4.5))
    rows = [
        (display_name(labels, a), int(run["counts"][i]), fmt(float(run["probabilities"][i]), 4), _yes_no(labels, run["support_mask"][i]))
        for i, a in enumerate(ACTION_NAMES)
    ]
    summary = report_text(
        labels,
        "log_summary",
        seed=run["seed"],
        transitions=run["transitions"],
        outcomes=_outcomes(labels, run["outcomes"]),
        ret=f"{run['mean_return']:.3f}",
        all_seeds=_cell([x["mean_return"] for x in runs]),
    )
    return [f"![log]({png})", "", summary, ""] + table(
        (*header(labels, "action", "count", "behavior_probability"), report_text(labels, "in_support", threshold=run["support_threshold"])),
        rows,
    )


def _report_offline(runs: list[dict], r: Render) -> list[str]:
    labels, names = r.labels, runs[0]["method_names"]
    ret = _stats([x["mean_return"] for x in runs])
    suc = _stats([x["success_rate"] for x in runs])
    optimum = [x["optimal_return"] for x in runs]
    png = r.figure(
        "offline",
        lambda ax: plot_offline_methods(
            names,
            ret["mean"],
            suc["mean"],
            ax,
            labels,
            return_spread=_spread(ret, runs),
            run_label=r.run_label,
            optimum=float(np.mean(optimum)),
        ),
    )
    learned = np.stack([nan_none(x["greedy_q_mean"]) for x in runs])
    true = np.stack([x["greedy_value_true"] for x in runs])
    fqe = np.stack([nan_none(x["fqe_logged_value"]) for x in runs])
    fqe = None if np.isnan(fqe).all() else fqe
    values_png = r.figure(
        "offline_values", lambda ax: plot_offline_values(names, learned, true, ax, labels, fqe=fqe, run_label=r.run_label), (9.5, 5)
    )
    logged_err, unlogged_err = (np.stack([nan_none(x[k]) for x in runs]) for k in ("q_logged_error", "q_unlogged_error"))
    above = np.stack([nan_none(x["above_max_share"]) for x in runs])
    errors_png = r.figure(
        "offline_q_errors", lambda ax: plot_q_errors(names, logged_err, unlogged_err, ax, labels, run_label=r.run_label), (9.5, 5)
    )

    def cell(column) -> str:
        return report_text(labels, "not_available") if np.isnan(column).any() else _cell(column)

    rows, mechanism = [], []
    for i, n in enumerate(names):
        rows.append(
            (
                display_name(labels, n),
                _cell(ret["values"][:, i]),
                _cell(suc["values"][:, i]),
                _per_seed(suc["values"][:, i]),
                cell(learned[:, i]),
                _cell(true[:, i]),
                report_text(labels, "not_available") if fqe is None else cell(fqe[:, i]),
                _cell([x["logged_pair_share"][i] for x in runs]),
            )
        )
        mechanism.append(
            (
                display_name(labels, n),
                cell(logged_err[:, i]),
                cell(unlogged_err[:, i]),
                _cell([1.0 - x["logged_pair_share"][i] for x in runs]),
                cell(above[:, i]),
            )
        )
    return (
        [
            f"![offline]({png})",
            "",
            report_text(labels, "optimum_intro", optimum=_cell(optimum)),
            "",
            f"![offline_values]({values_png})",
            "",
            report_text(labels, "values_intro"),
            "",
        ]
        + table(
            header(
                labels,
                "method",
                "mean_return",
                "success_rate",
                "success_per_seed",
                "logged_q",
                "true_value",
                "fqe_logged",
                "logged_pair_share",
            ),
            rows,
        )
        + ["", f"![offline_q_errors]({errors_png})", "", report_text(labels, "mechanism_intro"), ""]
        + table(header(labels, "method", "q_error_logged", "q_error_unlogged", "unlogged_greedy_share", "above_max_share"), mechanism)
        + side_study_lines(r, "cql_alpha")
    )


def _report_fqe(runs: list[dict], r: Render) -> list[str]:
    labels, names = r.labels, runs[0]["fqe_names"]
    est = _stats([x["fqe_values"] for x in runs])
    sim = _stats([x["simulated_values"] for x in runs])
    png = r.figure(
        "fqe",
        lambda ax: plot_fqe_vs_simulator(
            names,
            est["mean"],
            sim["mean"],
            ax,
            labels,
            fqe_spread=_spread(est, runs),
            simulated_spread=_spread(sim, runs),
            run_label=r.run_label,
        ),
    )
    rows = []
    for i, n in enumerate(names):
        err = est["values"][:, i] - sim["values"][:, i]
        rows.append((display_name(labels, n), _cell(est["values"][:, i]), _cell(sim["values"][:, i]), _cell(err), _cell(np.abs(err))))
    lines = [f"![fqe]({png})", "", report_text(labels, "fqe_intro", gamma=runs[0]["gamma"]), ""]
    lines += table(header(labels, "policy", "fqe_estimate", "simulator", "fqe_minus_simulator", "abs_error"), rows)
    return lines + ["", f"> {labels['fqe_warning']}"]


def _report_dt(runs: list[dict], r: Render) -> list[str]:
    labels, targets = r.labels, runs[0]["target_return"]
    achieved = _stats([x["mean_return"] for x in runs])
    se = np.stack([x["return_se"] for x in runs])
    pooled = np.concatenate([x["log_returns"] for x in runs])  # every seed's log: the histogram under the sweep
    codes = np.concatenate([x["log_outcome_codes"] for x in runs])
    png = r.figure(
        "dt",
        lambda axes: plot_dt_panel(
            targets,
            achieved["mean"],
            pooled,
            axes,
            labels,
            return_spread=_spread(achieved, runs),
            log_outcomes=[DT_LOG_GROUPS[c] for c in codes],
            run_label=r.run_label,
        ),
        (8, 7.5),
        rows=2,
        height_ratios=(3, 1.6),
    )

    def se_text(values) -> str:  # one evaluation episode has no sample sd
        return ", ".join(report_text(labels, "not_available") if np.isnan(v) else fmt(float(v), 3) for v in np.atleast_1d(values))

    rows = [
        (
            fmt(t, 2),
            _cell(achieved["values"][:, i]),
            _cell([x["success_rate"][i] for x in runs]),
            _per_seed(achieved["values"][:, i]),
            se_text(se[:, i]),
        )
        for i, t in enumerate(targets)
    ]
    groups = [log_return_groups(x["log_returns"], x["log_outcome_codes"]) for x in runs]
    group_rows = []
    for g in DT_LOG_GROUPS:
        lows = [s[g]["min"] for s in groups if s[g]["min"] is not None]
        highs = [s[g]["max"] for s in groups if s[g]["max"] is not None]
        span = (
            report_text(labels, "return_range", lo=f"{min(lows):.2f}", hi=f"{max(highs):.2f}")
            if lows
            else report_text(labels, "not_available")
        )
        group_rows.append(
            (display_name(labels, g), _cell([s[g]["count"] for s in groups], 1), _cell([s[g]["share"] for s in groups]), span)
        )
    worst = int(np.unravel_index(np.argmax(np.nan_to_num(se, nan=-1.0)), se.shape)[1])
    lines = [
        f"![dt]({png})",
        "",
        report_text(labels, "dt_intro", low=f"{pooled.min():.2f}", high=f"{pooled.max():.2f}"),
        report_text(labels, "dt_hist_intro"),
        "",
        report_text(labels, "dt_groups_intro"),
        "",
    ]
    lines += table(header(labels, "log_group", "episodes_per_seed", "share_of_log", "returns_all_seeds"), group_rows)
    low, high = dt_return_bounds()
    episodes = int(runs[0]["evaluation_episodes"])
    bound = standard_error_bound(low, high, episodes) if episodes > 1 else float("nan")
    lines += [
        "",
        report_text(
            labels,
            "dt_se_intro",
            episodes=episodes,
            se_max=se_text(np.nanmax(se) if episodes > 1 else np.nan),
            request=fmt(float(targets[worst]), 2),
            bound=se_text(bound),
            low=f"{low:.2f}",
            high=f"{high:.2f}",
        ),
        "",
    ]
    lines += table(
        header(labels, "requested_return", "achieved_return", "success_rate", "achieved_per_seed", "standard_error_per_seed"), rows
    )
    return lines


def _report_language(runs: list[dict], r: Render) -> list[str]:
    labels, names = r.labels, runs[0]["method_names"]
    em = _stats([x["exact_match"] for x in runs])
    held = _stats([x["heldout_exact_match"] for x in runs])
    png = r.figure(
        "language",
        lambda ax: plot_language_exact_match(
            names,
            em["mean"],
            ax,
            labels,
            match_spread=_spread(em, runs),
            run_label=r.run_label,
            heldout_exact_match=held["mean"],
            heldout_spread=_spread(held, runs),
        ),
        (8.8, 4.8),
    )
    rows = [
        (
            display_name(labels, n),
            _cell(em["values"][:, i]),
            _cell(held["values"][:, i]),
            _cell([x["mean_reward"][i] for x in runs]),
            _cell([x["heldout_mean_reward"][i] for x in runs]),
            _per_seed(em["values"][:, i]),
            _per_seed(held["values"][:, i]),
        )
        for i, n in enumerate(names)
    ]
    first = runs[0]
    lines = [
        f"![language]({png})",
        "",
        report_text(labels, "dataset", seed=first["seed"], dataset=first["dataset"]),
        report_text(labels, "language_heldout", prompts=", ".join(f"`{p}`" for p in HELDOUT_PROMPTS)),
        "",
    ]
    lines += table(
        header(
            labels,
            "method",
            "language_train_exact_match",
            "language_heldout_exact_match",
            "language_train_mean_reward",
            "language_heldout_mean_reward",
            "exact_match_per_seed",
            "language_heldout_exact_match_per_seed",
        ),
        rows,
    )
    for key, heading in (("examples", "greedy_responses"), ("heldout_examples", "language_heldout_responses")):
        lines += ["", report_text(labels, heading, seed=first["seed"]), ""]
        lines += table(
            (report_text(labels, "prompt"), *(display_name(labels, n) for n in names)),
            [
                (first[key][names[0]][j][0], *(f"`{first[key][n][j][1]}` ({first[key][n][j][2]:.1f})" for n in names))
                for j in range(len(first[key][names[0]]))
            ],
        )
    return lines


REPORTERS = {
    "environment": _report_environment,
    "dagger": _report_dagger,
    "dqn": _report_dqn,
    "log": _report_log,
    "offline": _report_offline,
    "fqe": _report_fqe,
    "dt": _report_dt,
    "language": _report_language,
}


def claims_lines(results: dict[str, list[dict]], labels: Mapping[str, str]) -> tuple[list[str], dict]:
    """Per-seed check of the lab's two claims (only for the sections that ran)."""
    lines, verdicts = [], {}
    if "dt" in results:
        rows, checked = [], {"rise_inside": [], "excess_above": []}
        for r in results["dt"]:
            try:
                c = dt_claims(
                    r["target_return"],
                    r["mean_return"],
                    float(r["data_return_range"][1]),
                    standard_error=np.nan_to_num(r["return_se"], nan=0.0),
                )
            except ValueError:  # the requests do not straddle the log's best return
                rows.append(
                    (
                        r["seed"],
                        fmt(float(r["data_return_range"][1]), 2),
                        report_text(labels, "not_checkable"),
                        "",
                        "",
                        "",
                        "",
                        _yes_no(labels, False),
                        _yes_no(labels, False),
                    )
                )
                continue
            checked["rise_inside"].append(float(c["rise_inside"]))
            checked["excess_above"].append(float(c["excess_above"]))
            rows.append(
                (
                    r["seed"],
                    fmt(float(r["data_return_range"][1]), 2),
                    fmt(c["slope_inside"]),
                    fmt(c["rise_inside"]),
                    fmt(c["top_inside_request"], 2),
                    fmt(c["excess_above"]),
                    fmt(c["excess_allowance"]),
                    _yes_no(labels, c["rises"]),
                    _yes_no(labels, c["saturates"]),
                )
            )
        verdicts["dt"] = {key: list(interval(values)) if len(values) >= 2 else None for key, values in checked.items()}
        shown = {
            key: format_interval(values, 2, signed=True) if len(values) >= 2 else report_text(labels, "one_seed")
            for key, values in checked.items()
        }
        lines += ["", report_text(labels, "dt_claim", rise=shown["rise_inside"], excess=shown["excess_above"]), ""]
        lines += table(
            header(
                labels,
                "train_seed",
                "log_max_return",
                "slope_inside",
                "rise_inside",
                "top_inside_request",
                "excess_above",
                "excess_allowance",
                "rises",
                "saturates",
            ),
            rows,
        )
    return lines, verdicts
