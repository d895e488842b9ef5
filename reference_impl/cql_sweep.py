"""CQL's penalty weight alpha swept on the offline section's log, from naive DQN (alpha = 0) to cloning-like (issue 47, item 4).

For each alpha of a log-spaced grid (0 included) and each *report* seed, discrete CQL is trained as the lab's offline section trains it
(:func:`reference_impl.offline.offline_experiment`: same log, epochs, config but alpha, training seeds), beside behavior cloning and naive
DQN. Every greedy policy is measured exactly on KeyDoorGrid's tabular model (return, success, learned minus true Q on logged and unlogged
pairs, shares of greedy actions that are logged / cloning's). The grid is chosen on *design* offsets by a rule in code
(:func:`choose_report_alphas`); reported numbers come from disjoint *report* offsets. Intervals (95 %): one-sample t for means,
percentile bootstrap for shares (inside [0, 1]), paired t for differences, worded by :func:`reference_impl.stats.verdict`.

``python -m reference_impl.cql_sweep --out docs/lab-results [--seeds N] [--quick] [--render-only]`` writes ``cql_alpha.json``, the
reports ``cql_alpha.md`` and ``cql_alpha.ru.md`` and the figures ``cql_alpha.png`` and ``cql_alpha.ru.png``.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import platform
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from reference_impl import stats
from reference_impl.common import progress, seed_everything
from reference_impl.course_run import interval
from reference_impl.fqe import exact_action_values
from reference_impl.keydoor import KeyDoorGrid
from reference_impl.lab.design import REPORT_FIRST_OFFSET
from reference_impl.lab.profiles import PROFILE_PARAMS
from reference_impl.offline_data import collect_offline_dataset, to_arrays

# fmt: off
from reference_impl.offline_methods import (
    BehaviorCloningConfig,
    CQLConfig,
    DQNConfig,
    GreedyPolicy,
    OfflineLog,
    train_behavior_cloning,
    train_cql,
    train_offline_dqn,
)
from reference_impl.rollout import rollout
from reference_impl.stats import paired_difference, verdict

__all__ = [
    "LAB_OFFSETS", "DESIGN_OFFSETS", "REPORT_OFFSETS", "DESIGN_ALPHAS", "SweepSettings", "quick_settings", "alpha_key",
    "logged_mask", "q_error_split", "logged_greedy_share", "agreement_share", "greedy_gap", "gap_zero_share", "start_outcomes",
    "bootstrap_mean_interval", "summarize", "choose_report_alphas", "load_log", "measure_policy", "run_seed", "run_sweep", "dump_json",
    "demonstrator_outcomes", "render_report", "alpha_positions", "draw_figure", "write_outputs", "main",
]
# fmt: on

#: Seed offsets the lab's own offline section runs (``m5 lab --seeds 10``: offsets 0..9).
LAB_OFFSETS: tuple[int, ...] = tuple(range(REPORT_FIRST_OFFSET, REPORT_FIRST_OFFSET + 10))  # the lab report's block
#: Offsets looked at while choosing the alpha grid (never reported).
DESIGN_OFFSETS: tuple[int, ...] = (90, 91, 92)
#: Fresh offsets every reported number comes from.
REPORT_OFFSETS: tuple[int, ...] = tuple(range(100, 110))
#: The grid searched on the design seeds: 0 and half-decades from 0.01 to 100.
DESIGN_ALPHAS: tuple[float, ...] = (0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
#: The grid rule: report up to the first alpha whose greedy policy agrees with cloning's on this share
#: of the log's states (mean over the design seeds), and at least up to MIN_TOP_ALPHA.
AGREEMENT_TARGET = 0.9
MIN_TOP_ALPHA = 10.0
CONFIDENCE = 0.95
#: Measures of a Q learner (CQL, naive DQN); cloning has the first four only.
MEASURES = ("return", "success", "logged_share", "bc_agreement", "logged_error", "unlogged_error", "greedy_gap", "gap_zero_share")
#: Measures that are shares (bootstrap intervals, inside [0, 1]).
SHARES = frozenset({"success", "logged_share", "bc_agreement", "gap_zero_share"})


@dataclass(frozen=True)
class SweepSettings:
    """What one sweep runs. Defaults: the lab's full profile (log size, epochs) and the seeds above."""

    dataset_episodes: int = PROFILE_PARAMS["full"].offline.dataset_episodes
    train_epochs: int = PROFILE_PARAMS["full"].offline.train_epochs
    base_seed: int = PROFILE_PARAMS["full"].offline.seed
    log_profile: str = "mediocre"
    design_offsets: tuple[int, ...] = DESIGN_OFFSETS
    report_offsets: tuple[int, ...] = REPORT_OFFSETS
    design_alphas: tuple[float, ...] = DESIGN_ALPHAS
    agreement_target: float = AGREEMENT_TARGET
    min_top_alpha: float = MIN_TOP_ALPHA
    bootstrap_resamples: int = 10_000
    bootstrap_seed: int = 20_240_547
    cql: CQLConfig = field(default_factory=CQLConfig)

    def __post_init__(self) -> None:
        if set(self.design_offsets) & set(self.report_offsets) or len(self.report_offsets) < 2:
            raise ValueError(
                f"SweepSettings: design and report offsets overlap or < 2 report offsets: {self.design_offsets}, {self.report_offsets}"
            )
        if 0.0 not in self.design_alphas or list(self.design_alphas) != sorted(self.design_alphas):
            raise ValueError("SweepSettings: `design_alphas` must be increasing and include 0")


def quick_settings() -> SweepSettings:
    """A tiny sweep for tests and ``--quick``: 2 alphas, 30 episodes, 2 epochs, offsets 80-82 (no other block's)."""
    return SweepSettings(
        dataset_episodes=30, train_epochs=2, design_offsets=(80,), report_offsets=(81, 82), design_alphas=(0.0, 1.0), min_top_alpha=1.0
    )


def alpha_key(alpha: float) -> str:
    """The JSON key of an alpha: ``f"{alpha:g}"`` ("0", "0.01", "10")."""
    return f"{float(alpha):g}"


# --------------------------------------------------------------------------- measures (pure)
def logged_mask(states: np.ndarray, actions: np.ndarray, n_actions: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct states D sorted, first row of each, bool (|D|, A) with L[i, a] = the log holds (D[i], a))."""
    states, actions = np.asarray(states, dtype=np.int64), np.asarray(actions, dtype=np.int64)
    distinct, first = np.unique(states, return_index=True)
    mask = np.zeros((len(distinct), n_actions), dtype=bool)
    mask[np.searchsorted(distinct, states), actions] = True
    return distinct, first, mask


def q_error_split(q_learned: np.ndarray, q_true: np.ndarray, logged: np.ndarray) -> tuple[float, float]:
    """(mean of Q - Q^pi over logged pairs, over unlogged pairs); NaN for an empty set. All (|D|, A)."""
    error = np.asarray(q_learned, dtype=np.float64) - np.asarray(q_true, dtype=np.float64)
    logged = np.asarray(logged, dtype=bool)
    on = float(error[logged].mean()) if logged.any() else float("nan")
    off = float(error[~logged].mean()) if (~logged).any() else float("nan")
    return on, off


def logged_greedy_share(greedy: np.ndarray, logged: np.ndarray) -> float:
    """mean over distinct states i of L[i, greedy_i]: how often the greedy action is one the log holds there."""
    greedy = np.asarray(greedy, dtype=np.int64)
    return float(np.asarray(logged, dtype=bool)[np.arange(len(greedy)), greedy].mean())


def agreement_share(greedy: np.ndarray, other: np.ndarray) -> float:
    """mean over distinct states of [greedy_i == other_i] (e.g. other = cloning's greedy actions)."""
    return float(np.mean(np.asarray(greedy) == np.asarray(other)))


def greedy_gap(q_learned_rows: np.ndarray, q_true_rows: np.ndarray, greedy_rows: np.ndarray) -> float:
    """mean over the log's rows (visits) of Q(s, pi(s)) - Q^pi(s, pi(s)) = Q(s, pi(s)) - V^pi(s), pi greedy.

    The lab report's "learned value of its greedy action minus the true value of its policy".
    """
    rows = np.arange(len(greedy_rows))
    g = np.asarray(greedy_rows, dtype=np.int64)
    return float(np.mean(np.asarray(q_learned_rows)[rows, g] - np.asarray(q_true_rows)[rows, g]))


def gap_zero_share(greedy: np.ndarray, counts: np.ndarray) -> float:
    """Share of distinct states where hat-pi_beta(pi(s)|s) = 1 (the log holds only the greedy action there).

    counts (|D|, A) are the log's action counts per state. For a deterministic pi the gap term of
    Kumar et al. (2020), Theorem 3.2, E_pi[pi / hat-pi_beta - 1](s) = 1 / hat-pi_beta(pi(s)|s) - 1,
    is zero exactly at these states (infinite where pi(s) is unlogged, positive elsewhere).
    """
    counts = np.asarray(counts, dtype=np.float64)
    g = np.asarray(greedy, dtype=np.int64)
    taken = counts[np.arange(len(g)), g]
    return float(np.mean(taken == counts.sum(axis=1)))


def start_outcomes(env: KeyDoorGrid, policy: np.ndarray | Callable) -> tuple[float, float]:
    """(expected return, success probability) of a deterministic policy on a deterministic env, exactly:
    the means over one rollout from each start cell (the environment draws the start uniformly).

    ``policy``: actions (S,) indexed by ``env.state_index``, or a callable ``policy(obs, info) -> int``.
    """
    if env.slip_probability:
        raise ValueError("start_outcomes: `env` must be deterministic (slip_probability == 0)")
    if not callable(policy):
        table = np.asarray(policy, dtype=np.int64)
        policy = lambda obs, info: int(table[env.state_index(obs)])  # noqa: E731
    episodes = [rollout(env, policy, seed=0, start=start) for start in env.start_positions]
    return float(np.mean([ep.return_ for ep in episodes])), float(np.mean([ep.outcome == "goal" for ep in episodes]))


def bootstrap_mean_interval(values: Sequence[float], resamples: int, seed: int, confidence: float = CONFIDENCE) -> tuple[float, ...]:
    """:func:`stats.bootstrap_mean_interval` with this study's generator (``default_rng(seed)``)."""
    return stats.bootstrap_mean_interval(values, np.random.default_rng(seed), resamples, confidence)


def summarize(values: Sequence[float], share: bool, resamples: int, seed: int) -> dict:
    """{"mean", "low", "high", "n", "method"}: bootstrap for shares, one-sample t otherwise (NaNs left out)."""
    x = [v for v in values if v is not None and math.isfinite(v)]
    mean, low, high = bootstrap_mean_interval(x, resamples, seed) if share else interval(x)
    return {"mean": mean, "low": low, "high": high, "n": len(x), "method": "bootstrap percentile" if share else "one-sample t"}


def choose_report_alphas(design_alphas: Sequence[float], agreement: Sequence[float], target: float, min_top: float) -> list[float]:
    """The report grid: design alphas up to max(min_top, first alpha with mean cloning agreement >= target)."""
    reached = [a for a, share in zip(design_alphas, agreement) if share >= target]
    top = max(min_top, reached[0]) if reached else max(design_alphas)
    return [float(a) for a in design_alphas if a <= top]


# --------------------------------------------------------------------------- one seed
def measure_policy(env: KeyDoorGrid, model: dict, log: dict, policy: GreedyPolicy, net, bc_greedy: np.ndarray | None, gamma: float) -> dict:
    """return, success, logged_share, bc_agreement of a greedy policy, plus (``net`` a Q network) logged_error, unlogged_error,
    greedy_gap, gap_zero_share; ``log`` is :func:`load_log`'s index, ``bc_greedy`` cloning's actions on its distinct states."""
    table = policy.actions(model["observations"])
    ret, success = start_outcomes(env, table)
    greedy = table[log["distinct"]]
    out = {"return": ret, "success": success, "logged_share": logged_greedy_share(greedy, log["mask"])}
    out["bc_agreement"] = None if bc_greedy is None else agreement_share(greedy, bc_greedy)
    if net is None:
        return out
    probs = np.zeros((len(table), env.action_dim))
    probs[np.arange(len(table)), table] = 1.0
    q_true = exact_action_values(model, probs, gamma)
    q_learned = GreedyPolicy(net).scores(model["observations"])  # float64 (S, A)
    on, off = q_error_split(q_learned[log["distinct"]], q_true[log["distinct"]], log["mask"])
    rows = log["states"]
    out.update(
        logged_error=on,
        unlogged_error=off,
        greedy_gap=greedy_gap(q_learned[rows], q_true[rows], table[rows]),
        gap_zero_share=gap_zero_share(greedy, log["counts"]),
    )
    return out


def load_log(env: KeyDoorGrid, seed: int, settings: SweepSettings) -> tuple[OfflineLog, dict]:
    """The offline section's log for ``seed`` (as offline_experiment builds it) and its index: row states, distinct states,
    logged mask and action counts (|D|, A), and a summary ``describe``."""
    seed_everything(seed)
    episodes, transitions = collect_offline_dataset(seed, settings.dataset_episodes, settings.log_profile, env=env)
    arrays = to_arrays(transitions)
    states = np.asarray([env.state_index(o) for o in arrays["observations"]], dtype=np.int64)
    distinct, _, mask = logged_mask(states, arrays["actions"], env.action_dim)
    counts = np.zeros(mask.shape)
    np.add.at(counts, (np.searchsorted(distinct, states), arrays["actions"]), 1.0)
    info = {"states": states, "distinct": distinct, "mask": mask, "counts": counts}
    info["describe"] = {
        "transitions": len(states),
        "states": len(distinct),
        "single_action_share": float(np.mean(mask.sum(axis=1) == 1)),
        "mean_return": float(np.mean([ep.return_ for ep in episodes])),
        "goal_share": float(np.mean([ep.outcome == "goal" for ep in episodes])),
    }
    return OfflineLog.from_arrays(arrays), info


def run_seed(
    seed: int, alphas: Sequence[float], settings: SweepSettings, with_dqn: bool = True, tick: Callable[[], None] | None = None
) -> dict:
    """BC, (naive DQN) and CQL at each alpha on the log of ``seed``: {"log", "bc", "naive_dqn", "cql": {key: measures}}."""
    env, tick = KeyDoorGrid(), tick or (lambda: None)
    model = env.tabular_model()
    log, info = load_log(env, seed, settings)
    n_actions = env.action_dim
    bc = train_behavior_cloning(log, n_actions, epochs=settings.train_epochs, seed=seed * 100, config=BehaviorCloningConfig())
    bc_greedy = bc.policy.actions(model["observations"])[info["distinct"]]
    out = {"log": info["describe"], "bc": measure_policy(env, model, info, bc.policy, None, None, settings.cql.gamma)}
    tick()
    if with_dqn:
        dqn = train_offline_dqn(log, n_actions, epochs=settings.train_epochs, seed=seed * 100 + 1, config=DQNConfig())
        out["naive_dqn"] = measure_policy(env, model, info, dqn.policy, dqn.networks["q"], bc_greedy, DQNConfig().gamma)
        tick()
    out["cql"] = {}
    for alpha in alphas:
        run = train_cql(log, n_actions, epochs=settings.train_epochs, seed=seed * 100 + 3, config=replace(settings.cql, alpha=float(alpha)))
        out["cql"][alpha_key(alpha)] = measure_policy(env, model, info, run.policy, run.networks["q"], bc_greedy, settings.cql.gamma)
        tick()
    return out


# --------------------------------------------------------------------------- the sweep
def _stack(runs: Sequence[dict], path: Sequence[str], measure: str) -> list:
    """Per-seed values of ``measure`` at ``runs[i][path[0]][path[1]]...``."""
    return [functools.reduce(lambda node, key: node[key], path, run)[measure] for run in runs]


def _comparison(a: Sequence[float], b: Sequence[float]) -> dict:
    """stats.paired_difference(a, b) as plain floats with its verdict."""
    d = paired_difference(a, b, CONFIDENCE)
    return {"effect": d["effect"], "low": d["low"], "high": d["high"], "n_seeds": d["n_seeds"], "verdict": d["verdict"]}


def run_sweep(settings: SweepSettings = SweepSettings(), show_progress: bool | None = None) -> dict:
    """Design phase (choose the grid), then the report phase on fresh seeds; returns the JSON-ready dict."""
    design_seeds = [settings.base_seed + o for o in settings.design_offsets]
    report_seeds = [settings.base_seed + o for o in settings.report_offsets]
    n_design = len(design_seeds) * (1 + len(settings.design_alphas))
    # The report grid is unknown before the design phase: the bar's total assumes the whole design grid.
    bar = progress(range(n_design + len(report_seeds) * (2 + len(settings.design_alphas))), desc="cql alpha sweep", enabled=show_progress)
    steps = iter(bar)

    def tick() -> None:
        next(steps, None)

    design_runs = [run_seed(s, settings.design_alphas, settings, with_dqn=False, tick=tick) for s in design_seeds]
    keys = [alpha_key(a) for a in settings.design_alphas]
    design_means = {k: {m: float(np.nanmean(_stack(design_runs, ("cql", k), m))) for m in MEASURES} for k in keys}
    agreement = [design_means[k]["bc_agreement"] for k in keys]
    chosen = choose_report_alphas(settings.design_alphas, agreement, settings.agreement_target, settings.min_top_alpha)
    report_runs = [run_seed(s, chosen, settings, tick=tick) for s in report_seeds]
    if hasattr(bar, "close"):
        bar.close()
    return _assemble(settings, design_seeds, report_seeds, design_runs, design_means, chosen, report_runs)


def _assemble(settings, design_seeds, report_seeds, design_runs, design_means, chosen, report_runs) -> dict:
    """The JSON document: settings, seeds, the design search, per-seed runs, summaries and comparisons."""
    b = settings.bootstrap_resamples
    keys = [alpha_key(a) for a in chosen]

    def summary(path: Sequence[str], measures: Sequence[str]) -> dict:
        return {m: summarize(_stack(report_runs, path, m), m in SHARES, b, settings.bootstrap_seed) for m in measures}

    methods = {"bc": ("return", "success", "logged_share"), "naive_dqn": MEASURES}
    per_seed = {name: {m: _stack(report_runs, (name,), m) for m in ms} for name, ms in methods.items()}
    per_seed["cql"] = {k: {m: _stack(report_runs, ("cql", k), m) for m in MEASURES} for k in keys}
    summaries = {name: summary((name,), ms) for name, ms in methods.items()}
    summaries["cql"] = {k: summary(("cql", k), MEASURES) for k in keys}
    summaries["log"] = summary(("log",), ("transitions", "states", "mean_return"))
    summaries["log"]["goal_share"] = summarize(_stack(report_runs, ("log",), "goal_share"), True, b, settings.bootstrap_seed)
    summaries["log"]["single_action_share"] = summarize(
        _stack(report_runs, ("log",), "single_action_share"), True, b, settings.bootstrap_seed
    )
    zero = per_seed["cql"][keys[0]]
    comparisons = {
        target: {
            k: {m: _comparison(per_seed["cql"][k][m], ref[m]) for m in ("return", "success")}
            for k in keys
            if not (target == "vs_alpha0" and k == keys[0])
        }
        for target, ref in (("vs_alpha0", zero), ("vs_bc", per_seed["bc"]))
    }
    comparisons["naive_dqn_vs_alpha0"] = {m: _comparison(per_seed["naive_dqn"][m], zero[m]) for m in ("return", "success")}
    cql = asdict(settings.cql)
    cql.pop("alpha")
    return {
        "what": "CQL's penalty weight alpha swept on the lab's offline log (reference_impl.cql_sweep)",
        # fmt: off
        "settings": {
            "profile": "full" if settings.dataset_episodes == PROFILE_PARAMS["full"].offline.dataset_episodes else "custom",
            "dataset_episodes": settings.dataset_episodes,
            "train_epochs": settings.train_epochs,
            "log_profile": settings.log_profile,
            "cql_config_except_alpha": cql,
            "training_seeds": "cloning 100*seed, naive DQN 100*seed+1, CQL 100*seed+3 (as the lab's offline section)",
            "confidence": CONFIDENCE,
            "bootstrap_resamples": b,
            "bootstrap_seed": settings.bootstrap_seed,
        },
        "seeds": {
            "base_seed": settings.base_seed,
            "lab_offsets": list(LAB_OFFSETS),
            "design_offsets": list(settings.design_offsets),
            "report_offsets": list(settings.report_offsets),
            "design_seeds": design_seeds,
            "report_seeds": report_seeds,
        },
        "design": {
            "alphas": [float(a) for a in settings.design_alphas],
            "agreement_target": settings.agreement_target,
            "min_top_alpha": settings.min_top_alpha,
            "mean_by_alpha": design_means,
            "per_seed": [{"bc": r["bc"], "cql": r["cql"]} for r in design_runs],
            "bc_mean": {m: float(np.mean(_stack(design_runs, ("bc",), m))) for m in ("return", "success", "logged_share")},
            "chosen_alphas": [float(a) for a in chosen],
        },
        # fmt: on
        "report": {"alphas": [float(a) for a in chosen], "per_seed": per_seed, "log_per_seed": [r["log"] for r in report_runs]},
        "summary": summaries,
        "comparisons": comparisons,
        "demonstrators": demonstrator_outcomes(),
        "versions": _versions(),
    }


def demonstrator_outcomes() -> dict:
    """Exact return and success of the log's two planners without noise (one rollout per start cell)."""
    from reference_impl.expert import ExpertPolicy, KeyForgettingPolicy  # why: only this summary needs the planners

    env = KeyDoorGrid()
    planners = (("expert", ExpertPolicy(env)), ("forgets_key", KeyForgettingPolicy(env)))
    return {name: dict(zip(("return", "success"), start_outcomes(env, planner))) for name, planner in planners}


def _versions() -> dict:
    """Python, numpy and torch versions (the sweep is deterministic on one machine and these)."""
    import torch  # why: already loaded by offline_methods; imported here only to read its version

    return {"python": platform.python_version(), "numpy": np.__version__, "torch": torch.__version__}


# --------------------------------------------------------------------------- files
def _plain(node):
    """``node`` with every non-finite float as None (strict JSON)."""
    if isinstance(node, (Mapping, list, tuple)):
        return {str(k): _plain(v) for k, v in node.items()} if isinstance(node, Mapping) else [_plain(v) for v in node]
    return None if isinstance(node, float) and not math.isfinite(node) else node


def dump_json(data: dict) -> str:
    """The JSON text written to ``cql_alpha.json`` (strict JSON, stable key order, trailing newline)."""
    return json.dumps(_plain(data), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


# --------------------------------------------------------------------------- report text
#: The report's text: ``cql_sweep.toml`` beside this module, one table per language.
TEXT_FILE = Path(__file__).resolve().with_suffix(".toml")
#: The report's text per language, from that file (same keys in each table).
_TEXT = {lang: dict(table) for lang, table in tomllib.loads(TEXT_FILE.read_text(encoding="utf-8")).items()}


def _num(x: float, digits: int = 2, signed: bool = False) -> str:
    """A number as the report prints it (``-0.00`` shown as ``0.00``)."""
    text = f"{x:{'+' if signed else ''}.{digits}f}"
    return text.replace("-0.00", "0.00") if text.lstrip("+-") == "0" + "." + "0" * digits else text


def _interval(s: dict, digits: int = 2, signed: bool = False) -> str:
    """``mean [low, high]`` of a summary dict."""
    return f"{_num(s['mean'], digits, signed)} [{_num(s['low'], digits, signed)}, {_num(s['high'], digits, signed)}]"


def _cmp(c: dict, lang: str) -> str:
    """``+0.12 [-0.03, +0.27], no detectable difference``: a paired difference with its verdict (re-derived from its interval)."""
    word = verdict(c["low"], c["high"])
    return f"{_interval({'mean': c['effect'], **c}, 2, True)}, {_TEXT[lang]['verdict.' + word]}"


def _alphas(values: Sequence[str], lang: str) -> str:
    return ", ".join(values) if values else _TEXT[lang]["none"]


def _row(name: str, summary: dict) -> str:
    cells = [_interval(summary[m], 2, m.endswith("error")) if m in summary else "—" for m in MEASURES[:2] + MEASURES[4:6] + MEASURES[2:4]]
    return f"| {name} | " + " | ".join(cells) + " |"


def _fields(data: dict, lang: str) -> dict:
    """Every placeholder of the report's paragraphs, formatted from ``data`` (the log mixture's weights from
    :mod:`reference_impl.offline_data`, whose constants built the log)."""
    from reference_impl import offline_data  # why: the mixture's constants, only for the report's description of the log

    st, sm, cmp, seeds, design, demo = (data[k] for k in ("settings", "summary", "comparisons", "seeds", "design", "demonstrators"))
    keys = [alpha_key(a) for a in data["report"]["alphas"]]
    cq, top, lg = sm["cql"], keys[-1], sm["log"]
    ref = alpha_key(1.0) if alpha_key(1.0) in keys else top
    w = dict(zip(offline_data.MEDIOCRE_DEMONSTRATORS, offline_data.MEDIOCRE_WEIGHTS))

    def span(xs: Sequence[int]) -> str:
        return f"{xs[0]}–{xs[-1]}" if len(xs) > 2 else ", ".join(map(str, xs))

    def said(target: str, k: str, m: str) -> str:
        return verdict(cmp[target][k][m]["low"], cmp[target][k][m]["high"])

    def alike(target: str, ks: Sequence[str]) -> list[str]:
        return [k for k in ks if said(target, k, "return") == said(target, k, "success") == "no detectable difference"]

    f = dict(alphas=", ".join(keys), profile=st["profile"], episodes=st["dataset_episodes"], epochs=st["train_epochs"], top=top)
    f["n"] = cq[top]["return"]["n"]
    f.update(config=", ".join(f"{k} = {v}" for k, v in st["cql_config_except_alpha"].items()), gamma=st["cql_config_except_alpha"]["gamma"])
    f.update(resamples=st["bootstrap_resamples"], starts=len(KeyDoorGrid().start_positions))
    f.update(w_expert=w["expert"], w_forget=w["forgets the key"], w_random=w["random"], eps=offline_data.MEDIOCRE_EPSILON)
    f.update(transitions=_interval(lg["transitions"], 0), states=_interval(lg["states"], 1), log_return=_interval(lg["mean_return"]))
    f.update(log_goal=_interval(lg["goal_share"]), fk_return=_num(demo["forgets_key"]["return"]))
    f["fk_success"] = _num(demo["forgets_key"]["success"])
    f.update(ex_return=_num(demo["expert"]["return"]), ex_success=_num(demo["expert"]["success"]), lab=span(LAB_OFFSETS))
    # The lab's offsets as they are now (the JSON records those of the time of the sweep).
    f.update(lab_seeds=span([seeds["base_seed"] + o for o in LAB_OFFSETS]), design=span(seeds["design_offsets"]))
    f.update(design_seeds=span(seeds["design_seeds"]), report=span(seeds["report_offsets"]), report_seeds=span(seeds["report_seeds"]))
    f.update(design_grid=", ".join(alpha_key(a) for a in design["alphas"]), target=design["agreement_target"], chosen=", ".join(keys))
    f.update(min_top=alpha_key(design["min_top_alpha"]))
    f["design_agreement"] = ", ".join(
        f"{alpha_key(a)}: {_num(design['mean_by_alpha'][alpha_key(a)]['bc_agreement'], 3)}" for a in design["alphas"]
    )
    check = cmp["naive_dqn_vs_alpha0"]
    f.update(
        ret=_cmp(check["return"], lang),
    )
    naive_like, bc_like = alike("vs_alpha0", keys[1:]), alike("vs_bc", keys)
    f.update(naive_like=_alphas(naive_like, lang), bc_like=_alphas(bc_like, lang))
    f.update(agree0=_interval(cq[keys[0]]["bc_agreement"]), agree_top=_interval(cq[top]["bc_agreement"]))
    f.update(logged0=_interval(cq[keys[0]]["logged_share"]), logged_top=_interval(cq[top]["logged_share"]))
    f["ahead_bc"] = _alphas([k for k in keys if said("vs_bc", k, "return") == "ahead"], lang)
    f["behind_bc"] = _alphas([k for k in keys if said("vs_bc", k, "return") == "behind"], lang)
    best = max(keys, key=lambda k: cq[k]["return"]["mean"])
    f.update(best=best, best_return=_interval(cq[best]["return"]), best_vs_bc=_cmp(cmp["vs_bc"][best]["return"], lang))
    f["best_vs_0"] = _cmp(cmp["vs_alpha0"][best]["return"], lang) if best != keys[0] else "—"
    f.update(bc_return=_interval(sm["bc"]["return"]), bc_success=_interval(sm["bc"]["success"]))
    f["meaning"] = "meaning_pos" if any(said("vs_bc", k, "return") == "ahead" for k in keys[1:]) else "meaning_neg"
    f.update(alpha_ref=ref, logged_ref=_interval(cq[ref]["logged_share"]), gap0_ref=_interval(cq[ref]["gap_zero_share"]))
    f.update({name: _interval(cq[k]["greedy_gap"], 2, True) for name, k in (("gap0", keys[0]), ("gap_ref", ref), ("gap_top", top))})
    # Runaway: some seed's Q error beyond 2 max|r| / (1 - gamma), so the learned Q is outside every policy's value range.
    env = KeyDoorGrid()
    f["qmax"] = _num(2 * max(env.goal_reward, -env.trap_reward, env.step_cost) / (1 - f["gamma"]), 0)
    per_seed = data["report"]["per_seed"]["cql"]
    wild = [
        max(abs(v) for m in ("logged_error", "unlogged_error") for v in per_seed[k][m] if v is not None) > float(f["qmax"]) for k in keys
    ]
    bounded = next((k for i, k in enumerate(keys) if not any(wild[i:])), top)
    tame = keys[keys.index(bounded) :]
    peak = max(tame, key=lambda k: cq[k]["logged_error"]["mean"])
    f.update(
        bounded=bounded,
        peak=peak,
        logged_b=_interval(cq[bounded]["logged_error"], 2, True),
        logged_peak=_interval(cq[peak]["logged_error"], 2, True),
    )
    f.update(unlogged_b=_interval(cq[bounded]["unlogged_error"], 2, True), unlogged_peak=_interval(cq[peak]["unlogged_error"], 2, True))
    f["unlogged_zero"] = _alphas([k for k in tame if cq[k]["unlogged_error"]["low"] <= 0 <= cq[k]["unlogged_error"]["high"]], lang)
    ahead0 = [k for k in keys[1:] if said("vs_alpha0", k, "return") == "ahead"]
    f["ahead_0"] = _alphas(ahead0, lang)
    f["agree_ahead"] = "; ".join(f"α = {k}: {_interval(cq[k]['bc_agreement'])}" for k in ahead0) or "—"
    last = naive_like[-1] if naive_like else keys[0]
    f.update(last_naive=last, logged_last_naive=_interval(cq[last]["logged_share"]), ret_last_naive=_interval(cq[last]["return"]))
    lab_alpha = alpha_key(CQLConfig().alpha)
    f["lab_alpha"] = lab_alpha
    f["lab_like"] = _TEXT[lang]["like_naive" if lab_alpha in naive_like else "like_bc" if lab_alpha in bc_like else "like_neither"]
    f["n_design"] = len(seeds["design_seeds"])
    return f


def render_report(data: dict, lang: str) -> str:
    """The markdown report in ``lang`` ("en" or "ru"), every number read from ``data`` (see :func:`_fields`)."""
    t, sm, cmp, f = _TEXT[lang], data["summary"], data["comparisons"], _fields(data, lang)
    keys = [alpha_key(a) for a in data["report"]["alphas"]]
    para = lambda *names: [x for name in names for x in ("", t[name].format(**f))]  # noqa: E731
    out = [t["title"]] + para("generated", "what", "log", "seeds", "intervals", "table")
    rows = [("naive", sm["naive_dqn"])] + [(f"CQL, α = {k}", sm["cql"][k]) for k in keys] + [("bc", sm["bc"])]
    out += ["|" + "---|" * 7] + [_row(t.get(name, name), summary) for name, summary in rows]
    out += para("cmp") + ["|---|---|---|---|---|"]
    for k in keys:
        zero = cmp["vs_alpha0"].get(k)
        cells = [_cmp(c[m], lang) if c else "—" for c in (zero, cmp["vs_bc"][k]) for m in ("return", "success")]
        out.append(f"| {k} | " + " | ".join(cells) + " |")
    out += para("where", f["meaning"], "q", "thm", "lab_q", "weak")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- figure
_FIG_KEYS = [
    "title",
    "alpha",
    "return",
    "success",
    "q",
    "share",
    "logged_error",
    "unlogged_error",
    "logged_share",
    "bc_agreement",
    "expert",
]


def alpha_positions(alphas: Sequence[float]) -> np.ndarray:
    """x positions: log10(alpha) for alpha > 0, and one decade left of the smallest positive alpha for alpha = 0."""
    positive = [a for a in alphas if a > 0]
    zero_at = math.log10(min(positive)) - 1.0 if positive else 0.0
    return np.asarray([math.log10(a) if a > 0 else zero_at for a in alphas])


def draw_figure(data: dict, lang: str, path: Path) -> None:
    """The four measures against alpha, with 95 % bands, saved as a reproducible PNG (no software tag or date)."""
    from matplotlib.figure import Figure  # why: matplotlib only when a figure is drawn; a bare Figure renders with Agg, no pyplot state

    sm, t = data["summary"], {**_TEXT[lang], **{f"fig_{k}": v for k, v in zip(_FIG_KEYS, _TEXT[lang]["fig"].split(" | "))}}
    keys = [alpha_key(a) for a in data["report"]["alphas"]]
    x = alpha_positions(data["report"]["alphas"])
    fig = Figure(figsize=(10, 7.5))
    panels = (("return", ("return",)), ("success", ("success",)), ("q", ("logged_error", "unlogged_error")))
    panels += (("share", ("logged_share", "bc_agreement")),)
    for ax, (ylabel, measures) in zip(fig.subplots(2, 2).ravel(), panels):
        for i, m in enumerate(measures):
            mean, low, high = (np.asarray([sm["cql"][k][m][part] for k in keys]) for part in ("mean", "low", "high"))
            ax.plot(x[1:], mean[1:], "o-", color=f"C{i}", label="CQL" if len(measures) == 1 else t[f"fig_{m}"])
            ax.fill_between(x[1:], low[1:], high[1:], color=f"C{i}", alpha=0.2)
            ax.errorbar(x[:1], mean[:1], yerr=[mean[:1] - low[:1], high[:1] - mean[:1]], fmt="s", color=f"C{i}", capsize=4)
        for name, style, label in (("naive_dqn", ":", t["naive"]), ("bc", "--", t["bc"])):
            if len(measures) == 1:
                ax.axhline(sm[name][measures[0]]["mean"], linestyle=style, color="grey", label=label)
        if ylabel in ("return", "success"):
            ax.axhline(data["demonstrators"]["expert"][ylabel], linestyle="-.", color="green", label=t["fig_expert"])
        if ylabel == "q":
            ax.set_yscale("symlog", linthresh=1.0)
            ax.axhline(0.0, color="black", linewidth=0.8)
        ax.axvline((x[0] + x[1]) / 2 if len(x) > 1 else x[0], color="black", linewidth=0.6, linestyle=(0, (2, 2)))
        ax.set_xticks(x, keys)
        ax.set(xlabel=t["fig_alpha"], ylabel=t[f"fig_{ylabel}"])
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(t["fig_title"].format(n=sm["cql"][keys[0]]["return"]["n"]), fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})


def write_outputs(data: dict, out: Path, write_json: bool = True) -> None:
    """Write cql_alpha.json (unless ``write_json`` is False), the two reports and the two figures into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    if write_json:
        (out / "cql_alpha.json").write_text(dump_json(data), encoding="utf-8")
    for lang, suffix in (("en", ""), ("ru", ".ru")):
        (out / f"cql_alpha{suffix}.md").write_text(render_report(data, lang), encoding="utf-8")
        draw_figure(data, lang, out / f"cql_alpha{suffix}.png")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reference_impl.cql_sweep --out DIR [--seeds N] [--quick] [--render-only]``."""
    parser = argparse.ArgumentParser(prog="python -m reference_impl.cql_sweep", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for cql_alpha.{json,md,ru.md,png,ru.png}")
    parser.add_argument("--seeds", type=int, default=None, help=f"report seeds: offsets {REPORT_OFFSETS[0]}.. (N of them, default 10)")
    parser.add_argument("--quick", action="store_true", help="a tiny sweep (2 alphas, 2 seeds, 2 epochs) to check the pipeline")
    parser.add_argument("--render-only", action="store_true", help="re-write the reports and figures from DIR/cql_alpha.json")
    options = parser.parse_args(argv)
    if options.render_only:
        return write_outputs(json.loads((options.out / "cql_alpha.json").read_text(encoding="utf-8")), options.out, write_json=False) or 0
    settings = quick_settings() if options.quick else SweepSettings()
    if options.seeds is not None:
        settings = replace(settings, report_offsets=tuple(range(REPORT_OFFSETS[0], REPORT_OFFSETS[0] + options.seeds)))
    write_outputs(json.loads(dump_json(run_sweep(settings, show_progress=True))), options.out)  # the report reads what the JSON holds
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
