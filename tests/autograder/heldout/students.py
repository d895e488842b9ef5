"""Held-out student kernels (round 3): the set the likely-mistake figure is measured on.

Written before the catalog was widened and kept apart from it: nothing in
``autograder/hidden/mistakes`` may be shaped after one of these kernels. Each kernel is
written the way students write it, with no code shared with the mutants or the demo
submission: its own input handling (often none, or part of it), float32 or torch-like
conversions, loops, ``mask * logp`` and ``(1 - done) * q`` over padding, other errors on
edge inputs, and usually one misconception, sometimes two together.

``intent`` says in plain words what the author meant to get wrong (or that the kernel is
correct). ``expect`` is the catalog key the author judged a good catalog should name
(``"<kernel>.<key>"``), or None when no name should be given: every correct or
float32-correct kernel, and misconceptions the author judged too rare to catalog.
Keys that did not exist when the set was written name the misconception class the
author expected a widened catalog to hold.

``test_heldout_students.py`` runs each kernel in this process on the corpus calls (the
kernels are trusted test code) and asks the judge what it would name.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class Student:
    kernel: str
    name: str
    intent: str
    expect: str | None
    source: str

    @property
    def correct(self) -> bool:
        """Written to be right on every valid input (float32 and missing checks allowed)."""
        return self.intent.startswith("correct")


def _s(kernel: str, name: str, intent: str, expect: str | None, source: str) -> Student:
    full = None if expect is None else f"{kernel}.{expect}"
    return Student(kernel, name, intent, full, "import numpy as np\n\n" + textwrap.dedent(source).strip() + "\n")


STUDENTS = [
    # ================================================================ dqn_targets
    _s(
        "dqn_targets",
        "dqn_f32_no_done",
        "float32 tensors, no checks, forgot the terminal mask",
        "bootstraps_terminal",
        """
        def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
            r = np.array(rewards, dtype=np.float32)
            q = np.array(next_q_target, dtype=np.float32)
            return r + gamma * q.max(axis=1)
        """,
    ),
    _s(
        "dqn_targets",
        "dqn_loop_mean",
        "loop over the batch, averages next Q instead of max",
        "mean_over_actions",
        """
        def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
            if not 0 <= gamma <= 1:
                raise ValueError("gamma")
            out = []
            for r, done, row in zip(rewards, terminated, next_q_target):
                if done:
                    out.append(float(r))
                else:
                    out.append(float(r) + gamma * float(np.mean(row)))
            return np.array(out, dtype=float)
        """,
    ),
    _s(
        "dqn_targets",
        "dqn_done_mult",
        "multiplies by done (float32), not by 1 - done",
        "mask_inverted",
        """
        def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
            done = np.asarray(terminated, dtype=np.float32)
            q = np.asarray(next_q_target, dtype=np.float32)
            return np.asarray(rewards, dtype=np.float32) + gamma * done * q.max(-1)
        """,
    ),
    _s(
        "dqn_targets",
        "dqn_gamma_all_one_minus",
        "discounts the reward too, masks with (1 - done) * max",
        "discounts_reward",
        """
        def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
            r = np.asarray(rewards, dtype=float)
            d = np.asarray(terminated, dtype=float)
            q = np.asarray(next_q_target, dtype=float)
            if q.ndim != 2 or len(r) != len(q):
                raise ValueError("bad shapes")
            return gamma * (r + (1 - d) * q.max(axis=1))
        """,
    ),
    _s(
        "dqn_targets",
        "dqn_global_max",
        "one max over the whole next-Q table, no checks",
        "max_of_whole_table",
        """
        def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
            q = np.asarray(next_q_target, dtype=float)
            d = np.asarray(terminated).astype(bool)
            best = np.max(q[~d]) if (~d).any() else 0.0
            return np.where(d, 0.0, gamma * best) + np.asarray(rewards, dtype=float)
        """,
    ),
    _s(
        "dqn_targets",
        "dqn_zero_at_end",
        "terminal targets set to 0 (reward dropped)",
        "terminal_drops_reward",
        """
        def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
            r = np.asarray(rewards, dtype=float)
            done = np.asarray(terminated) == 1
            q = np.asarray(next_q_target, dtype=float)
            y = np.zeros_like(r)
            live = ~done
            y[live] = r[live] + gamma * q[live].max(axis=1)
            return y
        """,
    ),
    _s(
        "dqn_targets",
        "dqn_correct_f32",
        "correct: float32 torch-style, np.where, no input checks",
        None,
        """
        def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
            r = np.asarray(rewards, dtype=np.float32)
            d = np.asarray(terminated).astype(bool)
            q = np.asarray(next_q_target, dtype=np.float32)
            boot = np.where(d, np.float32(0), q.max(axis=1) if q.size else np.zeros(len(r), np.float32))
            return r + np.float32(gamma) * boot
        """,
    ),
    # ================================================================ double_dqn_targets
    _s(
        "double_dqn_targets",
        "ddqn_f32_online_value",
        "float32, reads the value from the online table",
        "online_evaluates",
        """
        def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
            on = np.asarray(next_q_online, dtype=np.float32)
            d = np.asarray(terminated, dtype=bool)
            a = on.argmax(axis=1)
            v = on[np.arange(len(a)), a]
            return np.asarray(rewards, dtype=np.float32) + gamma * np.where(d, 0, v)
        """,
    ),
    _s(
        "double_dqn_targets",
        "ddqn_loop_target_argmax",
        "loop, target table both selects and evaluates",
        "target_selects",
        """
        def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
            ys = []
            for i in range(len(rewards)):
                tgt = np.asarray(next_q_target[i], dtype=float)
                boot = 0.0 if terminated[i] else tgt[int(np.argmax(tgt))]
                ys.append(rewards[i] + gamma * boot)
            return np.array(ys, dtype=float)
        """,
    ),
    _s(
        "double_dqn_targets",
        "ddqn_swapped_one_minus",
        "target selects and online evaluates, (1 - done) mask",
        "roles_swapped",
        """
        def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
            online = np.asarray(next_q_online, dtype=float)
            target = np.asarray(next_q_target, dtype=float)
            if online.shape != target.shape:
                raise ValueError("shapes")
            act = np.argmax(target, axis=1)
            val = np.take_along_axis(online, act[:, None], axis=1).squeeze(1)
            return np.asarray(rewards, dtype=float) + gamma * (1 - np.asarray(terminated, dtype=float)) * val
        """,
    ),
    _s(
        "double_dqn_targets",
        "ddqn_no_done",
        "no checks, forgot terminated entirely",
        "bootstraps_terminal",
        """
        def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
            a = np.argmax(next_q_online, axis=1)
            tq = np.asarray(next_q_target, dtype=float)
            return np.asarray(rewards, dtype=float) + gamma * tq[np.arange(tq.shape[0]), a]
        """,
    ),
    _s(
        "double_dqn_targets",
        "ddqn_argmax_axis0",
        "argmax along the batch axis (an unusual slip)",
        None,
        """
        def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
            online = np.asarray(next_q_online, dtype=float)
            target = np.asarray(next_q_target, dtype=float)
            d = np.asarray(terminated).astype(bool)
            best = online.argmax(axis=0)[: online.shape[1]]
            idx = np.resize(best, len(d)) % max(online.shape[1], 1)
            v = target[np.arange(len(d)), idx] if len(d) else np.zeros(0)
            return np.asarray(rewards, dtype=float) + gamma * np.where(d, 0.0, v)
        """,
    ),
    # ================================================================ masked_token_nll
    _s(
        "masked_token_nll",
        "nll_no_sign_mask_mult",
        "mean log-prob without the minus, sum(mask * logp)",
        "missing_minus",
        """
        def masked_token_nll(token_logprobs, mask):
            lp = np.asarray(token_logprobs, dtype=float)
            m = np.asarray(mask, dtype=float)
            if lp.shape != m.shape:
                raise ValueError("shape mismatch")
            return float((m * lp).sum() / m.sum())
        """,
    ),
    _s(
        "masked_token_nll",
        "nll_f32_forgets_mask",
        "float32, forgets the mask: mean over every position",
        "mask_ignored",
        """
        def masked_token_nll(token_logprobs, mask):
            lp = np.asarray(token_logprobs, dtype=np.float32)
            return float(-lp.mean())
        """,
    ),
    _s(
        "masked_token_nll",
        "nll_loop_sum",
        "loop over tokens, returns the total instead of the mean",
        "sum_not_mean",
        """
        def masked_token_nll(token_logprobs, mask):
            total, n = 0.0, 0
            for lp, keep in zip(np.ravel(token_logprobs), np.ravel(mask)):
                if keep:
                    total -= float(lp)
                    n += 1
            if n == 0:
                raise ZeroDivisionError("no active tokens")
            return total
        """,
    ),
    _s(
        "masked_token_nll",
        "nll_f32_positive",
        "torch-style float32 boolean indexing, no minus sign",
        "missing_minus",
        """
        def masked_token_nll(token_logprobs, mask):
            lp = np.asarray(token_logprobs, dtype=np.float32)
            keep = np.asarray(mask).astype(bool)
            return float(lp[keep].mean())
        """,
    ),
    _s(
        "masked_token_nll",
        "nll_mult_all_positions",
        "sum(mask * logp) divided by every position",
        "divides_by_all_positions",
        """
        def masked_token_nll(token_logprobs, mask):
            lp = np.asarray(token_logprobs, dtype=float)
            m = np.asarray(mask, dtype=float)
            return float(-np.sum(m * lp) / m.size)
        """,
    ),
    _s(
        "masked_token_nll",
        "nll_sum_all_over_active",
        "no checks, sums every log-prob, divides by active count",
        "mask_not_applied",
        """
        def masked_token_nll(token_logprobs, mask):
            return float(-np.sum(token_logprobs) / np.sum(mask))
        """,
    ),
    _s(
        "masked_token_nll",
        "nll_correct_loop",
        "correct: loops over active tokens, no input checks",
        None,
        """
        def masked_token_nll(token_logprobs, mask):
            vals = [float(lp) for lp, k in zip(np.ravel(token_logprobs), np.ravel(mask)) if k]
            return -sum(vals) / len(vals)
        """,
    ),
    # ================================================================ cql_discrete_penalty
    _s(
        "cql_discrete_penalty",
        "cql_hard_max_nochecks",
        "no checks, max over actions instead of logsumexp",
        "hard_max",
        """
        def cql_discrete_penalty(q_values, actions):
            q = np.atleast_2d(np.asarray(q_values, dtype=float))
            a = np.atleast_1d(actions)
            return float(np.mean(q.max(axis=1) - q[np.arange(len(a)), a]))
        """,
    ),
    _s(
        "cql_discrete_penalty",
        "cql_sign_flipped",
        "data value minus logsumexp (sign of the penalty flipped)",
        "sign_flipped",
        """
        def cql_discrete_penalty(q_values, actions):
            q = np.atleast_2d(np.asarray(q_values, dtype=float))
            a = np.atleast_1d(np.asarray(actions, dtype=int))
            m = q.max(axis=1, keepdims=True)
            lse = (m + np.log(np.exp(q - m).sum(axis=1, keepdims=True)))[:, 0]
            return float(np.mean(q[np.arange(len(a)), a] - lse))
        """,
    ),
    _s(
        "cql_discrete_penalty",
        "cql_f32_batch_sum",
        "float32, sums the penalty over the batch",
        "sum_over_batch",
        """
        def cql_discrete_penalty(q_values, actions):
            q = np.asarray(q_values, dtype=np.float32).reshape(-1, np.shape(q_values)[-1])
            a = np.asarray(actions).reshape(-1)
            top = q.max(1)
            lse = top + np.log(np.exp(q - top[:, None]).sum(1))
            return float((lse - q[np.arange(q.shape[0]), a]).sum())
        """,
    ),
    _s(
        "cql_discrete_penalty",
        "cql_loop_naive_lse",
        "loop, log(sum(exp(q))) without the max shift",
        "unstable_logsumexp",
        """
        def cql_discrete_penalty(q_values, actions):
            q = np.asarray(q_values, dtype=float)
            if q.ndim == 1:
                q, actions = q[None], [actions]
            out = []
            for row, act in zip(q, actions):
                out.append(np.log(np.sum(np.exp(row))) - row[int(act)])
            return float(np.mean(out))
        """,
    ),
    _s(
        "cql_discrete_penalty",
        "cql_mean_q",
        "uses the mean Q over actions instead of logsumexp",
        "mean_of_q",
        """
        def cql_discrete_penalty(q_values, actions):
            q = np.atleast_2d(np.asarray(q_values, dtype=float))
            a = np.atleast_1d(actions).astype(int)
            if (a < 0).any() or (a >= q.shape[1]).any():
                raise IndexError("action out of range")
            return float(np.mean(q.mean(axis=1) - q[np.arange(len(a)), a]))
        """,
    ),
    _s(
        "cql_discrete_penalty",
        "cql_correct_f32",
        "correct: float32 stable logsumexp, no checks",
        None,
        """
        def cql_discrete_penalty(q_values, actions):
            q = np.atleast_2d(np.asarray(q_values, dtype=np.float32))
            a = np.atleast_1d(actions)
            top = q.max(axis=1)
            taken = q[np.arange(q.shape[0]), a]
            return float(np.mean((top - taken) + np.log(np.exp(q - top[:, None]).sum(axis=1))))
        """,
    ),
    # ================================================================ expectile_loss
    _s(
        "expectile_loss",
        "exp_f32_swapped",
        "float32, no checks, tau goes to negative residuals",
        "sides_swapped",
        """
        def expectile_loss(diff, tau):
            u = np.asarray(diff, dtype=np.float32)
            w = np.where(u < 0, tau, 1 - tau)
            return float(np.mean(w * u ** 2))
        """,
    ),
    _s(
        "expectile_loss",
        "exp_loop_total",
        "loop over residuals, returns the sum not the mean",
        "sum_not_mean",
        """
        def expectile_loss(diff, tau):
            if tau <= 0 or tau >= 1:
                raise ValueError("tau")
            total = 0.0
            for u in np.ravel(diff):
                total += (tau if u >= 0 else 1 - tau) * u * u
            return total
        """,
    ),
    _s(
        "expectile_loss",
        "exp_pred_minus_target",
        "reads diff as prediction - target (flips u)",
        "sides_swapped",
        """
        def expectile_loss(diff, tau):
            u = -np.asarray(diff, dtype=float)
            weight = np.abs(tau - (u < 0).astype(float))
            return float((weight * u ** 2).mean())
        """,
    ),
    _s(
        "expectile_loss",
        "exp_abs_nochecks",
        "absolute residual (pinball), no checks",
        "quantile_loss",
        """
        def expectile_loss(diff, tau):
            u = np.asarray(diff, dtype=float)
            return float(np.mean(np.where(u >= 0, tau * u, (tau - 1) * u)))
        """,
    ),
    _s(
        "expectile_loss",
        "exp_no_abs_weight",
        "weight tau - 1[u<0] without abs, raises TypeError on bad tau",
        "weight_without_abs",
        """
        def expectile_loss(diff, tau):
            if not isinstance(tau, float) or not 0 < tau < 1:
                raise TypeError("tau must be a float in (0, 1)")
            u = np.asarray(diff, dtype=float)
            return float(np.mean((tau - (u < 0)) * u * u))
        """,
    ),
    _s(
        "expectile_loss",
        "exp_weight_normalised",
        "divides by the sum of weights instead of the count",
        None,
        """
        def expectile_loss(diff, tau):
            u = np.asarray(diff, dtype=float).ravel()
            w = np.where(u > 0, tau, 1 - tau)
            return float(np.sum(w * u ** 2) / np.sum(w))
        """,
    ),
    _s(
        "expectile_loss",
        "exp_correct_gt",
        "correct: weight chosen by u > 0 in float32 (u = 0 weighs nothing)",
        None,
        """
        def expectile_loss(diff, tau):
            u = np.asarray(diff, dtype=np.float32)
            w = np.where(u > 0, np.float32(tau), np.float32(1 - tau))
            return float(np.mean(w * u * u, dtype=np.float64))
        """,
    ),
    # ================================================================ return_to_go
    _s(
        "return_to_go",
        "rtg_no_gamma",
        "ignores gamma: plain reversed cumulative sum",
        "gamma_ignored",
        """
        def return_to_go(rewards, gamma=1.0):
            r = np.asarray(rewards, dtype=float)
            return np.cumsum(r[::-1])[::-1]
        """,
    ),
    _s(
        "return_to_go",
        "rtg_f32_next_only",
        "float32, G_t starts at the next reward",
        "excludes_current_reward",
        """
        def return_to_go(rewards, gamma=1.0):
            r = np.asarray(rewards, dtype=np.float32)
            out = np.zeros_like(r)
            running = np.float32(0)
            for t in range(len(r) - 1, -1, -1):
                out[t] = running
                running = r[t] + gamma * running
            return out
        """,
    ),
    _s(
        "return_to_go",
        "rtg_powers_from_start",
        "discount powers counted from the episode start",
        "discount_from_episode_start",
        """
        def return_to_go(rewards, gamma=1.0):
            r = np.asarray(rewards, dtype=float)
            disc = gamma ** np.arange(len(r)) * r
            return np.cumsum(disc[::-1])[::-1]
        """,
    ),
    _s(
        "return_to_go",
        "rtg_prefix_loop",
        "accumulates from the start (prefix returns), no checks",
        "accumulates_forward",
        """
        def return_to_go(rewards, gamma=1.0):
            out, g = [], 0.0
            for x in rewards:
                g = float(x) + gamma * g
                out.append(g)
            return np.array(out)
        """,
    ),
    _s(
        "return_to_go",
        "rtg_loop_stops_at_one",
        "backward loop stops before t = 0 (first step left at 0)",
        "first_step_left_out",
        """
        def return_to_go(rewards, gamma=1.0):
            if not 0 <= gamma <= 1:
                raise ValueError("gamma")
            r = np.asarray(rewards, dtype=float)
            G = np.zeros(len(r))
            if len(r):
                G[-1] = r[-1]
            for t in range(len(r) - 2, 0, -1):
                G[t] = r[t] + gamma * G[t + 1]
            return G
        """,
    ),
    _s(
        "return_to_go",
        "rtg_gamma_outside",
        "running = gamma * (running + r_t): the current reward discounted",
        "discounts_current_reward",
        """
        def return_to_go(rewards, gamma=1.0):
            r = np.asarray(rewards, dtype=float)
            out = np.empty_like(r)
            running = 0.0
            for t in reversed(range(len(r))):
                running = gamma * (running + r[t])
                out[t] = running
            return out
        """,
    ),
    _s(
        "return_to_go",
        "rtg_correct_loop",
        "correct: plain float64 loop, no input checks",
        None,
        """
        def return_to_go(rewards, gamma=1.0):
            out = [0.0] * len(rewards)
            g = 0.0
            for t in range(len(rewards) - 1, -1, -1):
                g = float(rewards[t]) + gamma * g
                out[t] = g
            return np.array(out, dtype=float)
        """,
    ),
    # ================================================================ pessimistic_values
    _s(
        "pessimistic_values",
        "pv_n_plus_one",
        "radius c / sqrt(n + 1), unseen still -inf",
        "n_plus_one",
        """
        def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
            mu = np.asarray(empirical_means, dtype=float)
            n = np.asarray(counts, dtype=float)
            v = mu - radius_scale / np.sqrt(n + 1)
            return np.where(n == 0, -np.inf, v)
        """,
    ),
    _s(
        "pessimistic_values",
        "pv_ucb_smoothed",
        "UCB-style c / sqrt(n + 1) everywhere, unseen not special",
        "n_plus_one",
        """
        def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
            if radius_scale < 0:
                raise ValueError("radius_scale")
            return np.asarray(empirical_means, dtype=float) - radius_scale / np.sqrt(np.asarray(counts, dtype=float) + 1)
        """,
    ),
    _s(
        "pessimistic_values",
        "pv_f32_plus",
        "float32, adds the radius (optimism), no checks",
        "adds_radius",
        """
        def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
            mu = np.asarray(empirical_means, dtype=np.float32)
            n = np.asarray(counts, dtype=np.float32)
            with np.errstate(divide="ignore"):
                out = mu + radius_scale / np.sqrt(n)
            out[n == 0] = -np.inf
            return out
        """,
    ),
    _s(
        "pessimistic_values",
        "pv_loop_over_n",
        "loop, radius c / n",
        "radius_over_n",
        """
        def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
            mu = np.asarray(empirical_means, dtype=float)
            n = np.asarray(counts, dtype=float)
            out = np.empty(mu.shape)
            for idx in np.ndindex(mu.shape):
                out[idx] = -np.inf if n[idx] == 0 else mu[idx] - radius_scale / n[idx]
            return out
        """,
    ),
    _s(
        "pessimistic_values",
        "pv_divide_by_zero",
        "lets c / sqrt(0) give inf for unseen entries",
        "relies_on_division_by_zero",
        """
        def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.asarray(empirical_means, dtype=float) - radius_scale / np.sqrt(np.asarray(counts, dtype=float))
        """,
    ),
    _s(
        "pessimistic_values",
        "pv_log_ucb",
        "UCB1-like radius c * sqrt(log(n + 1) / n)",
        None,
        """
        def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
            mu = np.asarray(empirical_means, dtype=float)
            n = np.asarray(counts, dtype=float)
            out = np.full(mu.shape, -np.inf)
            seen = n > 0
            out[seen] = mu[seen] - radius_scale * np.sqrt(np.log(n[seen] + 1) / n[seen])
            return out
        """,
    ),
    _s(
        "pessimistic_values",
        "pv_correct_loop",
        "correct: loop with math.sqrt, no input checks",
        None,
        """
        import math

        def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
            mu = np.asarray(empirical_means, dtype=float)
            n = np.asarray(counts, dtype=float)
            out = np.empty(mu.shape)
            for idx in np.ndindex(mu.shape):
                out[idx] = mu[idx] - radius_scale / math.sqrt(n[idx]) if n[idx] > 0 else -math.inf
            return out
        """,
    ),
    # ================================================================ behavior_support_mask
    _s(
        "behavior_support_mask",
        "bsm_row_mean",
        "threshold relative to the row mean instead of the max",
        "mean_not_max",
        """
        def behavior_support_mask(probabilities, threshold_ratio=0.35):
            p = np.asarray(probabilities, dtype=float)
            return p >= threshold_ratio * p.mean(axis=-1, keepdims=True)
        """,
    ),
    _s(
        "behavior_support_mask",
        "bsm_normalise_then_cut",
        "normalises rows to sum 1, then compares with the ratio",
        "relative_to_sum",
        """
        def behavior_support_mask(probabilities, threshold_ratio=0.35):
            p = np.asarray(probabilities, dtype=float)
            if (p < 0).any():
                raise ValueError("negative")
            probs = p / p.sum(axis=-1, keepdims=True)
            return probs >= threshold_ratio
        """,
    ),
    _s(
        "behavior_support_mask",
        "bsm_f32_strict",
        "float32, strict >, no checks",
        "strict_inequality",
        """
        def behavior_support_mask(probabilities, threshold_ratio=0.35):
            p = np.asarray(probabilities, dtype=np.float32)
            return p > np.float32(threshold_ratio) * p.max(axis=-1, keepdims=True)
        """,
    ),
    _s(
        "behavior_support_mask",
        "bsm_axis0",
        "max over axis 0 (states) for tables",
        "column_max",
        """
        def behavior_support_mask(probabilities, threshold_ratio=0.35):
            p = np.asarray(probabilities, dtype=float)
            if p.ndim == 1:
                return p >= threshold_ratio * p.max()
            return p >= threshold_ratio * p.max(axis=0)
        """,
    ),
    _s(
        "behavior_support_mask",
        "bsm_loop_absolute",
        "loop, compares each probability with the ratio itself",
        "absolute_threshold",
        """
        def behavior_support_mask(probabilities, threshold_ratio=0.35):
            p = np.asarray(probabilities, dtype=float)
            out = np.zeros(p.shape, dtype=bool)
            for idx in np.ndindex(p.shape):
                out[idx] = p[idx] >= threshold_ratio
            return out
        """,
    ),
    _s(
        "behavior_support_mask",
        "bsm_correct_nochecks",
        "correct: relative cut, no input checks, empty-safe",
        None,
        """
        def behavior_support_mask(probabilities, threshold_ratio=0.35):
            p = np.asarray(probabilities, dtype=np.float64)
            top = p.max(axis=-1, keepdims=True) if p.size else p
            return p >= threshold_ratio * top
        """,
    ),
    # ================================================================ fqe_targets
    _s(
        "fqe_targets",
        "fqe_greedy_one_minus",
        "max over actions like DQN, (1 - done) mask",
        "max_not_expectation",
        """
        def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
            r = np.asarray(rewards, dtype=float)
            d = np.asarray(terminated, dtype=float)
            return r + gamma * (1.0 - d) * np.asarray(next_q, dtype=float).max(axis=1)
        """,
    ),
    _s(
        "fqe_targets",
        "fqe_f32_no_done",
        "float32, no terminal mask",
        "bootstraps_terminal",
        """
        def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
            q = np.asarray(next_q, dtype=np.float32)
            pi = np.asarray(next_policy_probs, dtype=np.float32)
            return np.asarray(rewards, dtype=np.float32) + gamma * (pi * q).sum(axis=1)
        """,
    ),
    _s(
        "fqe_targets",
        "fqe_loop_uniform",
        "loop, plain mean of next Q (policy ignored)",
        "uniform_average",
        """
        def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
            out = np.zeros(len(rewards))
            for i in range(len(rewards)):
                out[i] = rewards[i]
                if not terminated[i]:
                    out[i] += gamma * sum(next_q[i]) / len(next_q[i])
            return out
        """,
    ),
    _s(
        "fqe_targets",
        "fqe_end_zero",
        "terminal rows get 0 instead of the reward",
        "terminal_drops_reward",
        """
        def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
            r = np.asarray(rewards, dtype=float)
            d = np.asarray(terminated).astype(bool)
            q = np.where(d[:, None], 0.0, np.asarray(next_q, dtype=float))
            ev = np.einsum("ij,ij->i", np.asarray(next_policy_probs, dtype=float), q)
            return np.where(d, 0.0, r + gamma * ev)
        """,
    ),
    _s(
        "fqe_targets",
        "fqe_done_mult",
        "multiplies by done instead of 1 - done",
        "mask_inverted",
        """
        def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
            d = np.asarray(terminated, dtype=float)
            pi = np.asarray(next_policy_probs, dtype=float)
            q = np.nan_to_num(np.asarray(next_q, dtype=float))
            return np.asarray(rewards, dtype=float) + gamma * d * np.sum(pi * q, axis=1)
        """,
    ),
    _s(
        "fqe_targets",
        "fqe_correct_f32",
        "correct: float32 einsum with np.where, no checks",
        None,
        """
        def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
            d = np.asarray(terminated).astype(bool)
            q = np.where(d[:, None], 0, np.asarray(next_q, dtype=np.float32)) if len(d) else np.zeros((0, 1))
            pi = np.asarray(next_policy_probs, dtype=np.float32).reshape(q.shape)
            return np.asarray(rewards, dtype=np.float32) + np.float32(gamma) * (pi * q).sum(axis=1)
        """,
    ),
    # ================================================================ iql_advantage_weights
    _s(
        "iql_advantage_weights",
        "iql_neg_adv",
        "exp(-beta * A): the advantage's sign flipped",
        "advantage_sign_flipped",
        """
        def iql_advantage_weights(advantages, beta, max_weight=100.0):
            a = np.asarray(advantages, dtype=float)
            with np.errstate(over="ignore"):
                return np.minimum(np.exp(-beta * a), max_weight)
        """,
    ),
    _s(
        "iql_advantage_weights",
        "iql_softmax",
        "softmax over the batch (weights sum to 1), no cap",
        "softmax",
        """
        def iql_advantage_weights(advantages, beta, max_weight=100.0):
            z = beta * np.asarray(advantages, dtype=float)
            e = np.exp(z - z.max())
            return e / e.sum()
        """,
    ),
    _s(
        "iql_advantage_weights",
        "iql_f32_uncapped",
        "float32, the cap never applied",
        "no_cap",
        """
        def iql_advantage_weights(advantages, beta, max_weight=100.0):
            a = np.asarray(advantages, dtype=np.float32)
            with np.errstate(over="ignore"):
                return np.exp(np.float32(beta) * a)
        """,
    ),
    _s(
        "iql_advantage_weights",
        "iql_clip_adv",
        "clips the advantage at max_weight before exp",
        "clips_advantage",
        """
        def iql_advantage_weights(advantages, beta, max_weight=100.0):
            if beta < 0 or max_weight <= 0:
                raise ValueError("beta / max_weight")
            a = np.clip(np.asarray(advantages, dtype=float), None, max_weight)
            with np.errstate(over="ignore"):
                return np.exp(beta * a)
        """,
    ),
    _s(
        "iql_advantage_weights",
        "iql_loop_no_beta",
        "loop, forgot beta, caps with min",
        "beta_ignored",
        """
        import math

        def iql_advantage_weights(advantages, beta, max_weight=100.0):
            a = np.asarray(advantages, dtype=float)
            out = np.empty(a.shape)
            for idx in np.ndindex(a.shape):
                out[idx] = max_weight if a[idx] > math.log(max_weight) else math.exp(a[idx])
            return out
        """,
    ),
    _s(
        "iql_advantage_weights",
        "iql_correct_clip",
        "correct: np.clip of exp (overflow clipped to the cap), no checks",
        None,
        """
        def iql_advantage_weights(advantages, beta, max_weight=100.0):
            with np.errstate(over="ignore"):
                return np.clip(np.exp(beta * np.asarray(advantages, dtype=float)), 0.0, max_weight)
        """,
    ),
]
