"""An exact critic for KeyDoorGrid tests: Q* by policy iteration, and a network that reads a Q table."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


class StateTableNet(nn.Module):
    """Q(s, .) read from a (states, actions) table by the grid's state index: an exact critic."""

    def __init__(self, env, table):
        super().__init__()
        self.env, self.table = env, torch.as_tensor(table, dtype=torch.float64)

    def forward(self, obs):
        index = [self.env.state_index(o) for o in obs.numpy()]
        return self.table[index]


def optimal_q(env, gamma):
    """Q* of the tabular model by policy iteration (its greedy policy is its own fixed point)."""
    from reference_impl.fqe import exact_policy_evaluation

    model = env.tabular_model()
    policy = np.full((model["rewards"].shape[0], env.action_dim), 1.0 / env.action_dim)
    for _ in range(50):
        q = exact_policy_evaluation(model["transition_probs"], model["rewards"], model["terminal_probs"], policy, gamma)
        greedy = np.eye(env.action_dim)[q.argmax(axis=1)]
        if np.array_equal(greedy, policy):
            return q
        policy = greedy
    raise AssertionError("policy iteration did not converge")
