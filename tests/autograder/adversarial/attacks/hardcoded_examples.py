"""Attack: return the module's published worked values instead of computing.

Each kernel below answers the worked example exactly and returns the same numbers
for every other input. Only a grader that tests far beyond the public examples sees
through it. (Each keeps the point for not modifying its inputs: that property is
judged on its own, see the report.)
"""

import numpy as np


def dqn_targets(rewards, terminated, next_q_target, gamma=0.99):
    return np.array([1.72, -1.0])


def cql_discrete_penalty(q_values, actions):
    return 0.169846


def return_to_go(rewards, gamma=1.0):
    return np.array([2.5, 1.5, 1.5, 2.0])


def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
    return np.array([0.5, -0.5, -np.inf, 0.7])


def fqe_targets(rewards, terminated, next_q, next_policy_probs, gamma=0.99):
    return np.array([3.05])
