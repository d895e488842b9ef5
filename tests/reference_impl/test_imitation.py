"""Behavior cloning fits expert labels; DAgger aggregates expert-labelled learner states."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from reference_impl.expert import ExpertPolicy
from reference_impl.imitation import ArgmaxPolicy, BCConfig, bc_loss, behavior_cloning, dagger_experiment
from reference_impl.keydoor import KeyDoorGrid
from reference_impl.rollout import rollout

SMOKE = dict(expert_episodes=4, rounds=2, learner_episodes_per_round=6, epochs=6, evaluation_episodes=12)


@pytest.fixture(scope="module")
def smoke_run():
    return dagger_experiment(seed=17, **SMOKE)


def test_bc_loss_is_cross_entropy():
    logits = torch.tensor([[2.0, 0.0, -1.0, 0.5], [0.0, 0.0, 0.0, 0.0]])
    actions = torch.tensor([0, 3])
    manual = -(torch.log_softmax(logits, 1)[0, 0] + torch.log_softmax(logits, 1)[1, 3]) / 2
    assert float(bc_loss(logits, actions)) == pytest.approx(float(manual))
    with pytest.raises(ValueError, match="logits"):
        bc_loss(logits[0], actions)


def test_behavior_cloning_reproduces_expert_demonstration():
    env = KeyDoorGrid()
    episode = rollout(env, ExpertPolicy(env), seed=0, start=(6, 0))
    obs = np.stack([t.obs for t in episode.transitions])
    actions = np.array([t.action for t in episode.transitions])
    net, history = behavior_cloning(obs, actions, epochs=10, seed=0)
    assert len(history) == 10 and history[-1] < history[0]
    assert [ArgmaxPolicy(net)(o) for o in obs] == actions.tolist()
    replay = rollout(env, ArgmaxPolicy(net), seed=0, start=(6, 0))
    assert replay.outcome == "goal" and replay.length == episode.length


@pytest.mark.parametrize(
    "obs, actions, epochs, match",
    [
        (np.zeros((0, 19)), np.zeros(0, dtype=int), 1, "observations"),
        (np.zeros((3, 19)), np.zeros(2, dtype=int), 1, "actions"),
        (np.zeros((3, 19)), np.array([0, 1, 4]), 1, "actions"),
        (np.zeros((3, 19)), np.array([0.0, 1.0, 2.0]), 1, "actions"),
        (np.zeros((3, 19)), np.array([0, 1, 2]), 0, "epochs"),
    ],
)
def test_behavior_cloning_rejects_bad_input(obs, actions, epochs, match):
    with pytest.raises(ValueError, match=match):
        behavior_cloning(obs, actions, epochs=epochs, seed=0)


def test_dagger_records_shape_and_aggregation(smoke_run):
    records = smoke_run["records"]
    assert [r["round"] for r in records] == [0, 1, 2]
    assert records[0]["learner_outcomes"] is None
    for prev, cur in zip(records, records[1:]):
        # Aggregation: each round adds exactly the learner's visited states, nothing is dropped.
        assert cur["dataset_size"] == prev["dataset_size"] + cur["new_states"]
        assert sum(cur["learner_outcomes"].values()) == SMOKE["learner_episodes_per_round"]
    for r in records:
        assert 0.0 <= r["success_rate"] <= 1.0
        assert sum(r["outcomes"].values()) == SMOKE["evaluation_episodes"]
        assert r["success_rate"] == r["outcomes"]["goal"] / SMOKE["evaluation_episodes"]


def test_dagger_final_round_is_at_least_as_good_as_bc_on_smoke(smoke_run):
    records = smoke_run["records"]
    assert records[-1]["success_rate"] >= records[0]["success_rate"]
    assert records[-1]["success_rate"] >= 0.75


def test_dagger_is_deterministic(smoke_run):
    again = dagger_experiment(seed=17, **SMOKE)
    assert again["records"] == smoke_run["records"]
    assert again["bc_losses"] == smoke_run["bc_losses"]


@pytest.mark.parametrize("name, value", [("expert_episodes", 0), ("rounds", -1), ("epochs", 0),
                                         ("learner_episodes_per_round", 0), ("evaluation_episodes", 1.5)])
def test_dagger_rejects_bad_counts(name, value):
    with pytest.raises(ValueError, match=name):
        dagger_experiment(seed=0, **{**SMOKE, name: value})


def test_bc_config_validation():
    with pytest.raises(ValueError, match="learning_rate"):
        BCConfig(learning_rate=0.0)


@pytest.mark.slow
def test_lab_full_profile_dagger_beats_bc():
    run = dagger_experiment(seed=17, expert_episodes=4, rounds=3, learner_episodes_per_round=8, epochs=12,
                            evaluation_episodes=24)
    records = run["records"]
    assert records[-1]["success_rate"] > records[0]["success_rate"]
    assert records[-1]["success_rate"] >= 0.9
