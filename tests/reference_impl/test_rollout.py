"""rollout() records episodes faithfully; evaluate_policy() summarises them."""

from __future__ import annotations

import numpy as np
import pytest

from reference_impl.expert import ExpertPolicy, NoisyExpertPolicy
from reference_impl.keydoor import KeyDoorGrid
from reference_impl.records import Episode
from reference_impl.rollout import evaluate_policy, rollout

ENV = KeyDoorGrid()
EXPERT = ExpertPolicy(ENV)


def test_expert_episode_record_is_consistent():
    ep = rollout(ENV, EXPERT, seed=0, start=(6, 0))
    assert isinstance(ep, Episode)
    assert ep.start == (6, 0) and ep.outcome == "goal"
    assert ep.length == len(ep.transitions) == 22
    assert ep.return_ == pytest.approx(sum(t.reward for t in ep.transitions))
    assert ep.return_ == pytest.approx(0.79)
    for prev, nxt in zip(ep.transitions, ep.transitions[1:]):
        np.testing.assert_array_equal(prev.next_obs, nxt.obs)  # transitions chain
    assert [t.terminated for t in ep.transitions] == [False] * 21 + [True]
    assert all(isinstance(t.action, int) for t in ep.transitions)


def test_timeout_episode_is_truncated_not_terminated():
    env = KeyDoorGrid(max_steps=7)
    ep = rollout(env, lambda obs, info: 3, seed=0, start=(6, 0))  # keeps bumping left
    assert ep.outcome == "timeout" and ep.length == 7
    assert ep.transitions[-1].truncated and not ep.transitions[-1].terminated
    assert not any(t.truncated for t in ep.transitions[:-1])


def test_trap_episode_is_terminated():
    actions = iter([0, 0, 1])  # (6,0) -> (5,0) -> (4,0) -> trap (4,1)
    ep = rollout(ENV, lambda obs, info: next(actions), seed=0, start=(6, 0))
    assert ep.outcome == "trap" and ep.transitions[-1].terminated
    assert ep.return_ == pytest.approx(-0.02 + ENV.trap_reward)


def test_rng_is_forwarded_to_stochastic_policies():
    noisy = NoisyExpertPolicy(ENV, 0.5, rng=0)
    first = rollout(ENV, noisy, seed=3, rng=np.random.default_rng(11))
    second = rollout(ENV, noisy, seed=3, rng=np.random.default_rng(11))
    assert [t.action for t in first.transitions] == [t.action for t in second.transitions]


def test_invalid_policy_action_raises():
    with pytest.raises(ValueError, match="action"):
        rollout(ENV, lambda obs, info: 7, seed=0)


def test_evaluate_policy_metrics_and_reproducibility():
    m = evaluate_policy(ENV, EXPERT, episodes=10, seed=4)
    assert set(m) == {"mean_return", "success_rate", "outcomes", "episodes"}
    assert m["success_rate"] == 1.0 and m["episodes"] == 10
    assert m["outcomes"] == {"goal": 10, "trap": 0, "timeout": 0}
    noisy_a = evaluate_policy(ENV, NoisyExpertPolicy(ENV, 0.4, rng=2), episodes=15, seed=4)
    noisy_b = evaluate_policy(ENV, NoisyExpertPolicy(ENV, 0.4, rng=2), episodes=15, seed=4)
    assert noisy_a == noisy_b
    assert noisy_a["mean_return"] < m["mean_return"]
    assert sum(noisy_a["outcomes"].values()) == 15
    for bad in (0, -2, 1.5):
        with pytest.raises(ValueError, match="episodes"):
            evaluate_policy(ENV, EXPERT, episodes=bad, seed=0)
