# Generated from reference_impl/torch_kernels.py by the course's release build; do not edit.
# The graded kernels are stubs here: write them in the notebooks.
"""Torch twins of the loss kernels: the same mathematics, differentiable.

The numpy kernels in :mod:`m5_student.kernels` are the single source of truth;
the functions here compute the same values on tensors so training loops can
backpropagate through them. Conventions:

* inputs are tensors and are never modified; outputs keep their dtype and device;
* losses return a 0-d tensor, element-wise functions a tensor of the input's shape;
* bad input raises :class:`~m5_student.validation.KernelInputError` (a
  ``ValueError``) naming the function and the argument. Value checks that would
  need a device sync (finiteness) are done once on the detached tensor, cheaply.

The target kernels (DQN, Double DQN, FQE) also have tensor versions here; targets
carry no gradient, so they are computed under ``torch.no_grad`` semantics by the
caller (the result is detached here anyway).

The lines between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` are what students
write; ``m5 release`` replaces them with a stub.
"""
from __future__ import annotations

import math

import torch

from m5_student import validation as v

__all__ = [
    "masked_token_nll_torch",
    "cql_discrete_penalty_torch",
    "expectile_loss_torch",
    "iql_advantage_weights_torch",
    "dqn_targets_torch",
    "double_dqn_targets_torch",
    "fqe_targets_torch",
]


# --------------------------------------------------------------------------- checks
# --------------------------------------------------------------------------- losses
def masked_token_nll_torch(token_logprobs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean negative log-likelihood over the active tokens of the whole batch (0-d).

    L = - sum(mask * logp) / sum(mask)

    Same (any) shape for both; ``mask`` bool or 0/1. Masked-out positions may hold
    -inf: they are selected away with ``torch.where`` so neither the value nor the
    gradient sees them (a plain ``mask * logp`` would give NaN from 0 * -inf).
    Raises ValueError on a shape mismatch, non-0/1 mask values, a mask without an
    active entry, non-float log-probabilities or non-finite active log-probabilities.
    """
    raise NotImplementedError("реализуйте masked_token_nll_torch в ноутбуке лабораторной работы")


def cql_discrete_penalty_torch(q_values: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """Discrete CQL regularizer, log sum_b exp Q(s, b) - Q(s, a), as a 0-d tensor.

    ``q_values`` (A,) with a 0-d integer ``actions`` gives that value; (B, A) with (B,)
    integer ``actions`` gives the batch mean. ``torch.logsumexp`` keeps it stable for
    large |Q|; the gradient w.r.t. Q is softmax(Q) - onehot(a) (per row, / B).
    Raises ValueError on wrong shapes, an empty action axis or batch, non-finite Q,
    non-integer or out-of-range actions.
    """
    raise NotImplementedError("реализуйте cql_discrete_penalty_torch в ноутбуке лабораторной работы")


def expectile_loss_torch(diff: torch.Tensor, tau: float) -> torch.Tensor:
    """Asymmetric squared loss of IQL's value function (0-d).

    L = mean( |tau - 1[u < 0]| * u**2 ),   u = diff = target - prediction (Q - V)

    ``diff`` has any non-empty shape. Raises ValueError when tau is not in (0, 1) or
    ``diff`` is empty, not floating point or not finite.
    """
    raise NotImplementedError("реализуйте expectile_loss_torch в ноутбуке лабораторной работы")


def iql_advantage_weights_torch(advantages: torch.Tensor, beta: float, max_weight: float = 100.0) -> torch.Tensor:
    """IQL's capped advantage weights, exp(min(beta * A, log max_weight)).

    Same shape as ``advantages``; never overflows (the exponent is clipped first).
    In IQL the advantages come from frozen critics, so callers usually pass a
    detached tensor; the function itself is differentiable below the cap.
    Raises ValueError when beta is negative or non-finite, max_weight is not a
    finite positive number, or advantages are not floating point or not finite.
    """
    raise NotImplementedError("реализуйте iql_advantage_weights_torch в ноутбуке лабораторной работы")


# --------------------------------------------------------------------------- targets
def dqn_targets_torch(rewards, terminated, next_q_target, gamma: float = 0.99) -> torch.Tensor:
    """DQN targets on tensors, detached: y = r + gamma * (1 - terminated) * max_a Qbar(s', a).

    Shapes (B,), (B,), (B, A) -> (B,). Terminal rows never read ``next_q_target``.
    Raises ValueError as :func:`m5_student.kernels.dqn_targets`.
    """
    raise NotImplementedError("реализуйте dqn_targets_torch в ноутбуке лабораторной работы")


def double_dqn_targets_torch(rewards, terminated, next_q_online, next_q_target, gamma: float = 0.99) -> torch.Tensor:
    """Double DQN targets on tensors, detached: the online table selects, the target evaluates.

    y = r + gamma * (1 - terminated) * Qbar(s', argmax_a Q(s', a))   (first index on ties)
    Raises ValueError as :func:`m5_student.kernels.double_dqn_targets`.
    """
    raise NotImplementedError("реализуйте double_dqn_targets_torch в ноутбуке лабораторной работы")


def fqe_targets_torch(rewards, terminated, next_q, next_policy_probs, gamma: float = 0.99) -> torch.Tensor:
    """FQE targets on tensors, detached: y = r + gamma * (1 - terminated) * sum_a pi(a|s') Q(s', a).

    Raises ValueError as :func:`m5_student.kernels.fqe_targets`.
    """
    raise NotImplementedError("реализуйте fqe_targets_torch в ноутбуке лабораторной работы")
