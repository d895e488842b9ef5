"""Experts for KeyDoorGrid: an optimal planner and an epsilon-noisy version of it.

Policy protocol used across the package: a callable ``policy(obs, info) -> int``
(``info`` may be ``None``). The experts read the state from the observation itself
(:meth:`KeyDoorGrid.decode`), so they can also label states stored in a dataset.
Stochastic policies additionally accept ``rng=`` (a ``numpy.random.Generator``);
:func:`reference_impl.rollout.rollout` passes one when it is given one.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from reference_impl.keydoor import KeyDoorGrid

__all__ = ["ExpertPolicy", "KeyForgettingPolicy", "NoisyExpertPolicy", "plan_distances", "UNREACHABLE"]

UNREACHABLE = -1


def plan_distances(env: KeyDoorGrid) -> np.ndarray:
    """Fewest steps to the goal from every (row, col, has_key), by backward BFS.

    The BFS runs over the product state (cell, key held) with the environment's own
    move table, so walls, the closed door and the key pickup are handled exactly.
    Traps are never entered (they end the episode without the goal). Shape
    ``(height, width, 2)`` int; ``UNREACHABLE`` (-1) where the goal cannot be reached
    (walls, traps, the room interior without the key).
    """
    h, w = env.height, env.width
    n = h * w
    goal = env.goal_position[0] * w + env.goal_position[1]
    key_cell = env.key_position[0] * w + env.key_position[1]
    traps = {r * w + c for r, c in env.trap_positions}
    walls = {r * w + c for r, c in env.wall_positions}
    # Forward edges (cell, key) -> (next_cell, next_key); reverse them for BFS from the goal.
    predecessors: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for key in (0, 1):
        for cell in range(n):
            if cell in walls or cell in traps or cell == goal:
                continue  # no moves out of walls or terminal cells
            for a in range(env.action_dim):
                nxt = env._next_cell[key][cell][a]
                nkey = 1 if (key or nxt == key_cell) else 0
                predecessors.setdefault((nxt, nkey), []).append((cell, key))
    dist = np.full((n, 2), UNREACHABLE, dtype=np.int64)
    queue = deque()
    for key in (0, 1):
        dist[goal, key] = 0
        queue.append((goal, key))
    while queue:
        node = queue.popleft()
        for prev in predecessors.get(node, ()):
            if dist[prev] == UNREACHABLE and prev[0] not in traps:
                dist[prev] = dist[node] + 1
                queue.append(prev)
    return dist.reshape(h, w, 2)


class ExpertPolicy:
    """Shortest-path expert: in each state take an action that lowers the BFS distance.

    Ties are broken by the fixed order of ``ACTION_NAMES`` (up, right, down, left), so
    the expert is deterministic. ``action_table[row, col, has_key]`` holds the choice
    (-1 where the goal is unreachable; there the expert answers 0, "up").
    """

    def __init__(self, env: KeyDoorGrid) -> None:
        self.env = env
        self.distances = plan_distances(env)
        h, w = env.height, env.width
        table = np.full((h, w, 2), -1, dtype=np.int64)
        for r in range(h):
            for c in range(w):
                cell = r * w + c
                for key in (0, 1):
                    here = self.distances[r, c, key]
                    if here <= 0:
                        continue
                    for a in range(env.action_dim):
                        nxt = env._next_cell[key][cell][a]
                        nkey = 1 if (key or nxt == env._key_cell) else 0
                        nr, nc = divmod(nxt, w)
                        if self.distances[nr, nc, nkey] == here - 1:
                            table[r, c, key] = a
                            break
        self.action_table = table

    def action_for(self, position: tuple[int, int], has_key: bool) -> int:
        """The expert's action at a (row, col) with or without the key."""
        a = int(self.action_table[position[0], position[1], int(bool(has_key))])
        return max(a, 0)

    def __call__(self, obs, info=None) -> int:
        position, has_key = self.env.decode(obs)
        return self.action_for(position, has_key)

    def label(self, observations) -> np.ndarray:
        """Expert actions for a batch of observations (N, observation_dim) -> (N,) int64."""
        obs = np.asarray(observations)
        if obs.ndim != 2 or obs.shape[1] != self.env.observation_dim:
            raise ValueError(f"ExpertPolicy.label: `observations` must have shape (N, {self.env.observation_dim}), got {obs.shape}")
        h, w = self.env.height, self.env.width
        rows = obs[:, :h].argmax(axis=1)
        cols = obs[:, h : h + w].argmax(axis=1)
        keys = (obs[:, h + w] > 0.5).astype(np.int64)
        return np.maximum(self.action_table[rows, cols, keys], 0)


class KeyForgettingPolicy(ExpertPolicy):
    """A consistent, mediocre demonstrator: the expert's plan as if the key were held.

    Without the key it walks the shortest route to the door and keeps pushing against
    it until the time limit; with the key (picked up by chance) it plays as the expert
    does. Its mistake is the same in every episode, so in a log where it is the
    majority, the most common action of a key-less state is the wrong one, which a
    cloning learner copies and a learner that reads the rewards need not.
    """

    def __init__(self, env: KeyDoorGrid) -> None:
        super().__init__(env)
        self.action_table[:, :, 0] = self.action_table[:, :, 1]  # plan as if holding the key


class NoisyExpertPolicy:
    """Epsilon-noisy expert: a uniformly random action with probability ``epsilon``,
    otherwise the optimal one.

    ``rng`` (a Generator or an int seed) drives the noise; a call may pass its own
    ``rng=`` to override it for that step. ``epsilon`` must lie in [0, 1].
    """

    def __init__(self, env: KeyDoorGrid, epsilon: float, rng=None) -> None:
        if not 0.0 <= float(epsilon) <= 1.0:
            raise ValueError(f"NoisyExpertPolicy: `epsilon` must lie in [0, 1], got {epsilon!r}")
        self.expert = ExpertPolicy(env)
        self.epsilon = float(epsilon)
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    def __call__(self, obs, info=None, rng: np.random.Generator | None = None) -> int:
        g = self.rng if rng is None else rng
        if g.random() < self.epsilon:
            return int(g.integers(self.expert.env.action_dim))
        return self.expert(obs, info)
