"""Realistic wrong kernels: the mutation-adequacy corpus of the hidden tests.

Each :class:`Mutant` is one mistake a student could plausibly make in one kernel.
``source`` defines that kernel again; ``test_mutants.py`` appends it to the correct
base submission ``autograder/assets/demo/correct.py`` (in Python the
later ``def`` wins), so the submission is correct everywhere except in one kernel.
The sources may use the base's helpers ``_flags`` (0/1 flags to bool, ValueError
otherwise), ``_gamma`` (checks [0, 1]) and ``_batch`` (checks (B,), (B,), (B, A)), so
a mutant fails for its intended bug and not for missing input checks.

A mutant that keeps full marks means the hidden suite has a gap: strengthen the
strategies in ``autograder/hidden/kernels.py``; never drop the mutant.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from autograder.demo import CORRECT

BASE_SUBMISSION = CORRECT


@dataclass(frozen=True)
class Mutant:
    kernel: str
    mutant_id: str
    description: str
    source: str

    @property
    def name(self) -> str:
        return f"{self.kernel}-{self.mutant_id}"


def _m(kernel: str, mutant_id: str, description: str, source: str) -> Mutant:
    return Mutant(kernel, mutant_id, description, textwrap.dedent(source).strip() + "\n")


def compose(mutant: Mutant, base: str | None = None) -> str:
    """The full submission: the correct base, then the mutant's redefinition."""
    base = BASE_SUBMISSION.read_text(encoding="utf-8") if base is None else base
    return f"{base.rstrip()}\n\n\n# ---- mutant {mutant.name}: {mutant.description}\n{mutant.source}"


DQN_HEAD = """
def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
    g = _gamma(gamma)
    r, d, q = _batch(rewards, terminated, next_q_target)
"""
DOUBLE_HEAD = """
def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
    g = _gamma(gamma)
    r, d, online = _batch(rewards, terminated, next_q_online)
    target = np.asarray(next_q_target, dtype=float)
    if target.shape != online.shape:
        raise ValueError("tables differ in shape")
"""
NLL_HEAD = """
def masked_token_nll(token_logprobs, mask):
    logp = np.asarray(token_logprobs, dtype=float)
    m = _flags(mask)
    if m.shape != logp.shape or not m.any():
        raise ValueError("bad mask")
"""
CQL_HEAD = """
def cql_discrete_penalty(q_values, actions):
    q = np.asarray(q_values, dtype=float)
    a = np.asarray(actions)
    if q.ndim not in (1, 2) or q.shape[-1] == 0 or a.dtype.kind not in "iu":
        raise ValueError("bad input")
    if q.ndim == 1:
        if a.ndim != 0:
            raise ValueError("one action expected")
        q, a = q[None, :], a[None]
    if a.shape != (q.shape[0],) or (a < 0).any() or (a >= q.shape[1]).any():
        raise ValueError("bad actions")
    taken = q[np.arange(len(a)), a]
"""
EXPECTILE_HEAD = """
def expectile_loss(diff, tau):
    if not 0 < tau < 1:
        raise ValueError("tau must be in (0, 1)")
    u = np.asarray(diff, dtype=float)
    if u.size == 0:
        raise ValueError("empty diff")
"""
RTG_HEAD = """
def return_to_go(rewards, gamma=1.0):
    g = _gamma(gamma)
    r = np.asarray(rewards, dtype=float)
    if r.ndim != 1:
        raise ValueError("rewards must be 1-D")
"""
PESSIMISTIC_HEAD = """
def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
    means = np.asarray(empirical_means, dtype=float)
    n = np.asarray(counts, dtype=float)
    if means.shape != n.shape or (n < 0).any() or not np.isfinite(n).all():
        raise ValueError("bad counts")
    if not np.isfinite(radius_scale) or radius_scale < 0:
        raise ValueError("bad radius_scale")
"""
SUPPORT_HEAD = """
def behavior_support_mask(probabilities, threshold_ratio=0.35):
    p = np.asarray(probabilities, dtype=float)
    if p.ndim not in (1, 2) or p.shape[-1] == 0 or (p < 0).any() or not 0 <= threshold_ratio <= 1:
        raise ValueError("bad input")
    if (p.max(axis=-1) == 0).any():
        raise ValueError("all-zero row")
"""
FQE_HEAD = """
def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
    g = _gamma(gamma)
    r, d, q = _batch(rewards, terminated, next_q)
    pi = np.asarray(next_policy_probs, dtype=float)
    if pi.shape != q.shape or (pi < 0).any() or not np.allclose(pi.sum(axis=1), 1.0, atol=1e-6, rtol=0):
        raise ValueError("bad policy")
"""
IQL_HEAD = """
def iql_advantage_weights(advantages, beta, max_weight=100.0):
    if not np.isfinite(beta) or beta < 0 or not max_weight > 0:
        raise ValueError("bad beta or max_weight")
    a = np.asarray(advantages, dtype=float)
"""


def _body(head: str, body: str) -> str:
    """A kernel = a shared, correct head (input checks) + the mutated computation."""
    return textwrap.dedent(head).strip() + "\n" + textwrap.indent(textwrap.dedent(body).strip(), "    ") + "\n"


MUTANTS: list[Mutant] = [
    # ------------------------------------------------------------ dqn_targets
    _m("dqn_targets", "no_terminal_mask", "bootstraps every row, terminal ones too", _body(DQN_HEAD, "return r + g * q.max(axis=1)")),
    _m(
        "dqn_targets",
        "inverted_mask",
        "multiplies by terminated instead of 1 - terminated",
        _body(DQN_HEAD, "return r + g * d * q.max(axis=1)"),
    ),
    _m(
        "dqn_targets",
        "mean_not_max",
        "averages the next-state values instead of maximising",
        _body(DQN_HEAD, "return r + g * np.where(d, 0.0, q.mean(axis=1))"),
    ),
    _m("dqn_targets", "min_not_max", "takes the minimum over actions", _body(DQN_HEAD, "return r + g * np.where(d, 0.0, q.min(axis=1))")),
    _m(
        "dqn_targets",
        "max_without_axis",
        "q.max() without an axis: one maximum for the whole batch",
        _body(DQN_HEAD, "return r + g * np.where(d, 0.0, q.max())"),
    ),
    _m(
        "dqn_targets",
        "gamma_on_reward",
        "discounts the reward together with the bootstrap",
        _body(DQN_HEAD, "return g * (r + np.where(d, 0.0, q.max(axis=1)))"),
    ),
    _m(
        "dqn_targets",
        "terminal_drops_reward",
        "zeroes the whole target on terminal rows",
        _body(DQN_HEAD, "return np.where(d, 0.0, r + g * q.max(axis=1))"),
    ),
    _m(
        "dqn_targets",
        "bitwise_not_flags",
        "uses ~terminated on the raw flags (-1 for int 0, error for floats)",
        """
       def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
           g = _gamma(gamma)
           r, d, q = _batch(rewards, terminated, next_q_target)
           return r + g * ~np.asarray(terminated) * q.max(axis=1)
       """,
    ),
    _m(
        "dqn_targets",
        "reward_only_on_terminal",
        "live rows get gamma * max but lose their reward",
        _body(DQN_HEAD, "return np.where(d, r, g * q.max(axis=1))"),
    ),
    _m(
        "dqn_targets",
        "last_row_truncated",
        "treats the last row of the batch as an episode end (masks truncation)",
        _body(
            DQN_HEAD,
            """
       stop = d.copy()
       stop[-1] = True
       return r + g * np.where(stop, 0.0, q.max(axis=1))
       """,
        ),
    ),
    # ------------------------------------------------------------ double_dqn_targets
    _m(
        "double_dqn_targets",
        "online_evaluates",
        "evaluates the chosen action with the online table",
        _body(
            DOUBLE_HEAD,
            """
       chosen = online.argmax(axis=1)
       return r + g * np.where(d, 0.0, online[np.arange(len(r)), chosen])
       """,
        ),
    ),
    _m(
        "double_dqn_targets",
        "target_selects",
        "selects with the target table (plain DQN)",
        _body(DOUBLE_HEAD, "return r + g * np.where(d, 0.0, target.max(axis=1))"),
    ),
    _m(
        "double_dqn_targets",
        "last_index_ties",
        "breaks argmax ties by the last index",
        _body(
            DOUBLE_HEAD,
            """
       a = online.shape[1]
       chosen = a - 1 - online[:, ::-1].argmax(axis=1)
       return r + g * np.where(d, 0.0, target[np.arange(len(r)), chosen])
       """,
        ),
    ),
    _m(
        "double_dqn_targets",
        "no_terminal_mask",
        "bootstraps terminal rows",
        _body(
            DOUBLE_HEAD,
            """
       chosen = online.argmax(axis=1)
       return r + g * target[np.arange(len(r)), chosen]
       """,
        ),
    ),
    _m(
        "double_dqn_targets",
        "min_of_tables",
        "clipped double Q: the minimum of both tables at a*",
        _body(
            DOUBLE_HEAD,
            """
       rows, chosen = np.arange(len(r)), online.argmax(axis=1)
       value = np.minimum(online[rows, chosen], target[rows, chosen])
       return r + g * np.where(d, 0.0, value)
       """,
        ),
    ),
    _m(
        "double_dqn_targets",
        "average_tables",
        "evaluates a* with the mean of the two tables",
        _body(
            DOUBLE_HEAD,
            """
       rows, chosen = np.arange(len(r)), online.argmax(axis=1)
       return r + g * np.where(d, 0.0, 0.5 * (online[rows, chosen] + target[rows, chosen]))
       """,
        ),
    ),
    _m(
        "double_dqn_targets",
        "swapped_roles",
        "selects with the target table and evaluates with the online one",
        _body(
            DOUBLE_HEAD,
            """
       chosen = target.argmax(axis=1)
       return r + g * np.where(d, 0.0, online[np.arange(len(r)), chosen])
       """,
        ),
    ),
    # ------------------------------------------------------------ masked_token_nll
    _m(
        "masked_token_nll",
        "divide_by_all_tokens",
        "divides by every position, padding included",
        _body(NLL_HEAD, "return float(-logp[m].sum() / m.size)"),
    ),
    _m(
        "masked_token_nll",
        "divide_per_row",
        "averages per row, then over rows",
        _body(
            NLL_HEAD,
            """
       rows_logp = logp.reshape(-1, logp.shape[-1]) if logp.ndim > 1 else logp[None]
       rows_mask = m.reshape(rows_logp.shape)
       per_row = [-rl[rm].mean() for rl, rm in zip(rows_logp, rows_mask) if rm.any()]
       return float(np.mean(per_row))
       """,
        ),
    ),
    _m(
        "masked_token_nll",
        "divide_by_rows",
        "divides the masked sum by the number of rows",
        _body(NLL_HEAD, "return float(-logp[m].sum() / (logp.shape[0] if logp.ndim > 1 else 1))"),
    ),
    _m(
        "masked_token_nll",
        "no_minus_sign",
        "returns the mean log-likelihood (forgets the minus)",
        _body(NLL_HEAD, "return float(logp[m].sum() / m.sum())"),
    ),
    _m(
        "masked_token_nll",
        "mask_not_applied",
        "sums every log-prob but divides by the active count",
        _body(NLL_HEAD, "return float(-logp.sum() / m.sum())"),
    ),
    _m("masked_token_nll", "sum_not_mean", "returns the total NLL (no division)", _body(NLL_HEAD, "return float(-logp[m].sum())")),
    _m(
        "masked_token_nll",
        "multiplies_by_mask",
        "sum(mask * logp): 0 * -inf = NaN when padding holds -inf",
        _body(NLL_HEAD, "return float(-(m * logp).sum() / m.sum())"),
    ),
    _m(
        "masked_token_nll",
        "index_with_raw_mask",
        "indexes with the mask as given (a float mask breaks)",
        """
       def masked_token_nll(token_logprobs, mask):
           logp = np.asarray(token_logprobs, dtype=float)
           m = _flags(mask)
           if m.shape != logp.shape or not m.any():
               raise ValueError("bad mask")
           raw = np.asarray(mask)
           return float(-logp[raw].sum() / m.sum())
       """,
    ),
    # ------------------------------------------------------------ cql_discrete_penalty
    _m(
        "cql_discrete_penalty",
        "naive_logsumexp",
        "log(sum(exp(Q))) without subtracting the max (overflows)",
        _body(CQL_HEAD, "return float(np.mean(np.log(np.exp(q).sum(axis=1)) - taken))"),
    ),
    _m(
        "cql_discrete_penalty",
        "sum_not_mean",
        "sums the penalty over the batch",
        _body(
            CQL_HEAD,
            """
       top = q.max(axis=1, keepdims=True)
       lse = top[:, 0] + np.log(np.exp(q - top).sum(axis=1))
       return float(np.sum(lse - taken))
       """,
        ),
    ),
    _m(
        "cql_discrete_penalty",
        "hard_max",
        "max_b Q instead of the soft maximum",
        _body(CQL_HEAD, "return float(np.mean(q.max(axis=1) - taken))"),
    ),
    _m(
        "cql_discrete_penalty",
        "plus_data_value",
        "adds the data action's value instead of subtracting it",
        _body(
            CQL_HEAD,
            """
       top = q.max(axis=1, keepdims=True)
       lse = top[:, 0] + np.log(np.exp(q - top).sum(axis=1))
       return float(np.mean(lse + taken))
       """,
        ),
    ),
    _m(
        "cql_discrete_penalty",
        "log_mean_exp",
        "log of the mean of exp (loses log A)",
        _body(
            CQL_HEAD,
            """
       top = q.max(axis=1, keepdims=True)
       lme = top[:, 0] + np.log(np.exp(q - top).mean(axis=1))
       return float(np.mean(lme - taken))
       """,
        ),
    ),
    _m(
        "cql_discrete_penalty",
        "max_not_subtracted_back",
        "stabilises with the max but forgets to add it back",
        _body(
            CQL_HEAD,
            """
       top = q.max(axis=1, keepdims=True)
       return float(np.mean(np.log(np.exp(q - top).sum(axis=1)) - taken))
       """,
        ),
    ),
    _m(
        "cql_discrete_penalty",
        "global_max_shift",
        "stabilises with the batch-wide maximum (rows far below underflow)",
        _body(
            CQL_HEAD,
            """
       top = q.max()
       with np.errstate(divide="ignore"):
           lse = top + np.log(np.exp(q - top).sum(axis=1))
       return float(np.mean(lse - taken))
       """,
        ),
    ),
    _m(
        "cql_discrete_penalty",
        "batch_axis_logsumexp",
        "takes the logsumexp over the batch axis",
        _body(
            CQL_HEAD,
            """
       top = q.max(axis=0, keepdims=True)
       lse = top[0] + np.log(np.exp(q - top).sum(axis=0))
       return float(np.mean(lse) - np.mean(taken))
       """,
        ),
    ),
    # ------------------------------------------------------------ expectile_loss
    _m(
        "expectile_loss",
        "swapped_tau",
        "weights positive residuals by 1 - tau and negative ones by tau",
        _body(EXPECTILE_HEAD, "return float(np.mean(np.abs((1 - tau) - (u < 0)) * u**2))"),
    ),
    _m(
        "expectile_loss",
        "tau_of_abs",
        "puts tau on |u| (1[|u| < 0] is never true): symmetric tau * u**2",
        _body(EXPECTILE_HEAD, "return float(np.mean(np.abs(tau - (np.abs(u) < 0)) * u**2))"),
    ),
    _m(
        "expectile_loss",
        "sum_not_mean",
        "sums instead of averaging",
        _body(EXPECTILE_HEAD, "return float(np.sum(np.abs(tau - (u < 0)) * u**2))"),
    ),
    _m(
        "expectile_loss",
        "quantile_loss",
        "uses |u| instead of u**2 (the quantile / pinball loss)",
        _body(EXPECTILE_HEAD, "return float(np.mean(np.abs(tau - (u < 0)) * np.abs(u)))"),
    ),
    _m(
        "expectile_loss",
        "no_abs_on_weight",
        "weight tau - 1[u < 0] without the absolute value",
        _body(EXPECTILE_HEAD, "return float(np.mean((tau - (u < 0)) * u**2))"),
    ),
    _m(
        "expectile_loss",
        "mean_over_first_axis",
        "np.mean(axis=0): an array for 2-D residuals",
        _body(
            EXPECTILE_HEAD,
            """
       out = np.mean(np.abs(tau - (u < 0)) * u**2, axis=0)
       return float(out) if out.ndim == 0 else out
       """,
        ),
    ),
    # ------------------------------------------------------------ return_to_go
    _m(
        "return_to_go",
        "forward_cumsum",
        "accumulates from the start of the episode",
        _body(
            RTG_HEAD,
            """
       out, running = np.zeros_like(r), 0.0
       for t in range(len(r)):
           running = r[t] + g * running
           out[t] = running
       return out
       """,
        ),
    ),
    _m(
        "return_to_go",
        "exclusive_off_by_one",
        "G_t leaves out r_t (sums from t + 1)",
        _body(
            RTG_HEAD,
            """
       out, running = np.zeros_like(r), 0.0
       for t in range(len(r) - 1, -1, -1):
           out[t] = running
           running = r[t] + g * running
       return out
       """,
        ),
    ),
    _m(
        "return_to_go",
        "discount_includes_reward",
        "discounts the current reward too: G_t = g * (r_t + G_{t+1})",
        _body(
            RTG_HEAD,
            """
       out, running = np.zeros_like(r), 0.0
       for t in range(len(r) - 1, -1, -1):
           running = g * (r[t] + running)
           out[t] = running
       return out
       """,
        ),
    ),
    _m(
        "return_to_go",
        "int_output",
        "np.zeros_like on the raw rewards: integer rewards give integer returns",
        """
       def return_to_go(rewards, gamma=1.0):
           g = _gamma(gamma)
           raw = np.asarray(rewards)
           if raw.ndim != 1:
               raise ValueError("rewards must be 1-D")
           out, running = np.zeros_like(raw), 0.0
           for t in range(len(raw) - 1, -1, -1):
               running = raw[t] + g * running
               out[t] = running
           return out
       """,
    ),
    _m(
        "return_to_go",
        "negative_powers",
        "gamma**(-t) times a forward sum (overflows on long episodes)",
        _body(
            RTG_HEAD,
            """
       t = np.arange(len(r))
       with np.errstate(all="ignore"):
           scaled = np.cumsum((g**t * r)[::-1])[::-1]
           return scaled * g ** (-t.astype(float))
       """,
        ),
    ),
    _m(
        "return_to_go",
        "not_flipped_back",
        "accumulates the reversed rewards but forgets to reverse the result",
        _body(
            RTG_HEAD,
            """
       out, running = np.zeros_like(r), 0.0
       for i, reward in enumerate(r[::-1]):
           running = reward + g * running
           out[i] = running
       return out
       """,
        ),
    ),
    # ------------------------------------------------------------ pessimistic_values
    _m(
        "pessimistic_values",
        "c_over_n",
        "radius c / n instead of c / sqrt(n)",
        _body(
            PESSIMISTIC_HEAD,
            """
       with np.errstate(divide="ignore", invalid="ignore"):
           return np.where(n > 0, means - radius_scale / n, -np.inf)
       """,
        ),
    ),
    _m(
        "pessimistic_values",
        "zero_for_unseen",
        "gives 0 instead of -inf to unseen entries",
        _body(
            PESSIMISTIC_HEAD,
            """
       with np.errstate(divide="ignore", invalid="ignore"):
           return np.where(n > 0, means - radius_scale / np.sqrt(n), 0.0)
       """,
        ),
    ),
    _m(
        "pessimistic_values",
        "no_unseen_case",
        "relies on c / sqrt(0) = inf (NaN when radius_scale = 0)",
        _body(
            PESSIMISTIC_HEAD,
            """
       with np.errstate(divide="ignore", invalid="ignore"):
           return means - radius_scale / np.sqrt(n)
       """,
        ),
    ),
    _m(
        "pessimistic_values",
        "optimistic",
        "adds the radius (an upper bound, UCB)",
        _body(
            PESSIMISTIC_HEAD,
            """
       with np.errstate(divide="ignore", invalid="ignore"):
           return np.where(n > 0, means + radius_scale / np.sqrt(n), -np.inf)
       """,
        ),
    ),
    _m(
        "pessimistic_values",
        "scale_ignored",
        "always uses radius 1 / sqrt(n)",
        _body(
            PESSIMISTIC_HEAD,
            """
       with np.errstate(divide="ignore", invalid="ignore"):
           return np.where(n > 0, means - 1.0 / np.sqrt(n), -np.inf)
       """,
        ),
    ),
    _m(
        "pessimistic_values",
        "nan_for_unseen",
        "marks unseen entries with NaN",
        _body(
            PESSIMISTIC_HEAD,
            """
       with np.errstate(divide="ignore", invalid="ignore"):
           return np.where(n > 0, means - radius_scale / np.sqrt(n), np.nan)
       """,
        ),
    ),
    _m(
        "pessimistic_values",
        "fractional_counts_unseen",
        "treats counts below 1 as unseen (counts may be fractional)",
        _body(
            PESSIMISTIC_HEAD,
            """
       with np.errstate(divide="ignore", invalid="ignore"):
           return np.where(n >= 1, means - radius_scale / np.sqrt(n), -np.inf)
       """,
        ),
    ),
    _m(
        "pessimistic_values",
        "sqrt_of_scale_over_n",
        "radius sqrt(c / n) instead of c / sqrt(n)",
        _body(
            PESSIMISTIC_HEAD,
            """
       with np.errstate(divide="ignore", invalid="ignore"):
           return np.where(n > 0, means - np.sqrt(radius_scale / n), -np.inf)
       """,
        ),
    ),
    # ------------------------------------------------------------ behavior_support_mask
    _m(
        "behavior_support_mask",
        "absolute_threshold",
        "p >= ratio instead of p >= ratio * max p",
        _body(SUPPORT_HEAD, "return p >= threshold_ratio"),
    ),
    _m(
        "behavior_support_mask",
        "strict_inequality",
        "p > ratio * max p (drops the argmax at ratio 1)",
        _body(SUPPORT_HEAD, "return p > threshold_ratio * p.max(axis=-1, keepdims=True)"),
    ),
    _m(
        "behavior_support_mask",
        "global_max",
        "compares with the maximum of the whole table",
        _body(SUPPORT_HEAD, "return p >= threshold_ratio * p.max()"),
    ),
    _m(
        "behavior_support_mask",
        "column_max",
        "takes the maximum along axis 0",
        _body(SUPPORT_HEAD, "return p >= threshold_ratio * p.max(axis=0, keepdims=p.ndim > 1)"),
    ),
    _m(
        "behavior_support_mask",
        "relative_to_sum",
        "normalises by the row sum instead of the row maximum",
        _body(SUPPORT_HEAD, "return p >= threshold_ratio * p.sum(axis=-1, keepdims=True)"),
    ),
    _m(
        "behavior_support_mask",
        "max_without_keepdims",
        "row maxima without keepdims broadcast along the wrong axis",
        _body(SUPPORT_HEAD, "return p >= threshold_ratio * p.max(axis=-1)"),
    ),
    _m(
        "behavior_support_mask",
        "ratio_ignored",
        "always uses the default ratio 0.35",
        _body(SUPPORT_HEAD, "return p >= 0.35 * p.max(axis=-1, keepdims=True)"),
    ),
    # ------------------------------------------------------------ fqe_targets
    _m(
        "fqe_targets",
        "max_not_expectation",
        "maximises over actions like DQN",
        _body(FQE_HEAD, "return r + g * np.where(d, 0.0, q.max(axis=1))"),
    ),
    _m("fqe_targets", "ignores_terminated", "bootstraps terminal rows", _body(FQE_HEAD, "return r + g * (pi * q).sum(axis=1)")),
    _m(
        "fqe_targets",
        "uniform_average",
        "averages Q over actions, ignoring the policy",
        _body(FQE_HEAD, "return r + g * np.where(d, 0.0, q.mean(axis=1))"),
    ),
    _m(
        "fqe_targets",
        "greedy_in_pi",
        "reads Q at the policy's most likely action",
        _body(
            FQE_HEAD,
            """
       value = q[np.arange(len(r)), pi.argmax(axis=1)]
       return r + g * np.where(d, 0.0, value)
       """,
        ),
    ),
    _m(
        "fqe_targets",
        "terminal_drops_reward",
        "zeroes the whole target on terminal rows",
        _body(FQE_HEAD, "return np.where(d, 0.0, r + g * (pi * q).sum(axis=1))"),
    ),
    _m(
        "fqe_targets",
        "no_policy_checks",
        "accepts policy rows that are not distributions",
        """
       def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
           g = _gamma(gamma)
           r, d, q = _batch(rewards, terminated, next_q)
           pi = np.asarray(next_policy_probs, dtype=float)
           if pi.shape != q.shape:
               raise ValueError("bad policy shape")
           return r + g * np.where(d, 0.0, (pi * q).sum(axis=1))
       """,
    ),
    _m(
        "fqe_targets",
        "policy_over_batch",
        "multiplies by pi summed over the batch axis",
        _body(FQE_HEAD, "return r + g * np.where(d, 0.0, (pi.sum(axis=0) * q).sum(axis=1) / len(r))"),
    ),
    # ------------------------------------------------------------ iql_advantage_weights
    _m(
        "iql_advantage_weights",
        "clip_advantage_first",
        "clips the advantage at max_weight, then exponentiates",
        _body(
            IQL_HEAD,
            """
       with np.errstate(over="ignore"):
           return np.exp(beta * np.minimum(a, max_weight))
       """,
        ),
    ),
    _m(
        "iql_advantage_weights",
        "no_cap",
        "exp(beta * A) without the cap",
        _body(
            IQL_HEAD,
            """
       with np.errstate(over="ignore"):
           return np.exp(beta * a)
       """,
        ),
    ),
    _m(
        "iql_advantage_weights",
        "beta_ignored",
        "exp(A): beta left out",
        _body(IQL_HEAD, "return np.exp(np.minimum(a, np.log(max_weight)))"),
    ),
    _m(
        "iql_advantage_weights",
        "temperature_divides",
        "exp(A / beta), beta read as a temperature",
        _body(
            IQL_HEAD,
            """
       with np.errstate(all="ignore"):
           return np.exp(np.minimum(a / beta, np.log(max_weight)))
       """,
        ),
    ),
    _m(
        "iql_advantage_weights",
        "cap_without_log",
        "exp(min(beta * A, max_weight)): the cap not in log space",
        _body(
            IQL_HEAD,
            """
       with np.errstate(over="ignore"):
           return np.exp(np.minimum(beta * a, max_weight))
       """,
        ),
    ),
    _m(
        "iql_advantage_weights",
        "normalised",
        "divides the capped weights by their sum",
        _body(
            IQL_HEAD,
            """
       w = np.exp(np.minimum(beta * a, np.log(max_weight)))
       return w / w.sum()
       """,
        ),
    ),
]

KERNELS = tuple(dict.fromkeys(m.kernel for m in MUTANTS))


# The misconception each mutant embodies: the catalog entry (autograder/hidden/mistakes/)
# the grader must name for it, or None when the mutant's bug is not a wrong value
# (it only skips input checks). test_mutants.py checks the naming.
MISCONCEPTION: dict[str, str | None] = {
    "dqn_targets-no_terminal_mask": "dqn_targets.bootstraps_terminal",
    "dqn_targets-inverted_mask": "dqn_targets.mask_inverted",
    "dqn_targets-mean_not_max": "dqn_targets.mean_over_actions",
    "dqn_targets-min_not_max": "dqn_targets.min_over_actions",
    "dqn_targets-max_without_axis": "dqn_targets.max_of_whole_table",
    "dqn_targets-gamma_on_reward": "dqn_targets.discounts_reward",
    "dqn_targets-terminal_drops_reward": "dqn_targets.terminal_drops_reward",
    "dqn_targets-bitwise_not_flags": "dqn_targets.bitwise_not_on_flags",
    "dqn_targets-reward_only_on_terminal": "dqn_targets.live_rows_lose_reward",
    "dqn_targets-last_row_truncated": "dqn_targets.last_row_ends_episode",
    "double_dqn_targets-online_evaluates": "double_dqn_targets.online_evaluates",
    "double_dqn_targets-target_selects": "double_dqn_targets.target_selects",
    "double_dqn_targets-last_index_ties": "double_dqn_targets.last_index_ties",
    "double_dqn_targets-no_terminal_mask": "double_dqn_targets.bootstraps_terminal",
    "double_dqn_targets-min_of_tables": "double_dqn_targets.min_of_tables",
    "double_dqn_targets-average_tables": "double_dqn_targets.average_of_tables",
    "double_dqn_targets-swapped_roles": "double_dqn_targets.roles_swapped",
    "masked_token_nll-divide_by_all_tokens": "masked_token_nll.divides_by_all_positions",
    "masked_token_nll-divide_per_row": "masked_token_nll.mean_per_row",
    "masked_token_nll-divide_by_rows": "masked_token_nll.divides_by_rows",
    "masked_token_nll-no_minus_sign": "masked_token_nll.missing_minus",
    "masked_token_nll-mask_not_applied": "masked_token_nll.mask_not_applied",
    "masked_token_nll-sum_not_mean": "masked_token_nll.sum_not_mean",
    "masked_token_nll-multiplies_by_mask": "masked_token_nll.multiplies_by_mask",
    "masked_token_nll-index_with_raw_mask": "masked_token_nll.indexes_with_raw_mask",
    "cql_discrete_penalty-naive_logsumexp": "cql_discrete_penalty.unstable_logsumexp",
    "cql_discrete_penalty-sum_not_mean": "cql_discrete_penalty.sum_over_batch",
    "cql_discrete_penalty-hard_max": "cql_discrete_penalty.hard_max",
    "cql_discrete_penalty-plus_data_value": "cql_discrete_penalty.adds_data_value",
    "cql_discrete_penalty-log_mean_exp": "cql_discrete_penalty.log_mean_exp",
    "cql_discrete_penalty-max_not_subtracted_back": "cql_discrete_penalty.max_not_added_back",
    "cql_discrete_penalty-global_max_shift": "cql_discrete_penalty.batch_max_shift",
    "cql_discrete_penalty-batch_axis_logsumexp": "cql_discrete_penalty.logsumexp_over_batch",
    "expectile_loss-swapped_tau": "expectile_loss.sides_swapped",
    "expectile_loss-tau_of_abs": "expectile_loss.symmetric_weight",
    "expectile_loss-sum_not_mean": "expectile_loss.sum_not_mean",
    "expectile_loss-quantile_loss": "expectile_loss.quantile_loss",
    "expectile_loss-no_abs_on_weight": "expectile_loss.weight_without_abs",
    "expectile_loss-mean_over_first_axis": "expectile_loss.mean_over_first_axis",
    "return_to_go-forward_cumsum": "return_to_go.accumulates_forward",
    "return_to_go-exclusive_off_by_one": "return_to_go.excludes_current_reward",
    "return_to_go-discount_includes_reward": "return_to_go.discounts_current_reward",
    "return_to_go-int_output": "return_to_go.integer_output",
    "return_to_go-negative_powers": "return_to_go.negative_powers",
    "return_to_go-not_flipped_back": "return_to_go.result_not_reversed",
    "pessimistic_values-c_over_n": "pessimistic_values.radius_over_n",
    "pessimistic_values-zero_for_unseen": "pessimistic_values.unseen_get_zero",
    "pessimistic_values-no_unseen_case": "pessimistic_values.relies_on_division_by_zero",
    "pessimistic_values-optimistic": "pessimistic_values.adds_radius",
    "pessimistic_values-scale_ignored": "pessimistic_values.radius_scale_ignored",
    "pessimistic_values-nan_for_unseen": "pessimistic_values.unseen_get_nan",
    "pessimistic_values-fractional_counts_unseen": "pessimistic_values.fractional_counts_unseen",
    "pessimistic_values-sqrt_of_scale_over_n": "pessimistic_values.sqrt_of_ratio",
    "behavior_support_mask-absolute_threshold": "behavior_support_mask.absolute_threshold",
    "behavior_support_mask-strict_inequality": "behavior_support_mask.strict_inequality",
    "behavior_support_mask-global_max": "behavior_support_mask.table_max",
    "behavior_support_mask-column_max": "behavior_support_mask.column_max",
    "behavior_support_mask-relative_to_sum": "behavior_support_mask.relative_to_sum",
    "behavior_support_mask-max_without_keepdims": "behavior_support_mask.max_without_keepdims",
    "behavior_support_mask-ratio_ignored": "behavior_support_mask.ratio_ignored",
    "fqe_targets-max_not_expectation": "fqe_targets.max_not_expectation",
    "fqe_targets-ignores_terminated": "fqe_targets.bootstraps_terminal",
    "fqe_targets-uniform_average": "fqe_targets.uniform_average",
    "fqe_targets-greedy_in_pi": "fqe_targets.greedy_in_policy",
    "fqe_targets-terminal_drops_reward": "fqe_targets.terminal_drops_reward",
    "fqe_targets-no_policy_checks": None,
    "fqe_targets-policy_over_batch": "fqe_targets.policy_summed_over_batch",
    "iql_advantage_weights-clip_advantage_first": "iql_advantage_weights.clips_advantage",
    "iql_advantage_weights-no_cap": "iql_advantage_weights.no_cap",
    "iql_advantage_weights-beta_ignored": "iql_advantage_weights.beta_ignored",
    "iql_advantage_weights-temperature_divides": "iql_advantage_weights.beta_divides",
    "iql_advantage_weights-cap_without_log": "iql_advantage_weights.cap_not_in_log_space",
    "iql_advantage_weights-normalised": "iql_advantage_weights.normalized",
}
