"""DAgger vs behavior cloning at an equal expert-label budget, over seeds.

    .venv/bin/python bench/dagger_budget.py [--seeds 17 18 19 20 21] [--figure out.png]
        [--smoke] [--layout wide|small] [--max-steps 100] [--repeated-labels] [--slip 0.1]
        [--demo-slip 0.0|same] [--beta 0.5] [--constant-beta] [--initial-labels 40] [--labels-per-round 40]

Runs :func:`reference_impl.imitation.label_budget_curve` for every seed and prints
one table: for each budget (expert labels), BC's and DAgger's success rate per seed
with mean ± sd, DAgger minus BC with its paired 95 % interval, the distinct labeled
states and the share of each learner's own visits to states absent from its labels. ``--figure`` draws success
against the number of expert labels (mean, ± sd band, each seed as a dot, the
expert's success as the ceiling). ``--smoke`` is a seconds-long run of one seed.
The setting flags override :class:`~reference_impl.imitation.LabelBudgetConfig`.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere in the checkout

from reference_impl.imitation import LABEL_BUDGETS, LabelBudgetConfig, label_budget_curve
from reference_impl.keydoor import LAYOUT, WIDE_LAYOUT
from reference_impl.stats import paired_difference

LAYOUTS = {"wide": WIDE_LAYOUT, "small": LAYOUT}

SMOKE_BUDGETS = (20, 60)
SMOKE_CONFIG = dict(epochs=5, evaluation_episodes=40, initial_labels=20, labels_per_round=20)


def run_curves(seeds, budgets, config: LabelBudgetConfig) -> list[dict]:
    """One :func:`label_budget_curve` per seed."""
    return [label_budget_curve(seed, budgets, config) for seed in seeds]


def per_budget(runs: list[dict], key: str) -> np.ndarray:
    """(seeds, budgets) array of one result list."""
    return np.array([run[key] for run in runs], dtype=float)


def format_table(runs: list[dict]) -> str:
    """The printed table: budget | BC per seed, mean ± sd | DAgger per seed, mean ± sd | paired
    difference | distinct labeled states and share of visits to unlabeled states (means over seeds)."""
    bc, dagger = per_budget(runs, "bc_success_rate"), per_budget(runs, "dagger_success_rate")
    distinct = {key: per_budget(runs, f"{key}_distinct_states").mean(axis=0) for key in ("bc", "dagger")}
    unseen = {key: per_budget(runs, f"{key}_unseen_share").mean(axis=0) for key in ("bc", "dagger")}
    seeds = [run["seed"] for run in runs]
    rows = []
    for i, budget in enumerate(runs[0]["budgets"]):
        cells = [f"{budget:>6}"]
        for values in (bc[:, i], dagger[:, i]):
            sd = values.std(ddof=1) if len(values) > 1 else 0.0
            cells.append(" ".join(f"{v:4.2f}" for v in values) + f"   {values.mean():.2f} ± {sd:.2f}")
        if len(seeds) > 1:
            d = paired_difference(dagger[:, i], bc[:, i])
            cells.append(f"{d['effect']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}] {d['verdict']}")
        else:
            cells.append("n/a")
        cells.append(f"{distinct['bc'][i]:.0f} / {distinct['dagger'][i]:.0f}")
        cells.append(f"{unseen['bc'][i]:.2f} / {unseen['dagger'][i]:.2f}")
        rows.append(cells)
    header = [
        "labels",
        "BC per seed, mean ± sd",
        "DAgger per seed, mean ± sd",
        "DAgger − BC [95 % CI]",
        "distinct states BC / DAgger",
        "visits to unlabeled states BC / DAgger",
    ]
    widths = [max(len(h), *(len(r[j]) for r in rows)) for j, h in enumerate(header)]
    lines = [f"success rate, seeds {seeds}; expert (ceiling) " + " ".join(f"{run['expert_success_rate']:.2f}" for run in runs)]
    lines += [" | ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    return "\n".join(lines)


def draw(runs: list[dict], path: Path, title: str) -> None:
    """Success vs expert labels: mean line, ± sd band, seeds as dots, expert ceiling."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    budgets = np.array(runs[0]["budgets"])
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for key, label, color, shift in (
        ("bc", "BC (expert demonstrations)", "tab:blue", -0.01),
        ("dagger", "DAgger (demonstrations + own states)", "tab:orange", 0.01),
    ):
        values = per_budget(runs, f"{key}_success_rate")
        mean, sd = values.mean(axis=0), values.std(axis=0, ddof=1) if len(runs) > 1 else np.zeros(len(budgets))
        ax.plot(budgets, mean, "-o", color=color, label=f"{label}, mean ± sd")
        ax.fill_between(budgets, mean - sd, mean + sd, color=color, alpha=0.2)
        span = budgets.max() - budgets.min() or 1
        for row in values:
            ax.plot(budgets + shift * span, row, ".", color=color, alpha=0.5)
    expert = np.mean([run["expert_success_rate"] for run in runs])
    ax.axhline(expert, color="0.4", linestyle="--", label=f"expert (mean {expert:.2f})")
    ax.set_xlabel("expert labels (state, expert action) in the training set")
    ax.set_ylabel("success rate (greedy policy)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _demo_slip(text: str):
    """``--demo-slip``: a probability, or 'same' (None: demonstrations slip like the learner)."""
    return SAME if text == "same" else float(text)


SAME = "same"  # sentinel: --demo-slip same -> demonstration_slip_probability=None


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[17, 18, 19, 20, 21])
    parser.add_argument("--budgets", type=int, nargs="+")
    parser.add_argument("--figure", type=Path, help="write the figure (PNG) here")
    parser.add_argument("--smoke", action="store_true", help="one seed, two budgets, short training")
    parser.add_argument("--layout", choices=sorted(LAYOUTS), help="the grid (default: the config's, wide)")
    parser.add_argument("--max-steps", type=int, dest="max_steps")
    parser.add_argument(
        "--repeated-labels",
        action="store_const",
        const=False,
        dest="distinct_labels",
        help="count every visit as a label (default: distinct states only)",
    )
    parser.add_argument("--slip", type=float, dest="slip_probability")
    parser.add_argument(
        "--demo-slip",
        type=_demo_slip,
        dest="demonstration_slip_probability",
        help="slip probability while the expert demonstrates, or 'same' as --slip",
    )
    parser.add_argument("--beta", type=float)
    parser.add_argument(
        "--constant-beta",
        action="store_const",
        const=False,
        dest="decay_beta",
        help="the expert acts with probability beta in every round (default: beta**round)",
    )
    parser.add_argument("--initial-labels", type=int, dest="initial_labels")
    parser.add_argument("--labels-per-round", type=int, dest="labels_per_round")
    args = parser.parse_args(argv)

    overrides = {
        k: (None if v == SAME else v)
        for k in (
            "slip_probability",
            "demonstration_slip_probability",
            "beta",
            "decay_beta",
            "initial_labels",
            "labels_per_round",
            "max_steps",
            "distinct_labels",
        )
        if (v := getattr(args, k)) is not None
    }
    if args.layout:
        overrides["layout"] = LAYOUTS[args.layout]
    seeds = args.seeds[:1] if args.smoke else args.seeds
    budgets = args.budgets or (SMOKE_BUDGETS if args.smoke else LABEL_BUDGETS)
    config = LabelBudgetConfig(**{**(SMOKE_CONFIG if args.smoke else {}), **overrides})
    setting = {k: v for k, v in dataclasses.asdict(config).items() if k not in ("bc", "layout")}
    setting["layout"] = next(name for name, rows in LAYOUTS.items() if rows == config.layout)
    print(f"setting: {setting}; bc: {config.bc}")

    wall, cpu = time.perf_counter(), time.process_time()
    runs = run_curves(seeds, budgets, config)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(format_table(runs))
    print(f"{len(seeds)} seed(s) x {len(budgets)} budgets: wall {wall:.1f} s, CPU {cpu:.1f} s")
    if args.figure:
        demo = config.demonstration_slip_probability
        slips = f"slip {config.slip_probability}" + ("" if demo is None else f", demonstrations slip {demo}")
        draw(runs, args.figure, f"Equal expert-label budget, {len(seeds)} seed(s), {slips}")
        print(f"figure: {args.figure}")


if __name__ == "__main__":
    main()
