"""The module's numerical and code exercises: one source for inputs and answers.

Exercises 9-15 are numerical, 16-17 ask for code. The student notebooks, the worked
solutions (``solutions/``) and the hidden autograder tests all read the inputs from
:data:`NUMERICAL` / :data:`CODE_EXAMPLES` and the expected values from
:func:`answers`, so a figure can never differ between the three places.

Every answer is computed with a :mod:`reference_impl.kernels` kernel, except two
quantities that are not kernels: the regret of the compounding-error model
(:func:`compounding_regret`, exercise 10) and the exact expectile of a small set of
values (:func:`expectile`, exercise 14).

Graded answers
--------------
:data:`ANSWER_NAMES` lists, per exercise, the names a student assigns in the
notebook (``ex09_active_mean_nll = ...``). :func:`graded_answers` returns for each
name an :class:`Answer` with the reference value and an absolute tolerance.
Vector answers are compared element-wise; ``-inf`` must match exactly.

The answer key fixes only some figures; :data:`CHOSEN_INPUTS` lists the inputs this
reconstruction had to choose (the comments in :data:`NUMERICAL` say which figures
are pinned), and ``solutions/README.md`` is generated from it.

Adding a graded answer: compute it in the exercise's ``_exNN`` function under a key
``exNN_<name>``, add the name to :data:`ANSWER_NAMES`, and rebuild the solutions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from reference_impl import kernels as k

EXERCISE_NUMBERS = tuple(range(1, 18))
CONCEPTUAL = tuple(range(1, 9))
NUMERICAL_NUMBERS = tuple(range(9, 16))
CODE_NUMBERS = (16, 17)

# Numerical exercises: inputs only. Pinned figures (from the answer key) are marked.
NUMERICAL: dict[int, dict[str, Any]] = {
    9: {
        # Positions 0-1 are the prompt, 2-4 the response, 5 padding.
        # Pinned: six positions and the three active log-probs.
        # Chosen: the prompt log-probs, the padding value, the layout.
        "token_logprobs": (-2.3, -1.7, -0.2, -1.0, -0.4, 0.0),
        "mask": (0, 0, 1, 1, 1, 0),
    },
    10: {
        # Pinned: q = 0.98 per step without error, horizon T = 20.
        # Chosen: the cost model (cost 1 per step from the first error on, no recovery).
        "no_error_prob": 0.98,
        "horizon": 20,
    },
    11: {
        # Pinned: next-state maxima (4, 100, 3), second transition terminated.
        # Chosen: rewards, gamma, the full next-state table, the third transition
        # being cut by the time limit (truncated, not terminated).
        "rewards": (1.0, -1.0, 0.0),
        "terminated": (0, 1, 0),
        "truncated": (0, 0, 1),
        "next_q_target": ((4.0, 2.0), (100.0, -5.0), (1.0, 3.0)),
        "gamma": 0.9,
    },
    12: {
        # Pinned: target maxima 10 and 7, online argmax (1, 0), target values of
        # those actions (1, -1). Chosen: rewards 0, gamma 0.9, both tables.
        "rewards": (0.0, 0.0),
        "terminated": (0, 0),
        "next_q_online": ((0.0, 1.0), (1.0, 0.0)),
        "next_q_target": ((10.0, 1.0), (-1.0, 7.0)),
        "gamma": 0.9,
    },
    13: {
        # Pinned (the lab's example): Q = (2, 0, -1), logged action 0.
        "q_values": (2.0, 0.0, -1.0),
        "action": 0,
    },
    14: {
        # Pinned: tau = 0.8, one negative residual and two positive ones.
        # Chosen: Q = (0, 2, 3) and V = 1.
        "tau": 0.8,
        "q_values": (0.0, 2.0, 3.0),
        "value": 1.0,
    },
    15: {
        # Pinned (the lab's example): rewards; initial request 5; gamma 0.5.
        "rewards": (1.0, 0.0, -0.5, 2.0),
        "initial_request": 5.0,
        "gamma": 0.5,
    },
}

# Code exercises: the worked examples (the lab's dqn_targets call is pinned; the
# Double DQN online table, with a tie in the first row, is chosen).
CODE_EXAMPLES: dict[int, dict[str, Any]] = {
    16: {
        "rewards": (0.2, -1.0),
        "terminated": (0, 1),
        "next_q_target": ((1.1, 1.6), (10.0, 20.0)),
        "next_q_online": ((0.7, 0.7), (5.0, 1.0)),
        "gamma": 0.95,
    },
    17: {
        "empirical_means": (1.0, 0.5, 2.0, 0.8),
        "counts": (4, 1, 0, 100),
        "radius_scale": 1.0,
    },
}

# Inputs the answer key does not fix, chosen by this reconstruction (keys into
# NUMERICAL / CODE_EXAMPLES; an empty tuple means a modeling choice, not an input).
# The solutions' closing note (solutions/README.md) is generated from this table.
CHOSEN_INPUTS: dict[int, tuple[str, ...]] = {
    9: ("token_logprobs", "mask"),  # prompt log-probs, padding value, layout (active log-probs pinned)
    10: (),  # the cost model: cost 1 per step from the first error on, no recovery
    11: ("rewards", "gamma", "next_q_target", "truncated"),  # next-state maxima pinned
    12: ("rewards", "gamma", "next_q_online", "next_q_target"),  # maxima, argmax, evaluated values pinned
    14: ("q_values", "value"),  # tau = 0.8 and the residual signs pinned
    16: ("next_q_online",),  # the Double DQN example; the dqn_targets call is the lab's
}


# ------------------------------------------------------------------ helpers
def compounding_regret(no_error_prob: float, horizon: int) -> float:
    """Expected extra cost of a cloned policy that never recovers from an error.

    Model: at every step the policy errs with probability eps = 1 - q, independently;
    from the first error on, each step (including the erring one) costs 1.
    P(at least one error in the first t steps) = 1 - q**t, so

        R(T) = sum_{t=1}^{T} (1 - q**t) = T - q (1 - q**T) / (1 - q)   (q < 1)

    and R = 0 for q = 1. To first order in eps, R ~= eps * T (T + 1) / 2.
    Raises ValueError when q is outside [0, 1] or horizon is not a positive integer.
    """
    if isinstance(no_error_prob, bool) or not isinstance(no_error_prob, (int, float)) or not math.isfinite(no_error_prob):
        raise ValueError(f"compounding_regret: `no_error_prob` must be a finite number, got {no_error_prob!r}")
    if not 0.0 <= no_error_prob <= 1.0:
        raise ValueError(f"compounding_regret: `no_error_prob` must lie in [0, 1], got {no_error_prob}")
    if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
        raise ValueError(f"compounding_regret: `horizon` must be a positive integer, got {horizon!r}")
    q = float(no_error_prob)
    return float(sum(1.0 - q**t for t in range(1, int(horizon) + 1)))


def first_order_regret(error_prob: float, horizon: int) -> float:
    """Linearisation of :func:`compounding_regret` in eps: eps * T * (T + 1) / 2."""
    if not 0.0 <= error_prob <= 1.0:
        raise ValueError(f"first_order_regret: `error_prob` must lie in [0, 1], got {error_prob}")
    if horizon < 1:
        raise ValueError(f"first_order_regret: `horizon` must be a positive integer, got {horizon!r}")
    return float(error_prob * horizon * (horizon + 1) / 2)


def expectile(values, tau: float) -> float:
    """The tau-expectile of a finite sample: argmin_v mean(|tau - 1[q < v]| (q - v)**2).

    The loss is a convex piecewise quadratic; its minimizer solves
    sum_i w_i (q_i - v) = 0 with w_i = tau if q_i > v else 1 - tau. We solve it
    exactly on each interval between sorted values and keep the consistent root.
    Raises ValueError for an empty or non-finite sample or tau outside (0, 1).
    """
    q = np.sort(np.asarray(values, dtype=np.float64).ravel())
    if q.size == 0 or not np.isfinite(q).all():
        raise ValueError("expectile: `values` must be a non-empty finite array")
    if not 0.0 < tau < 1.0:
        raise ValueError(f"expectile: `tau` must lie in the open interval (0, 1), got {tau}")
    for split in range(q.size + 1):  # values q[:split] lie below v, q[split:] above
        w = np.where(np.arange(q.size) < split, 1.0 - tau, tau)
        v = float((w * q).sum() / w.sum())
        below_ok = split == 0 or q[split - 1] <= v
        above_ok = split == q.size or q[split] >= v
        if below_ok and above_ok:
            return v
    raise AssertionError("unreachable: a convex piecewise quadratic has a minimizer")


def _softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max())
    return z / z.sum()


# ------------------------------------------------------------------ answers
def _ex09(i):
    logp = np.asarray(i["token_logprobs"], dtype=float)
    mask = np.asarray(i["mask"])
    n_positions, n_active = mask.size, int(mask.sum())
    mean_active = k.masked_token_nll(logp, mask)
    active = logp[mask.astype(bool)]
    return {
        "n_positions": n_positions,
        "n_active": n_active,
        "active_logprobs": active.tolist(),
        "active_nll_sum": mean_active * n_active,
        "ex09_active_mean_nll": mean_active,
        # The same masked sum divided by every position, padding included.
        "ex09_all_positions_mean": mean_active * n_active / n_positions,
        # No mask at all: the prompt tokens are imitated too (setting (b) of ex. 1).
        "ex09_unmasked_mean_nll": k.masked_token_nll(logp, np.ones_like(mask)),
    }


def _ex10(i):
    q, horizon = i["no_error_prob"], i["horizon"]
    eps = 1.0 - q
    exact = compounding_regret(q, horizon)
    linear = first_order_regret(eps, horizon)
    return {
        "error_prob": eps,
        "eps_times_T": eps * horizon,
        "q_to_T": q**horizon,
        "ex10_exact_regret": exact,
        "ex10_first_order_regret": linear,
        "ex10_normalized_regret": exact / horizon,
        "normalized_over_eps": exact / horizon / eps,
        # The eps^2 term of the expansion: eps^2 * sum_t C(t, 2) = eps^2 * C(T + 1, 3).
        "second_order_term": eps**2 * math.comb(horizon + 1, 3),
        "second_order_estimate": linear - eps**2 * math.comb(horizon + 1, 3),
        "overestimate_ratio": linear / exact,
        "overestimate_percent": 100.0 * (linear / exact - 1.0),
    }


def _ex11(i):
    table = np.asarray(i["next_q_target"], dtype=float)
    targets = k.dqn_targets(i["rewards"], i["terminated"], table, gamma=i["gamma"])
    ignore_terminal = k.dqn_targets(i["rewards"], np.zeros(len(i["rewards"])), table, gamma=i["gamma"])
    # Wrong use: treating the time-limit cut as a terminal.
    truncation_as_terminal = k.dqn_targets(
        i["rewards"], np.maximum(np.asarray(i["terminated"]), np.asarray(i["truncated"])), table, gamma=i["gamma"]
    )
    return {
        "next_max": table.max(axis=1).tolist(),
        "ex11_targets": targets.tolist(),
        "ex11_unmasked_second_target": float(ignore_terminal[1]),
        "truncation_as_terminal": truncation_as_terminal.tolist(),
    }


def _ex12(i):
    online = np.asarray(i["next_q_online"], dtype=float)
    target = np.asarray(i["next_q_target"], dtype=float)
    dqn = k.dqn_targets(i["rewards"], i["terminated"], target, gamma=i["gamma"])
    double = k.double_dqn_targets(i["rewards"], i["terminated"], online, target, gamma=i["gamma"])
    chosen = online.argmax(axis=1)
    return {
        "target_max": target.max(axis=1).tolist(),
        "online_argmax": chosen.tolist(),
        "target_at_online_argmax": target[np.arange(len(chosen)), chosen].tolist(),
        "ex12_dqn_targets": dqn.tolist(),
        "ex12_double_dqn_targets": double.tolist(),
        "gap": (dqn - double).tolist(),
    }


def _ex13(i):
    q = np.asarray(i["q_values"], dtype=float)
    penalties = [k.cql_discrete_penalty(q, a) for a in range(q.size)]
    lse = penalties[i["action"]] + q[i["action"]]
    probs = _softmax(q)
    grad = probs - np.eye(q.size)[i["action"]]
    return {
        "ex13_logsumexp": float(lse),
        "ex13_penalty": penalties[i["action"]],
        "ex13_penalties_all_actions": penalties,
        "softmax": probs.tolist(),
        "ex13_gradient": grad.tolist(),
    }


def _ex14(i):
    tau, q, v = i["tau"], np.asarray(i["q_values"], dtype=float), i["value"]
    u = q - v
    weights = np.where(u < 0, 1.0 - tau, tau)
    terms = weights * u * u
    loss = k.expectile_loss(u, tau)
    # d/dV of mean(w u^2) with u = Q - V is -2 mean(w u): negative, so descent raises V.
    grad_v = float(-2.0 * np.mean(weights * u))
    minimizer = expectile(q, tau)
    return {
        "n_q": int(q.size),
        "residuals": u.tolist(),
        "weights": weights.tolist(),
        "terms": terms.tolist(),
        "terms_sum": float(terms.sum()),
        "ex14_loss": loss,
        "ex14_grad_v": grad_v,
        "ex14_minimizer": minimizer,
        "q_mean": float(q.mean()),
        "loss_at_minimizer": k.expectile_loss(q - minimizer, tau),
    }


def _ex15(i):
    rewards, request = i["rewards"], i["initial_request"]
    rtg = k.return_to_go(rewards, gamma=1.0)
    # R_hat_{t+1} = R_hat_t - r_t  <=>  R_hat_t = R_hat_0 - (G_0 - G_t).
    requests = request - rtg[0] + rtg
    return {
        "ex15_return_to_go": rtg.tolist(),
        "ex15_dt_requests": requests.tolist(),
        "ex15_discounted_return_to_go": k.return_to_go(rewards, gamma=i["gamma"]).tolist(),
        "request_minus_data_return": float(request - rtg[0]),
    }


def _ex16(i):
    return {
        "dqn": k.dqn_targets(i["rewards"], i["terminated"], i["next_q_target"], gamma=i["gamma"]).tolist(),
        "double": k.double_dqn_targets(i["rewards"], i["terminated"], i["next_q_online"], i["next_q_target"], gamma=i["gamma"]).tolist(),
        "online_argmax": np.asarray(i["next_q_online"]).argmax(axis=1).tolist(),
    }


def _ex17(i):
    values = k.pessimistic_values(i["empirical_means"], i["counts"], radius_scale=i["radius_scale"])
    means = np.asarray(i["empirical_means"], dtype=float)
    return {
        "values": values.tolist(),
        # How much each seen action loses to pessimism (inf for an unseen one).
        "radii": (means - values).tolist(),
    }


_SOLVERS = {9: _ex09, 10: _ex10, 11: _ex11, 12: _ex12, 13: _ex13, 14: _ex14, 15: _ex15, 16: _ex16, 17: _ex17}


def inputs(number: int) -> dict[str, Any]:
    """The inputs of exercise ``number`` (9-17), as a fresh dict."""
    if number in NUMERICAL:
        return dict(NUMERICAL[number])
    if number in CODE_EXAMPLES:
        return dict(CODE_EXAMPLES[number])
    raise ValueError(f"inputs: `number` must be a numerical or code exercise (9-17), got {number!r}")


def answers(number: int) -> dict[str, Any]:
    """Every computed quantity of exercise ``number`` (9-17): floats, ints or lists.

    Keys starting with ``exNN_`` are graded (see :data:`ANSWER_NAMES`); the others
    are intermediate values quoted in the worked solution.
    """
    if number not in _SOLVERS:
        raise ValueError(f"answers: `number` must be a numerical or code exercise (9-17), got {number!r}")
    return _SOLVERS[number](inputs(number))


ANSWER_NAMES: dict[int, tuple[str, ...]] = {
    9: ("ex09_active_mean_nll", "ex09_all_positions_mean", "ex09_unmasked_mean_nll"),
    10: ("ex10_exact_regret", "ex10_first_order_regret", "ex10_normalized_regret"),
    11: ("ex11_targets", "ex11_unmasked_second_target"),
    12: ("ex12_dqn_targets", "ex12_double_dqn_targets"),
    13: ("ex13_logsumexp", "ex13_penalty", "ex13_penalties_all_actions", "ex13_gradient"),
    14: ("ex14_loss", "ex14_grad_v", "ex14_minimizer"),
    15: ("ex15_return_to_go", "ex15_dt_requests", "ex15_discounted_return_to_go"),
}

# Absolute tolerance per graded answer; the solutions print six decimals, so 1e-4
# accepts a correctly rounded hand computation and rejects a wrong one.
DEFAULT_TOLERANCE = 1e-4


@dataclass(frozen=True)
class Answer:
    """One graded value: compare ``abs(student - value) <= tolerance`` element-wise."""

    name: str
    value: float | tuple[float, ...]
    tolerance: float = DEFAULT_TOLERANCE


def graded_answers(number: int) -> dict[str, Answer]:
    """The graded answers of numerical exercise ``number`` (9-15), by name."""
    if number not in ANSWER_NAMES:
        raise ValueError(f"graded_answers: `number` must be a numerical exercise (9-15), got {number!r}")
    computed = answers(number)
    out = {}
    for name in ANSWER_NAMES[number]:
        value = computed[name]
        value = tuple(float(x) for x in value) if isinstance(value, list) else float(value)
        out[name] = Answer(name, value)
    return out


def all_graded_answers() -> dict[str, Answer]:
    """Every graded answer of exercises 9-15, by name (``ex09_...`` to ``ex15_...``)."""
    return {name: a for number in ANSWER_NAMES for name, a in graded_answers(number).items()}


def check_answer(answer: Answer, submitted) -> bool:
    """True when ``submitted`` matches ``answer`` within its tolerance (shape included)."""
    expected = np.atleast_1d(np.asarray(answer.value, dtype=float))
    try:
        got = np.atleast_1d(np.asarray(submitted, dtype=float))
    except (TypeError, ValueError):
        return False
    if got.shape != expected.shape:
        return False
    same_inf = np.isinf(expected) & (got == expected)
    with np.errstate(invalid="ignore"):  # inf - inf is handled by same_inf
        close = np.abs(got - expected) <= answer.tolerance
    return bool(np.all(same_inf | (np.isfinite(expected) & close)))
