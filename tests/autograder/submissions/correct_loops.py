"""A correct submission in plain Python loops (numpy only to read the inputs).

Written the way a student who distrusts broadcasting would: every kernel walks its
rows and entries one by one. It must earn 100/100 like the vectorized one.
"""

import math

import numpy as np


def _check_gamma(gamma):
    gamma = float(gamma)
    if not (0.0 <= gamma <= 1.0):
        raise ValueError(f"gamma must lie in [0, 1], got {gamma}")
    return gamma


def _flag_list(flags, name):
    out = []
    for x in np.asarray(flags).ravel().tolist():
        if x not in (0, 1):  # True/False compare equal to 1/0
            raise ValueError(f"{name} must hold only 0/1 values, got {x!r}")
        out.append(bool(x))
    return out


def _table(values, name, rows):
    """A (rows, A) table as a list of lists, A >= 1."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 2 or arr.shape[0] != rows or arr.shape[1] == 0:
        raise ValueError(f"{name} must have shape (B, A) with B = {rows} and A >= 1, got {arr.shape}")
    return arr.tolist()


def _transitions(rewards, terminated, next_q, name):
    r = np.asarray(rewards, dtype=float)
    if r.ndim != 1:
        raise ValueError(f"rewards must be 1-D, got shape {r.shape}")
    done_arr = np.asarray(terminated)
    if done_arr.shape != r.shape:
        raise ValueError(f"terminated must have shape {r.shape}, got {done_arr.shape}")
    return r.tolist(), _flag_list(done_arr, "terminated"), _table(next_q, name, r.shape[0])


def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
    g = _check_gamma(gamma)
    r, done, q = _transitions(rewards, terminated, next_q_target, "next_q_target")
    out = []
    for reward, ended, row in zip(r, done, q):
        best = row[0]
        for value in row[1:]:
            if value > best:
                best = value
        out.append(reward if ended else reward + g * best)
    return np.array(out, dtype=float)


def double_dqn_targets(rewards, terminated, next_q_online, next_q_target, gamma=0.99):
    g = _check_gamma(gamma)
    r, done, online = _transitions(rewards, terminated, next_q_online, "next_q_online")
    target = _table(next_q_target, "next_q_target", len(r))
    if np.shape(target) != np.shape(online):  # not len(row 0): a batch may be empty
        raise ValueError("next_q_target must have the shape of next_q_online")
    out = []
    for reward, ended, row_online, row_target in zip(r, done, online, target):
        chosen = 0
        for a in range(1, len(row_online)):
            if row_online[a] > row_online[chosen]:  # strict: the first maximum wins
                chosen = a
        out.append(reward if ended else reward + g * row_target[chosen])
    return np.array(out, dtype=float)


def masked_token_nll(token_logprobs, mask):
    logp = np.asarray(token_logprobs, dtype=float)
    m = np.asarray(mask)
    if m.shape != logp.shape:
        raise ValueError(f"mask must have shape {logp.shape}, got {m.shape}")
    total, active = 0.0, 0
    for value, flag in zip(logp.ravel().tolist(), _flag_list(m, "mask")):
        if flag:
            total += value
            active += 1
    if active == 0:
        raise ValueError("mask has no active token")
    return -total / active


def cql_discrete_penalty(q_values, actions):
    q = np.asarray(q_values, dtype=float)
    a = np.asarray(actions)
    if q.ndim not in (1, 2) or q.shape[-1] == 0:
        raise ValueError(f"q_values must be (A,) or (B, A) with A >= 1, got {q.shape}")
    if a.dtype.kind not in "iu":
        raise ValueError("actions must be integers")
    if q.ndim == 1:
        if a.ndim != 0:
            raise ValueError("a 1-D q_values takes a single integer action")
        rows, acts = [q.tolist()], [int(a)]
    else:
        if a.shape != (q.shape[0],) or q.shape[0] == 0:
            raise ValueError("actions must have shape (B,) matching q_values")
        rows, acts = q.tolist(), a.tolist()
    total = 0.0
    for row, act in zip(rows, acts):
        if not 0 <= act < len(row):
            raise ValueError(f"action {act} is out of range")
        top = max(row)
        soft = top + math.log(sum(math.exp(x - top) for x in row))
        total += soft - row[act]
    return total / len(rows)


def expectile_loss(diff, tau):
    tau = float(tau)
    if not 0.0 < tau < 1.0:
        raise ValueError(f"tau must lie in (0, 1), got {tau}")
    values = np.asarray(diff, dtype=float).ravel().tolist()
    if not values:
        raise ValueError("diff is empty")
    total = 0.0
    for u in values:
        weight = 1.0 - tau if u < 0 else tau
        total += weight * u * u
    return total / len(values)


def return_to_go(rewards, gamma=1.0):
    g = _check_gamma(gamma)
    r = np.asarray(rewards, dtype=float)
    if r.ndim != 1:
        raise ValueError(f"rewards must be 1-D, got shape {r.shape}")
    values = r.tolist()
    out = [0.0] * len(values)
    running = 0.0
    for t in range(len(values) - 1, -1, -1):
        running = values[t] + g * running
        out[t] = running
    return np.array(out, dtype=float)


def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
    scale = float(radius_scale)
    if not math.isfinite(scale) or scale < 0:
        raise ValueError(f"radius_scale must be finite and non-negative, got {scale}")
    means = np.asarray(empirical_means, dtype=float)
    n = np.asarray(counts, dtype=float)
    if means.shape != n.shape:
        raise ValueError(f"counts must have shape {means.shape}, got {n.shape}")
    out = []
    for mean, count in zip(means.ravel().tolist(), n.ravel().tolist()):
        if not math.isfinite(count) or count < 0:
            raise ValueError(f"counts must be finite and non-negative, got {count}")
        out.append(-math.inf if count == 0 else mean - scale / math.sqrt(count))
    return np.array(out, dtype=float).reshape(means.shape)


def behavior_support_mask(probabilities, threshold_ratio=0.35):
    ratio = float(threshold_ratio)
    if not 0.0 <= ratio <= 1.0:
        raise ValueError(f"threshold_ratio must lie in [0, 1], got {ratio}")
    p = np.asarray(probabilities, dtype=float)
    if p.ndim not in (1, 2) or p.shape[-1] == 0:
        raise ValueError(f"probabilities must be (A,) or (B, A), got {p.shape}")
    rows = [p.tolist()] if p.ndim == 1 else p.tolist()
    out = []
    for row in rows:
        if any(x < 0 or not math.isfinite(x) for x in row):
            raise ValueError("probabilities must be finite and non-negative")
        top = max(row)
        if top == 0:
            raise ValueError("a row of probabilities is all zero")
        out.append([x >= ratio * top for x in row])
    return np.array(out[0] if p.ndim == 1 else out, dtype=bool).reshape(p.shape)


def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
    g = _check_gamma(gamma)
    r, done, q = _transitions(rewards, terminated, next_q, "next_q")
    pi = _table(next_policy_probs, "next_policy_probs", len(r))
    if np.shape(pi) != np.shape(q):  # not len(row 0): a batch may be empty
        raise ValueError("next_policy_probs must have the shape of next_q")
    out = []
    for reward, ended, q_row, pi_row in zip(r, done, q, pi):
        if any(p < 0 for p in pi_row) or abs(sum(pi_row) - 1.0) > 1e-6:
            raise ValueError("each policy row must be non-negative and sum to 1")
        expected = 0.0
        for prob, value in zip(pi_row, q_row):
            expected += prob * value
        out.append(reward if ended else reward + g * expected)
    return np.array(out, dtype=float)


def iql_advantage_weights(advantages, beta, max_weight=100.0):
    beta, cap = float(beta), float(max_weight)
    if not math.isfinite(beta) or beta < 0:
        raise ValueError(f"beta must be finite and non-negative, got {beta}")
    if not math.isfinite(cap) or cap <= 0:
        raise ValueError(f"max_weight must be finite and positive, got {cap}")
    adv = np.asarray(advantages, dtype=float)
    log_cap = math.log(cap)
    weights = [math.exp(min(beta * a, log_cap)) for a in adv.ravel().tolist()]
    return np.array(weights, dtype=float).reshape(adv.shape)
