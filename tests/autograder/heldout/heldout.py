"""Held-out wrong kernels: the measuring set of the likely-mistake feedback.

Written as students write (other spellings, loops, torch-free numpy idioms), each
with the misconception its author intended, in the author's own words (``intent``).
They were written before the mistake catalog (``autograder/hidden/mistakes/``) and
are never used to build it; ``test_mistakes.py`` maps each intent to the catalog entry
that should be named (or to none, when the catalog does not know the misconception)
and measures how often the grader names it correctly and wrongly.

Each source redefines one kernel and is appended to the correct base submission.
"""

from __future__ import annotations

from dataclasses import dataclass

# The input checks are the mutants' shared heads (correct, so a kernel fails for its
# mistake alone); what follows each head is written independently.
from mutants.mutants import (
    CQL_HEAD,
    DOUBLE_HEAD,
    DQN_HEAD,
    EXPECTILE_HEAD,
    FQE_HEAD,
    IQL_HEAD,
    NLL_HEAD,
    PESSIMISTIC_HEAD,
    RTG_HEAD,
    SUPPORT_HEAD,
    _body,
)

from autograder.demo import CORRECT


@dataclass(frozen=True)
class HeldOut:
    kernel: str
    name: str
    intent: str  # the intended misconception, in plain words
    source: str

    def submission(self) -> str:
        return f"{CORRECT.read_text(encoding='utf-8').rstrip()}\n\n\n# ---- held-out {self.name}\n{self.source}"


def _h(kernel: str, name: str, intent: str, head: str, body: str) -> HeldOut:
    return HeldOut(kernel, name, intent, _body(head, body))


HELD_OUT = [
    # ------------------------------------------------------------ dqn_targets
    _h(
        "dqn_targets",
        "loop_forgets_done",
        "terminal transitions still bootstrap",
        DQN_HEAD,
        """
        out = np.empty(len(r))
        for i in range(len(r)):
            out[i] = r[i] + g * np.max(q[i])
        return out
        """,
    ),
    _h(
        "dqn_targets",
        "avg_next",
        "expected value over actions instead of the max",
        DQN_HEAD,
        """
        nxt = q.sum(axis=1) / q.shape[1]
        return r + g * nxt * (~d)
        """,
    ),
    _h(
        "dqn_targets",
        "done_not_flipped",
        "uses terminated where not-terminated belongs",
        DQN_HEAD,
        "return r + g * d.astype(float) * q.max(axis=1)",
    ),
    _h(
        "dqn_targets",
        "whole_table_max",
        "max over the whole table, not per row",
        DQN_HEAD,
        """
        best = np.max(q)
        return np.where(d, r, r + g * best)
        """,
    ),
    _h(
        "dqn_targets",
        "discount_everything",
        "gamma multiplies the reward too",
        DQN_HEAD,
        "return g * (r + np.where(d, 0.0, q.max(axis=1)))",
    ),
    # ------------------------------------------------------------ double_dqn_targets
    _h(
        "double_dqn_targets",
        "online_value",
        "reads the value from the online table",
        DOUBLE_HEAD,
        """
        best = online.max(axis=1)
        return r + g * np.where(d, 0.0, best)
        """,
    ),
    _h(
        "double_dqn_targets",
        "argmax_target",
        "selects the action with the target table",
        DOUBLE_HEAD,
        """
        idx = np.argmax(target, axis=1)
        vals = np.array([target[i, idx[i]] for i in range(len(r))])
        return r + g * np.where(d, 0.0, vals)
        """,
    ),
    _h(
        "double_dqn_targets",
        "no_done",
        "terminal transitions still bootstrap",
        DOUBLE_HEAD,
        """
        act = online.argmax(1)
        return r + g * target[np.arange(len(r)), act]
        """,
    ),
    _h(
        "double_dqn_targets",
        "reverse_argmax",
        "ties go to the last action",
        DOUBLE_HEAD,
        """
        n = online.shape[1]
        act = n - 1 - np.argmax(online[:, ::-1], axis=1)
        return r + g * np.where(d, 0.0, target[np.arange(len(r)), act])
        """,
    ),
    # ------------------------------------------------------------ masked_token_nll
    _h(
        "masked_token_nll",
        "mean_everything",
        "averages over all positions including padding",
        NLL_HEAD,
        "return float(-np.where(m, logp, 0.0).sum() / m.size)",
    ),
    _h(
        "masked_token_nll",
        "per_sequence",
        "mean per sequence then mean of sequences",
        NLL_HEAD,
        """
        if logp.ndim < 2:
            return float(-logp[m].mean())
        lp = logp.reshape(-1, logp.shape[-1])
        mm = m.reshape(-1, m.shape[-1])
        means = [-row[k].mean() for row, k in zip(lp, mm) if k.any()]
        return float(np.mean(means))
        """,
    ),
    _h(
        "masked_token_nll",
        "positive_logprob",
        "forgets the negative sign",
        NLL_HEAD,
        "return float(np.sum(logp, where=m) / np.count_nonzero(m))",
    ),
    _h(
        "masked_token_nll",
        "no_division",
        "total instead of mean",
        NLL_HEAD,
        "return -float(sum(x for x, keep in zip(logp.ravel(), m.ravel()) if keep))",
    ),
    # ------------------------------------------------------------ cql_discrete_penalty
    _h(
        "cql_discrete_penalty",
        "unstable_lse",
        "logsumexp without the max trick overflows",
        CQL_HEAD,
        "return float((np.log(np.exp(q).sum(axis=-1)) - taken).mean())",
    ),
    _h(
        "cql_discrete_penalty",
        "max_minus_data",
        "hard max instead of logsumexp",
        CQL_HEAD,
        """
        gaps = [row.max() - t for row, t in zip(q, taken)]
        return float(sum(gaps) / len(gaps))
        """,
    ),
    _h(
        "cql_discrete_penalty",
        "batch_total",
        "sums over the batch instead of averaging",
        CQL_HEAD,
        """
        mx = q.max(axis=1)
        lse = mx + np.log(np.exp(q - mx[:, None]).sum(axis=1))
        return float((lse - taken).sum())
        """,
    ),
    _h(
        "cql_discrete_penalty",
        "mean_exp",
        "log of the mean of exponentials",
        CQL_HEAD,
        """
        mx = q.max(axis=1)
        soft = mx + np.log(np.exp(q - mx[:, None]).mean(axis=1))
        return float(np.mean(soft - taken))
        """,
    ),
    # ------------------------------------------------------------ expectile_loss
    _h(
        "expectile_loss",
        "tau_flipped",
        "tau and 1 - tau swapped",
        EXPECTILE_HEAD,
        """
        w = np.where(u > 0, 1 - tau, tau)
        return float((w * u * u).mean())
        """,
    ),
    _h(
        "expectile_loss",
        "pinball",
        "absolute value instead of square (quantile loss)",
        EXPECTILE_HEAD,
        """
        w = np.where(u < 0, 1 - tau, tau)
        return float(np.mean(w * np.abs(u)))
        """,
    ),
    _h(
        "expectile_loss",
        "total_loss",
        "sum instead of mean",
        EXPECTILE_HEAD,
        """
        w = np.where(u < 0, 1 - tau, tau)
        return float(np.sum(w * u ** 2))
        """,
    ),
    # ------------------------------------------------------------ return_to_go
    _h(
        "return_to_go",
        "prefix_sums",
        "sums from the start instead of to the end",
        RTG_HEAD,
        """
        out, acc = [], 0.0
        for x in r:
            acc = x + g * acc
            out.append(acc)
        return np.array(out)
        """,
    ),
    _h(
        "return_to_go",
        "skip_current",
        "the return at t starts at t + 1",
        RTG_HEAD,
        """
        out = np.zeros(len(r))
        for t in range(len(r) - 2, -1, -1):
            out[t] = r[t + 1] + g * out[t + 1]
        return out
        """,
    ),
    _h(
        "return_to_go",
        "int_buffer",
        "integer output array for integer rewards",
        RTG_HEAD,
        """
        out = np.empty_like(np.asarray(rewards))
        acc = 0.0
        for t in reversed(range(len(r))):
            acc = r[t] + g * acc
            out[t] = acc
        return out
        """,
    ),
    _h(
        "return_to_go",
        "reversed_result",
        "forgets to flip the result back",
        RTG_HEAD,
        """
        res, acc = np.empty(len(r)), 0.0
        for i, x in enumerate(reversed(r)):
            acc = x + g * acc
            res[i] = acc
        return res
        """,
    ),
    # ------------------------------------------------------------ pessimistic_values
    _h(
        "pessimistic_values",
        "linear_radius",
        "radius decays as 1/n",
        PESSIMISTIC_HEAD,
        """
        out = np.full(means.shape, -np.inf)
        ok = n > 0
        out[ok] = means[ok] - radius_scale / n[ok]
        return out
        """,
    ),
    _h(
        "pessimistic_values",
        "ucb",
        "adds the bonus instead of subtracting it",
        PESSIMISTIC_HEAD,
        """
        with np.errstate(divide="ignore", invalid="ignore"):
            bonus = radius_scale / np.sqrt(n)
        return np.where(n == 0, -np.inf, means + bonus)
        """,
    ),
    _h(
        "pessimistic_values",
        "unseen_zero",
        "unseen actions get value 0",
        PESSIMISTIC_HEAD,
        """
        out = np.zeros(means.shape)
        seen = n > 0
        out[seen] = means[seen] - radius_scale / np.sqrt(n[seen])
        return out
        """,
    ),
    # ------------------------------------------------------------ behavior_support_mask
    _h(
        "behavior_support_mask",
        "fixed_cutoff",
        "absolute probability threshold",
        SUPPORT_HEAD,
        "return np.greater_equal(p, threshold_ratio)",
    ),
    _h(
        "behavior_support_mask",
        "strict",
        "strict inequality loses the argmax at ratio 1",
        SUPPORT_HEAD,
        """
        cut = threshold_ratio * np.max(p, axis=-1, keepdims=True)
        return p > cut
        """,
    ),
    _h("behavior_support_mask", "table_max", "one maximum for the whole table", SUPPORT_HEAD, "return p / p.max() >= threshold_ratio"),
    # ------------------------------------------------------------ fqe_targets
    _h(
        "fqe_targets",
        "greedy_backup",
        "max over actions like Q-learning",
        FQE_HEAD,
        "return r + g * (1 - d) * np.nan_to_num(q.max(axis=1))",
    ),
    _h("fqe_targets", "plain_mean", "uniform average over actions", FQE_HEAD, "return np.where(d, r, r + g * q.mean(axis=1))"),
    _h(
        "fqe_targets", "bootstrap_terminal", "terminal transitions still bootstrap", FQE_HEAD, 'return r + g * np.einsum("ij,ij->i", pi, q)'
    ),
    # ------------------------------------------------------------ iql_advantage_weights
    _h(
        "iql_advantage_weights",
        "uncapped",
        "no cap on the weights",
        IQL_HEAD,
        """
        with np.errstate(over="ignore"):
            return np.exp(beta * a)
        """,
    ),
    _h(
        "iql_advantage_weights",
        "beta_as_temperature",
        "divides by beta instead of multiplying",
        IQL_HEAD,
        """
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            return np.minimum(np.exp(a / beta), max_weight)
        """,
    ),
    _h(
        "iql_advantage_weights",
        "clip_exponent_at_cap",
        "clips the exponent at max_weight instead of log(max_weight)",
        IQL_HEAD,
        "return np.exp(np.clip(beta * a, None, max_weight))",
    ),
    _h(
        "iql_advantage_weights",
        "sum_to_one",
        "normalises the weights like a softmax",
        IQL_HEAD,
        """
        w = np.exp(np.minimum(beta * a, np.log(max_weight)))
        return w / w.sum()
        """,
    ),
]
