"""A correct submission computed with torch in float32.

Some kernels return tensors, others float32 numpy arrays or Python floats: all are
valid answers, and float32 rounding must stay inside the grader's tolerance.
"""

import math

import numpy as np
import torch

F32 = torch.float32


def _tensor(x, name):
    try:
        return torch.as_tensor(np.asarray(x, dtype=np.float32))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None


def _flags(x, name):
    t = torch.as_tensor(np.asarray(x, dtype=np.float64))
    if not torch.all((t == 0) | (t == 1)):
        raise ValueError(f"{name} must hold only 0/1 values")
    return t.bool()


def _gamma(gamma):
    if not 0.0 <= float(gamma) <= 1.0:
        raise ValueError(f"gamma must lie in [0, 1], got {gamma}")
    return float(gamma)


def _transitions(rewards, terminated, next_q, name):
    r = _tensor(rewards, "rewards")
    done = _flags(terminated, "terminated")
    q = _tensor(next_q, name)
    if r.dim() != 1 or done.shape != r.shape:
        raise ValueError("rewards and terminated must be 1-D of one length")
    if q.dim() != 2 or q.shape[0] != r.shape[0] or q.shape[1] == 0:
        raise ValueError(f"{name} must be (B, A) with A >= 1")
    return r, done, q


def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
    g = _gamma(gamma)
    r, done, q = _transitions(rewards, terminated, next_q_target, "next_q_target")
    best = q.max(dim=1).values
    return r + g * torch.where(done, torch.zeros_like(best), best)  # a tensor


def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
    g = _gamma(gamma)
    r, done, online = _transitions(rewards, terminated, next_q_online, "next_q_online")
    target = _tensor(next_q_target, "next_q_target")
    if target.shape != online.shape:
        raise ValueError("next_q_target must have the shape of next_q_online")
    # The first index among the maxima: the smallest index whose value equals the row max.
    is_top = online == online.max(dim=1, keepdim=True).values
    index = torch.arange(online.shape[1]).expand_as(online)
    chosen = torch.where(is_top, index, online.shape[1]).min(dim=1).values
    value = target.gather(1, chosen[:, None])[:, 0]
    return (r + g * torch.where(done, torch.zeros_like(value), value)).numpy()  # float32 array


def masked_token_nll(token_logprobs, mask):
    logp = _tensor(token_logprobs, "token_logprobs")
    active = _flags(mask, "mask")
    if active.shape != logp.shape:
        raise ValueError("mask must have the shape of token_logprobs")
    n = int(active.sum())
    if n == 0:
        raise ValueError("mask has no active token")
    return -(logp[active].sum() / n)  # a 0-d tensor


def cql_discrete_penalty(q_values, actions):
    q = _tensor(q_values, "q_values")
    a = np.asarray(actions)
    if a.dtype.kind not in "iu" or q.dim() not in (1, 2) or q.shape[-1] == 0:
        raise ValueError("q_values must be (A,) or (B, A) and actions integers")
    if q.dim() == 1:
        if a.ndim != 0:
            raise ValueError("a 1-D q_values takes one integer action")
        q, a = q[None, :], a.reshape(1)
    if a.shape != (q.shape[0],) or q.shape[0] == 0 or (a < 0).any() or (a >= q.shape[1]).any():
        raise ValueError("actions must be (B,) integers in [0, A)")
    taken = q.gather(1, torch.as_tensor(a, dtype=torch.int64)[:, None])[:, 0]
    top = q.max(dim=1).values
    # (max - Q(s, a)) first: both are large, their difference is small and exact.
    return float(((top - taken) + torch.logsumexp(q - top[:, None], dim=1)).mean())


def expectile_loss(diff, tau):
    if not 0.0 < float(tau) < 1.0:
        raise ValueError(f"tau must lie in (0, 1), got {tau}")
    u = _tensor(diff, "diff")
    if u.numel() == 0:
        raise ValueError("diff is empty")
    weight = torch.where(u < 0, torch.tensor(1.0 - tau, dtype=F32), torch.tensor(float(tau), dtype=F32))
    return (weight * u * u).mean()


def return_to_go(rewards, gamma=1.0):
    g = _gamma(gamma)
    r = _tensor(rewards, "rewards")
    if r.dim() != 1:
        raise ValueError("rewards must be 1-D")
    out = torch.empty_like(r)
    running = torch.tensor(0.0, dtype=F32)
    for t in range(r.shape[0] - 1, -1, -1):
        running = r[t] + g * running
        out[t] = running
    return out


def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
    if not math.isfinite(radius_scale) or radius_scale < 0:
        raise ValueError("radius_scale must be finite and non-negative")
    means = _tensor(empirical_means, "empirical_means")
    n = _tensor(counts, "counts")
    if means.shape != n.shape or (n < 0).any() or not torch.isfinite(n).all():
        raise ValueError("counts must match the means and be finite, non-negative")
    lower = means - radius_scale / torch.sqrt(torch.where(n > 0, n, torch.ones_like(n)))
    return torch.where(n > 0, lower, torch.full_like(lower, -math.inf)).numpy()


def behavior_support_mask(probabilities, threshold_ratio=0.35):
    if not 0.0 <= threshold_ratio <= 1.0:
        raise ValueError("threshold_ratio must lie in [0, 1]")
    p = _tensor(probabilities, "probabilities")
    if p.dim() not in (1, 2) or p.shape[-1] == 0 or (p < 0).any():
        raise ValueError("probabilities must be (A,) or (B, A), non-negative")
    top = p.max(dim=-1, keepdim=True).values
    if (top == 0).any():
        raise ValueError("a row of probabilities is all zero")
    return p >= threshold_ratio * top


def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
    g = _gamma(gamma)
    r, done, q = _transitions(rewards, terminated, next_q, "next_q")
    pi64 = np.asarray(next_policy_probs, dtype=np.float64)
    if pi64.shape != tuple(q.shape) or (pi64 < 0).any() or (np.abs(pi64.sum(axis=1) - 1.0) > 1e-6).any():
        raise ValueError("next_policy_probs must match next_q, be non-negative and sum to 1 per row")
    expected = (torch.as_tensor(pi64, dtype=F32) * q).sum(dim=1)
    return r + g * torch.where(done, torch.zeros_like(expected), expected)


def iql_advantage_weights(advantages, beta, max_weight=100.0):
    if not math.isfinite(beta) or beta < 0 or not (math.isfinite(max_weight) and max_weight > 0):
        raise ValueError("beta must be finite and >= 0, max_weight finite and > 0")
    adv = _tensor(advantages, "advantages")
    return torch.exp(torch.clamp(beta * adv, max=math.log(max_weight)))
