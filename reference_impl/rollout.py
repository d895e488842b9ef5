"""Run a policy in KeyDoorGrid and summarize what happened.

A policy is a callable ``policy(obs, info) -> int`` (see :mod:`reference_impl.expert`).
"""

from __future__ import annotations

import numpy as np

from reference_impl.common import summarize_episodes
from reference_impl.records import Episode, Transition

__all__ = ["rollout", "play_episodes", "evaluate_policy"]


def rollout(env, policy, *, seed: int | None, start=None, rng: np.random.Generator | None = None) -> Episode:
    """Play one episode and record it.

    ``seed`` is passed to ``env.reset`` (it fixes the start draw and any slips);
    ``start`` (row, col) fixes the start cell instead of drawing it. When ``rng`` is
    given, the policy is called as ``policy(obs, info, rng=rng)`` so that stochastic
    policies (e.g. :class:`~reference_impl.expert.NoisyExpertPolicy`) draw from it;
    otherwise as ``policy(obs, info)``.

    Returns an :class:`~reference_impl.records.Episode` whose transitions keep
    ``terminated`` (goal, trap) apart from ``truncated`` (time limit); ``return_`` is
    the undiscounted sum of rewards and ``outcome`` is "goal", "trap" or "timeout".
    Raises ValueError when the policy returns an invalid action (from ``env.step``).
    """
    obs, info = env.reset(seed=seed, start=start)
    episode = Episode(start=tuple(info["state"]["position"]))
    transitions = episode.transitions
    total = 0.0
    while True:
        action = policy(obs, info) if rng is None else policy(obs, info, rng=rng)
        next_obs, reward, terminated, truncated, info = env.step(action)  # validates the action
        transitions.append(Transition(obs, int(action), float(reward), next_obs, bool(terminated), bool(truncated)))
        total += reward
        obs = next_obs
        if terminated or truncated:
            break
    episode.return_ = float(total)
    episode.length = len(transitions)
    episode.outcome = info["outcome"]
    return episode


def play_episodes(env, policy, *, episodes: int, seed: int, rng: np.random.Generator | None = None) -> list[Episode]:
    """``episodes`` recorded episodes; episode ``i`` is reset with seed ``seed + i`` (so the
    start cells, and thus the comparison between policies played with the same seed, are
    reproducible)."""
    if isinstance(episodes, bool) or not isinstance(episodes, (int, np.integer)) or episodes < 1:
        raise ValueError(f"evaluate_policy: `episodes` must be a positive integer, got {episodes!r}")
    return [rollout(env, policy, seed=seed + i, rng=rng) for i in range(int(episodes))]


def evaluate_policy(env, policy, *, episodes: int, seed: int, rng: np.random.Generator | None = None) -> dict:
    """Mean return, success rate and outcome counts over the episodes of
    :func:`play_episodes`: the metrics dict of :func:`reference_impl.common.summarize_episodes`."""
    results = play_episodes(env, policy, episodes=episodes, seed=seed, rng=rng)
    return summarize_episodes([ep.return_ for ep in results], [ep.outcome for ep in results])
