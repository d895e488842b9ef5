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
    """Среднее отрицательное логарифмическое правдоподобие по активным токенам всего батча (0-d).

    L = - sum(mask * logp) / sum(mask)

    Формы у обоих одинаковые (любые); ``mask`` — bool или 0/1. В позициях с маской 0 может
    стоять -inf: они отбрасываются через ``torch.where``, так что их не видят ни значение,
    ни градиент (простое ``mask * logp`` дало бы NaN из 0 * -inf).
    Выбрасывает ValueError при несовпадении форм, значениях маски не из 0/1, маске без
    активных позиций, логарифмах вероятностей не вещественного типа или со значениями
    NaN или ±inf в активных позициях.
    """
    raise NotImplementedError("реализуйте masked_token_nll_torch в ноутбуке лабораторной работы")


def cql_discrete_penalty_torch(q_values: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """Регуляризатор CQL для дискретных действий, log sum_b exp Q(s, b) - Q(s, a), в виде 0-d тензора.

    ``q_values`` (A,) с 0-d целочисленным ``actions`` даёт это значение; (B, A) с
    целочисленными ``actions`` формы (B,) даёт среднее по батчу. ``torch.logsumexp``
    сохраняет устойчивость при больших |Q|; градиент по Q равен softmax(Q) - onehot(a)
    (по строкам, / B).
    Выбрасывает ValueError при неверных формах, пустой оси действий или пустом батче,
    значениях NaN или ±inf в Q, нецелочисленных действиях или действиях вне диапазона.
    """
    raise NotImplementedError("реализуйте cql_discrete_penalty_torch в ноутбуке лабораторной работы")


def expectile_loss_torch(diff: torch.Tensor, tau: float) -> torch.Tensor:
    """Асимметричная квадратичная функция потерь для функции ценности в IQL (0-d).

    L = mean( |tau - 1[u < 0]| * u**2 ),   u = diff = target - prediction (Q - V)
    (target — цель, prediction — предсказание: u > 0, когда цель выше предсказания.)

    ``diff`` любой непустой формы. Выбрасывает ValueError, когда tau не лежит в (0, 1) или
    ``diff`` пуст, не вещественного типа или содержит NaN или ±inf.
    """
    raise NotImplementedError("реализуйте expectile_loss_torch в ноутбуке лабораторной работы")


def iql_advantage_weights_torch(advantages: torch.Tensor, beta: float, max_weight: float = 100.0) -> torch.Tensor:
    """Ограниченные сверху веса преимущества в IQL, exp(min(beta * A, log max_weight)).

    Той же формы, что ``advantages``; никогда не переполняется (показатель экспоненты
    сначала обрезается). В IQL преимущества дают замороженные критики, поэтому обычно
    передают отсоединённый (detached) тензор; сама функция дифференцируема ниже порога.
    Выбрасывает ValueError, когда beta отрицательна или равна NaN или ±inf, max_weight не
    является конечным положительным числом, или advantages не вещественного типа или
    содержат NaN или ±inf.
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
