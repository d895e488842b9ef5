"""The wrong formulas of the mistake catalog (catalog.toml), one dict: ``FORMULAS["<kernel>.<key>"]``.

Each is trusted numpy code that embodies one misconception. It reads the validated inputs
of one call (:func:`core.prepare`: ``x.r`` the rewards as float64, ``x.d`` the terminal
flags as bool, ``x.g`` gamma, ``x.args`` every argument by name, ...), never anything a
student wrote.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def _masked(x, values):
    """Bootstrap only the live rows; terminal rows give 0 whatever ``values`` holds there."""
    return np.where(x.d, 0.0, values)


def _lse(q, axis=1):
    top = q.max(axis=axis, keepdims=True)
    return np.squeeze(top, axis) + np.log(np.exp(q - top).sum(axis=axis))


def _at(table, index):
    return table[np.arange(len(index)), index]


def _double(x, value):
    return x.r + x.g * _masked(x, value)


def _double_value(x):
    return _at(x.next_q_target, x.next_q_online.argmax(axis=1))


def _expected_next(x):
    return np.einsum("ba,ba->b", x.next_policy_probs, np.where(x.d[:, None], 0.0, x.next_q))


def _policy_value(x):
    """sum_a pi(a|s') Q(s', a) on every row, terminal rows included (as a formula reading them would)."""
    return np.einsum("ba,ba->b", x.next_policy_probs, x.next_q)


def _active_sum(x):
    return np.where(x.m, x.token_logprobs, 0.0).sum()


def _per_row(x):
    logp = x.token_logprobs.reshape(-1, x.token_logprobs.shape[-1]) if x.token_logprobs.ndim > 1 else x.token_logprobs[None]
    mask = x.m.reshape(logp.shape)
    return float(np.mean([-row[keep].mean() for row, keep in zip(logp, mask) if keep.any()]))


def _weight(x, tau):
    return np.abs(tau - (x.diff < 0))


def _scan(values, g):
    """G_t = values_t + g * G_{t+1}, float64."""
    out, running = np.empty(len(values)), 0.0
    for t in range(len(values) - 1, -1, -1):
        running = values[t] + g * running
        out[t] = running
    return out


def _lower(x, radius, unseen=-np.inf, seen=None):
    seen = x.counts > 0 if seen is None else seen
    return np.where(seen, x.empirical_means - radius, unseen)


def _ratio(x):
    return x.args["threshold_ratio"]


def _cap(x):
    return x.args["max_weight"]


FORMULAS: dict[str, Callable] = {
    # ------------------------------------------------------------ dqn_targets
    "dqn_targets.bootstraps_terminal": lambda x: x.r + x.g * x.next_q_target.max(axis=1),
    "dqn_targets.mask_inverted": lambda x: x.r + x.g * np.where(x.d, x.next_q_target.max(axis=1), 0.0),
    "dqn_targets.mean_over_actions": lambda x: x.r + x.g * _masked(x, x.next_q_target.mean(axis=1)),
    "dqn_targets.min_over_actions": lambda x: x.r + x.g * _masked(x, x.next_q_target.min(axis=1)),
    "dqn_targets.max_of_whole_table": lambda x: x.r + x.g * _masked(x, x.next_q_target.max()),
    "dqn_targets.discounts_reward": lambda x: x.g * (x.r + _masked(x, x.next_q_target.max(axis=1))),
    "dqn_targets.terminal_drops_reward": lambda x: np.where(x.d, 0.0, x.r + x.g * x.next_q_target.max(axis=1)),
    "dqn_targets.bitwise_not_on_flags": lambda x: x.r + x.g * ~x.raw_d * x.next_q_target.max(axis=1),
    "dqn_targets.live_rows_lose_reward": lambda x: np.where(x.d, x.r, x.g * x.next_q_target.max(axis=1)),
    "dqn_targets.last_row_ends_episode": lambda x: x.r + x.g * np.where(np.r_[x.d[:-1], True], 0.0, x.next_q_target.max(axis=1)),
    "dqn_targets.multiplies_by_not_done": lambda x: x.r + x.g * x.live * x.next_q_target.max(axis=1),
    "dqn_targets.gamma_ignored": lambda x: x.r + _masked(x, x.next_q_target.max(axis=1)),
    # ------------------------------------------------------------ double_dqn_targets
    "double_dqn_targets.online_evaluates": lambda x: _double(x, _at(x.next_q_online, x.next_q_online.argmax(axis=1))),
    "double_dqn_targets.target_selects": lambda x: _double(x, x.next_q_target.max(axis=1)),
    "double_dqn_targets.last_index_ties": lambda x: _double(
        x, _at(x.next_q_target, x.next_q_online.shape[1] - 1 - x.next_q_online[:, ::-1].argmax(axis=1))
    ),
    "double_dqn_targets.bootstraps_terminal": lambda x: x.r + x.g * _at(x.next_q_target, x.next_q_online.argmax(axis=1)),
    "double_dqn_targets.min_of_tables": lambda x: _double(
        x, np.minimum(_at(x.next_q_online, x.next_q_online.argmax(axis=1)), _at(x.next_q_target, x.next_q_online.argmax(axis=1)))
    ),
    "double_dqn_targets.average_of_tables": lambda x: _double(
        x, 0.5 * (_at(x.next_q_online, x.next_q_online.argmax(axis=1)) + _at(x.next_q_target, x.next_q_online.argmax(axis=1)))
    ),
    "double_dqn_targets.roles_swapped": lambda x: _double(x, _at(x.next_q_online, x.next_q_target.argmax(axis=1))),
    "double_dqn_targets.mask_inverted": lambda x: x.r + x.g * np.where(x.d, _double_value(x), 0.0),
    "double_dqn_targets.gamma_ignored": lambda x: x.r + _masked(x, _double_value(x)),
    # ------------------------------------------------------------ fqe_targets
    "fqe_targets.max_not_expectation": lambda x: x.r + x.g * _masked(x, x.next_q.max(axis=1)),
    "fqe_targets.bootstraps_terminal": lambda x: x.r + x.g * np.einsum("ba,ba->b", x.next_policy_probs, x.next_q),
    "fqe_targets.uniform_average": lambda x: x.r + x.g * _masked(x, x.next_q.mean(axis=1)),
    "fqe_targets.greedy_in_policy": lambda x: x.r + x.g * _masked(x, _at(x.next_q, x.next_policy_probs.argmax(axis=1))),
    "fqe_targets.terminal_drops_reward": lambda x: np.where(x.d, 0.0, x.r + x.g * _expected_next(x)),
    "fqe_targets.policy_summed_over_batch": lambda x: (
        x.r + x.g * _masked(x, (x.next_policy_probs.sum(axis=0) * x.next_q).sum(axis=1) / len(x.r))
    ),
    "fqe_targets.mask_inverted": lambda x: x.r + x.g * np.where(x.d, _policy_value(x), 0.0),
    "fqe_targets.gamma_ignored": lambda x: x.r + _expected_next(x),
    # ------------------------------------------------------------ masked_token_nll
    "masked_token_nll.divides_by_all_positions": lambda x: -_active_sum(x) / x.m.size,
    "masked_token_nll.mean_per_row": _per_row,
    "masked_token_nll.divides_by_rows": lambda x: -_active_sum(x) / (x.m.shape[0] if x.m.ndim > 1 else 1),
    "masked_token_nll.missing_minus": lambda x: _active_sum(x) / x.m.sum(),
    "masked_token_nll.mask_not_applied": lambda x: -x.token_logprobs.sum() / x.m.sum(),
    "masked_token_nll.sum_not_mean": lambda x: -_active_sum(x),
    "masked_token_nll.multiplies_by_mask": lambda x: -(x.m * x.token_logprobs).sum() / x.m.sum(),
    "masked_token_nll.indexes_with_raw_mask": lambda x: -x.token_logprobs[x.raw_mask].sum() / x.m.sum(),
    "masked_token_nll.mask_ignored": lambda x: -x.token_logprobs.mean(),
    "masked_token_nll.mask_inverted": lambda x: -np.where(x.m, 0.0, x.token_logprobs).sum() / np.count_nonzero(~x.m),
    # ------------------------------------------------------------ cql_discrete_penalty
    "cql_discrete_penalty.unstable_logsumexp": lambda x: np.mean(np.log(np.exp(x.q).sum(axis=1)) - x.taken),
    "cql_discrete_penalty.sum_over_batch": lambda x: np.sum(_lse(x.q) - x.taken),
    "cql_discrete_penalty.hard_max": lambda x: np.mean(x.q.max(axis=1) - x.taken),
    "cql_discrete_penalty.adds_data_value": lambda x: np.mean(_lse(x.q) + x.taken),
    "cql_discrete_penalty.log_mean_exp": lambda x: np.mean(_lse(x.q) - np.log(x.q.shape[1]) - x.taken),
    "cql_discrete_penalty.max_not_added_back": lambda x: np.mean(_lse(x.q) - x.q.max(axis=1) - x.taken),
    "cql_discrete_penalty.batch_max_shift": lambda x: np.mean(x.q.max() + np.log(np.exp(x.q - x.q.max()).sum(axis=1)) - x.taken),
    "cql_discrete_penalty.logsumexp_over_batch": lambda x: np.mean(_lse(x.q, axis=0)) - np.mean(x.taken),
    "cql_discrete_penalty.sign_flipped": lambda x: np.mean(x.taken - _lse(x.q)),
    "cql_discrete_penalty.mean_of_q": lambda x: np.mean(x.q.mean(axis=1) - x.taken),
    # ------------------------------------------------------------ expectile_loss
    "expectile_loss.sides_swapped": lambda x: np.mean(_weight(x, 1 - x.args["tau"]) * x.diff**2),
    "expectile_loss.symmetric_weight": lambda x: np.mean(x.args["tau"] * x.diff**2),
    "expectile_loss.sum_not_mean": lambda x: np.sum(_weight(x, x.args["tau"]) * x.diff**2),
    "expectile_loss.quantile_loss": lambda x: np.mean(_weight(x, x.args["tau"]) * np.abs(x.diff)),
    "expectile_loss.weight_without_abs": lambda x: np.mean((x.args["tau"] - (x.diff < 0)) * x.diff**2),
    "expectile_loss.mean_over_first_axis": lambda x: np.mean(_weight(x, x.args["tau"]) * x.diff**2, axis=0),
    # ------------------------------------------------------------ return_to_go
    "return_to_go.accumulates_forward": lambda x: _scan(x.r[::-1], x.g)[::-1],
    "return_to_go.excludes_current_reward": lambda x: np.r_[_scan(x.r, x.g)[1:], 0.0],
    "return_to_go.discounts_current_reward": lambda x: x.g * _scan(x.r, x.g),
    "return_to_go.integer_output": lambda x: _scan(x.r, x.g).astype(x.raw_r.dtype) if x.raw_r.dtype.kind in "iub" else _scan(x.r, x.g),
    "return_to_go.negative_powers": lambda x: (
        np.cumsum((x.g ** np.arange(len(x.r)) * x.r)[::-1])[::-1] * x.g ** (-np.arange(len(x.r), dtype=float))
    ),
    "return_to_go.result_not_reversed": lambda x: _scan(x.r, x.g)[::-1],
    "return_to_go.default_gamma_099": lambda x: _scan(x.r, x.g if "gamma" in x.explicit else 0.99),
    "return_to_go.gamma_ignored": lambda x: _scan(x.r, 1.0),
    "return_to_go.discount_from_episode_start": lambda x: _scan(x.g ** np.arange(len(x.r)) * x.r, 1.0),
    "return_to_go.first_step_left_out": lambda x: np.r_[0.0, _scan(x.r, x.g)[1:]] if len(x.r) > 1 else _scan(x.r, x.g),
    "return_to_go.last_reward_left_out": lambda x: _scan(np.r_[x.r[:-1], 0.0], x.g) if len(x.r) else x.r.copy(),
    # ------------------------------------------------------------ pessimistic_values
    "pessimistic_values.radius_over_n": lambda x: _lower(x, x.args["radius_scale"] / x.counts),
    "pessimistic_values.unseen_get_zero": lambda x: _lower(x, x.args["radius_scale"] / np.sqrt(x.counts), unseen=0.0),
    "pessimistic_values.relies_on_division_by_zero": lambda x: x.empirical_means - x.args["radius_scale"] / np.sqrt(x.counts),
    "pessimistic_values.adds_radius": lambda x: _lower(x, -x.args["radius_scale"] / np.sqrt(x.counts)),
    "pessimistic_values.radius_scale_ignored": lambda x: _lower(x, 1.0 / np.sqrt(x.counts)),
    "pessimistic_values.unseen_get_nan": lambda x: _lower(x, x.args["radius_scale"] / np.sqrt(x.counts), unseen=np.nan),
    "pessimistic_values.fractional_counts_unseen": lambda x: _lower(x, x.args["radius_scale"] / np.sqrt(x.counts), seen=x.counts >= 1),
    "pessimistic_values.sqrt_of_ratio": lambda x: _lower(x, np.sqrt(x.args["radius_scale"] / x.counts)),
    "pessimistic_values.n_plus_one": lambda x: _lower(x, x.args["radius_scale"] / np.sqrt(x.counts + 1.0)),
    # ------------------------------------------------------------ behavior_support_mask
    "behavior_support_mask.absolute_threshold": lambda x: x.probabilities >= _ratio(x),
    "behavior_support_mask.strict_inequality": lambda x: x.probabilities > _ratio(x) * x.probabilities.max(axis=-1, keepdims=True),
    "behavior_support_mask.table_max": lambda x: x.probabilities >= _ratio(x) * x.probabilities.max(),
    "behavior_support_mask.column_max": lambda x: (
        x.probabilities >= _ratio(x) * x.probabilities.max(axis=0, keepdims=x.probabilities.ndim > 1)
    ),
    "behavior_support_mask.relative_to_sum": lambda x: x.probabilities >= _ratio(x) * x.probabilities.sum(axis=-1, keepdims=True),
    "behavior_support_mask.max_without_keepdims": lambda x: x.probabilities >= _ratio(x) * x.probabilities.max(axis=-1),
    "behavior_support_mask.ratio_ignored": lambda x: x.probabilities >= 0.35 * x.probabilities.max(axis=-1, keepdims=True),
    "behavior_support_mask.mean_not_max": lambda x: x.probabilities >= _ratio(x) * x.probabilities.mean(axis=-1, keepdims=True),
    # ------------------------------------------------------------ iql_advantage_weights
    "iql_advantage_weights.clips_advantage": lambda x: np.exp(x.args["beta"] * np.minimum(x.advantages, _cap(x))),
    "iql_advantage_weights.no_cap": lambda x: np.exp(x.args["beta"] * x.advantages),
    "iql_advantage_weights.beta_ignored": lambda x: np.exp(np.minimum(x.advantages, np.log(_cap(x)))),
    "iql_advantage_weights.beta_divides": lambda x: np.exp(np.minimum(x.advantages / x.args["beta"], np.log(_cap(x)))),
    "iql_advantage_weights.cap_not_in_log_space": lambda x: np.exp(np.minimum(x.args["beta"] * x.advantages, _cap(x))),
    "iql_advantage_weights.normalized": lambda x: (
        np.exp(np.minimum(x.args["beta"] * x.advantages, np.log(_cap(x))))
        / np.exp(np.minimum(x.args["beta"] * x.advantages, np.log(_cap(x)))).sum()
    ),
    "iql_advantage_weights.advantage_sign_flipped": lambda x: np.exp(np.minimum(-x.args["beta"] * x.advantages, np.log(_cap(x)))),
    "iql_advantage_weights.softmax": lambda x: (
        np.exp(x.args["beta"] * x.advantages - np.max(x.args["beta"] * x.advantages, initial=-np.inf))
        / np.exp(x.args["beta"] * x.advantages - np.max(x.args["beta"] * x.advantages, initial=-np.inf)).sum()
    ),
}
