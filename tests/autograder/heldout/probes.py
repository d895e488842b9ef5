"""Probes for wrong names: student kernels whose slip no catalog entry describes.

Written *after* the catalog was widened (so they measure nothing about how well it
generalises): misconceptions the catalog does not hold, and two slips at once where
neither entry explains the result. The grader must name none of them;
``test_heldout_students.py`` checks it. Same form as ``students.py``.
"""

from __future__ import annotations

from heldout.students import _s

PROBES = [
    _s(
        "dqn_targets",
        "probe_dqn_gamma_squared",
        "discounts the bootstrap twice (gamma ** 2)",
        None,
        """
        def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
            d = np.asarray(terminated).astype(bool)
            q = np.asarray(next_q_target, dtype=float)
            return np.asarray(rewards, dtype=float) + gamma ** 2 * np.where(d, 0.0, q.max(axis=1))
        """,
    ),
    _s(
        "dqn_targets",
        "probe_dqn_first_action",
        "reads the first action's value, not the max",
        None,
        """
        def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
            d = np.asarray(terminated).astype(bool)
            q = np.asarray(next_q_target, dtype=float)
            return np.asarray(rewards, dtype=float) + gamma * np.where(d, 0.0, q[:, 0])
        """,
    ),
    _s(
        "double_dqn_targets",
        "probe_ddqn_discounts_reward",
        "right Double DQN value, but gamma multiplies the reward too",
        None,
        """
        def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
            d = np.asarray(terminated).astype(bool)
            a = np.argmax(np.asarray(next_q_online, dtype=float), axis=1)
            v = np.asarray(next_q_target, dtype=float)[np.arange(len(a)), a]
            return gamma * (np.asarray(rewards, dtype=float) + np.where(d, 0.0, v))
        """,
    ),
    _s(
        "masked_token_nll",
        "probe_nll_plus_sum",
        "no minus sign and no division (two slips)",
        None,
        """
        def masked_token_nll(token_logprobs, mask):
            lp = np.asarray(token_logprobs, dtype=float)
            return float(lp[np.asarray(mask).astype(bool)].sum())
        """,
    ),
    _s(
        "masked_token_nll",
        "probe_nll_median",
        "median instead of mean over active tokens",
        None,
        """
        def masked_token_nll(token_logprobs, mask):
            lp = np.asarray(token_logprobs, dtype=float)
            return float(-np.median(lp[np.asarray(mask).astype(bool)]))
        """,
    ),
    _s(
        "masked_token_nll",
        "probe_nll_count_plus_one",
        "divides by the active count + 1",
        None,
        """
        def masked_token_nll(token_logprobs, mask):
            lp = np.asarray(token_logprobs, dtype=float)
            m = np.asarray(mask).astype(bool)
            return float(-lp[m].sum() / (m.sum() + 1))
        """,
    ),
    _s(
        "cql_discrete_penalty",
        "probe_cql_lse_minus_max",
        "logsumexp minus the row max (data action ignored)",
        None,
        """
        def cql_discrete_penalty(q_values, actions):
            q = np.atleast_2d(np.asarray(q_values, dtype=float))
            m = q.max(axis=1)
            return float(np.mean(np.log(np.exp(q - m[:, None]).sum(axis=1))))
        """,
    ),
    _s(
        "expectile_loss",
        "probe_exp_tau_squared",
        "weights tau ** 2 and (1 - tau) ** 2",
        None,
        """
        def expectile_loss(diff, tau):
            u = np.asarray(diff, dtype=float)
            return float(np.mean(np.where(u >= 0, tau ** 2, (1 - tau) ** 2) * u ** 2))
        """,
    ),
    _s(
        "expectile_loss",
        "probe_exp_product_of_means",
        "mean weight times mean squared residual",
        None,
        """
        def expectile_loss(diff, tau):
            u = np.asarray(diff, dtype=float)
            return float(np.mean(np.abs(tau - (u < 0))) * np.mean(u ** 2))
        """,
    ),
    _s(
        "return_to_go",
        "probe_rtg_standardised",
        "standardises the returns (G - mean) / std like REINFORCE",
        None,
        """
        def return_to_go(rewards, gamma=1.0):
            out, g = [], 0.0
            for x in reversed(list(rewards)):
                g = float(x) + gamma * g
                out.append(g)
            G = np.array(out[::-1])
            return (G - G.mean()) / (G.std() + 1e-8) if len(G) else G
        """,
    ),
    _s(
        "return_to_go",
        "probe_rtg_gamma_squared",
        "discounts by gamma ** 2 per step",
        None,
        """
        def return_to_go(rewards, gamma=1.0):
            out, g = np.zeros(len(rewards)), 0.0
            for t in range(len(rewards) - 1, -1, -1):
                g = float(rewards[t]) + gamma * gamma * g
                out[t] = g
            return out
        """,
    ),
    _s(
        "pessimistic_values",
        "probe_pv_sqrt_n",
        "multiplies by sqrt(n) instead of dividing",
        None,
        """
        def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
            mu = np.asarray(empirical_means, dtype=float)
            n = np.asarray(counts, dtype=float)
            return np.where(n == 0, -np.inf, mu - radius_scale * np.sqrt(n))
        """,
    ),
    _s(
        "pessimistic_values",
        "probe_pv_plus_and_n_plus_one",
        "adds the radius and uses n + 1 (two slips)",
        None,
        """
        def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
            mu = np.asarray(empirical_means, dtype=float)
            n = np.asarray(counts, dtype=float)
            return np.where(n == 0, -np.inf, mu + radius_scale / np.sqrt(n + 1))
        """,
    ),
    _s(
        "behavior_support_mask",
        "probe_bsm_top_two",
        "keeps the two most likely actions",
        None,
        """
        def behavior_support_mask(probabilities, threshold_ratio=0.35):
            p = np.asarray(probabilities, dtype=float)
            if p.size == 0:
                return p.astype(bool)
            kth = np.sort(p, axis=-1)[..., -min(2, p.shape[-1])]
            return p >= np.expand_dims(kth, -1)
        """,
    ),
    _s(
        "fqe_targets",
        "probe_fqe_max_weighted",
        "max over actions of pi * Q",
        None,
        """
        def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
            d = np.asarray(terminated).astype(bool)
            q = np.where(d[:, None], 0.0, np.asarray(next_q, dtype=float)) if len(d) else np.zeros((0, 1))
            w = np.asarray(next_policy_probs, dtype=float).reshape(q.shape) * q
            return np.asarray(rewards, dtype=float) + gamma * (w.max(axis=1) if w.size else np.zeros(len(d)))
        """,
    ),
    _s(
        "iql_advantage_weights",
        "probe_iql_mean_normalised",
        "divides the capped weights by their mean",
        None,
        """
        def iql_advantage_weights(advantages, beta, max_weight=100.0):
            w = np.exp(np.minimum(beta * np.asarray(advantages, dtype=float), np.log(max_weight)))
            return w / w.mean() if w.size else w
        """,
    ),
    _s(
        "iql_advantage_weights",
        "probe_iql_standardised_adv",
        "standardises the advantages before exp",
        None,
        """
        def iql_advantage_weights(advantages, beta, max_weight=100.0):
            a = np.asarray(advantages, dtype=float)
            if a.size:
                a = (a - a.mean()) / (a.std() + 1e-8)
            return np.exp(np.minimum(beta * a, np.log(max_weight)))
        """,
    ),
]
