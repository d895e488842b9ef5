# Generated from reference_impl/kernels.py by the course's release build; do not edit.
# The graded kernels are stubs here: write them in the notebooks.
"""The ten reference kernels of Module 5 (pure numpy; the single source of truth).

Conventions shared by all kernels:

* inputs may be lists or arrays and are never modified;
* array outputs are float64 (bool for :func:`behavior_support_mask`); scalar losses
  are Python floats;
* bad input raises :class:`~m5_student.validation.KernelInputError`, a
  ``ValueError`` whose message names the kernel and the argument;
* ``terminated`` means the task really ended (goal, trap). A transition cut by a
  time limit is passed as *not* terminated and bootstraps.

The lines between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` are what students
write; ``m5 release`` replaces them with a stub, as nbgrader does in notebooks.
"""
from __future__ import annotations

import math

import numpy as np

from m5_student import validation as v

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


def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
    """DQN regression targets.

    y_i = r_i + gamma * (1 - terminated_i) * max_a Qbar(s'_i, a)

    Shapes: rewards (B,), terminated (B,) bool or 0/1, next_q_target (B, A) -> (B,).
    An empty batch (B = 0) gives an empty result.
    Terminal rows never read ``next_q_target`` (it may hold anything there).
    Raises ValueError on wrong shapes, an empty action axis, non-0/1 flags,
    non-finite values that are used, or gamma outside [0, 1].
    Inputs may be lists or arrays and are never modified.
    """
    raise NotImplementedError("implement dqn_targets in the assignment notebook")


def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
    """Double DQN targets: the online table selects, the target table evaluates.

    a*_i = argmax_a Q(s'_i, a)            (first index on ties)
    y_i  = r_i + gamma * (1 - terminated_i) * Qbar(s'_i, a*_i)

    Shapes: rewards (B,), terminated (B,), next_q_online (B, A), next_q_target (B, A) -> (B,).
    An empty batch (B = 0) gives an empty result.
    Raises ValueError as :func:`dqn_targets`, and when the two tables differ in shape.
    Inputs may be lists or arrays and are never modified.
    """
    raise NotImplementedError("implement double_dqn_targets in the assignment notebook")


def masked_token_nll(token_logprobs, mask):
    """Mean negative log-likelihood over the active tokens of the whole batch.

    L = - sum(mask * logp) / sum(mask)

    ``token_logprobs`` and ``mask`` have the same (any) shape; ``mask`` is bool or 0/1.
    Masked-out positions are never read (padding may hold -inf). Returns a float.
    Raises ValueError on a shape mismatch, non-0/1 mask values, a mask with no active
    entry, or non-finite log-probabilities at active positions.
    Inputs may be lists or arrays and are never modified.
    """
    raise NotImplementedError("implement masked_token_nll in the assignment notebook")


def cql_discrete_penalty(q_values, actions):
    """Discrete CQL regularizer: soft maximum minus the value of the logged action.

    penalty(s, a) = log sum_b exp Q(s, b) - Q(s, a)     (always >= 0)

    ``q_values`` (A,) with an integer ``actions`` gives that value; (B, A) with (B,)
    integer ``actions`` gives the batch mean. Computed as
    (max Q - Q(s, a)) + log sum_b exp(Q(s, b) - max Q), exact and warning-free for
    large |Q|. Returns a float. Raises ValueError on wrong shapes, an empty action
    axis, non-finite Q, or actions that are non-integer or out of range.
    Inputs may be lists or arrays and are never modified.
    """
    raise NotImplementedError("implement cql_discrete_penalty in the assignment notebook")


def expectile_loss(diff, tau):
    """Asymmetric squared loss of IQL's value function.

    L = mean( |tau - 1[u < 0]| * u**2 ),   u = diff = target - prediction (Q - V)

    Positive residuals weigh tau, negative ones 1 - tau; tau = 0.5 is half the MSE.
    ``diff`` has any non-empty shape. Returns a float. Raises ValueError when tau is
    not in the open interval (0, 1) or ``diff`` is empty or not finite.
    Inputs may be lists or arrays and are never modified.
    """
    raise NotImplementedError("implement expectile_loss in the assignment notebook")


def return_to_go(rewards, gamma=1.0):
    """Discounted return-to-go by reverse accumulation.

    G_{T-1} = r_{T-1},   G_t = r_t + gamma * G_{t+1}

    ``rewards`` (T,) -> (T,) float64 (int rewards give floats). An empty episode
    (T = 0) gives an empty result. Raises ValueError on a non 1-D or non-finite
    ``rewards`` or gamma outside [0, 1].
    Inputs may be lists or arrays and are never modified.
    """
    raise NotImplementedError("implement return_to_go in the assignment notebook")


def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
    """Count-based lower confidence values.

    value = mean - radius_scale / sqrt(n)   where n > 0
    value = -inf                            where n = 0 (whatever the mean is)

    ``empirical_means`` and ``counts`` share any shape; the output has it too, so
    empty inputs give an empty result.
    Raises ValueError on a shape mismatch, negative or non-finite counts, non-finite
    means where n > 0, or a negative or non-finite ``radius_scale``.
    Inputs may be lists or arrays and are never modified.
    """
    raise NotImplementedError("implement pessimistic_values in the assignment notebook")


def behavior_support_mask(probabilities, threshold_ratio=0.35):
    """Actions the behavior policy takes often enough to be trusted.

    eligible(a) = p(a) >= threshold_ratio * max_b p(b)      (along the last axis)

    ``probabilities`` (A,) or (B, A), non-negative (counts work too) -> bool, same
    shape; an empty batch (B = 0) gives an empty mask. The most likely action is
    always eligible. Raises ValueError on other
    ranks, an empty action axis, negative or non-finite entries, an all-zero row, or
    ``threshold_ratio`` outside [0, 1].
    Inputs may be lists or arrays and are never modified.
    """
    raise NotImplementedError("implement behavior_support_mask in the assignment notebook")


def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
    """Fitted-Q-evaluation targets: an expectation under the evaluated policy.

    y_i = r_i + gamma * (1 - terminated_i) * sum_a pi(a | s'_i) Q(s'_i, a)

    Shapes: rewards (B,), terminated (B,), next_q (B, A), next_policy_probs (B, A)
    -> (B,). An empty batch (B = 0) gives an empty result. Raises ValueError as :func:`dqn_targets`, and when the policy table has
    another shape, negative or non-finite entries, an all-zero row, or a row whose sum
    differs from 1 by more than 1e-6.
    Inputs may be lists or arrays and are never modified.
    """
    raise NotImplementedError("implement fqe_targets in the assignment notebook")


def iql_advantage_weights(advantages, beta, max_weight=100.0):
    """IQL's advantage-weighted regression weights, capped.

    w = min(exp(beta * A), max_weight) = exp(min(beta * A, log max_weight))

    The second form never overflows, so beta * A up to 1e6 is fine. ``advantages``
    has any shape; the output has it too, so empty advantages give an empty result.
    Raises ValueError when beta is negative or
    non-finite, max_weight is not a finite positive number, or advantages are not
    finite.
    Inputs may be lists or arrays and are never modified.
    """
    raise NotImplementedError("implement iql_advantage_weights in the assignment notebook")
