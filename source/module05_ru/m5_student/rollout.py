# Generated from reference_impl/rollout.py by the course's release build; do not edit.
# The graded kernels are stubs here: write them in the notebooks.
"""Run a policy in KeyDoorGrid and summarize what happened.

A policy is a callable ``policy(obs, info) -> int`` (see :mod:`m5_student.expert`).
"""
from __future__ import annotations

import numpy as np

from m5_student.common import summarize_episodes
from m5_student.records import Episode, Transition

__all__ = ["rollout", "evaluate_policy"]


def rollout(env, policy, *, seed: int | None, start=None, rng: np.random.Generator | None = None) -> Episode:
    """Play one episode and record it.

    ``seed`` is passed to ``env.reset`` (it fixes the start draw and any slips);
    ``start`` (row, col) fixes the start cell instead of drawing it. When ``rng`` is
    given, the policy is called as ``policy(obs, info, rng=rng)`` so that stochastic
    policies (e.g. :class:`~m5_student.expert.NoisyExpertPolicy`) draw from it;
    otherwise as ``policy(obs, info)``.

    Returns an :class:`~m5_student.records.Episode` whose transitions keep
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


def evaluate_policy(env, policy, *, episodes: int, seed: int, rng: np.random.Generator | None = None) -> dict:
    """Mean return, success rate and outcome counts over ``episodes`` episodes.

    Episode ``i`` is reset with seed ``seed + i`` (so the start cells, and thus the
    comparison between policies evaluated with the same seed, are reproducible).
    Returns the metrics dict of :func:`m5_student.common.summarize_episodes`.
    """
    if isinstance(episodes, bool) or not isinstance(episodes, (int, np.integer)) or episodes < 1:
        raise ValueError(f"evaluate_policy: `episodes` must be a positive integer, got {episodes!r}")
    results = [rollout(env, policy, seed=seed + i, rng=rng) for i in range(int(episodes))]
    return summarize_episodes([ep.return_ for ep in results], [ep.outcome for ep in results])
