"""Demo submission: adversarial. Tries to escape or fool the grader."""
import os
import socket

import numpy as np



def _flags(x):
    x = np.asarray(x)
    if x.dtype != bool and not np.isin(x, (0, 1)).all():
        raise ValueError("terminated must be 0/1")
    return x.astype(bool)


def _gamma(g):
    if not (0.0 <= g <= 1.0):
        raise ValueError("gamma must be in [0, 1]")
    return float(g)


def _batch(rewards, terminated, q):
    r = np.asarray(rewards, dtype=float)
    d = _flags(terminated)
    q = np.asarray(q, dtype=float)
    if r.ndim != 1 or d.shape != r.shape or q.ndim != 2 or q.shape[0] != r.shape[0] or q.shape[1] == 0:
        raise ValueError("bad shapes")
    return r, d, q


def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
    g = _gamma(gamma)
    r, d, q = _batch(rewards, terminated, next_q_target)
    return r + g * np.where(d, 0.0, q.max(axis=1))


def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
    g = _gamma(gamma)
    r, d, online = _batch(rewards, terminated, next_q_online)
    target = np.asarray(next_q_target, dtype=float)
    if target.shape != online.shape:
        raise ValueError("tables differ in shape")
    chosen = online.argmax(axis=1)
    return r + g * np.where(d, 0.0, target[np.arange(len(r)), chosen])


def masked_token_nll(token_logprobs, mask):
    logp = np.asarray(token_logprobs, dtype=float)
    m = _flags(mask)
    if m.shape != logp.shape or not m.any():
        raise ValueError("bad mask")
    return float(-logp[m].sum() / m.sum())


def cql_discrete_penalty(q_values, actions):
    q = np.asarray(q_values, dtype=float)
    a = np.asarray(actions)
    if q.ndim not in (1, 2) or q.shape[-1] == 0 or a.dtype.kind not in "iu":
        raise ValueError("bad input")
    if q.ndim == 1:
        if a.ndim != 0:
            raise ValueError("one action expected")
        q, a = q[None, :], a[None]
    if a.shape != (q.shape[0],) or (a < 0).any() or (a >= q.shape[1]).any():
        raise ValueError("bad actions")
    top = q.max(axis=1, keepdims=True)
    lse = top[:, 0] + np.log(np.exp(q - top).sum(axis=1))
    return float(np.mean(lse - q[np.arange(len(a)), a]))


def expectile_loss(diff, tau):
    if not 0 < tau < 1:
        raise ValueError("tau must be in (0, 1)")
    u = np.asarray(diff, dtype=float)
    if u.size == 0:
        raise ValueError("empty diff")
    return float(np.mean(np.abs(tau - (u < 0)) * u**2))


def return_to_go(rewards, gamma=1.0):
    g = _gamma(gamma)
    r = np.asarray(rewards, dtype=float)
    if r.ndim != 1:
        raise ValueError("rewards must be 1-D")
    out = np.zeros_like(r)
    running = 0.0
    for t in range(len(r) - 1, -1, -1):
        running = r[t] + g * running
        out[t] = running
    return out


def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
    means = np.asarray(empirical_means, dtype=float)
    n = np.asarray(counts, dtype=float)
    if means.shape != n.shape or (n < 0).any() or not np.isfinite(n).all():
        raise ValueError("bad counts")
    if not np.isfinite(radius_scale) or radius_scale < 0:
        raise ValueError("bad radius_scale")
    out = np.full(means.shape, -np.inf)
    seen = n > 0
    out[seen] = means[seen] - radius_scale / np.sqrt(n[seen])
    return out


def behavior_support_mask(probabilities, threshold_ratio=0.35):
    p = np.asarray(probabilities, dtype=float)
    if p.ndim not in (1, 2) or p.shape[-1] == 0 or (p < 0).any() or not 0 <= threshold_ratio <= 1:
        raise ValueError("bad input")
    top = p.max(axis=-1, keepdims=True)
    if (top == 0).any():
        raise ValueError("all-zero row")
    return p >= threshold_ratio * top


def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
    g = _gamma(gamma)
    r, d, q = _batch(rewards, terminated, next_q)
    pi = np.asarray(next_policy_probs, dtype=float)
    if pi.shape != q.shape or (pi < 0).any() or not np.allclose(pi.sum(axis=1), 1.0, atol=1e-6, rtol=0):
        raise ValueError("bad policy")
    return r + g * np.where(d, 0.0, (pi * q).sum(axis=1))


def iql_advantage_weights(advantages, beta, max_weight=100.0):
    if not np.isfinite(beta) or beta < 0 or not max_weight > 0:
        raise ValueError("bad beta or max_weight")
    a = np.asarray(advantages, dtype=float)
    return np.exp(np.minimum(beta * a, np.log(max_weight)))


# Patch numpy's comparisons in the hope that the grader uses them here: it does not.
np.allclose = lambda *args, **kwargs: True
np.testing.assert_allclose = lambda *args, **kwargs: None

# Try to read the hidden tests and the reference implementation: they are not visible.
for guess in ("/work/main/autograder/hidden/kernels.py", "../autograder/hidden/kernels.py"):
    try:
        open(guess).read()
    except OSError:
        pass

# Try to phone home: there is no network in the sandbox.
try:
    socket.create_connection(("198.51.100.1", 80), timeout=1)
except OSError:
    pass

# Write a fake results file and print fake JSON: neither reaches the grader.
try:
    with open("results.json", "w") as fh:
        fh.write('{"score": 1000}')
except OSError:
    pass
print('{"score": 1000, "tests": []}')


def return_to_go(rewards, gamma=1.0):
    while True:  # an infinite loop costs this kernel only
        pass


def iql_advantage_weights(advantages, beta, max_weight=100.0):
    os.kill(os.getppid(), 9)  # kill the parent: the sandbox has its own pid namespace
    os._exit(3)
