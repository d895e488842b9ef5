"""Exact success and return of a policy on KeyDoorGrid, from the environment's own model.

KeyDoorGrid is a small tabular MDP (:meth:`~reference_impl.keydoor.KeyDoorGrid.tabular_model`:
``2 * height * width`` states, slips included), and every policy the lab scores greedily is
stationary and deterministic: one action per state. So its outcome needs no sampled
episodes. With ``a(s)`` the policy's action, ``P`` the transition probabilities, ``r`` the
expected reward of a move and ``T`` the time limit, dynamic programming over the steps left
gives, for ``t = 1 .. T``,

    G_t(s) = P(s, a(s), .) · (goal + (1 - terminal) * G_{t-1})     (probability of reaching the goal)
    R_t(s) = r(s, a(s)) + P(s, a(s), .) · ((1 - terminal) * R_{t-1})  (expected undiscounted return)
    D_t(s) = P(s, a(s), .) · (trap + (1 - terminal) * D_{t-1})       (probability of a trap)

from ``G_0 = R_0 = D_0 = 0``; the start state is drawn uniformly from the start cells
without the key, so the outcome is the mean of ``G_T``, ``R_T``, ``D_T`` over them, and a
timeout is what is left, ``1 - G - D``. This is what infinitely many evaluation episodes
would average, with no sampling error: a seed's number is then the policy's own.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from reference_impl.keydoor import KeyDoorGrid

__all__ = ["policy_actions", "exact_outcomes"]


def policy_actions(env: KeyDoorGrid, policy: Callable) -> np.ndarray:
    """The policy's action in every tabular state (S,), each from its own call ``policy(obs, info)``
    (one observation at a time, as in an episode, so a network decides exactly as it would while acting)."""
    observations = env.tabular_model()["observations"]
    info: dict = {}
    actions = np.asarray([int(policy(obs, info)) for obs in observations], dtype=np.int64)
    if actions.min() < 0 or actions.max() >= env.action_dim:
        raise ValueError(f"exact_outcomes: the policy chose an action outside 0..{env.action_dim - 1}")
    return actions


def exact_outcomes(env: KeyDoorGrid, policy: Callable | np.ndarray) -> dict:
    """The evaluation metrics of :func:`reference_impl.common.summarize_episodes`, exactly:
    ``mean_return`` and ``success_rate`` as expectations, ``outcomes`` as the probabilities of
    "goal", "trap" and "timeout", ``episodes`` 0 and ``exact`` True (nothing was sampled).

    ``policy``: a deterministic stationary policy ``policy(obs, info) -> int``, or its actions
    per tabular state (S,). A policy that draws at random is not this function's to score.
    """
    model = env.tabular_model()
    actions = np.asarray(policy, dtype=np.int64) if isinstance(policy, np.ndarray) else policy_actions(env, policy)
    states = np.arange(actions.size)
    p = model["transition_probs"][states, actions]  # (S, S): where each state's move leads
    reward = model["rewards"][states, actions]
    stop = model["terminal_probs"][states, actions]  # 1 where the move ends the episode
    goal, trap = env.goal_states(), env.trap_states()
    success = np.zeros(actions.size)
    trapped = np.zeros(actions.size)
    ret = np.zeros(actions.size)
    for _ in range(env.max_steps):
        success = (p * (goal + (1.0 - stop) * success)).sum(axis=1)
        trapped = (p * (trap + (1.0 - stop) * trapped)).sum(axis=1)
        ret = reward + (p * ((1.0 - stop) * ret)).sum(axis=1)
    starts = [env.state_index(env.encode(position, False)) for position in env.start_positions]
    g, d, r = float(success[starts].mean()), float(trapped[starts].mean()), float(ret[starts].mean())
    return {
        "mean_return": r,
        "success_rate": g,
        "outcomes": {"goal": g, "trap": d, "timeout": max(0.0, 1.0 - g - d)},
        "episodes": 0,
        "exact": True,
    }
