"""Attack: return objects that lie about what they are.

* dqn_targets: an object whose __eq__ says True to everything and whose __array__
  gives zeros of the right shape (the real answer is never produced);
* masked_token_nll: a float subclass equal to everything, holding the wrong value;
* return_to_go: an ndarray subclass with a lying __eq__ but the right numbers, so it
  deserves full marks (only the numbers count);
* iql_advantage_weights: an object whose __array__ never returns.
"""

import numpy as np


class AlwaysEqual:
    def __init__(self, shape):
        self.shape = shape

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__

    def __array__(self, dtype=None, copy=None):
        return np.zeros(self.shape)


class EqualFloat(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


class EqualArray(np.ndarray):
    def __eq__(self, other):
        return np.ones(self.shape, dtype=bool)


class Stalling:
    def __array__(self, dtype=None, copy=None):
        while True:
            pass


_honest_return_to_go = return_to_go  # noqa: F821 - defined by the correct code above


def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
    return AlwaysEqual(np.shape(rewards))


def masked_token_nll(token_logprobs, mask):
    return EqualFloat(12345.0)


def return_to_go(rewards, gamma=1.0):
    return np.asarray(_honest_return_to_go(rewards, gamma)).view(EqualArray)


def iql_advantage_weights(advantages, beta, max_weight=100.0):
    return Stalling()
