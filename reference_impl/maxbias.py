"""Maximization bias: where Double DQN has something to fix (Sutton & Barto 2018, §6.7; van Hasselt 2010).

The MDP. Start state A has two actions: ``right`` ends the episode with reward 0, ``left``
moves to state B with reward 0. State B has ``b_actions`` actions (10), each ending the
episode with a reward drawn from N(mu, sigma^2), mu = -0.1, sigma = 1; gamma = 1.

True values (Bellman optimality, exact; :func:`true_values`)::

    Q*(B, a)     = E[r] = mu                          for every a   (-0.1)
    Q*(A, left)  = 0 + gamma * max_a Q*(B, a) = gamma * mu           (-0.1)
    Q*(A, right) = 0

so ``right`` is optimal. A learner that bootstraps Q(A, left) from max_a Q(B, a) over noisy
estimates inherits their upward bias, E[max_a X_a] >= max_a E[X_a] (the max is convex), and
goes ``left`` more often than it should.

Learners (tabular, epsilon-greedy with ties broken at random, constant step size alpha;
every target comes from the course's kernels in :mod:`reference_impl.kernels`)::

    Q(s, a) <- Q(s, a) + alpha * (y - Q(s, a))

* ``dqn``: y = ``dqn_targets`` = r + gamma (1 - done) max_a Qbar(s', a), Qbar copied from Q every K updates;
* ``double_dqn``: y = ``double_dqn_targets`` = r + gamma (1 - done) Qbar(s', argmax_a Q(s', a)), same K;
* ``q_learning``: ``dqn`` with K = 1 (Qbar is Q): the textbook's Q-learning;
* ``double_q``: Double Q-learning, two tables; a fair coin picks the one that learns, whose
  target is ``double_dqn_targets`` with itself selecting and the other evaluating; the
  behavior is epsilon-greedy in Q1 + Q2, the measured table is (Q1 + Q2) / 2.

With K = 1 ``double_dqn`` is ``dqn`` exactly (the table that selects is the one that
evaluates), so K is the one setting searched, on design seeds only (:func:`search_interval`);
report seeds are a disjoint block. Run ``python -m reference_impl.maxbias --out docs/lab-results``.
"""

from __future__ import annotations

import argparse
import json
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from reference_impl import kernels, stats
from reference_impl.common import with_kernels
from reference_impl.course_run import interval
from reference_impl.stats import paired_difference, student_t_quantile, verdict

A, B = 0, 1  # states; None is the terminal state
LEFT, RIGHT = 0, 1  # actions in A
METHODS = ("dqn", "double_dqn", "q_learning", "double_q")
QUANTITIES = ("left_share_first", "left_share_last", "over_a_mean", "over_a_end", "over_t_mean", "over_t_end", "over_b_mean", "over_b_end")
SHARES = ("left_share_first", "left_share_last")
PAIRS = (("dqn", "double_dqn"), ("double_dqn", "double_q"), ("q_learning", "double_q"))
MAXBIAS_KEY = 20180607  # namespaces this experiment's random streams: rng = default_rng([MAXBIAS_KEY, seed])
DESIGN_SEEDS = tuple(range(0, 50))
REPORT_OFFSET = 100
QUICK_DESIGN_SEEDS = tuple(range(0, 5))
QUICK_REPORT_OFFSET = 1000  # --quick never touches the full run's report block
K_CANDIDATES = (1, 2, 5, 10, 25, 50, 100)
BOOTSTRAP_RESAMPLES = 10_000
CURVE_RESAMPLES = 2_000
BLOCK = 10  # episodes per point of the share curve
CONFIDENCE = 0.95
#: The report's and figure's text: ``maxbias.toml`` beside this module, one table per language (same keys).
TEXT_FILE = Path(__file__).resolve().with_suffix(".toml")
_LANGUAGE_TEXT = tomllib.loads(TEXT_FILE.read_text(encoding="utf-8"))
#: What was looked at before the coded search, and what it changed (the report seeds were never among them).
DEVELOPMENT = {
    "looked_at": {"design": list(QUICK_DESIGN_SEEDS), "quick_report": list(range(QUICK_REPORT_OFFSET, QUICK_REPORT_OFFSET + 10))},
    **{lang: text["development"] for lang, text in _LANGUAGE_TEXT.items()},
}
KEYDOOR_CLAIMS = Path(__file__).resolve().parents[1] / "docs" / "lab-results" / "claims.json"


@dataclass(frozen=True)
class Settings:
    """The setting of one run: Sutton & Barto's Figure 6.5 values (fixed before any run) and K (searched)."""

    b_actions: int = 10
    reward_mean: float = -0.1
    reward_sd: float = 1.0
    gamma: float = 1.0
    alpha: float = 0.1
    epsilon: float = 0.1
    episodes: int = 300
    first_episodes: int = 100  # N of "the share of left over the first N episodes"
    target_update_interval: int = 1  # K: updates between copies of Q into Qbar

    def __post_init__(self) -> None:
        if self.b_actions < 1 or self.target_update_interval < 1 or not 1 <= self.first_episodes <= self.episodes:
            raise ValueError(f"Settings: need b_actions >= 1, K >= 1 and 1 <= first_episodes <= episodes, got {self}")
        if not (0.0 <= self.gamma <= 1.0 and 0.0 < self.alpha <= 1.0 and 0.0 <= self.epsilon <= 1.0 and self.reward_sd >= 0.0):
            raise ValueError(f"Settings: gamma, epsilon in [0, 1], alpha in (0, 1], reward_sd >= 0, got {self}")


def true_values(s: Settings) -> dict[str, np.ndarray]:
    """Q* by the Bellman optimality equation: Q*(B, a) = mu; Q*(A, left) = 0 + gamma max_a Q*(B, a); Q*(A, right) = 0."""
    q_b = np.full(s.b_actions, float(s.reward_mean))
    q_a = np.empty(2)
    q_a[LEFT] = 0.0 + s.gamma * q_b.max()
    q_a[RIGHT] = 0.0
    return {"A": q_a, "B": q_b}


def check_textbook_values(values: Mapping[str, np.ndarray]) -> None:
    """Assert the textbook's numbers: Q*(A, right) = 0, Q*(A, left) = -0.1, Q*(B, .) = -0.1."""
    assert values["A"][RIGHT] == 0.0, values
    assert np.isclose(values["A"][LEFT], -0.1, rtol=0, atol=1e-15), values
    assert np.allclose(values["B"], -0.1, rtol=0, atol=1e-15), values


def env_step(state: int, action: int, rng: np.random.Generator, s: Settings) -> tuple[float, int | None]:
    """(reward, next state): A --left--> B with 0; A --right--> end with 0; B --any--> end with r ~ N(mu, sigma^2)."""
    if state == A:
        return 0.0, (B if action == LEFT else None)
    return float(rng.normal(s.reward_mean, s.reward_sd)), None


def zero_table(s: Settings) -> tuple[np.ndarray, np.ndarray]:
    """A table (Q(A, .), Q(B, .)), all zeros (the textbook's start)."""
    return np.zeros(2), np.zeros(s.b_actions)


def td_update(table: Sequence[np.ndarray], state: int, action: int, target: float, alpha: float) -> tuple[np.ndarray, ...]:
    """Q(s, a) <- Q(s, a) + alpha (y - Q(s, a)); a new table, every other entry (and the input) unchanged."""
    rows = list(table)
    row = rows[state].copy()
    row[action] += alpha * (target - row[action])
    rows[state] = row
    return tuple(rows)


def _next_row(table: Sequence[np.ndarray], next_state: int | None) -> np.ndarray:
    """Q(s', .) as a (1, A) batch; a terminal s' gives one zero the kernels never read."""
    return (np.zeros(1) if next_state is None else table[next_state])[None, :]


def dqn_target(reward: float, next_state: int | None, target: Sequence[np.ndarray], gamma: float, fn: Callable) -> float:
    """y = r + gamma (1 - done) max_a Qbar(s', a): ``fn`` (the course's ``dqn_targets``) on a batch of one."""
    return float(fn([reward], [next_state is None], _next_row(target, next_state), gamma)[0])


def double_dqn_target(
    reward: float, next_state: int | None, online: Sequence[np.ndarray], target: Sequence[np.ndarray], gamma: float, fn: Callable
) -> float:
    """y = r + gamma (1 - done) Qbar(s', argmax_a Q(s', a)): ``fn`` (``double_dqn_targets``) on a batch of one."""
    return float(fn([reward], [next_state is None], _next_row(online, next_state), _next_row(target, next_state), gamma)[0])


def epsilon_greedy(values: np.ndarray, epsilon: float, rng: np.random.Generator) -> int:
    """With probability epsilon a uniform action, else an argmax with ties broken uniformly at random."""
    if rng.random() < epsilon:
        return int(rng.integers(values.size))
    best = np.flatnonzero(values == values.max())
    return int(best[0]) if best.size == 1 else int(rng.choice(best))


def _kernels(overrides: Mapping[str, Callable] | None) -> dict[str, Callable]:
    """The course's two target kernels, read at call time (so a patched kernel is the one used), with overrides."""
    return with_kernels({"dqn_targets": kernels.dqn_targets, "double_dqn_targets": kernels.double_dqn_targets}, overrides)


def left_target(method: str, tables: Sequence[Sequence[np.ndarray]], s: Settings, fns: Mapping[str, Callable]) -> float:
    """The target the learner would now give (A, left) (reward 0, next state B), through its own kernel.

    dqn, q_learning: gamma max_a Qbar(B, a); double_dqn: gamma Qbar(B, argmax_a Q(B, a));
    double_q: the mean of gamma Q2(B, argmax Q1(B, .)) and gamma Q1(B, argmax Q2(B, .)) (each table learns half the time).
    """
    if method == "double_q":
        q1, q2 = tables
        ddqn = fns["double_dqn_targets"]
        return 0.5 * (double_dqn_target(0.0, B, q1, q2, s.gamma, ddqn) + double_dqn_target(0.0, B, q2, q1, s.gamma, ddqn))
    online, target = tables
    if method == "double_dqn":
        return double_dqn_target(0.0, B, online, target, s.gamma, fns["double_dqn_targets"])
    return dqn_target(0.0, B, target, s.gamma, fns["dqn_targets"])


def run_learner(method: str, seed: int, s: Settings, kernel_fns: Mapping[str, Callable] | None = None) -> dict[str, np.ndarray]:
    """Train one learner for ``s.episodes`` episodes on stream ``default_rng([MAXBIAS_KEY, seed])``.

    Returns per episode (after its updates): ``left`` (first action was left),
    ``over_a`` = Q(A, left) - Q*(A, left), ``over_t`` = :func:`left_target` - Q*(A, left) and
    ``over_b`` = max_a Q(B, a) - max_a Q*(B, a).
    """
    if method not in METHODS:
        raise ValueError(f"run_learner: `method` must be one of {METHODS}, got {method!r}")
    fns = _kernels(kernel_fns)
    rng = np.random.default_rng([MAXBIAS_KEY, seed])
    truth = true_values(s)
    k = 1 if method == "q_learning" else s.target_update_interval
    tables = [zero_table(s), zero_table(s)]  # dqn family: [online Q, target Qbar]; double_q: [Q1, Q2]
    updates = 0
    left, over_a, over_t, over_b = np.zeros(s.episodes, bool), np.zeros(s.episodes), np.zeros(s.episodes), np.zeros(s.episodes)
    for episode in range(s.episodes):
        state = A
        while state is not None:
            values = tables[0][state] + tables[1][state] if method == "double_q" else tables[0][state]
            action = epsilon_greedy(values, s.epsilon, rng)
            if state == A:
                left[episode] = action == LEFT
            reward, nxt = env_step(state, action, rng, s)
            if method == "double_q":
                i = int(rng.random() < 0.5)  # the table that learns this step
                y = double_dqn_target(reward, nxt, tables[i], tables[1 - i], s.gamma, fns["double_dqn_targets"])
                tables[i] = td_update(tables[i], state, action, y, s.alpha)
            else:
                online, target = tables
                if method == "double_dqn":
                    y = double_dqn_target(reward, nxt, online, target, s.gamma, fns["double_dqn_targets"])
                else:
                    y = dqn_target(reward, nxt, target, s.gamma, fns["dqn_targets"])
                online = td_update(online, state, action, y, s.alpha)
                updates += 1
                tables = [online, online if updates % k == 0 else target]
            state = nxt
        measured = [(q1 + q2) / 2.0 for q1, q2 in zip(*tables)] if method == "double_q" else tables[0]
        over_a[episode] = measured[A][LEFT] - truth["A"][LEFT]
        over_t[episode] = left_target(method, tables, s, fns) - truth["A"][LEFT]
        over_b[episode] = measured[B].max() - truth["B"].max()
    return {"left": left, "over_a": over_a, "over_t": over_t, "over_b": over_b}


def seed_summary(run: Mapping[str, np.ndarray], s: Settings) -> dict[str, float]:
    """One run's numbers: left share over the first and the last N episodes; over_a, over_b averaged over episodes and at the end."""
    n = s.first_episodes
    out = {
        "left_share_first": float(np.mean(run["left"][:n])),
        "left_share_last": float(np.mean(run["left"][-n:])),
    }
    for name in ("over_a", "over_t", "over_b"):
        out[f"{name}_mean"] = float(np.mean(run[name]))
        out[f"{name}_end"] = float(run[name][-1])
    return {key: round(value, 6) for key, value in out.items()}


def search_interval(design_seeds: Sequence[int], s: Settings, candidates: Sequence[int] = K_CANDIDATES) -> dict:
    """Try each K on the design seeds; choose the largest mean DQN - Double DQN left share over the first N episodes.

    Ties go to the smaller K. The other settings stay at the textbook's values.
    """
    rows = []
    for k in candidates:
        sk = replace(s, target_update_interval=k)
        per = {m: [seed_summary(run_learner(m, seed, sk), sk) for seed in design_seeds] for m in ("dqn", "double_dqn")}
        row = {"target_update_interval": k}
        for m in per:
            for q in ("left_share_first", "over_a_mean"):
                row[f"{m}.{q}"] = round(float(np.mean([x[q] for x in per[m]])), 6)
        row["difference.left_share_first"] = round(row["dqn.left_share_first"] - row["double_dqn.left_share_first"], 6)
        rows.append(row)
    chosen = max(rows, key=lambda r: (r["difference.left_share_first"], -r["target_update_interval"]))
    return {
        "parameter": "target_update_interval",
        "candidates": list(candidates),
        "design_seeds": list(design_seeds),
        "criterion": "largest mean over design seeds of DQN - Double DQN left share over the first N episodes; ties: smaller K",
        "fixed": "every other setting at Sutton & Barto's Figure 6.5 values, fixed before any run",
        "rows": rows,
        "chosen": chosen["target_update_interval"],
        "development": DEVELOPMENT,
    }


def bootstrap_mean_interval(values: Sequence[float], seed: int, resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float, float]:
    """:func:`stats.bootstrap_mean_interval` (percentile bootstrap over seeds; a share's interval stays in
    [0, 1]) with this study's generator, keyed by ``seed``."""
    return stats.bootstrap_mean_interval(values, np.random.default_rng([MAXBIAS_KEY, seed]), resamples, CONFIDENCE)


def summarize(per_seed: Mapping[str, Mapping[str, Sequence[float]]]) -> dict:
    """Per method one-sample intervals; per pair of :data:`PAIRS` the paired t interval of a - b with its verdict.

    Shares: percentile bootstrap (one-sample), and differences of shares clipped to [-1, 1]
    (the range of a difference of two shares; clipping never moves zero in or out). The rest:
    one-sample t interval, with the verdict against zero.
    """
    methods = {}
    for mi, m in enumerate(METHODS):
        methods[m] = {}
        for qi, q in enumerate(QUANTITIES):
            values = per_seed[m][q]
            if q in SHARES:
                mean, low, high = bootstrap_mean_interval(values, seed=100 * mi + qi)
                methods[m][q] = {"mean": mean, "low": low, "high": high, "interval": "one-sample percentile bootstrap"}
            else:
                mean, low, high = interval(values, CONFIDENCE)
                methods[m][q] = {"mean": mean, "low": low, "high": high, "interval": "one-sample t", "verdict": verdict(low, high)}
    comparisons = []
    for a, b in PAIRS:
        for q in QUANTITIES:
            d = paired_difference(per_seed[a][q], per_seed[b][q], CONFIDENCE)
            clipped = q in SHARES
            low, high = (max(d["low"], -1.0), min(d["high"], 1.0)) if clipped else (d["low"], d["high"])
            comparisons.append(
                {"id": f"{a}_vs_{b}.{q}", "a": a, "b": b, "quantity": q, "effect": d["effect"], "low": low, "high": high}
                | {
                    "n_seeds": d["n_seeds"],
                    "interval": "paired t" + (", clipped to [-1, 1]" if clipped else ""),
                    "verdict": verdict(low, high),
                }
            )
    return {"methods": methods, "comparisons": comparisons}


def _share_curve(left: np.ndarray, seed: int) -> dict[str, list[float]]:
    """Left share per block of BLOCK episodes: mean over seeds with a percentile-bootstrap band (within [0, 1])."""
    blocks = left.reshape(left.shape[0], -1, BLOCK).mean(axis=2)
    idx = np.random.default_rng([MAXBIAS_KEY, seed]).integers(0, blocks.shape[0], size=(CURVE_RESAMPLES, blocks.shape[0]))
    means = blocks[idx].mean(axis=1)
    low, high = np.quantile(means, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2], axis=0)
    return {"mean": _r(blocks.mean(axis=0)), "low": _r(low), "high": _r(high)}


def _bands(runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column (episode) over rows (seeds): mean and the 95 % t half-width t_{0.975, n-1} sd / sqrt(n) (one quantile for all)."""
    n = runs.shape[0]
    half = student_t_quantile(0.5 + CONFIDENCE / 2, n - 1) * runs.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.zeros(runs.shape[1])
    return runs.mean(axis=0), half


def _r(values, digits: int = 5) -> list[float]:
    return [round(float(v), digits) for v in np.asarray(values).ravel()]


def _keydoor(path: Path) -> dict | None:
    """The lab's KeyDoorGrid result (claims.json, Double DQN - DQN) turned into DQN - Double DQN: effect -> -effect, [l, h] -> [-h, -l]."""
    if not path.exists():
        return None
    claims = json.loads(path.read_text(encoding="utf-8"))
    out = {"source": "docs/lab-results/claims.json", "command": claims.get("command"), "seeds": claims.get("seeds")}
    for name, cid in (("over_mean", "dqn.double_vs_dqn_overestimation_mean"), ("over_end", "dqn.double_vs_dqn_overestimation_final")):
        c = claims["comparisons"][cid]
        low, high = -c["high"], -c["low"]
        out[name] = {"id": cid, "effect": -c["effect"], "low": low, "high": high, "n_seeds": c["n_seeds"], "verdict": verdict(low, high)}
    return out


def run_experiment(
    design_seeds: Sequence[int], report_seeds: Sequence[int], *, candidates: Sequence[int] = K_CANDIDATES, command: str = ""
) -> dict:
    """Search K on the design seeds, then run every method on the report seeds; everything the report states."""
    if set(design_seeds) & set(report_seeds):
        raise ValueError(f"run_experiment: design and report seeds overlap: {sorted(set(design_seeds) & set(report_seeds))}")
    base = Settings()
    truth = true_values(base)
    check_textbook_values(truth)
    search = search_interval(design_seeds, base, candidates)
    s = replace(base, target_update_interval=search["chosen"])
    per_seed, curves = {}, {}
    for mi, m in enumerate(METHODS):
        runs = [run_learner(m, seed, s) for seed in report_seeds]
        summaries = [seed_summary(r, s) for r in runs]
        per_seed[m] = {q: [x[q] for x in summaries] for q in QUANTITIES}
        curves[m] = {"left_share": _share_curve(np.array([r["left"] for r in runs], dtype=np.float64), seed=10_000 + mi)}
        for name in ("over_a", "over_t", "over_b"):
            mean, half = _bands(np.array([r[name] for r in runs]))
            curves[m][name] = {"mean": _r(mean), "half": _r(half)}
    return {
        "experiment": "maxbias",
        "command": command,
        "mdp": {
            "A": {"actions": ["left", "right"], "left": "to B, reward 0", "right": "end, reward 0"},
            "B": {"actions": s.b_actions, "each": f"end, reward ~ N({s.reward_mean}, {s.reward_sd}^2)"},
            "true_values": {"A_left": float(truth["A"][LEFT]), "A_right": float(truth["A"][RIGHT]), "B": float(truth["B"][0])},
        },
        "settings": asdict(s),
        "seeds": {"design": list(design_seeds), "report": list(report_seeds), "rng": f"numpy default_rng([{MAXBIAS_KEY}, seed])"},
        "search": search,
        "confidence": CONFIDENCE,
        "bootstrap_resamples": {"summary": BOOTSTRAP_RESAMPLES, "curves": CURVE_RESAMPLES},
        "curve_block": BLOCK,
        "per_seed": per_seed,
        **summarize(per_seed),
        "curves": curves,
        "keydoor": _keydoor(KEYDOOR_CLAIMS),
    }


NAMES = {lang: text["names"] for lang, text in _LANGUAGE_TEXT.items()}
WORDS = {lang: text["words"] for lang, text in _LANGUAGE_TEXT.items()}


def _fmt_cmp(c: Mapping, lang: str, level: bool = False) -> str:
    """``+0.123 (95 % CI +0.100 to +0.150, 100 paired seeds): ahead`` in ``lang``."""
    word = WORDS[lang][("level." if level else "") + c["verdict"]]
    return WORDS[lang]["cmp"].format(e=f"{c['effect']:+.3f}", lo=f"{c['low']:+.3f}", hi=f"{c['high']:+.3f}", n=c["n_seeds"], v=word)


def _fmt_one(cell: Mapping, n: int, lang: str) -> str:
    """A method's one-sample interval against zero, labeled as one-sample."""
    word = WORDS[lang]["level." + cell["verdict"]]
    return WORDS[lang]["one"].format(e=f"{cell['mean']:+.3f}", lo=f"{cell['low']:+.3f}", hi=f"{cell['high']:+.3f}", n=n, v=word)


def _cmp(data: Mapping, cid: str) -> dict:
    return next(c for c in data["comparisons"] if c["id"] == cid)


SENTENCES = {lang: text["sentences"] for lang, text in _LANGUAGE_TEXT.items()}


def _sentences(data: Mapping, lang: str) -> list[str]:
    """What Double DQN does here, each sentence chosen by the verdict of its interval (never stronger)."""
    t, n, dd = SENTENCES[lang], len(data["seeds"]["report"]), data["methods"]["double_dqn"]
    m_a, e_a = _cmp(data, "dqn_vs_double_dqn.over_a_mean"), _cmp(data, "dqn_vs_double_dqn.over_a_end")
    share, dq = _cmp(data, "dqn_vs_double_dqn.left_share_first"), _cmp(data, "double_dqn_vs_double_q.over_a_end")
    out = [t["reduce." + m_a["verdict"]].format(c=_fmt_cmp(m_a, lang), e=_fmt_cmp(e_a, lang))]
    out.append(t["target"].format(c=_fmt_cmp(_cmp(data, "dqn_vs_double_dqn.over_t_mean"), lang)))
    out.append(t["share"].format(k=data["settings"]["first_episodes"], c=_fmt_cmp(share, lang)))
    end_a, end_t = _fmt_one(dd["over_a_end"], n, lang), t["remove_t"].format(o=_fmt_one(dd["over_t_end"], n, lang))
    out.append(f"{t['remove.' + dd['over_a_end']['verdict']]} ({WORDS[lang]['over_a_end']}: {end_a}; {end_t}).")
    out.append(t["init"].format(q=WORDS[lang]["over_a_end"], c=_fmt_cmp(dq, lang)))
    return out


TEXT = {lang: text["text"] for lang, text in _LANGUAGE_TEXT.items()}


def _seed_range(seeds: Sequence[int]) -> str:
    """``100–199`` for a contiguous block, else the list."""
    seeds = list(seeds)
    contiguous = seeds == list(range(seeds[0], seeds[0] + len(seeds)))
    return f"{seeds[0]}–{seeds[-1]}" if contiguous and len(seeds) > 1 else ", ".join(map(str, seeds))


def _cell(cell: Mapping, q: str) -> str:
    """``0.123 [0.100, 0.150]`` (shares) or signed (overestimations)."""
    spec = ".3f" if q in SHARES else "+.3f"
    return f"{cell['mean']:{spec}} [{cell['low']:{spec}}, {cell['high']:{spec}}]"


def render_markdown(data: Mapping, lang: str) -> str:
    """The report in ``lang`` ("en" or "ru"), every number read from ``data`` (the JSON)."""
    t, w, names = TEXT[lang], WORDS[lang], NAMES[lang]
    s, tv, search = data["settings"], data["mdp"]["true_values"], data["search"]
    n_first, n_rep = s["first_episodes"], len(data["seeds"]["report"])
    fields = {
        "nb": s["b_actions"], "mu": s["reward_mean"], "sd": s["reward_sd"], "g": s["gamma"], "alpha": s["alpha"], "eps": s["epsilon"],
        "ep": s["episodes"], "n": n_first, "ar": tv["A_right"], "al": tv["A_left"], "b": tv["B"], "floor": s["epsilon"] / 2,
        "amu": abs(s["reward_mean"]), "blk": data["curve_block"], "k": s["target_update_interval"],
    }  # fmt: skip
    lines = [t["title"], "", t["generated"].format(cmd=data["command"]), "", t["mdp_h"], "", t["mdp"].format(**fields), ""]
    lines += [t["set_h"], "", t["set"].format(**fields), ""]
    lines += [t["seeds"].format(design=_seed_range(data["seeds"]["design"]), report=_seed_range(data["seeds"]["report"])), ""]
    crit = search["criterion"] if lang == "en" else t["crit"]
    cands = ", ".join(map(str, search["candidates"]))
    lines += [t["search"].format(nd=len(search["design_seeds"]), cands=cands, crit=crit, k=search["chosen"]), ""]
    lines += [t["search_cols"].format(n=n_first), "|---|---|---|---|---|---|"]
    for row in search["rows"]:
        mark = " ←" if row["target_update_interval"] == search["chosen"] else ""
        lines.append(
            f"| {row['target_update_interval']}{mark} | {row['dqn.left_share_first']:.3f} | {row['double_dqn.left_share_first']:.3f} | "
            f"{row['difference.left_share_first']:+.3f} | {row['dqn.over_a_mean']:+.3f} | {row['double_dqn.over_a_mean']:+.3f} |"
        )
    lines += [
        "",
        t["search_note"].format(dev=search["development"][lang]),
        "",
        t["res_h"],
        "",
        f"![maxbias]({'maxbias.png' if lang == 'en' else 'maxbias.ru.png'})",
        "",
    ]
    intro = t["methods_intro"].format(n=n_rep, k=s["target_update_interval"], res=data["bootstrap_resamples"]["summary"])
    lines += [t["fig"].format(**fields), "", intro, ""]
    lines += ["| " + " | ".join([t["quantity"]] + [names[m] for m in METHODS]) + " |", "|" + "---|" * (len(METHODS) + 1)]
    for q in QUANTITIES:
        lines.append("| " + " | ".join([w[q].format(n=n_first)] + [_cell(data["methods"][m][q], q) for m in METHODS]) + " |")
    lines += ["", t["cmp_intro"], ""]
    lines += [t["cmp_cols"], "|---|---|---|"]
    for c in data["comparisons"]:
        lines.append(f"| {names[c['a']]} − {names[c['b']]} | {w[c['quantity']].format(n=n_first)} | {_fmt_cmp(c, lang)} |")
    lines += ["", t["what_h"], "", " ".join(_sentences(data, lang)), "", t["why_h"], "", t["why"].format(**fields), ""]
    kd = data.get("keydoor")
    if kd:
        lines.append(
            t["kd"].format(src=kd["source"], cmd=kd["command"], m=_fmt_cmp(kd["over_mean"], lang), e=_fmt_cmp(kd["over_end"], lang))
        )
    else:
        lines.append(t["kd_none"])
    lines += ["", t["weak_h"], "", t["weak"], ""]
    return "\n".join(lines)


#: The figure's x label, its y labels and the floor's legend, per language.
FIG_LABELS = {lang: tuple(text["fig_labels"]) for lang, text in _LANGUAGE_TEXT.items()}


def draw_figure(data: Mapping, path: Path, lang: str) -> None:
    """Four panels from ``data["curves"]``: left share per block, and the three overestimations per episode, with 95 % bands."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # why: matplotlib only when a figure is drawn (0.3 s import)
    from matplotlib.figure import Figure  # why: as above; Figure + Agg canvas, no pyplot state

    xlabel, *ylabels, floor_label = FIG_LABELS[lang]
    fig = Figure(figsize=(12.0, 8.0))
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, 2).ravel()
    block, episodes = data["curve_block"], data["settings"]["episodes"]
    xb, xe = np.arange(block / 2, episodes, block) + 0.5, np.arange(1, episodes + 1)
    for m, color in zip(METHODS, ("tab:red", "tab:blue", "tab:orange", "tab:green")):
        label, cur = NAMES[lang][m], data["curves"][m]
        axes[0].plot(xb, cur["left_share"]["mean"], color=color, label=label)
        axes[0].fill_between(xb, cur["left_share"]["low"], cur["left_share"]["high"], color=color, alpha=0.15, linewidth=0)
        for ax, name in zip(axes[1:], ("over_a", "over_t", "over_b")):
            mean, half = np.asarray(cur[name]["mean"]), np.asarray(cur[name]["half"])
            ax.plot(xe, mean, color=color, linewidth=1.2, label=label)
            ax.fill_between(xe, mean - half, mean + half, color=color, alpha=0.15, linewidth=0)
    axes[0].axhline(data["settings"]["epsilon"] / 2, color="black", linestyle=":", label=floor_label)
    axes[0].set_ylim(0, 1)
    for ax, ylabel in zip(axes, ylabels):
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if ax is not axes[0]:
            ax.axhline(0.0, color="black", linewidth=0.8)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90, metadata={"Software": None})


def write_outputs(data: Mapping, out: Path) -> list[Path]:
    """maxbias.json, maxbias.md, maxbias.ru.md, maxbias.png, maxbias.ru.png in ``out``; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "maxbias.json", out / "maxbias.md", out / "maxbias.ru.md", out / "maxbias.png", out / "maxbias.ru.png"]
    paths[0].write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    paths[1].write_text(render_markdown(data, "en"), encoding="utf-8")
    paths[2].write_text(render_markdown(data, "ru"), encoding="utf-8")
    draw_figure(data, paths[3], "en")
    draw_figure(data, paths[4], "ru")
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reference_impl.maxbias", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for maxbias.{json,md,ru.md,png,ru.png}")
    parser.add_argument("--seeds", type=int, default=None, help="report seeds (default 200; 10 with --quick)")
    parser.add_argument("--quick", action="store_true", help="5 design seeds, report seeds from offset 1000: a smoke run")
    args = parser.parse_args(argv)
    n = args.seeds if args.seeds is not None else (10 if args.quick else 200)
    if n < 2:
        parser.error("--seeds must be at least 2")
    design = QUICK_DESIGN_SEEDS if args.quick else DESIGN_SEEDS
    report = tuple(range(QUICK_REPORT_OFFSET if args.quick else REPORT_OFFSET, (QUICK_REPORT_OFFSET if args.quick else REPORT_OFFSET) + n))
    command = f"python -m reference_impl.maxbias --out {args.out.as_posix()} --seeds {n}" + (" --quick" if args.quick else "")
    data = run_experiment(design, report, command=command)
    for path in write_outputs(data, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
