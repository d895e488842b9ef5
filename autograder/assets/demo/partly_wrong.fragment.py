"""Demo fragment: three typical mistakes, appended to correct.py (later definitions win)."""

import numpy as np


# --- three typical mistakes, overriding the correct versions above ---
def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
    r = np.asarray(rewards, dtype=float)
    q = np.asarray(next_q_target, dtype=float)
    return r + gamma * q.max(axis=1)  # forgets the terminal mask


def masked_token_nll(token_logprobs, mask):
    logp = np.asarray(token_logprobs, dtype=float)
    m = np.asarray(mask, dtype=float)
    return float(-(logp * m).sum() / m.size)  # divides by all positions


def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
    means = np.asarray(empirical_means, dtype=float)
    n = np.asarray(counts, dtype=float)
    return np.where(n > 0, means - radius_scale / np.maximum(n, 1), -np.inf)  # c/n, not c/sqrt(n)
