"""Held-out wrong kernels: the measuring set of the likely-mistake feedback.

Written as students write (other spellings, loops, torch-free numpy idioms), each
with the misconception its author intended, in the author's own words (``intent``).
They were written before the mistake catalog (``autograder/hidden/mistakes.py``) and
are never used to build it; ``test_mistakes.py`` maps each intent to the catalog entry
that should be named (or to none, when the catalog does not know the misconception)
and measures how often the grader names it correctly and wrongly.

Each source redefines one kernel and is appended to the correct base submission.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass

from autograder.demo import CORRECT


@dataclass(frozen=True)
class HeldOut:
    kernel: str
    name: str
    intent: str          # the intended misconception, in plain words
    source: str

    def submission(self) -> str:
        return f"{CORRECT.read_text(encoding='utf-8').rstrip()}\n\n\n# ---- held-out {self.name}\n{self.source}"


def _h(kernel: str, name: str, intent: str, source: str) -> HeldOut:
    return HeldOut(kernel, name, intent, textwrap.dedent(source).strip() + "\n")


HELD_OUT = [
    # ------------------------------------------------------------ dqn_targets
    _h("dqn_targets", "loop_forgets_done", "terminal transitions still bootstrap", """
        def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
            g = _gamma(gamma)
            r, d, q = _batch(rewards, terminated, next_q_target)
            out = np.empty(len(r))
            for i in range(len(r)):
                out[i] = r[i] + g * np.max(q[i])
            return out
        """),
    _h("dqn_targets", "avg_next", "expected value over actions instead of the max", """
        def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
            g = _gamma(gamma)
            r, d, q = _batch(rewards, terminated, next_q_target)
            nxt = q.sum(axis=1) / q.shape[1]
            return r + g * nxt * (~d)
        """),
    _h("dqn_targets", "done_not_flipped", "uses terminated where not-terminated belongs", """
        def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
            g = _gamma(gamma)
            r, d, q = _batch(rewards, terminated, next_q_target)
            return r + g * d.astype(float) * q.max(axis=1)
        """),
    _h("dqn_targets", "whole_table_max", "max over the whole table, not per row", """
        def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
            g = _gamma(gamma)
            r, d, q = _batch(rewards, terminated, next_q_target)
            best = np.max(q)
            return np.where(d, r, r + g * best)
        """),
    _h("dqn_targets", "discount_everything", "gamma multiplies the reward too", """
        def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
            g = _gamma(gamma)
            r, d, q = _batch(rewards, terminated, next_q_target)
            return g * (r + np.where(d, 0.0, q.max(axis=1)))
        """),
    # ------------------------------------------------------------ double_dqn_targets
    _h("double_dqn_targets", "online_value", "reads the value from the online table", """
        def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
            g = _gamma(gamma)
            r, d, online = _batch(rewards, terminated, next_q_online)
            target = np.asarray(next_q_target, dtype=float)
            if target.shape != online.shape:
                raise ValueError("shape")
            best = online.max(axis=1)
            return r + g * np.where(d, 0.0, best)
        """),
    _h("double_dqn_targets", "argmax_target", "selects the action with the target table", """
        def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
            g = _gamma(gamma)
            r, d, online = _batch(rewards, terminated, next_q_online)
            target = np.asarray(next_q_target, dtype=float)
            if target.shape != online.shape:
                raise ValueError("shape")
            idx = np.argmax(target, axis=1)
            vals = np.array([target[i, idx[i]] for i in range(len(r))])
            return r + g * np.where(d, 0.0, vals)
        """),
    _h("double_dqn_targets", "no_done", "terminal transitions still bootstrap", """
        def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
            g = _gamma(gamma)
            r, d, online = _batch(rewards, terminated, next_q_online)
            target = np.asarray(next_q_target, dtype=float)
            if target.shape != online.shape:
                raise ValueError("shape")
            a = online.argmax(1)
            return r + g * target[np.arange(len(r)), a]
        """),
    _h("double_dqn_targets", "reverse_argmax", "ties go to the last action", """
        def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
            g = _gamma(gamma)
            r, d, online = _batch(rewards, terminated, next_q_online)
            target = np.asarray(next_q_target, dtype=float)
            if target.shape != online.shape:
                raise ValueError("shape")
            n = online.shape[1]
            a = n - 1 - np.argmax(online[:, ::-1], axis=1)
            return r + g * np.where(d, 0.0, target[np.arange(len(r)), a])
        """),
    # ------------------------------------------------------------ masked_token_nll
    _h("masked_token_nll", "mean_everything", "averages over all positions including padding", """
        def masked_token_nll(token_logprobs, mask):
            logp = np.asarray(token_logprobs, dtype=float)
            m = _flags(mask)
            if m.shape != logp.shape or not m.any():
                raise ValueError("bad mask")
            return float(-np.where(m, logp, 0.0).sum() / m.size)
        """),
    _h("masked_token_nll", "per_sequence", "mean per sequence then mean of sequences", """
        def masked_token_nll(token_logprobs, mask):
            logp = np.asarray(token_logprobs, dtype=float)
            m = _flags(mask)
            if m.shape != logp.shape or not m.any():
                raise ValueError("bad mask")
            if logp.ndim < 2:
                return float(-logp[m].mean())
            lp = logp.reshape(-1, logp.shape[-1])
            mm = m.reshape(-1, m.shape[-1])
            means = [-row[k].mean() for row, k in zip(lp, mm) if k.any()]
            return float(np.mean(means))
        """),
    _h("masked_token_nll", "positive_logprob", "forgets the negative sign", """
        def masked_token_nll(token_logprobs, mask):
            logp = np.asarray(token_logprobs, dtype=float)
            m = _flags(mask)
            if m.shape != logp.shape or not m.any():
                raise ValueError("bad mask")
            return float(logp[m].sum() / m.sum())
        """),
    _h("masked_token_nll", "no_division", "total instead of mean", """
        def masked_token_nll(token_logprobs, mask):
            logp = np.asarray(token_logprobs, dtype=float)
            m = _flags(mask)
            if m.shape != logp.shape or not m.any():
                raise ValueError("bad mask")
            return float(-logp[m].sum())
        """),
    # ------------------------------------------------------------ cql_discrete_penalty
    _h("cql_discrete_penalty", "unstable_lse", "logsumexp without the max trick overflows", """
        def cql_discrete_penalty(q_values, actions):
            q = np.atleast_2d(np.asarray(q_values, dtype=float))
            a = np.atleast_1d(np.asarray(actions))
            if q.shape[-1] == 0 or a.dtype.kind not in "iu" or a.shape != (q.shape[0],):
                raise ValueError("bad input")
            if (a < 0).any() or (a >= q.shape[1]).any():
                raise ValueError("bad actions")
            lse = np.log(np.sum(np.exp(q), axis=1))
            return float(np.mean(lse - q[np.arange(len(a)), a]))
        """),
    _h("cql_discrete_penalty", "max_minus_data", "hard max instead of logsumexp", """
        def cql_discrete_penalty(q_values, actions):
            q = np.atleast_2d(np.asarray(q_values, dtype=float))
            a = np.atleast_1d(np.asarray(actions))
            if q.shape[-1] == 0 or a.dtype.kind not in "iu" or a.shape != (q.shape[0],):
                raise ValueError("bad input")
            if (a < 0).any() or (a >= q.shape[1]).any():
                raise ValueError("bad actions")
            return float(np.mean(q.max(axis=1) - q[np.arange(len(a)), a]))
        """),
    _h("cql_discrete_penalty", "batch_total", "sums over the batch instead of averaging", """
        def cql_discrete_penalty(q_values, actions):
            q = np.atleast_2d(np.asarray(q_values, dtype=float))
            a = np.atleast_1d(np.asarray(actions))
            if q.shape[-1] == 0 or a.dtype.kind not in "iu" or a.shape != (q.shape[0],):
                raise ValueError("bad input")
            if (a < 0).any() or (a >= q.shape[1]).any():
                raise ValueError("bad actions")
            m = q.max(axis=1)
            lse = m + np.log(np.exp(q - m[:, None]).sum(axis=1))
            return float(np.sum(lse - q[np.arange(len(a)), a]))
        """),
    _h("cql_discrete_penalty", "mean_exp", "log of the mean of exponentials", """
        def cql_discrete_penalty(q_values, actions):
            q = np.atleast_2d(np.asarray(q_values, dtype=float))
            a = np.atleast_1d(np.asarray(actions))
            if q.shape[-1] == 0 or a.dtype.kind not in "iu" or a.shape != (q.shape[0],):
                raise ValueError("bad input")
            if (a < 0).any() or (a >= q.shape[1]).any():
                raise ValueError("bad actions")
            m = q.max(axis=1)
            soft = m + np.log(np.exp(q - m[:, None]).mean(axis=1))
            return float(np.mean(soft - q[np.arange(len(a)), a]))
        """),
    # ------------------------------------------------------------ expectile_loss
    _h("expectile_loss", "tau_flipped", "tau and 1 - tau swapped", """
        def expectile_loss(diff, tau):
            if not 0 < tau < 1:
                raise ValueError("tau")
            u = np.asarray(diff, dtype=float)
            if u.size == 0:
                raise ValueError("empty")
            w = np.where(u > 0, 1 - tau, tau)
            return float((w * u * u).mean())
        """),
    _h("expectile_loss", "pinball", "absolute value instead of square (quantile loss)", """
        def expectile_loss(diff, tau):
            if not 0 < tau < 1:
                raise ValueError("tau")
            u = np.asarray(diff, dtype=float)
            if u.size == 0:
                raise ValueError("empty")
            w = np.where(u < 0, 1 - tau, tau)
            return float(np.mean(w * np.abs(u)))
        """),
    _h("expectile_loss", "total_loss", "sum instead of mean", """
        def expectile_loss(diff, tau):
            if not 0 < tau < 1:
                raise ValueError("tau")
            u = np.asarray(diff, dtype=float)
            if u.size == 0:
                raise ValueError("empty")
            w = np.where(u < 0, 1 - tau, tau)
            return float(np.sum(w * u ** 2))
        """),
    # ------------------------------------------------------------ return_to_go
    _h("return_to_go", "prefix_sums", "sums from the start instead of to the end", """
        def return_to_go(rewards, gamma=1.0):
            g = _gamma(gamma)
            r = np.asarray(rewards, dtype=float)
            if r.ndim != 1:
                raise ValueError("1-D")
            out = np.zeros(len(r))
            acc = 0.0
            for t in range(len(r)):
                acc = r[t] + g * acc
                out[t] = acc
            return out
        """),
    _h("return_to_go", "skip_current", "the return at t starts at t + 1", """
        def return_to_go(rewards, gamma=1.0):
            g = _gamma(gamma)
            r = np.asarray(rewards, dtype=float)
            if r.ndim != 1:
                raise ValueError("1-D")
            out = np.zeros(len(r))
            acc = 0.0
            for t in reversed(range(len(r))):
                out[t] = acc
                acc = r[t] + g * acc
            return out
        """),
    _h("return_to_go", "int_buffer", "integer output array for integer rewards", """
        def return_to_go(rewards, gamma=1.0):
            g = _gamma(gamma)
            r = np.asarray(rewards)
            if r.ndim != 1:
                raise ValueError("1-D")
            out = np.empty_like(r)
            acc = 0.0
            for t in range(len(r) - 1, -1, -1):
                acc = r[t] + g * acc
                out[t] = acc
            return out
        """),
    _h("return_to_go", "reversed_result", "forgets to flip the result back", """
        def return_to_go(rewards, gamma=1.0):
            g = _gamma(gamma)
            r = np.asarray(rewards, dtype=float)
            if r.ndim != 1:
                raise ValueError("1-D")
            out, acc = [], 0.0
            for x in r[::-1]:
                acc = x + g * acc
                out.append(acc)
            return np.array(out)
        """),
    # ------------------------------------------------------------ pessimistic_values
    _h("pessimistic_values", "linear_radius", "radius decays as 1/n", """
        def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
            means = np.asarray(empirical_means, dtype=float)
            n = np.asarray(counts, dtype=float)
            if means.shape != n.shape or (n < 0).any() or not np.isfinite(radius_scale) or radius_scale < 0:
                raise ValueError("bad input")
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(n > 0, means - radius_scale / n, -np.inf)
        """),
    _h("pessimistic_values", "ucb", "adds the bonus instead of subtracting it", """
        def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
            means = np.asarray(empirical_means, dtype=float)
            n = np.asarray(counts, dtype=float)
            if means.shape != n.shape or (n < 0).any() or not np.isfinite(radius_scale) or radius_scale < 0:
                raise ValueError("bad input")
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(n > 0, means + radius_scale / np.sqrt(n), -np.inf)
        """),
    _h("pessimistic_values", "unseen_zero", "unseen actions get value 0", """
        def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
            means = np.asarray(empirical_means, dtype=float)
            n = np.asarray(counts, dtype=float)
            if means.shape != n.shape or (n < 0).any() or not np.isfinite(radius_scale) or radius_scale < 0:
                raise ValueError("bad input")
            out = np.zeros(means.shape)
            seen = n > 0
            out[seen] = means[seen] - radius_scale / np.sqrt(n[seen])
            return out
        """),
    # ------------------------------------------------------------ behavior_support_mask
    _h("behavior_support_mask", "fixed_cutoff", "absolute probability threshold", """
        def behavior_support_mask(probabilities, threshold_ratio=0.35):
            p = np.asarray(probabilities, dtype=float)
            if p.ndim not in (1, 2) or p.shape[-1] == 0 or (p < 0).any() or not 0 <= threshold_ratio <= 1:
                raise ValueError("bad input")
            if (p.max(axis=-1) == 0).any():
                raise ValueError("zero row")
            return p >= threshold_ratio
        """),
    _h("behavior_support_mask", "strict", "strict inequality loses the argmax at ratio 1", """
        def behavior_support_mask(probabilities, threshold_ratio=0.35):
            p = np.asarray(probabilities, dtype=float)
            if p.ndim not in (1, 2) or p.shape[-1] == 0 or (p < 0).any() or not 0 <= threshold_ratio <= 1:
                raise ValueError("bad input")
            top = p.max(axis=-1, keepdims=True)
            if (top == 0).any():
                raise ValueError("zero row")
            return p > threshold_ratio * top
        """),
    _h("behavior_support_mask", "table_max", "one maximum for the whole table", """
        def behavior_support_mask(probabilities, threshold_ratio=0.35):
            p = np.asarray(probabilities, dtype=float)
            if p.ndim not in (1, 2) or p.shape[-1] == 0 or (p < 0).any() or not 0 <= threshold_ratio <= 1:
                raise ValueError("bad input")
            if (p.max(axis=-1) == 0).any():
                raise ValueError("zero row")
            return p >= threshold_ratio * p.max()
        """),
    # ------------------------------------------------------------ fqe_targets
    _h("fqe_targets", "greedy_backup", "max over actions like Q-learning", """
        def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
            g = _gamma(gamma)
            r, d, q = _batch(rewards, terminated, next_q)
            pi = np.asarray(next_policy_probs, dtype=float)
            if pi.shape != q.shape or (pi < 0).any() or not np.allclose(pi.sum(axis=1), 1.0, atol=1e-6, rtol=0):
                raise ValueError("bad policy")
            return r + g * (1 - d) * q.max(axis=1)
        """),
    _h("fqe_targets", "plain_mean", "uniform average over actions", """
        def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
            g = _gamma(gamma)
            r, d, q = _batch(rewards, terminated, next_q)
            pi = np.asarray(next_policy_probs, dtype=float)
            if pi.shape != q.shape or (pi < 0).any() or not np.allclose(pi.sum(axis=1), 1.0, atol=1e-6, rtol=0):
                raise ValueError("bad policy")
            return np.where(d, r, r + g * q.mean(axis=1))
        """),
    _h("fqe_targets", "bootstrap_terminal", "terminal transitions still bootstrap", """
        def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
            g = _gamma(gamma)
            r, d, q = _batch(rewards, terminated, next_q)
            pi = np.asarray(next_policy_probs, dtype=float)
            if pi.shape != q.shape or (pi < 0).any() or not np.allclose(pi.sum(axis=1), 1.0, atol=1e-6, rtol=0):
                raise ValueError("bad policy")
            return r + g * np.einsum("ij,ij->i", pi, q)
        """),
    # ------------------------------------------------------------ iql_advantage_weights
    _h("iql_advantage_weights", "uncapped", "no cap on the weights", """
        def iql_advantage_weights(advantages, beta, max_weight=100.0):
            if not np.isfinite(beta) or beta < 0 or not max_weight > 0:
                raise ValueError("bad beta or max_weight")
            with np.errstate(over="ignore"):
                return np.exp(beta * np.asarray(advantages, dtype=float))
        """),
    _h("iql_advantage_weights", "beta_as_temperature", "divides by beta instead of multiplying", """
        def iql_advantage_weights(advantages, beta, max_weight=100.0):
            if not np.isfinite(beta) or beta < 0 or not max_weight > 0:
                raise ValueError("bad beta or max_weight")
            a = np.asarray(advantages, dtype=float)
            with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
                return np.minimum(np.exp(a / beta), max_weight)
        """),
    _h("iql_advantage_weights", "clip_exponent_at_cap", "clips the exponent at max_weight instead of log(max_weight)", """
        def iql_advantage_weights(advantages, beta, max_weight=100.0):
            if not np.isfinite(beta) or beta < 0 or not max_weight > 0:
                raise ValueError("bad beta or max_weight")
            a = np.asarray(advantages, dtype=float)
            return np.exp(np.clip(beta * a, None, max_weight))
        """),
    _h("iql_advantage_weights", "sum_to_one", "normalises the weights like a softmax", """
        def iql_advantage_weights(advantages, beta, max_weight=100.0):
            if not np.isfinite(beta) or beta < 0 or not max_weight > 0:
                raise ValueError("bad beta or max_weight")
            a = np.asarray(advantages, dtype=float)
            w = np.exp(np.minimum(beta * a, np.log(max_weight)))
            return w / w.sum()
        """),
]
