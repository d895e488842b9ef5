"""Exact evaluation from KeyDoorGrid's model agrees with episodes played in the environment."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.exact_eval import exact_outcomes, policy_actions
from reference_impl.expert import ExpertPolicy, KeyForgettingPolicy
from reference_impl.keydoor import WIDE_LAYOUT, KeyDoorGrid
from reference_impl.rollout import evaluate_policy, rollout

ENV = KeyDoorGrid()
STATES = 2 * ENV.height * ENV.width


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, ENV.action_dim - 1), min_size=STATES, max_size=STATES))
def test_without_slips_it_is_the_mean_over_one_episode_from_each_start(table):
    """No slips: each start cell's episode is determined, so the exact outcome is their plain mean."""
    actions = np.asarray(table)
    exact = exact_outcomes(ENV, actions)
    episodes = [rollout(ENV, lambda obs, info: int(actions[ENV.state_index(obs)]), seed=0, start=s) for s in ENV.start_positions]
    assert exact["mean_return"] == pytest.approx(np.mean([ep.return_ for ep in episodes]), abs=1e-9)
    for outcome in ("goal", "trap", "timeout"):
        assert exact["outcomes"][outcome] == pytest.approx(np.mean([ep.outcome == outcome for ep in episodes]), abs=1e-9)
    assert exact["success_rate"] == exact["outcomes"]["goal"] and exact["exact"] and exact["episodes"] == 0


@pytest.mark.parametrize("slip", [0.1, 0.3])
@pytest.mark.parametrize("make_policy", [ExpertPolicy, KeyForgettingPolicy])
def test_with_slips_episodes_agree_within_their_sampling_error(slip, make_policy):
    env = KeyDoorGrid(seed=3, slip_probability=slip, layout=WIDE_LAYOUT, max_steps=100)
    policy = make_policy(env)
    exact = exact_outcomes(env, policy)
    n = 3000
    sampled = evaluate_policy(env, policy, episodes=n, seed=123)
    p = exact["success_rate"]
    assert abs(sampled["success_rate"] - p) <= 4 * np.sqrt(max(p * (1 - p), 1e-4) / n) + 1e-9
    assert abs(sampled["mean_return"] - exact["mean_return"]) <= 0.06  # returns lie within about [-1.5, 1]: 4 SE at n = 3000
    assert sum(exact["outcomes"].values()) == pytest.approx(1.0)


def test_the_expert_reaches_the_goal_from_every_start_without_slips():
    assert exact_outcomes(ENV, ExpertPolicy(ENV))["success_rate"] == 1.0


def test_a_policy_is_asked_one_observation_at_a_time_and_bad_actions_are_refused():
    seen = []

    def policy(obs, info):
        seen.append(np.asarray(obs).shape)
        return 0

    assert policy_actions(ENV, policy).shape == (STATES,) and set(seen) == {(ENV.observation_dim,)}
    with pytest.raises(ValueError, match="outside 0..3"):
        exact_outcomes(ENV, lambda obs, info: 7)
