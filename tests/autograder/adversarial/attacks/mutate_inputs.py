"""Attack: correct answers, but the inputs are changed in place afterwards (or before).

fqe_targets sorts the caller's Q table after computing (right values, one point lost);
behavior_support_mask normalises the caller's table in place *before* computing (the
mask is unchanged by scaling, so only the no-mutation point is at stake).
"""

import numpy as np

_honest_fqe_targets = fqe_targets  # noqa: F821 - defined by the correct code above
_honest_support = behavior_support_mask  # noqa: F821


def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
    y = _honest_fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma)
    if isinstance(next_q, np.ndarray):
        next_q.sort(axis=-1)
    return y


def behavior_support_mask(probabilities, threshold_ratio=0.35):
    if isinstance(probabilities, np.ndarray) and probabilities.dtype.kind == "f" and probabilities.ndim in (1, 2):
        top = probabilities.max(axis=-1, keepdims=True)
        if (top > 0).all():
            probabilities /= top
    return _honest_support(probabilities, threshold_ratio)
