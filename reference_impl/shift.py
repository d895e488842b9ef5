"""Distribution shift of an imitation learner, measured on its own rollouts.

Behavior cloning is trained on the states the expert shows; it is then run on the
states *it* reaches. Ross and Bagnell (2010) bound its cost by ``O(eps T^2)`` because
one mistake can lead it to states absent from its training data, where its error is
larger still. This module measures both parts of that argument on KeyDoorGrid:

* ``unseen_share``: the share of the learner's visits (state occurrences over its
  evaluation episodes, i.e. its own state distribution) whose state is absent from
  the states it was trained on;
* ``error_unseen`` / ``error_seen``: the share of those visits where the learner's
  chosen action is not an optimal one (an action that does not lower the shortest
  distance to the goal), on unseen and on trained states.

An action is scored by the learner's choice, before the environment's slip replaces
it, so a slip is never counted as the learner's error.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from reference_impl.expert import plan_distances
from reference_impl.keydoor import KeyDoorGrid
from reference_impl.records import Episode

__all__ = ["optimal_actions", "state_indices", "shift_metrics", "episode_visits"]


def optimal_actions(env: KeyDoorGrid) -> np.ndarray:
    """``(2 * height * width, action_dim)`` bool: ``[s, a]`` is True when action ``a``
    in state ``s`` (:meth:`KeyDoorGrid.state_index` numbering) lowers the shortest
    distance to the goal by one, i.e. starts a shortest route (ties all count).
    Rows of states from which the goal is unreachable (walls, traps, the goal) are
    all False."""
    dist = plan_distances(env).reshape(-1, 2)  # [cell, key]
    w = env.width
    out = np.zeros((2 * env.height * w, env.action_dim), dtype=bool)
    for cell in range(env.height * w):
        for key in (0, 1):
            here = dist[cell, key]
            if here <= 0:
                continue
            for a in range(env.action_dim):
                nxt = env._next_cell[key][cell][a]
                nkey = 1 if (key or nxt == env._key_cell) else 0
                out[2 * cell + key, a] = dist[nxt, nkey] == here - 1
    return out


def state_indices(env: KeyDoorGrid, observations) -> np.ndarray:
    """State index ``2 * (row * width + col) + has_key`` of every observation, (N, d) -> (N,).

    The vectorised form of :meth:`KeyDoorGrid.state_index`."""
    obs = np.asarray(observations)
    if obs.ndim != 2 or obs.shape[1] != env.observation_dim:
        raise ValueError(f"state_indices: `observations` must have shape (N, {env.observation_dim}), got {obs.shape}")
    h, w = env.height, env.width
    rows, cols = obs[:, :h].argmax(axis=1), obs[:, h : h + w].argmax(axis=1)
    return (2 * (rows * w + cols) + (obs[:, h + w] > 0.5)).astype(np.int64)


def episode_visits(env: KeyDoorGrid, episodes: Sequence[Episode]) -> tuple[np.ndarray, np.ndarray]:
    """``(states, actions)``: every state an episode acts in and the action the policy
    chose there (before any slip), over all ``episodes`` in order."""
    transitions = [t for ep in episodes for t in ep.transitions]
    if not transitions:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    states = state_indices(env, np.stack([t.obs for t in transitions]))
    return states, np.asarray([t.action for t in transitions], dtype=np.int64)


def _share(flags: np.ndarray) -> float:
    return float(flags.mean()) if flags.size else float("nan")


def shift_metrics(states, actions, optimal: np.ndarray, trained) -> dict:
    """The learner's shift and its errors over its visits.

    ``states`` (N,) and ``actions`` (N,): each visit's state index and the learner's
    action there; ``optimal`` (S, A) bool from :func:`optimal_actions`; ``trained``:
    the state indices of the learner's training labels (any iterable of ints).

    With U = the visits whose state is not in ``trained``::

        unseen_share = |U| / N
        error_unseen = mean over U of [actions is not optimal]
        error_seen   = mean over the other visits of [actions is not optimal]

    Visits to states with no optimal action are left out of the errors (there is no
    right answer there). A share over no visits is NaN. Returns those three and
    ``visits`` (N).
    """
    s = np.asarray(states, dtype=np.int64).reshape(-1)
    a = np.asarray(actions, dtype=np.int64).reshape(-1)
    table = np.asarray(optimal, dtype=bool)
    if s.shape != a.shape:
        raise ValueError(f"shift_metrics: `states` and `actions` must have the same length, got {s.shape} and {a.shape}")
    if table.ndim != 2:
        raise ValueError(f"shift_metrics: `optimal` must be a 2-D (states, actions) table, got shape {table.shape}")
    if s.size and (s.min() < 0 or s.max() >= table.shape[0]):
        raise ValueError(f"shift_metrics: `states` must lie in [0, {table.shape[0]}), got {int(s.min())}..{int(s.max())}")
    if a.size and (a.min() < 0 or a.max() >= table.shape[1]):
        raise ValueError(f"shift_metrics: `actions` must lie in [0, {table.shape[1]}), got {int(a.min())}..{int(a.max())}")
    seen_mask = np.zeros(table.shape[0], dtype=bool)
    seen_mask[np.asarray(list(trained), dtype=np.int64)] = True
    unseen = ~seen_mask[s]
    scorable = table[s].any(axis=1)
    wrong = ~table[s, a]
    return {
        "unseen_share": _share(unseen),
        "error_unseen": _share(wrong[unseen & scorable]),
        "error_seen": _share(wrong[~unseen & scorable]),
        "visits": int(s.size),
    }
