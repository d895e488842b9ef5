"""Online DQN / Double DQN: replay flags, targets through the pluggable kernel, determinism."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from reference_impl import kernels
from reference_impl.keydoor import KeyDoorGrid
from reference_impl.online_dqn import (
    DQNConfig,
    QNetwork,
    ReplayBuffer,
    compute_loss,
    compute_target,
    epsilon_at,
    train_online_dqn,
)

# A few seconds per run: tiny warm start, few episodes.
TINY = DQNConfig(warm_start_episodes=4, warm_start_updates=20, batch_size=32, learning_starts=64)


def filled_buffer(n=40, seed=0):
    rng = np.random.default_rng(seed)
    env = KeyDoorGrid()
    buf = ReplayBuffer(100, env.observation_dim)
    for i in range(n):
        obs = env.encode((6, i % 7), bool(i % 2))
        nxt = env.encode((5, i % 7), bool(i % 2))
        buf.add(obs, int(rng.integers(4)), float(rng.normal()), nxt, terminated=(i % 5 == 0), truncated=(i % 5 == 1))
    return buf


def test_replay_buffer_keeps_terminated_and_truncated_apart():
    buf = filled_buffer()
    assert len(buf) == 40
    assert buf.terminated[:40].sum() == 8 and buf.truncated[:40].sum() == 8
    assert not (buf.terminated & buf.truncated).any()
    batch = buf.sample(16, np.random.default_rng(1))
    assert batch["obs"].shape == (16, 19) and batch["obs"].dtype == np.float32
    assert batch["actions"].dtype == np.int64 and batch["terminated"].dtype == bool
    with pytest.raises(ValueError, match="terminated"):
        buf.add(batch["obs"][0], 0, 0.0, batch["obs"][0], terminated=True, truncated=True)


def test_replay_buffer_overwrites_oldest_when_full():
    buf = ReplayBuffer(3, 2)
    for i in range(5):
        buf.add(np.full(2, i), i % 4, float(i), np.full(2, i), False, False)
    assert len(buf) == 3
    assert sorted(buf.rewards.tolist()) == [2.0, 3.0, 4.0]
    with pytest.raises(ValueError, match="capacity"):
        ReplayBuffer(0, 2)
    with pytest.raises(ValueError, match="empty"):
        ReplayBuffer(2, 2).sample(1, np.random.default_rng(0))


@pytest.mark.parametrize("double", [False, True])
def test_compute_target_equals_kernel_and_truncation_bootstraps(double):
    torch.manual_seed(0)
    online, target = QNetwork(19, 4), QNetwork(19, 4)
    batch = filled_buffer().sample(32, np.random.default_rng(2))
    y = compute_target(
        batch, online, target, gamma=0.9, double=double, targets_fn=kernels.double_dqn_targets if double else kernels.dqn_targets
    )
    with torch.no_grad():
        qt = target(torch.from_numpy(batch["next_obs"])).double().numpy()
        qo = online(torch.from_numpy(batch["next_obs"])).double().numpy()
    expected = (
        kernels.double_dqn_targets(batch["rewards"], batch["terminated"], qo, qt, gamma=0.9)
        if double
        else kernels.dqn_targets(batch["rewards"], batch["terminated"], qt, gamma=0.9)
    )
    np.testing.assert_allclose(y, expected, rtol=0, atol=1e-12)
    # Manual check of the masks: terminal rows are the reward, truncated rows bootstrap.
    chosen = qo.argmax(1) if double else qt.argmax(1)
    manual = batch["rewards"] + 0.9 * np.where(batch["terminated"], 0.0, qt[np.arange(32), chosen])
    np.testing.assert_allclose(y, manual, atol=1e-12)
    trunc = batch["truncated"]
    assert trunc.any() and not np.allclose(y[trunc], batch["rewards"][trunc])


def test_compute_loss_is_huber_on_taken_actions():
    torch.manual_seed(1)
    net = QNetwork(19, 4)
    batch = filled_buffer().sample(8, np.random.default_rng(3))
    targets = np.linspace(-3, 3, 8)
    loss = compute_loss(net, batch, targets)
    with torch.no_grad():
        q = net(torch.from_numpy(batch["obs"])).numpy()[np.arange(8), batch["actions"]]
    err = np.abs(q - targets)
    huber = np.where(err < 1, 0.5 * err**2, err - 0.5).mean()
    assert float(loss.detach()) == pytest.approx(huber, rel=1e-5)


def test_epsilon_schedule():
    cfg = DQNConfig(epsilon_start=0.5, epsilon_end=0.1, epsilon_decay_fraction=0.5)
    assert epsilon_at(0, 100, cfg) == pytest.approx(0.5)
    assert epsilon_at(25, 100, cfg) == pytest.approx(0.3)
    assert epsilon_at(50, 100, cfg) == pytest.approx(0.1)
    assert epsilon_at(99, 100, cfg) == pytest.approx(0.1)


class SpyKernel:
    """A student's kernel stand-in: records its inputs, answers with the reference."""

    def __init__(self, reference):
        self.reference, self.calls, self.outputs = reference, 0, []

    def __call__(self, *args, gamma):
        assert all(isinstance(a, np.ndarray) for a in args)
        assert args[1].dtype == bool and args[0].dtype == np.float64 and args[-1].dtype == np.float64
        self.calls += 1
        out = self.reference(*args, gamma=gamma)
        self.outputs.append(out)
        return out


@pytest.mark.parametrize("double", [False, True])
def test_training_calls_the_plugged_kernel_every_update(double):
    spy = SpyKernel(kernels.double_dqn_targets if double else kernels.dqn_targets)
    run = train_online_dqn(seed=3, episodes=3, double=double, targets_fn=spy, config=TINY)
    assert spy.calls == run["updates"] == len(run["losses"]) > 0
    reference = train_online_dqn(seed=3, episodes=3, double=double, config=TINY)
    assert run["losses"] == reference["losses"]  # the plugged kernel drives the same training


def test_a_wrong_kernel_changes_training_and_a_bad_shape_is_caught():
    zero = lambda rewards, terminated, next_q, gamma: np.asarray(rewards, dtype=float)  # noqa: E731
    ref = train_online_dqn(seed=1, episodes=2, double=False, config=TINY)
    myopic = train_online_dqn(seed=1, episodes=2, double=False, config=TINY, targets_fn=zero)
    assert myopic["losses"] != ref["losses"]
    bad = lambda rewards, terminated, next_q, gamma: np.zeros(3)  # noqa: E731
    with pytest.raises(ValueError, match="targets_fn"):
        train_online_dqn(seed=1, episodes=1, double=False, config=TINY, targets_fn=bad)


def test_same_seed_same_run():
    a = train_online_dqn(seed=7, episodes=4, double=True, config=TINY)
    b = train_online_dqn(seed=7, episodes=4, double=True, config=TINY)
    assert a["losses"] == b["losses"]
    assert a["episode_return"] == b["episode_return"] and a["evaluation"] == b["evaluation"]
    c = train_online_dqn(seed=8, episodes=4, double=True, config=TINY)
    assert c["losses"] != a["losses"]


def test_result_layout_and_warm_start():
    run = train_online_dqn(seed=0, episodes=3, double=False, config=TINY)
    assert set(run["evaluation"]) == {"mean_return", "success_rate", "outcomes", "episodes", "exact"} and run["evaluation"]["exact"]
    assert len(run["episode_success"]) == len(run["episode_return"]) == len(run["episode_outcome"]) == 3
    assert set(run["episode_success"]) <= {0, 1}
    assert run["warm_start_transitions"] > 0
    assert run["updates"] == TINY.warm_start_updates + run["env_steps"] * TINY.updates_per_step


@pytest.mark.parametrize(
    "kwargs, match", [({"episodes": 0}, "episodes"), ({"episodes": 1.5}, "episodes"), ({"targets_fn": 3}, "targets_fn")]
)
def test_bad_arguments_raise(kwargs, match):
    args = {"seed": 0, "episodes": 1, "double": False, **kwargs}
    with pytest.raises(ValueError, match=match):
        train_online_dqn(**args)


@pytest.mark.parametrize(
    "kwargs", [{"gamma": 1.5}, {"batch_size": 0}, {"epsilon_end": -0.1}, {"epsilon_decay_fraction": 0.0}, {"learning_starts": 8}]
)
def test_config_validation(kwargs):
    with pytest.raises(ValueError):
        DQNConfig(**kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("double", [False, True])
def test_lab_smoke_profile_learns_something(double):
    run = train_online_dqn(seed=5, episodes=35, double=double)
    assert sum(run["episode_success"]) > 0


@pytest.mark.slow
@pytest.mark.parametrize("double", [False, True])
def test_lab_full_profile_learns_well_above_random(double):
    """The lab's full profile (seed 5, 130 episodes): a random policy never reaches the goal."""
    run = train_online_dqn(seed=5, episodes=130, double=double)
    assert run["evaluation"]["success_rate"] >= 0.75


@pytest.mark.parametrize("offset", [0.0, 0.37, -1.2])
def test_greedy_overestimation_is_the_shift_of_an_exact_critic(offset):
    """Q* (its greedy policy is its own fixed point) shifted by c: learned minus exact is c."""
    from reference_impl.keydoor import KeyDoorGrid
    from reference_impl.online_dqn import greedy_overestimation
    from tests.reference_impl.exact_critic import StateTableNet, optimal_q

    env = KeyDoorGrid()
    net = StateTableNet(env, optimal_q(env, 0.95) + offset)
    observations = np.stack([env.encode(p, k) for p in env.start_positions for k in (False, True)])
    assert greedy_overestimation(net, env, observations, 0.95) == pytest.approx(offset, abs=1e-6)


def test_training_measures_overestimation_at_every_checkpoint_and_at_the_end():
    from reference_impl.online_dqn import DQNConfig, train_online_dqn

    cfg = DQNConfig(warm_start_episodes=2, warm_start_updates=5, learning_starts=64, batch_size=16, overestimation_every=2)
    run = train_online_dqn(3, 5, True, config=cfg)
    assert [e for e, _ in run["overestimation"]] == [2, 4, 5]
    assert all(np.isfinite(v) for _, v in run["overestimation"])
