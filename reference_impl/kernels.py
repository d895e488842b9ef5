"""The ten reference kernels of Module 5 (pure numpy; the single source of truth).

Conventions shared by all kernels:

* inputs may be lists or arrays and are never modified;
* array outputs are float64 (bool for :func:`behavior_support_mask`); scalar losses
  are Python floats;
* bad input raises :class:`~reference_impl.validation.KernelInputError`, a
  ``ValueError`` whose message names the kernel and the argument;
* ``terminated`` means the task really ended (goal, trap). A transition cut by a
  time limit is passed as *not* terminated and bootstraps.

The lines between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` are what students
write; ``m5 release`` replaces them with a stub, as nbgrader does in notebooks.
"""

from __future__ import annotations

import math

import numpy as np

from reference_impl import validation as v

__all__ = [
    "dqn_targets",
    "double_dqn_targets",
    "masked_token_nll",
    "cql_discrete_penalty",
    "expectile_loss",
    "return_to_go",
    "pessimistic_values",
    "behavior_support_mask",
    "fqe_targets",
    "iql_advantage_weights",
]


def _transition_batch(kernel, rewards, terminated, next_q, q_name):
    """Shared checks of the bootstrapped-target kernels: (B,), (B,), (B, A)."""
    r = v.float_array(rewards, "rewards", kernel)
    v.require_ndim(r, "rewards", kernel, (1,), "(B,)")
    done = v.flag_array(terminated, "terminated", kernel)
    v.require_ndim(done, "terminated", kernel, (1,), "(B,)")
    v.require_same_length(done, "terminated", kernel, r.shape[0], "rewards")
    q = v.float_array(next_q, q_name, kernel)
    v.require_ndim(q, q_name, kernel, (2,), "(B, A)")
    v.require_same_length(q, q_name, kernel, r.shape[0], "rewards")
    v.require_actions_axis(q, q_name, kernel)
    v.require_finite(r, "rewards", kernel)
    v.require_finite(q, q_name, kernel, used=~done)
    return r, done, q


def _bootstrap(rewards, terminated, gamma, next_values):
    """r + gamma * next_value on live rows, r alone on terminal rows.

    ``next_values`` is a fresh array owned by the caller; terminal rows are zeroed in
    place so that whatever they hold (even NaN) never reaches the result.
    """
    np.copyto(next_values, 0.0, where=terminated)
    next_values *= gamma
    next_values += rewards
    return next_values


def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
    """DQN regression targets.

    y_i = r_i + gamma * (1 - terminated_i) * max_a Qbar(s'_i, a)

    Shapes: rewards (B,), terminated (B,) bool or 0/1, next_q_target (B, A) -> (B,) float64.
    An empty batch (B = 0) gives an empty result.
    Terminal rows never read ``next_q_target`` (it may hold anything there).
    Raises ValueError on wrong shapes, an empty action axis, non-0/1 flags,
    non-finite values that are used, or gamma outside [0, 1].
    Used values: every reward, and ``next_q_target`` on every row that is not terminal,
    at any gamma (0 included). The action axis must be non-empty even when B = 0, so
    shape (0, 0) raises.
    Inputs may be lists or arrays and are never modified.
    """
    ### BEGIN SOLUTION
    kernel = "dqn_targets"
    g = v.discount(gamma, kernel)
    r, done, q = _transition_batch(kernel, rewards, terminated, next_q_target, "next_q_target")
    return _bootstrap(r, done, g, q.max(axis=1))
    ### END SOLUTION


def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
    """Double DQN targets: the online table selects, the target table evaluates.

    a*_i = argmax_a Q(s'_i, a)            (first index on ties)
    y_i  = r_i + gamma * (1 - terminated_i) * Qbar(s'_i, a*_i)

    Shapes: rewards (B,), terminated (B,), next_q_online (B, A), next_q_target (B, A) -> (B,) float64.
    An empty batch (B = 0) gives an empty result.
    Raises ValueError as :func:`dqn_targets`, and when the two tables differ in shape;
    both tables are used on every row that is not terminal.
    Inputs may be lists or arrays and are never modified.
    """
    ### BEGIN SOLUTION
    kernel = "double_dqn_targets"
    g = v.discount(gamma, kernel)
    r, done, online = _transition_batch(kernel, rewards, terminated, next_q_online, "next_q_online")
    target = v.float_array(next_q_target, "next_q_target", kernel)
    if target.shape != online.shape:
        raise v.fail(kernel, "next_q_target", f"must have the shape of `next_q_online` {online.shape}, got {target.shape}")
    v.require_finite(target, "next_q_target", kernel, used=~done)
    chosen = online.argmax(axis=1)
    evaluated = np.take_along_axis(target, chosen[:, None], axis=1)[:, 0]
    return _bootstrap(r, done, g, evaluated)
    ### END SOLUTION


def masked_token_nll(token_logprobs, mask):
    """Mean negative log-likelihood over the active tokens of the whole batch.

    L = - sum(mask * logp) / sum(mask)

    ``token_logprobs`` and ``mask`` have the same (any) shape; ``mask`` is bool or 0/1.
    Masked-out positions are never read (padding may hold -inf). Returns a float.
    Raises ValueError on a shape mismatch, non-0/1 mask values, a mask with no active
    entry, or non-finite log-probabilities at active positions.
    Inputs may be lists or arrays and are never modified.
    """
    ### BEGIN SOLUTION
    kernel = "masked_token_nll"
    logp = v.float_array(token_logprobs, "token_logprobs", kernel)
    active = v.flag_array(mask, "mask", kernel)
    if active.shape != logp.shape:
        raise v.fail(kernel, "mask", f"must have the shape of `token_logprobs` {logp.shape}, got {active.shape}")
    n_active = int(np.count_nonzero(active))
    if n_active == 0:
        raise v.fail(kernel, "mask", "has no active entry; the mean over active tokens is undefined")
    if v.all_finite(logp):
        total = np.dot(logp.ravel(), active.ravel())
    else:  # padding may hold -inf: read only the active entries
        v.require_finite(logp[active], "token_logprobs", kernel)
        total = logp[active].sum()
    return float(-total / n_active)
    ### END SOLUTION


def cql_discrete_penalty(q_values, actions):
    """Discrete CQL regularizer: soft maximum minus the value of the logged action.

    penalty(s, a) = log sum_b exp Q(s, b) - Q(s, a)     (always >= 0)

    ``q_values`` (A,) with an integer ``actions`` gives that value; (B, A) with (B,)
    integer ``actions`` gives the batch mean. Computed as
    (max Q - Q(s, a)) + log sum_b exp(Q(s, b) - max Q), exact and warning-free for
    large |Q|. Returns a float. Raises ValueError on wrong shapes, an empty action
    axis, non-finite Q, or actions that are non-integer or out of range.
    An action is an integer or a float with an integral value (1.0 is action 1); a bool
    or a fractional float is non-integer. A batch with no rows, shape (0, A), has no
    mean: it raises ValueError (not graded: returning NaN is accepted too).
    Inputs may be lists or arrays and are never modified.
    """
    ### BEGIN SOLUTION
    kernel = "cql_discrete_penalty"
    q = v.float_array(q_values, "q_values", kernel)
    v.require_ndim(q, "q_values", kernel, (1, 2), "(A,) or (B, A)")
    v.require_actions_axis(q, "q_values", kernel)
    a = np.asarray(actions)
    if q.ndim == 1 and a.ndim != 0:
        raise v.fail(kernel, "actions", f"must be a single integer when `q_values` is 1-D, got shape {a.shape}")
    if q.ndim == 2:
        if q.shape[0] == 0:
            raise v.fail(kernel, "q_values", "has no rows; the batch mean is undefined")
        v.require_ndim(a, "actions", kernel, (1,), "(B,)")
        v.require_same_length(a, "actions", kernel, q.shape[0], "q_values")
    a = v.action_indices(a, "actions", kernel, q.shape[-1])
    v.require_finite(q, "q_values", kernel)
    rows = np.atleast_2d(q)
    top = rows.max(axis=1)
    taken = np.take_along_axis(rows, np.reshape(a, (-1, 1)), axis=1)[:, 0]
    soft_excess = np.log(np.exp(rows - top[:, None]).sum(axis=1))
    return float(np.mean((top - taken) + soft_excess))
    ### END SOLUTION


def expectile_loss(diff, tau):
    """Asymmetric squared loss of IQL's value function.

    L = mean( |tau - 1[u < 0]| * u**2 ),   u = diff = Q - V
    ``diff`` is the target minus the prediction (Q - V in IQL): u > 0 when the target is higher.

    Positive residuals weigh tau, negative ones 1 - tau; tau = 0.5 is half the MSE.
    ``diff`` has any non-empty shape. Returns a float. Raises ValueError when tau is
    not in the open interval (0, 1) or ``diff`` is empty or not finite.
    Inputs may be lists or arrays and are never modified.
    """
    ### BEGIN SOLUTION
    kernel = "expectile_loss"
    t = v.finite_scalar(tau, "tau", kernel)
    if not 0.0 < t < 1.0:
        raise v.fail(kernel, "tau", f"must lie in the open interval (0, 1), got {t}")
    u = v.float_array(diff, "diff", kernel)
    if u.size == 0:
        raise v.fail(kernel, "diff", "is empty; the mean is undefined")
    v.require_finite(u, "diff", kernel)
    flat = u.ravel()
    negative = np.minimum(flat, 0.0)
    positive = flat - negative
    return float((t * np.dot(positive, positive) + (1.0 - t) * np.dot(negative, negative)) / flat.size)
    ### END SOLUTION


def _discounted_scan(r: np.ndarray, g: float) -> np.ndarray:
    """G_t = r_t + g * G_{t+1} (G past the end is 0) for 0 <= g < 1, vectorised.

    The episode is cut into blocks of n steps (the first block may be shorter). In a
    block starting at s, with p_j = g**j and A the return-to-go after the block,

        G_{s+j} = sum_{i >= j} p_i r_{s+i} / p_j  +  g**(n-j) * A.

    Only p_i <= p_j enter the sum for G_{s+j}, so nothing cancels, and g**(n-1) stays
    far above underflow, so dividing by p_j loses no precision (``g**-t`` over a whole
    long episode would overflow). The block starts X_b obey X_b = H_b + g**n X_{b+1}
    (H_b: the block on its own). With more than one block, g**n <= e**-345, so two
    steps of that recursion are exact in float64: what they leave out is below
    1e-450 of the largest |G|. Rewards are scaled by a power of two (exactly) when
    tiny or huge, so the weights never underflow them and the sums never overflow.
    """
    if g == 0.0 or r.shape[0] == 0:
        return r.copy()
    largest = float(np.max(np.abs(r)))
    exponent = math.frexp(largest)[1] if largest and not 2.0**-300 <= largest <= 2.0**300 else 0
    scaled = np.ldexp(r, -exponent) if exponent else r
    # Blocks where g**(n-1) >= e**-345 (~1e-150), far above float64's underflow (~1e-308).
    n = max(1, int(min(r.shape[0], 1 + 345.0 / -math.log(g))))
    blocks = -(-r.shape[0] // n)
    padded = np.zeros(blocks * n)
    padded[blocks * n - r.shape[0] :] = scaled  # zeros in front change no return-to-go after them
    powers = g ** np.arange(n + 1, dtype=np.float64)  # p_0 .. p_n
    local = np.cumsum((padded.reshape(blocks, n) * powers[:n])[:, ::-1], axis=1)[:, ::-1] / powers[:n]
    heads = local[:, 0].copy()
    starts = heads
    for _ in range(2):  # X_b = H_b + g**n X_{b+1}
        following = np.zeros(blocks)
        following[:-1] = starts[1:]
        starts = heads + powers[n] * following
    after = np.zeros(blocks)  # A of each block: the return-to-go from the next block's start
    after[:-1] = starts[1:]
    local += powers[n:0:-1] * after[:, None]  # g**(n-j) * A
    out = local.reshape(-1)[blocks * n - r.shape[0] :].copy()
    out[-1] = scaled[-1]  # the recursion's first step, exactly (p r / p may be off by one ulp)
    return np.ldexp(out, exponent) if exponent else out


def return_to_go(rewards, gamma=1.0):
    """Discounted return-to-go by reverse accumulation.

    G_{T-1} = r_{T-1},   G_t = r_t + gamma * G_{t+1}

    ``rewards`` (T,) -> (T,) float64 (int rewards give floats). An empty episode
    (T = 0) gives an empty result. Raises ValueError on a non 1-D or non-finite
    ``rewards`` or gamma outside [0, 1].
    Inputs may be lists or arrays and are never modified.
    """
    ### BEGIN SOLUTION
    kernel = "return_to_go"
    g = v.discount(gamma, kernel)
    r = v.float_array(rewards, "rewards", kernel)
    v.require_ndim(r, "rewards", kernel, (1,), "(T,)")
    v.require_finite(r, "rewards", kernel)
    if g == 1.0:
        # np.cumsum accumulates sequentially, i.e. exactly the recursion above.
        return np.cumsum(r[::-1])[::-1].copy()
    return _discounted_scan(r, g)
    ### END SOLUTION


def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
    """Count-based lower confidence values.

    value = mean - radius_scale / sqrt(n)   where n > 0
    value = -inf                            where n = 0 (whatever the mean is)

    ``empirical_means`` and ``counts`` share any shape; the output (float64) has it too, so
    empty inputs give an empty result.
    Raises ValueError on a shape mismatch, negative or non-finite counts, non-finite
    means where n > 0, or a negative or non-finite ``radius_scale``.
    Inputs may be lists or arrays and are never modified.
    """
    ### BEGIN SOLUTION
    kernel = "pessimistic_values"
    scale = v.finite_scalar(radius_scale, "radius_scale", kernel)
    if scale < 0:
        raise v.fail(kernel, "radius_scale", f"must be non-negative, got {scale}")
    means = v.float_array(empirical_means, "empirical_means", kernel)
    n = v.float_array(counts, "counts", kernel)
    if n.shape != means.shape:
        raise v.fail(kernel, "counts", f"must have the shape of `empirical_means` {means.shape}, got {n.shape}")
    v.require_finite(n, "counts", kernel)
    if n.size and n.min() < 0:
        raise v.fail(kernel, "counts", "must be non-negative")
    unseen = n == 0
    v.require_finite(means, "empirical_means", kernel, used=~unseen)
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = means - scale / np.sqrt(n)
    np.copyto(lower, -np.inf, where=unseen)
    return lower
    ### END SOLUTION


def behavior_support_mask(probabilities, threshold_ratio=0.35):
    """Actions the behavior policy takes often enough to be trusted.

    eligible(a) = p(a) >= threshold_ratio * max_b p(b)      (along the last axis)

    ``probabilities`` (A,) or (B, A), non-negative (counts work too) -> bool, same
    shape; an empty batch (B = 0) gives an empty mask. The most likely action is
    always eligible. Raises ValueError on other
    ranks, an empty action axis, negative or non-finite entries, an all-zero row, or
    ``threshold_ratio`` outside [0, 1]. The action axis must be non-empty even when
    B = 0, so shape (0, 0) raises.
    Inputs may be lists or arrays and are never modified.
    """
    ### BEGIN SOLUTION
    kernel = "behavior_support_mask"
    ratio = v.finite_scalar(threshold_ratio, "threshold_ratio", kernel)
    if not 0.0 <= ratio <= 1.0:
        raise v.fail(kernel, "threshold_ratio", f"must lie in [0, 1], got {ratio}")
    p = v.float_array(probabilities, "probabilities", kernel)
    v.require_ndim(p, "probabilities", kernel, (1, 2), "(A,) or (B, A)")
    v.require_actions_axis(p, "probabilities", kernel)
    v.require_finite(p, "probabilities", kernel)
    if p.size and p.min() < 0:  # an empty batch (0, A) is a valid batch: an empty mask
        raise v.fail(kernel, "probabilities", "must be non-negative")
    top = p.max(axis=-1, keepdims=True)
    if (top == 0).any():
        raise v.fail(kernel, "probabilities", "has an all-zero row; no action has support")
    return p >= ratio * top
    ### END SOLUTION


def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
    """Fitted-Q-evaluation targets: an expectation under the evaluated policy.

    y_i = r_i + gamma * (1 - terminated_i) * sum_a pi(a | s'_i) Q(s'_i, a)

    Shapes: rewards (B,), terminated (B,), next_q (B, A), next_policy_probs (B, A)
    -> (B,) float64. An empty batch (B = 0) gives an empty result. On terminal rows ``next_q``
    is not read (it may hold anything there); ``next_policy_probs`` is checked on every row.
    On a row that is not terminal every entry of ``next_q`` is used, also where
    pi(a | s') = 0: a non-finite one raises (it is not multiplied away).
    Raises ValueError as :func:`dqn_targets`, and when the policy table has
    another shape, negative or non-finite entries, an all-zero row, or a row whose sum
    differs from 1 by more than 1e-6.
    Inputs may be lists or arrays and are never modified.
    """
    ### BEGIN SOLUTION
    kernel = "fqe_targets"
    g = v.discount(gamma, kernel)
    r, done, q = _transition_batch(kernel, rewards, terminated, next_q, "next_q")
    pi = v.float_array(next_policy_probs, "next_policy_probs", kernel)
    if pi.shape != q.shape:
        raise v.fail(kernel, "next_policy_probs", f"must have the shape of `next_q` {q.shape}, got {pi.shape}")
    v.require_finite(pi, "next_policy_probs", kernel)
    if pi.size and pi.min() < 0:
        raise v.fail(kernel, "next_policy_probs", "must be non-negative")
    row_sums = pi @ np.ones(pi.shape[1])  # faster than sum(axis=1) on short rows
    if (row_sums == 0).any():
        raise v.fail(kernel, "next_policy_probs", "has an all-zero row; it is not a distribution")
    off = np.abs(row_sums - 1.0)
    if off.size and off.max() > 1e-6:
        worst = row_sums[np.argmax(off)]
        raise v.fail(kernel, "next_policy_probs", f"rows must sum to 1 (within 1e-6), found a row summing to {worst!r}")
    if not v.all_finite(q):  # only terminal rows may hold non-finite values here
        q = np.where(done[:, None], 0.0, q)
    return _bootstrap(r, done, g, np.einsum("ba,ba->b", pi, q))
    ### END SOLUTION


def iql_advantage_weights(advantages, beta, max_weight=100.0):
    """IQL's advantage-weighted regression weights, capped.

    w = min(exp(beta * A), max_weight) = exp(min(beta * A, log max_weight))

    The second form never overflows, so beta * A up to 1e6 is fine. ``advantages``
    has any shape; the output (float64) has it too, so empty advantages give an empty result.
    Raises ValueError when beta is negative or
    non-finite, max_weight is not a finite positive number, or advantages are not
    finite.
    Inputs may be lists or arrays and are never modified.
    """
    ### BEGIN SOLUTION
    kernel = "iql_advantage_weights"
    b = v.finite_scalar(beta, "beta", kernel)
    if b < 0:
        raise v.fail(kernel, "beta", f"must be non-negative, got {b}")
    cap = v.finite_scalar(max_weight, "max_weight", kernel)
    if cap <= 0:
        raise v.fail(kernel, "max_weight", f"must be positive, got {cap}")
    adv = v.float_array(advantages, "advantages", kernel)
    v.require_finite(adv, "advantages", kernel)
    with np.errstate(over="ignore"):
        exponent = np.minimum(b * adv, math.log(cap))
    return np.exp(exponent)
    ### END SOLUTION
