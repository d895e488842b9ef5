"""Offline RL suite: fixed logs, export, each learner's target and loss, the experiment."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from reference_impl import kernels as K
from reference_impl.fqe import FQEConfig
from reference_impl.offline import METHOD_NAMES, OfflineExperimentConfig, offline_experiment, simulated_value
from reference_impl.offline_data import (
    PROFILES,
    BehaviorPolicy,
    action_frequencies,
    collect_offline_dataset,
    episode_start_indices,
    from_arrays,
    load_npz,
    save_npz,
    to_arrays,
)
from reference_impl.offline_methods import (
    CQLConfig,
    DQNConfig,
    GreedyPolicy,
    IQLConfig,
    OfflineLog,
    RestrictedDQNConfig,
    bc_loss,
    compute_dqn_target,
    compute_iql_q_target,
    compute_restricted_target,
    cql_loss,
    iql_policy_loss,
    iql_value_loss,
    resolve_kernels,
    td_loss,
    train_behavior_cloning,
    train_cql,
    train_iql,
    train_offline_dqn,
    train_restricted_dqn,
)
from tests.reference_impl.exact_critic import StateTableNet, optimal_q  # tests/reference_impl/exact_critic.py

torch.set_num_threads(1)


# ----------------------------------------------------------------- logs
@pytest.fixture(scope="module")
def logs():
    return {p: collect_offline_dataset(41, 30, p) for p in PROFILES}


def test_profiles_give_consistent_episode_records(logs):
    for profile, (episodes, transitions) in logs.items():
        assert len(episodes) == 30, profile
        assert sum(ep.length for ep in episodes) == len(transitions)
        assert [t for ep in episodes for t in ep.transitions] == transitions
        for ep in episodes:
            assert ep.length == len(ep.transitions) > 0
            assert ep.return_ == pytest.approx(sum(t.reward for t in ep.transitions))
            assert ep.outcome in ("goal", "trap", "timeout")


def test_profiles_differ_as_named(logs):
    def outcomes(profile):
        return [ep.outcome for ep in logs[profile][0]]

    assert set(outcomes("expert")) == {"goal"}
    assert "goal" not in outcomes("random")
    expert_return = np.mean([ep.return_ for ep in logs["expert"][0]])
    noisy_return = np.mean([ep.return_ for ep in logs["noisy"][0]])
    assert expert_return > noisy_return
    freqs = action_frequencies(to_arrays(logs["random"][1])["actions"])
    assert freqs.min() > 0.18  # uniform random actions: no action is rare


def test_unknown_profile_and_bad_counts_raise():
    with pytest.raises(ValueError, match="profile"):
        collect_offline_dataset(0, 3, profile="medium")
    with pytest.raises(ValueError, match="episodes"):
        collect_offline_dataset(0, 0)


def test_a_timeout_is_never_marked_terminal(logs):
    episodes = [ep for eps, _ in logs.values() for ep in eps]
    timeouts = [ep for ep in episodes if ep.outcome == "timeout"]
    assert timeouts, "the random profile should produce time-limit cuts"
    for ep in episodes:
        *middle, last = ep.transitions
        assert not any(t.terminated or t.truncated for t in middle)
        assert not (last.terminated and last.truncated)
        assert last.truncated == (ep.outcome == "timeout")
        assert last.terminated == (ep.outcome in ("goal", "trap"))
    arrays = to_arrays(logs["random"][1])
    assert arrays["timeouts"].any()
    assert not (arrays["timeouts"] & arrays["terminals"]).any()


@pytest.mark.parametrize("seed, episodes", [(41, 30), (41, 80), (0, 80), (1, 80), (2, 80), (3, 80), (4, 80)])
def test_mixed_log_is_skewed_enough_for_the_support_mask(seed, episodes):
    _, transitions = collect_offline_dataset(seed, episodes, "mixed")
    freqs = action_frequencies(to_arrays(transitions)["actions"])
    mask = K.behavior_support_mask(freqs, 0.35)
    assert not mask.all()
    assert mask[:2].all()  # "up" and "right" dominate the expert's routes


def test_collection_is_deterministic_in_the_seed():
    a = to_arrays(collect_offline_dataset(5, 12)[1])
    b = to_arrays(collect_offline_dataset(5, 12)[1])
    c = to_arrays(collect_offline_dataset(6, 12)[1])
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    assert len(a["actions"]) != len(c["actions"]) or not np.array_equal(a["actions"], c["actions"])


def test_behavior_policy_noise_follows_its_distribution():
    from reference_impl.expert import ExpertPolicy
    from reference_impl.keydoor import KeyDoorGrid

    env = KeyDoorGrid()
    policy = BehaviorPolicy(ExpertPolicy(env), 1.0, (0.0, 0.0, 0.0, 1.0), np.random.default_rng(0))
    obs, _ = env.reset(start=(6, 0))
    assert {policy(obs) for _ in range(50)} == {3}
    with pytest.raises(ValueError, match="noise_probs"):
        BehaviorPolicy(ExpertPolicy(env), 0.1, (0.5, 0.5), np.random.default_rng(0))


# ----------------------------------------------------------------- export
def test_npz_round_trip_keeps_every_array_and_the_episodes(tmp_path, logs):
    episodes, transitions = logs["random"]
    arrays = to_arrays(transitions)
    assert set(arrays) == {"observations", "actions", "rewards", "next_observations", "terminals", "timeouts"}
    assert arrays["observations"].dtype == np.float32 and arrays["actions"].dtype == np.int64
    assert arrays["terminals"].dtype == np.bool_ and arrays["timeouts"].dtype == np.bool_
    path = tmp_path / "log.npz"
    save_npz(path, arrays)
    with np.load(path, allow_pickle=False) as raw:  # no object arrays inside
        assert all(raw[k].dtype != object for k in raw.files)
    loaded = load_npz(path)
    for key in arrays:
        np.testing.assert_array_equal(loaded[key], arrays[key])
        assert loaded[key].dtype == arrays[key].dtype
    episodes_back, transitions_back = from_arrays(loaded)
    assert len(transitions_back) == len(transitions)
    for t, u in zip(transitions, transitions_back):
        assert (t.action, t.reward, t.terminated, t.truncated) == (u.action, u.reward, u.terminated, u.truncated)
        np.testing.assert_array_equal(t.obs, u.obs)
        np.testing.assert_array_equal(t.next_obs, u.next_obs)
    assert [(e.outcome, e.length, e.start) for e in episodes_back] == [(e.outcome, e.length, e.start) for e in episodes]
    np.testing.assert_allclose([e.return_ for e in episodes_back], [e.return_ for e in episodes])


def test_episode_start_indices_follow_terminals_and_timeouts():
    arrays = {
        "observations": np.zeros((6, 2)),
        "actions": np.zeros(6, int),
        "rewards": np.zeros(6),
        "next_observations": np.zeros((6, 2)),
        "terminals": np.array([0, 1, 0, 0, 0, 1], bool),
        "timeouts": np.array([0, 0, 0, 1, 0, 0], bool),
    }
    np.testing.assert_array_equal(episode_start_indices(arrays), [0, 2, 4])


def test_load_rejects_a_file_missing_arrays(tmp_path):
    np.savez(tmp_path / "bad.npz", observations=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="lacks"):
        load_npz(tmp_path / "bad.npz")


# ----------------------------------------------------------------- hand-built batches
class TableNet(nn.Module):
    """Fixed lookup table over one-hot states: obs (B, S) -> table rows (B, A)."""

    def __init__(self, table):
        super().__init__()
        self.table = nn.Parameter(torch.as_tensor(np.asarray(table, dtype=np.float32)))

    def forward(self, obs):
        return obs @ self.table


EYE = np.eye(3, dtype=np.float32)


def hand_batch():
    """Three rows: a plain step from s0 to s1, a terminal step (s1, goal), a timeout step s2 -> s2."""
    return OfflineLog.from_arrays(
        {
            "observations": EYE[[0, 1, 2]],
            "actions": np.array([1, 0, 2]),
            "rewards": np.array([-0.01, 1.0, -0.01]),
            "next_observations": EYE[[1, 0, 2]],
            "terminals": np.array([False, True, False]),
            "timeouts": np.array([False, False, True]),
        }
    )


Q_TARGET = np.array([[0.1, 0.2, 0.3], [0.5, 0.9, -0.4], [2.0, 0.0, 0.7]])  # s1 prefers a1, s2 prefers a0


def test_naive_dqn_target_matches_the_kernel_and_bootstraps_timeouts():
    b = hand_batch()
    y = compute_dqn_target(b, TableNet(Q_TARGET), 0.9).numpy()
    next_q = Q_TARGET[[1, 0, 2]]
    np.testing.assert_allclose(y, K.dqn_targets(b.rewards, b.terminated, next_q, 0.9), rtol=1e-6)
    np.testing.assert_allclose(y, [-0.01 + 0.9 * 0.9, 1.0, -0.01 + 0.9 * 2.0], rtol=1e-6)


def test_restricted_target_maximises_only_over_supported_actions():
    b = hand_batch()
    online = TableNet(Q_TARGET)  # would choose a1 in s1 and a0 in s2
    target = TableNet(Q_TARGET + 10.0)  # evaluates the chosen action
    support_table = np.array([[True, True, True], [True, False, True], [False, True, True]])

    def support(obs):
        return support_table[obs.argmax(1).numpy()]

    y = compute_restricted_target(b, online, target, support, 0.9).numpy()
    # s1: a1 is excluded -> argmax over {a0, a2} of online = a0 (0.5); s2: a0 excluded -> a2 (0.7).
    want = [-0.01 + 0.9 * (0.5 + 10.0), 1.0, -0.01 + 0.9 * (0.7 + 10.0)]
    np.testing.assert_allclose(y, want, rtol=1e-6)
    # With full support it is exactly Double DQN.
    y_full = compute_restricted_target(b, online, target, lambda o: np.ones((len(o), 3), bool), 0.9).numpy()
    np.testing.assert_allclose(
        y_full, K.double_dqn_targets(b.rewards, b.terminated, Q_TARGET[[1, 0, 2]], Q_TARGET[[1, 0, 2]] + 10.0, 0.9), rtol=1e-6
    )


def test_greedy_policy_never_picks_an_unsupported_action():
    net = TableNet(Q_TARGET)
    policy = GreedyPolicy(net, support=lambda o: np.array([[False, False, True]] * len(o)))
    assert policy.actions(EYE).tolist() == [2, 2, 2]
    np.testing.assert_array_equal(policy.probs(EYE), np.tile([0.0, 0.0, 1.0], (3, 1)))
    assert GreedyPolicy(net)(EYE[2]) == 0


def test_cql_loss_is_td_plus_alpha_times_the_kernel_penalty():
    b = hand_batch()
    q = torch.tensor(Q_TARGET, dtype=torch.float32, requires_grad=True)
    y = torch.tensor([0.0, 1.0, 0.5])
    parts = cql_loss(q, b.actions, y, alpha=0.7)
    taken = Q_TARGET[[0, 1, 2], [1, 0, 2]]
    assert parts["td"].item() == pytest.approx(np.mean((taken - y.numpy()) ** 2), rel=1e-5)
    assert parts["penalty"].item() == pytest.approx(K.cql_discrete_penalty(Q_TARGET, b.actions.numpy()), rel=1e-5)
    assert parts["total"].item() == pytest.approx(parts["td"].item() + 0.7 * parts["penalty"].item(), rel=1e-6)
    parts["total"].backward()
    assert q.grad is not None and torch.isfinite(q.grad).all()


def test_iql_pieces_match_the_kernels():
    b = hand_batch()
    values = TableNet([[0.2], [0.4], [-0.3]])
    y = compute_iql_q_target(b, values, 0.9).numpy()
    np.testing.assert_allclose(y, [-0.01 + 0.9 * 0.4, 1.0, -0.01 + 0.9 * -0.3], rtol=1e-6)  # timeout row bootstraps

    q_taken = torch.tensor([0.5, -0.2, 1.0], dtype=torch.float64)
    v = torch.tensor([0.1, 0.3, 0.2], dtype=torch.float64, requires_grad=True)
    loss = iql_value_loss(q_taken, v, 0.8)
    assert loss.item() == pytest.approx(K.expectile_loss((q_taken - v).detach().numpy(), 0.8))
    loss.backward()
    assert v.grad is not None

    logits = torch.tensor(Q_TARGET, dtype=torch.float64, requires_grad=True)
    adv = torch.tensor([0.5, -1.0, 30.0], dtype=torch.float64)
    loss = iql_policy_loss(logits, b.actions, adv, beta=2.0, max_weight=50.0)
    logp = F.log_softmax(torch.tensor(Q_TARGET, dtype=torch.float64), 1).numpy()[[0, 1, 2], [1, 0, 2]]
    weights = K.iql_advantage_weights(adv.numpy(), 2.0, 50.0)
    assert weights[2] == pytest.approx(50.0)
    assert loss.item() == pytest.approx(-np.mean(weights * logp))


def test_bc_loss_is_cross_entropy_and_td_loss_is_mse():
    logits = torch.tensor(Q_TARGET)
    actions = torch.tensor([1, 0, 2])
    assert bc_loss(logits, actions).item() == pytest.approx(F.cross_entropy(logits, actions).item())
    assert td_loss(logits, actions, torch.zeros(3)).item() == pytest.approx(np.mean(Q_TARGET[[0, 1, 2], [1, 0, 2]] ** 2))
    with pytest.raises(ValueError, match="td_loss"):
        td_loss(logits, actions, torch.zeros(2))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=3, max_size=3), st.floats(0.0, 1.0), st.lists(st.booleans(), min_size=3, max_size=3))
def test_dqn_target_agrees_with_the_kernel_on_random_tables(rewards, gamma, done):
    rng = np.random.default_rng(len(rewards))
    table = rng.normal(size=(3, 3))
    b = OfflineLog.from_arrays(
        {
            "observations": EYE,
            "actions": np.zeros(3, int),
            "rewards": np.array(rewards),
            "next_observations": EYE[[2, 0, 1]],
            "terminals": np.array(done),
            "timeouts": np.zeros(3, bool),
        }
    )
    y = compute_dqn_target(b, TableNet(table), gamma).numpy()
    want = K.dqn_targets(np.array(rewards), np.array(done), table.astype(np.float32)[[2, 0, 1]], gamma)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------- loops and kernels
@pytest.fixture(scope="module")
def small_log():
    return OfflineLog.from_arrays(to_arrays(collect_offline_dataset(3, 6)[1]))


def counting(fn, calls, name):
    def wrapped(*args, **kwargs):
        calls[name] = calls.get(name, 0) + 1
        return fn(*args, **kwargs)

    return wrapped


def test_loops_call_the_plugged_in_kernels(small_log):
    calls = {}
    plugged = {name: counting(fn, calls, name) for name, fn in resolve_kernels(None).items()}
    bc = train_behavior_cloning(small_log, 4, epochs=1, seed=0, kernels=plugged)
    train_offline_dqn(small_log, 4, epochs=1, seed=0, kernels=plugged)
    train_restricted_dqn(small_log, 4, bc.networks["policy"], epochs=1, seed=0, kernels=plugged)
    train_cql(small_log, 4, epochs=1, seed=0, kernels=plugged)
    train_iql(small_log, 4, epochs=1, seed=0, kernels=plugged)
    for name in (
        "masked_token_nll",
        "dqn_targets",
        "double_dqn_targets",
        "behavior_support_mask",
        "cql_discrete_penalty",
        "expectile_loss",
        "iql_advantage_weights",
    ):
        assert calls.get(name, 0) > 0, name


def test_a_broken_kernel_changes_training(small_log):
    def zero_targets(rewards, terminated, next_q, gamma=0.99):
        return np.zeros(len(rewards))

    good = train_offline_dqn(small_log, 4, epochs=2, seed=0)
    broken = train_offline_dqn(small_log, 4, epochs=2, seed=0, kernels={"dqn_targets": zero_targets})
    with torch.no_grad():
        assert not torch.allclose(good.networks["q"](small_log.obs), broken.networks["q"](small_log.obs))


def test_unknown_kernel_name_raises():
    with pytest.raises(ValueError, match="unknown"):
        resolve_kernels({"dqn_target": K.dqn_targets})


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda: DQNConfig(gamma=1.2), "gamma"),
        (lambda: DQNConfig(target_update_rate=0.0), "target_update_rate"),
        (lambda: RestrictedDQNConfig(threshold_ratio=1.5), "threshold_ratio"),
        (lambda: CQLConfig(alpha=-1.0), "alpha"),
        (lambda: CQLConfig(alpha=math.inf), "alpha"),
        (lambda: IQLConfig(expectile=1.0), "expectile"),
        (lambda: IQLConfig(learning_rate=0.0), "learning_rate"),
    ],
)
def test_bad_configs_raise(make, needle):
    with pytest.raises(ValueError, match=needle):
        make()


def test_training_rejects_bad_epochs(small_log):
    with pytest.raises(ValueError, match="epochs"):
        train_cql(small_log, 4, epochs=0, seed=0)


# ----------------------------------------------------------------- the experiment
# A small FQE budget keeps the smoke runs at a few seconds; the default budget is for the lab.
QUICK = OfflineExperimentConfig(fqe=FQEConfig(gamma=0.99, iterations=3, steps_per_iteration=5))


@pytest.fixture(scope="module")
def smoke_run():
    return offline_experiment(seed=2, dataset_episodes=8, train_epochs=1, config=QUICK)


def test_experiment_reports_every_method_with_metrics_and_fqe(smoke_run):
    assert tuple(smoke_run["results"]) == METHOD_NAMES
    for name, metrics in smoke_run["results"].items():
        assert metrics["exact"] and metrics["episodes"] == 0  # scored from the model, nothing sampled
        assert sum(metrics["outcomes"].values()) == pytest.approx(1.0)
        assert 0.0 <= metrics["success_rate"] <= 1.0
        assert metrics["updates"] > 0
        fqe = smoke_run["fqe"][name]
        assert math.isfinite(fqe["fqe_value"]) and math.isfinite(fqe["simulated_value"])
        assert fqe["error"] == pytest.approx(fqe["fqe_value"] - fqe["simulated_value"])
    assert smoke_run["dataset"]["episodes"] == 8
    assert len(smoke_run["dataset"]["support_mask"]) == 4


def test_experiment_is_deterministic(smoke_run):
    again = offline_experiment(seed=2, dataset_episodes=8, train_epochs=1, config=QUICK)
    strip = lambda run: {name: {k: v for k, v in m.items() if k != "train_seconds"} for name, m in run["results"].items()}  # noqa: E731
    assert strip(again) == strip(smoke_run)
    assert again["fqe"] == smoke_run["fqe"]
    assert again["dataset"] == smoke_run["dataset"]


def test_experiment_rejects_bad_arguments():
    with pytest.raises(ValueError, match="train_epochs"):
        offline_experiment(seed=0, dataset_episodes=3, train_epochs=0)


def test_simulated_value_of_the_expert_is_its_discounted_return():
    from reference_impl.expert import ExpertPolicy
    from reference_impl.keydoor import KeyDoorGrid

    env = KeyDoorGrid()
    # From (6, 0) the optimal return is 1 - 0.01 * 21: 21 step costs, then the goal on step 22.
    want = sum(-0.01 * 0.9**t for t in range(21)) + 0.9**21
    assert simulated_value(env, ExpertPolicy(env), [(6, 0), (6, 0)], 0.9) == pytest.approx(want)


@pytest.mark.slow
def test_full_profile_naive_dqn_overestimates_most_where_the_log_is_silent():
    """One full-profile seed: naive DQN's Q is far above the truth on unlogged actions and above
    the largest possible return in most states; IQL, which never evaluates an unlogged action,
    stays within one unit of the truth there. (Comparisons of returns need the 10-seed report.)"""
    run = offline_experiment(seed=41, dataset_episodes=80, train_epochs=40, run_fqe=False)
    naive, iql = run["results"]["naive DQN"], run["results"]["IQL"]
    assert naive["q_unlogged_error"] > 1.0 and naive["above_max_share"] > 0.5, naive
    assert abs(iql["q_unlogged_error"]) < 1.0 and iql["above_max_share"] < naive["above_max_share"], iql


def test_pinned_arrays_are_flat_and_pickle_free(smoke_run, tmp_path):
    from reference_impl.offline import pinned_arrays

    arrays = pinned_arrays(smoke_run)
    np.savez(tmp_path / "pinned.npz", **arrays)
    with np.load(tmp_path / "pinned.npz", allow_pickle=False) as back:
        assert [str(x) for x in back["method_names"]] == list(METHOD_NAMES)
        np.testing.assert_allclose(back["mean_return"], [smoke_run["results"][n]["mean_return"] for n in METHOD_NAMES])
        assert back["fqe_values"].shape == (len(METHOD_NAMES),)
    assert smoke_run["results"]["behavior cloning"]["greedy_q_mean"] is None
    assert math.isfinite(smoke_run["results"]["naive DQN"]["greedy_q_mean"])


def test_fqe_of_the_expert_on_a_mixed_log_matches_the_simulator():
    from reference_impl.expert import ExpertPolicy
    from reference_impl.fqe import fit_fqe, policy_value
    from reference_impl.keydoor import KeyDoorGrid

    env = KeyDoorGrid()
    expert = ExpertPolicy(env)
    arrays = to_arrays(collect_offline_dataset(0, 30)[1])
    starts = arrays["observations"][episode_start_indices(arrays)]

    def probs(obs):
        return np.eye(4)[expert.label(obs)]

    q_net = fit_fqe(arrays, probs, 4, FQEConfig(gamma=0.99), seed=0)
    estimate = policy_value(q_net, starts, probs)
    truth = simulated_value(env, expert, [env.decode(o)[0] for o in starts], 0.99)
    assert estimate == pytest.approx(truth, abs=0.06)


def test_offline_log_rejects_incomplete_or_ragged_arrays():
    with pytest.raises(ValueError, match="lacks"):
        OfflineLog.from_arrays({"actions": np.zeros(2, int)})
    arrays = to_arrays(collect_offline_dataset(0, 2)[1])
    arrays["rewards"] = arrays["rewards"][:-1]
    with pytest.raises(ValueError, match="rewards"):
        OfflineLog.from_arrays(arrays)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_restricted_target_property_on_random_tables_and_masks(data):
    from hypothesis.extra import numpy as hnp

    values = st.floats(-3, 3, allow_nan=False, width=32)
    online = data.draw(hnp.arrays(np.float32, (3, 3), elements=values))
    target = data.draw(hnp.arrays(np.float32, (3, 3), elements=values))
    allowed = data.draw(hnp.arrays(np.bool_, (3, 3)))
    allowed[np.arange(3), data.draw(hnp.arrays(np.int64, 3, elements=st.integers(0, 2)))] = True  # >= 1 per row
    gamma = data.draw(st.floats(0.0, 1.0))
    b = hand_batch()
    nxt = [1, 0, 2]
    y = compute_restricted_target(b, TableNet(online), TableNet(target), lambda o: allowed[o.argmax(1).numpy()], gamma).numpy()
    for i, s in enumerate(nxt):
        best = max((a for a in range(3) if allowed[s, a]), key=lambda a: (online[s, a], -a))
        want = b.rewards[i] + (0.0 if b.terminated[i] else gamma * float(target[s, best]))
        assert y[i] == pytest.approx(want, rel=1e-5, abs=1e-5)
        assert b.terminated[i] or allowed[s, best]


# ----------------------------------------------------------------- learned vs true value of the greedy action
class _TablePolicy(GreedyPolicy):
    """A GreedyPolicy over a fixed score table indexed by the grid's state (no network)."""

    def __init__(self, env, choose):
        super().__init__(net=None)
        self.env, self.choose = env, choose

    def scores(self, observations):
        obs = np.asarray(observations)
        out = np.zeros((len(obs), 4))
        for i, o in enumerate(obs):
            (r, c), key = self.env.decode(o)
            out[i, self.choose(r, c, key)] = 1.0
        return out


def test_tabular_model_matches_the_environment_step_by_step():
    from reference_impl.keydoor import KeyDoorGrid

    env = KeyDoorGrid()
    model = env.tabular_model()
    p = model["transition_probs"]
    np.testing.assert_allclose(p.sum(axis=2), 1.0)
    for start in env.start_positions:
        obs, _ = env.reset(start=start)
        for action in (0, 1, 1, 2, 3, 0):
            s = env.state_index(obs)
            np.testing.assert_array_equal(model["observations"][s], obs)
            obs, reward, terminated, _, _ = env.step(action)
            s_next = env.state_index(obs)
            assert p[s, action, s_next] == 1.0 and model["rewards"][s, action] == pytest.approx(reward)
            assert model["terminal_probs"][s, action, s_next] == float(terminated)
            if terminated:
                break
    slippery = KeyDoorGrid(slip_probability=0.2).tabular_model()["transition_probs"]
    np.testing.assert_allclose(slippery.sum(axis=2), 1.0)
    assert slippery.max() < 1.0 or slippery.max() == pytest.approx(0.85)  # no move is certain under slips (walls merge cells)


def test_true_state_values_equal_long_rollouts_of_the_same_policy():
    from reference_impl.keydoor import KeyDoorGrid
    from reference_impl.offline import true_state_values

    env = KeyDoorGrid(max_steps=2000)  # the tabular model has no time limit
    policy = _TablePolicy(env, lambda r, c, key: 1)  # always right: into the trap at (2, 6) from (2, 0), a wall from (6, 0)
    starts = env.start_positions
    observations = np.stack([env.encode(s, False) for s in starts])
    exact = true_state_values(env, policy, observations, 0.99)
    for start, value in zip(starts, exact):
        # 2000 steps leave 0.99**2000 (2e-9) of a looping policy's value out of the rollout
        assert value == pytest.approx(simulated_value(env, policy, [start], 0.99), abs=1e-8)
    # from (2, 0): five floor steps, then the trap on the sixth
    trap_value = -0.01 * sum(0.99**t for t in range(5)) - 0.99**5
    assert exact[starts.index((2, 0))] == pytest.approx(trap_value, abs=1e-12)


def test_logged_pair_share_counts_states_whose_greedy_action_was_logged():
    from reference_impl.keydoor import KeyDoorGrid
    from reference_impl.offline import logged_pair_share

    env = KeyDoorGrid()
    observations = np.stack([env.encode((6, 0), False), env.encode((6, 0), False), env.encode((2, 0), False)])
    actions = np.array([0, 1, 2])
    always_right = _TablePolicy(env, lambda r, c, key: 1)
    # two distinct states, each counted once: (6, 0) -> right was logged, (2, 0) -> right was not
    assert logged_pair_share(env, always_right, observations, actions) == pytest.approx(1 / 2)
    always_left = _TablePolicy(env, lambda r, c, key: 3)
    assert logged_pair_share(env, always_left, observations, actions) == 0.0


def test_offline_experiment_reports_learned_and_true_values_of_the_greedy_action():
    run = offline_experiment(41, 6, 1, config=OfflineExperimentConfig(fqe=FQEConfig(iterations=2, steps_per_iteration=2)))
    for name, metrics in run["results"].items():
        assert (metrics["greedy_q_mean"] is None) == (name == "behavior cloning")
        assert -1.0 - 1e-9 <= metrics["greedy_value_true"] <= 1.0  # a discounted value in KeyDoorGrid
        assert 0.0 <= metrics["logged_pair_share"] <= 1.0
        assert np.isfinite(run["fqe"][name]["logged_value"])


@settings(max_examples=8, deadline=None)
@given(offset=st.floats(-3, 3, allow_nan=False), episodes=st.integers(1, 6))
def test_q_value_errors_measure_a_shift_of_the_exact_critic(offset, episodes):
    """An exact critic (Q*) shifted by c: learned minus true is c on logged and unlogged pairs
    alike, and a state counts as above the largest return exactly when max Q* + c > 1."""
    from reference_impl.keydoor import KeyDoorGrid
    from reference_impl.offline import q_value_errors

    env = KeyDoorGrid()
    q_star = optimal_q(env, 0.99)
    net = StateTableNet(env, q_star + offset)
    _, transitions = collect_offline_dataset(3, episodes, "mediocre")
    arrays = to_arrays(transitions)
    errors = q_value_errors(env, net, GreedyPolicy(net), arrays["observations"], arrays["actions"], 0.99)
    assert errors["logged_error"] == pytest.approx(offset, abs=1e-8)
    assert math.isnan(errors["unlogged_error"]) or errors["unlogged_error"] == pytest.approx(offset, abs=1e-8)
    states = sorted({env.state_index(o) for o in arrays["observations"]})
    assert errors["above_max_share"] == pytest.approx(np.mean(q_star[states].max(axis=1) + offset > 1.0))


def test_key_forgetting_planner_walks_to_the_locked_door_and_waits():
    from reference_impl.expert import KeyForgettingPolicy
    from reference_impl.keydoor import KeyDoorGrid
    from reference_impl.rollout import rollout

    env = KeyDoorGrid()
    episode = rollout(env, KeyForgettingPolicy(env), seed=0, start=(6, 0))
    assert episode.outcome == "timeout"
    cells = [env.decode(t.next_obs)[0] for t in episode.transitions]
    assert cells[-1] == (3, 6) and all(not env.decode(t.next_obs)[1] for t in episode.transitions)  # never holds the key
    assert KeyForgettingPolicy(env).action_for((3, 6), False) == 1  # pushes right, into the door


def test_the_mediocre_logs_most_common_action_is_the_wrong_one_where_the_plans_part():
    """Why cloning fails on the offline log: at the start cells, without the key, the log's most
    frequent action is the key-forgetting planner's, not the expert's; and the expert's action
    is still logged there, so a learner that reads the rewards can find it."""
    from reference_impl.expert import ExpertPolicy, KeyForgettingPolicy
    from reference_impl.keydoor import KeyDoorGrid

    env = KeyDoorGrid()
    expert, forgetful = ExpertPolicy(env), KeyForgettingPolicy(env)
    _, transitions = collect_offline_dataset(41, 200, "mediocre")
    parted = 0
    for start in env.start_positions:
        good, bad = expert.action_for(start, False), forgetful.action_for(start, False)
        if good == bad:
            continue
        parted += 1
        counts = np.bincount([t.action for t in transitions if env.decode(t.obs) == (start, False)], minlength=4)
        assert counts.argmax() == bad and counts[good] > 0, (start, counts)
    assert parted >= 2
