"""Torch twins of the loss kernels: the same mathematics, differentiable.

The numpy kernels in :mod:`reference_impl.kernels` are the single source of truth;
the functions here compute the same values on tensors so training loops can
backpropagate through them. Conventions:

* inputs are tensors and are never modified; outputs keep their dtype and device;
* losses return a 0-d tensor, element-wise functions a tensor of the input's shape;
* bad input raises :class:`~reference_impl.validation.KernelInputError` (a
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

from reference_impl import validation as v

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
def _tensor(value, name: str, kernel: str) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise v.fail(kernel, name, f"must be a torch.Tensor, got {type(value).__name__}")
    return value


def _float_tensor(value, name: str, kernel: str) -> torch.Tensor:
    t = _tensor(value, name, kernel)
    if not t.is_floating_point():
        raise v.fail(kernel, name, f"must be a floating-point tensor, got dtype {t.dtype}")
    return t


def _require_finite(t: torch.Tensor, name: str, kernel: str, used: torch.Tensor | None = None) -> None:
    """No NaN or infinity among the entries that are used (``used``: bool mask, leading axes)."""
    if t.numel() == 0:
        return
    values = t.detach() if used is None else t.detach()[used]
    if values.numel() and not bool(torch.isfinite(values).all()):
        raise v.fail(kernel, name, "contains NaN or infinity")


def _flags(value, name: str, kernel: str) -> torch.Tensor:
    """A bool or 0/1 tensor as bool; anything else is an error."""
    t = _tensor(value, name, kernel)
    if t.dtype == torch.bool:
        return t
    if t.is_complex():
        raise v.fail(kernel, name, f"must hold bools or 0/1 numbers, got dtype {t.dtype}")
    bad = (t != 0) & (t != 1)
    if bool(bad.any()):
        raise v.fail(kernel, name, f"must hold only 0/1 or bools, found {t[bad].flatten()[0].item()!r}")
    return t != 0


def _actions(value, name: str, kernel: str, n_actions: int) -> torch.Tensor:
    t = _tensor(value, name, kernel)
    if t.dtype == torch.bool or t.is_floating_point() or t.is_complex():
        raise v.fail(kernel, name, f"must hold integer action indices, got dtype {t.dtype}")
    out_of_range = (t < 0) | (t >= n_actions)
    if bool(out_of_range.any()):
        bad = t[out_of_range].flatten()[0].item()
        raise v.fail(kernel, name, f"holds action {bad!r} outside [0, {n_actions})")
    return t.long()


def _require_ndim(t: torch.Tensor, name: str, kernel: str, ndims: tuple[int, ...], layout: str) -> None:
    if t.dim() not in ndims:
        raise v.fail(kernel, name, f"must have shape {layout}, got shape {tuple(t.shape)}")


def _transition_batch(kernel, rewards, terminated, next_q, q_name):
    """Shared checks of the tensor target functions: (B,), (B,), (B, A)."""
    r = _float_tensor(rewards, "rewards", kernel)
    _require_ndim(r, "rewards", kernel, (1,), "(B,)")
    done = _flags(terminated, "terminated", kernel)
    _require_ndim(done, "terminated", kernel, (1,), "(B,)")
    if done.shape[0] != r.shape[0]:
        raise v.fail(kernel, "terminated", f"has {done.shape[0]} rows but `rewards` has {r.shape[0]}")
    q = _float_tensor(next_q, q_name, kernel)
    _require_ndim(q, q_name, kernel, (2,), "(B, A)")
    if q.shape[0] != r.shape[0]:
        raise v.fail(kernel, q_name, f"has {q.shape[0]} rows but `rewards` has {r.shape[0]}")
    if q.shape[1] == 0:
        raise v.fail(kernel, q_name, f"has an empty action axis (shape {tuple(q.shape)})")
    _require_finite(r, "rewards", kernel)
    _require_finite(q, q_name, kernel, used=~done)
    return r.detach(), done, q.detach()


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
    ### BEGIN SOLUTION
    kernel = "masked_token_nll_torch"
    logp = _float_tensor(token_logprobs, "token_logprobs", kernel)
    active = _flags(mask, "mask", kernel)
    if active.shape != logp.shape:
        raise v.fail(kernel, "mask", f"must have the shape of `token_logprobs` {tuple(logp.shape)}, got {tuple(active.shape)}")
    n_active = int(active.sum())
    if n_active == 0:
        raise v.fail(kernel, "mask", "has no active entry; the mean over active tokens is undefined")
    _require_finite(logp, "token_logprobs", kernel, used=active)
    kept = torch.where(active, logp, torch.zeros((), dtype=logp.dtype, device=logp.device))
    return -kept.sum() / n_active
    ### END SOLUTION


def cql_discrete_penalty_torch(q_values: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """Discrete CQL regularizer, log sum_b exp Q(s, b) - Q(s, a), as a 0-d tensor.

    ``q_values`` (A,) with a 0-d integer ``actions`` gives that value; (B, A) with (B,)
    integer ``actions`` gives the batch mean. ``torch.logsumexp`` keeps it stable for
    large |Q|; the gradient w.r.t. Q is softmax(Q) - onehot(a) (per row, / B).
    Raises ValueError on wrong shapes, an empty action axis or batch, non-finite Q,
    non-integer or out-of-range actions.
    """
    ### BEGIN SOLUTION
    kernel = "cql_discrete_penalty_torch"
    q = _float_tensor(q_values, "q_values", kernel)
    _require_ndim(q, "q_values", kernel, (1, 2), "(A,) or (B, A)")
    if q.shape[-1] == 0:
        raise v.fail(kernel, "q_values", f"has an empty action axis (shape {tuple(q.shape)})")
    a = _tensor(actions, "actions", kernel)
    if q.dim() == 1 and a.dim() != 0:
        raise v.fail(kernel, "actions", f"must be a single integer when `q_values` is 1-D, got shape {tuple(a.shape)}")
    if q.dim() == 2:
        if q.shape[0] == 0:
            raise v.fail(kernel, "q_values", "has no rows; the batch mean is undefined")
        _require_ndim(a, "actions", kernel, (1,), "(B,)")
        if a.shape[0] != q.shape[0]:
            raise v.fail(kernel, "actions", f"has {a.shape[0]} rows but `q_values` has {q.shape[0]}")
    a = _actions(a, "actions", kernel, q.shape[-1])
    _require_finite(q, "q_values", kernel)
    rows = q.reshape(-1, q.shape[-1])
    taken = rows.gather(1, a.reshape(-1, 1)).squeeze(1)
    return (torch.logsumexp(rows, dim=1) - taken).mean()
    ### END SOLUTION


def expectile_loss_torch(diff: torch.Tensor, tau: float) -> torch.Tensor:
    """Asymmetric squared loss of IQL's value function (0-d).

    L = mean( |tau - 1[u < 0]| * u**2 ),   u = diff = Q - V
    ``diff`` is the target minus the prediction (Q - V in IQL): u > 0 when the target is higher.

    ``diff`` has any non-empty shape. Raises ValueError when tau is not in (0, 1) or
    ``diff`` is empty, not floating point or not finite.
    """
    ### BEGIN SOLUTION
    kernel = "expectile_loss_torch"
    t = v.finite_scalar(tau, "tau", kernel)
    if not 0.0 < t < 1.0:
        raise v.fail(kernel, "tau", f"must lie in the open interval (0, 1), got {t}")
    u = _float_tensor(diff, "diff", kernel)
    if u.numel() == 0:
        raise v.fail(kernel, "diff", "is empty; the mean is undefined")
    _require_finite(u, "diff", kernel)
    # The weight is a constant of u's sign: it carries no gradient (as in CORL's IQL).
    weight = (t - (u.detach() < 0).to(u.dtype)).abs()
    return (weight * u * u).mean()
    ### END SOLUTION


def iql_advantage_weights_torch(advantages: torch.Tensor, beta: float, max_weight: float = 100.0) -> torch.Tensor:
    """IQL's capped advantage weights, exp(min(beta * A, log max_weight)).

    Same shape as ``advantages``; never overflows (the exponent is clipped first).
    In IQL the advantages come from frozen critics, so callers usually pass a
    detached tensor; the function itself is differentiable below the cap.
    Raises ValueError when beta is negative or non-finite, max_weight is not a
    finite positive number, or advantages are not floating point or not finite.
    """
    ### BEGIN SOLUTION
    kernel = "iql_advantage_weights_torch"
    b = v.finite_scalar(beta, "beta", kernel)
    if b < 0:
        raise v.fail(kernel, "beta", f"must be non-negative, got {b}")
    cap = v.finite_scalar(max_weight, "max_weight", kernel)
    if cap <= 0:
        raise v.fail(kernel, "max_weight", f"must be positive, got {cap}")
    adv = _float_tensor(advantages, "advantages", kernel)
    _require_finite(adv, "advantages", kernel)
    return torch.exp(torch.clamp(b * adv, max=math.log(cap)))
    ### END SOLUTION


# --------------------------------------------------------------------------- targets
def dqn_targets_torch(rewards, terminated, next_q_target, gamma: float = 0.99) -> torch.Tensor:
    """DQN targets on tensors, detached: y = r + gamma * (1 - terminated) * max_a Qbar(s', a).

    Shapes (B,), (B,), (B, A) -> (B,). Terminal rows never read ``next_q_target``.
    Raises ValueError as :func:`reference_impl.kernels.dqn_targets`.
    """
    ### BEGIN SOLUTION
    kernel = "dqn_targets_torch"
    g = v.discount(gamma, kernel)
    r, done, q = _transition_batch(kernel, rewards, terminated, next_q_target, "next_q_target")
    best_next = q.max(dim=1).values
    return r + torch.where(done, torch.zeros_like(r), g * best_next)
    ### END SOLUTION


def double_dqn_targets_torch(rewards, terminated, next_q_online, next_q_target, gamma: float = 0.99) -> torch.Tensor:
    """Double DQN targets on tensors, detached: the online table selects, the target evaluates.

    y = r + gamma * (1 - terminated) * Qbar(s', argmax_a Q(s', a))   (first index on ties)
    Raises ValueError as :func:`reference_impl.kernels.double_dqn_targets`.
    """
    ### BEGIN SOLUTION
    kernel = "double_dqn_targets_torch"
    g = v.discount(gamma, kernel)
    r, done, online = _transition_batch(kernel, rewards, terminated, next_q_online, "next_q_online")
    target = _float_tensor(next_q_target, "next_q_target", kernel).detach()
    if target.shape != online.shape:
        raise v.fail(kernel, "next_q_target", f"must have the shape of `next_q_online` {tuple(online.shape)}, got {tuple(target.shape)}")
    _require_finite(target, "next_q_target", kernel, used=~done)
    # torch.argmax does not promise the first index on ties; compare with the max instead.
    is_best = online == online.max(dim=1, keepdim=True).values
    chosen = is_best.to(torch.int8).argmax(dim=1)
    evaluated = target.gather(1, chosen[:, None]).squeeze(1)
    return r + torch.where(done, torch.zeros_like(r), g * evaluated)
    ### END SOLUTION


def fqe_targets_torch(rewards, terminated, next_q, next_policy_probs, gamma: float = 0.99) -> torch.Tensor:
    """FQE targets on tensors, detached: y = r + gamma * (1 - terminated) * sum_a pi(a|s') Q(s', a).

    Raises ValueError as :func:`reference_impl.kernels.fqe_targets`.
    """
    ### BEGIN SOLUTION
    kernel = "fqe_targets_torch"
    g = v.discount(gamma, kernel)
    r, done, q = _transition_batch(kernel, rewards, terminated, next_q, "next_q")
    pi = _float_tensor(next_policy_probs, "next_policy_probs", kernel).detach()
    if pi.shape != q.shape:
        raise v.fail(kernel, "next_policy_probs", f"must have the shape of `next_q` {tuple(q.shape)}, got {tuple(pi.shape)}")
    _require_finite(pi, "next_policy_probs", kernel)
    if bool((pi < 0).any()):
        raise v.fail(kernel, "next_policy_probs", "must be non-negative")
    row_sums = pi.sum(dim=1)
    if bool((row_sums == 0).any()):
        raise v.fail(kernel, "next_policy_probs", "has an all-zero row; it is not a distribution")
    if bool(((row_sums - 1.0).abs() > 1e-6).any()):
        raise v.fail(kernel, "next_policy_probs", "rows must sum to 1 (within 1e-6)")
    safe_q = torch.where(done[:, None], torch.zeros_like(q), q)
    expected_next = (pi * safe_q).sum(dim=1)
    return r + torch.where(done, torch.zeros_like(r), g * expected_next)
    ### END SOLUTION
