"""Attack: answers that change from run to run.

* expectile_loss adds tiny noise from a fresh OS-seeded generator on every call;
* iql_advantage_weights is right 97% of the time (the global random module decides);
* behavior_support_mask is right unless a coin from the global numpy generator says
  otherwise (1 in 50).
Each must lose its value points, and identically on every grading.
"""

import random

import numpy as np

_honest_expectile = expectile_loss  # noqa: F821 - defined by the correct code above
_honest_iql = iql_advantage_weights  # noqa: F821
_honest_support = behavior_support_mask  # noqa: F821


def expectile_loss(diff, tau):
    return _honest_expectile(diff, tau) * (1.0 + 1e-3 * np.random.default_rng().standard_normal())


def iql_advantage_weights(advantages, beta, max_weight=100.0):
    w = _honest_iql(advantages, beta, max_weight)
    return w if random.random() < 0.97 else w * 1.5


def behavior_support_mask(probabilities, threshold_ratio=0.35):
    mask = _honest_support(probabilities, threshold_ratio)
    return ~mask if np.random.random() < 0.02 else mask
