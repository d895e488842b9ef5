"""Decision Transformer: shapes, causality, RTG targets, condition updates, training."""

from __future__ import annotations

import copy
import functools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.common import seed_everything
from reference_impl.decision_transformer import (
    DecisionTransformer,
    DTConfig,
    dt_action_loss,
    dt_return_sweep,
    evaluate_decision_transformer,
    make_training_windows,
    next_return_to_go,
    train_decision_transformer,
)
from reference_impl.kernels import return_to_go
from reference_impl.records import Episode, Transition

STATE_DIM, ACTION_DIM = 3, 2


# --------------------------------------------------------------------------- fakes
class ScheduleEnv:
    """Gymnasium-style env whose rewards follow a fixed schedule whatever the action;
    it terminates after the last scheduled reward."""

    def __init__(self, rewards, state_dim=STATE_DIM):
        self.rewards = list(rewards)
        self.state_dim = state_dim
        self.t = 0

    def _obs(self):
        obs = np.zeros(self.state_dim, np.float32)
        obs[self.t % self.state_dim] = 1.0
        return obs

    def reset(self, *, seed=None, options=None, start=None):
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        assert 0 <= action < ACTION_DIM
        reward = self.rewards[self.t]
        self.t += 1
        done = self.t == len(self.rewards)
        return self._obs(), reward, done, False, {"outcome": "goal" if done else None}


class TwoArmEnv:
    """One step: action 1 earns 1 (goal), action 0 earns 0 (trap). Same state always."""

    obs = np.array([1.0, 0.0, 0.0], np.float32)

    def reset(self, *, seed=None, options=None, start=None):
        return self.obs.copy(), {}

    def step(self, action):
        win = int(action) == 1
        return self.obs.copy(), float(win), True, False, {"outcome": "goal" if win else "trap"}


def make_episode(rewards, actions=None, state_dim=STATE_DIM, truncated_end=False):
    T = len(rewards)
    actions = [t % ACTION_DIM for t in range(T)] if actions is None else actions
    eye = np.eye(state_dim, dtype=np.float32)
    transitions = [
        Transition(
            eye[t % state_dim],
            int(actions[t]),
            float(rewards[t]),
            eye[(t + 1) % state_dim],
            terminated=(t == T - 1 and not truncated_end),
            truncated=(t == T - 1 and truncated_end),
        )
        for t in range(T)
    ]
    return Episode(transitions=transitions, return_=float(sum(rewards)), length=T, outcome="goal")


def two_arm_episodes(n):
    out = []
    for i in range(n):
        a = i % 2
        out.append(Episode([Transition(TwoArmEnv.obs, a, float(a), TwoArmEnv.obs, True, False)], float(a), 1, "goal" if a else "trap"))
    return out


def small_model(seed=0, **overrides):
    seed_everything(seed)
    cfg = DTConfig(state_dim=STATE_DIM, action_dim=ACTION_DIM, context_steps=6, d_model=16, n_heads=2, dim_feedforward=32, **overrides)
    return DecisionTransformer(cfg).eval()


def random_inputs(B, K, seed=1):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(B, K, generator=g),
        torch.randn(B, K, STATE_DIM, generator=g),
        torch.randint(0, ACTION_DIM, (B, K), generator=g),
        torch.arange(K).repeat(B, 1),
    )


# --------------------------------------------------------------------------- model
def test_forward_shape_and_config_defaults():
    model = small_model()
    logits = model(*random_inputs(4, 6))
    assert logits.shape == (4, 6, ACTION_DIM)
    default = DTConfig(state_dim=19, action_dim=4)
    assert default.dim_feedforward == 4 * default.d_model  # never torch's 2048 default


@settings(max_examples=25, deadline=None)
@given(t=st.integers(0, 5), which=st.sampled_from(["action_t", "future_rtg", "future_state", "future_action"]))
def test_future_tokens_never_change_earlier_predictions(t, which):
    model = small_model()
    rtg, states, actions, steps = random_inputs(2, 6)
    before = model(rtg, states, actions, steps)
    rtg2, states2, actions2 = rtg.clone(), states.clone(), actions.clone()
    if which == "action_t":
        actions2[:, t] = 1 - actions2[:, t]  # a_t is predicted at s_t, so it must be hidden there
        unchanged = slice(0, t + 1)
    elif which == "future_rtg":
        rtg2[:, t:] += 3.0
        unchanged = slice(0, t)
    elif which == "future_state":
        states2[:, t:] = -states2[:, t:]
        unchanged = slice(0, t)
    else:
        actions2[:, t:] = 1 - actions2[:, t:]
        unchanged = slice(0, t + 1)
    after = model(rtg2, states2, actions2, steps)
    torch.testing.assert_close(after[:, unchanged], before[:, unchanged], rtol=0, atol=1e-6)
    if which == "future_state" and t < 5:
        # the mask is not simply blocking everything: the changed step itself reacts
        assert not torch.allclose(after[:, t], before[:, t])


def test_right_padding_does_not_change_real_steps():
    model = small_model()
    rtg, states, actions, steps = random_inputs(1, 6)
    full = model(rtg, states, actions, steps)
    short = model(rtg[:, :3], states[:, :3], actions[:, :3], steps[:, :3])
    torch.testing.assert_close(full[:, :3], short, rtol=0, atol=1e-5)


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="n_heads"):
        DTConfig(state_dim=3, action_dim=2, d_model=10, n_heads=4)
    with pytest.raises(ValueError, match="context_steps"):
        DTConfig(state_dim=3, action_dim=2, context_steps=0)
    with pytest.raises(ValueError, match="gamma"):
        DTConfig(state_dim=3, action_dim=2, gamma=0.0)


# --------------------------------------------------------------------------- windows / RTG
def test_windows_use_return_to_go_and_pad_on_the_right():
    rewards = [1.0, 0.0, -0.5, 2.0]
    episodes = [make_episode(rewards), make_episode([0.25, 0.5])]
    w = make_training_windows(episodes, context_steps=3)
    assert len(w) == 6  # one window per step
    expected = return_to_go(rewards)  # (2.5, 1.5, 1.5, 2.0)
    np.testing.assert_allclose(w.returns_to_go[0], expected[:3])
    np.testing.assert_allclose(w.returns_to_go[2, :2], expected[2:])
    assert w.mask[2].tolist() == [True, True, False]
    assert w.timesteps[3].tolist()[:1] == [3]
    assert w.returns_to_go[2, 2] == 0.0 and w.actions[2, 2] == 0  # padding
    np.testing.assert_allclose(w.returns_to_go[4, :2], [0.75, 0.5])


def test_windows_call_the_pluggable_rtg_function_with_gamma():
    calls = []

    def spy(rewards, gamma):
        calls.append((np.asarray(rewards).tolist(), gamma))
        return return_to_go(rewards, gamma)

    w = make_training_windows([make_episode([1.0, 0.0, -0.5, 2.0])], 4, gamma=0.5, return_to_go_fn=spy)
    assert calls == [([1.0, 0.0, -0.5, 2.0], 0.5)]
    np.testing.assert_allclose(w.returns_to_go[0], [1.125, 0.25, 0.5, 2.0])


def test_a_wrong_rtg_function_is_caught():
    with pytest.raises(ValueError, match="return_to_go_fn"):
        make_training_windows([make_episode([1.0, 2.0])], 2, return_to_go_fn=lambda r, g: np.zeros(5))


def test_training_uses_the_rtg_function_it_is_given():
    episodes = two_arm_episodes(8)
    seen = []

    def spy(rewards, gamma):
        seen.append(len(rewards))
        return return_to_go(rewards, gamma)

    train_decision_transformer(
        episodes, seed=0, state_dim=3, action_dim=2, context_steps=2, epochs=1, batch_size=4, return_to_go_fn=spy, config=_tiny_config(2)
    )
    assert seen == [1] * 8


@pytest.mark.parametrize("bad", [dict(episodes=[]), dict(context_steps=0)])
def test_windows_reject_bad_input(bad):
    args = dict(episodes=[make_episode([1.0])], context_steps=2) | bad
    with pytest.raises(ValueError):
        make_training_windows(**args)


def test_loss_matches_cross_entropy_on_real_steps():
    model = small_model()
    w = make_training_windows([make_episode([1.0, 0.0, -0.5, 2.0]), make_episode([0.5])], 6)
    rtg, states, actions, steps, mask = w.batch(np.arange(len(w)))
    logits = model(rtg, states, actions, steps)
    expected = torch.nn.functional.cross_entropy(logits[mask], actions[mask])
    torch.testing.assert_close(dt_action_loss(model, rtg, states, actions, steps, mask), expected)


# --------------------------------------------------------------------------- evaluation
def test_next_return_to_go_matches_the_worked_example():
    request, seen = 5.0, []
    for r in (1.0, 0.0, -0.5, 2.0):
        seen.append(request)
        request = next_return_to_go(request, r)
    assert seen == [5.0, 4.0, 4.0, 4.5]
    assert next_return_to_go(1.0, 0.5, gamma=0.5) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="gamma"):
        next_return_to_go(1.0, 0.5, gamma=1.5)


def test_evaluation_subtracts_each_reward_from_the_condition():
    model = small_model()
    fed = []
    model.register_forward_pre_hook(lambda module, args: fed.append(args[0][:, -1].tolist()))
    conditions = []
    metrics = evaluate_decision_transformer(
        ScheduleEnv([1.0, 0.0, -0.5, 2.0]), model, target_return=5.0, episodes=2, seed=0, context_steps=6, conditions=conditions
    )
    assert conditions == [[5.0, 4.0, 4.0, 4.5]] * 2
    # What the model was actually given: both episodes in one batch, one forward per step.
    assert fed == [pytest.approx([r, r]) for r in (5.0, 4.0, 4.0, 4.5)]
    assert metrics["mean_return"] == pytest.approx(2.5)
    assert metrics["outcomes"] == {"goal": 2, "trap": 0, "timeout": 0}
    assert metrics["episodes"] == 2 and metrics["success_rate"] == 1.0
    assert metrics["target_return"] == 5.0


def test_evaluation_context_is_cut_to_context_steps():
    model = small_model()
    lengths = []
    model.register_forward_pre_hook(lambda module, args: lengths.append(args[0].shape[1]))
    evaluate_decision_transformer(ScheduleEnv([0.0] * 7), model, 1.0, episodes=1, seed=0, context_steps=3)
    assert lengths == [1, 2, 3, 3, 3, 3, 3]


def test_evaluation_rejects_bad_arguments():
    model = small_model()
    with pytest.raises(ValueError, match="episodes"):
        evaluate_decision_transformer(TwoArmEnv(), model, 1.0, episodes=0, seed=0, context_steps=2)
    with pytest.raises(ValueError, match="target_return"):
        evaluate_decision_transformer(TwoArmEnv(), model, float("nan"), episodes=1, seed=0, context_steps=2)
    with pytest.raises(ValueError, match="batch_size"):
        evaluate_decision_transformer(TwoArmEnv(), model, 1.0, episodes=2, seed=0, context_steps=2, batch_size=0)
    with pytest.raises(ValueError, match="seed"):
        evaluate_decision_transformer(TwoArmEnv(), model, 1.0, episodes=2, seed=1.5, context_steps=2)


def _keydoor_model():
    from reference_impl.expert import NoisyExpertPolicy
    from reference_impl.keydoor import KeyDoorGrid
    from reference_impl.rollout import rollout

    env = KeyDoorGrid(seed=0)
    policy = NoisyExpertPolicy(env, 0.3, rng=0)
    episodes = [rollout(env, policy, seed=i) for i in range(8)]
    model, _ = train_decision_transformer(
        episodes, seed=1, state_dim=env.observation_dim, action_dim=env.action_dim, context_steps=4, epochs=1, batch_size=32
    )
    return model


_KEYDOOR_MODEL = functools.cache(_keydoor_model)


def test_batched_evaluation_equals_one_episode_at_a_time():
    """Episode i of a batch does what it does alone with seed ``seed + i`` (same return,
    outcome and requests), whatever the batch size; the env passed in is not stepped."""
    from reference_impl.keydoor import KeyDoorGrid

    model = _keydoor_model()
    env = KeyDoorGrid(seed=3, slip_probability=0.2)  # slips: the episodes' own random draws must line up too
    conditions = []
    batched = evaluate_decision_transformer(env, model, 0.7, episodes=12, seed=100, context_steps=4, conditions=conditions)
    alone = []
    for i in range(12):
        one = []
        alone.append(
            (
                evaluate_decision_transformer(
                    KeyDoorGrid(seed=3, slip_probability=0.2), model, 0.7, episodes=1, seed=100 + i, context_steps=4, conditions=one
                ),
                one[0],
            )
        )
    assert batched["episode_returns"] == [m["episode_returns"][0] for m, _ in alone]
    assert conditions == [c for _, c in alone]
    outcomes = {"goal": 0, "trap": 0, "timeout": 0}
    for m, _ in alone:
        for k, v in m["outcomes"].items():
            outcomes[k] += v
    assert batched["outcomes"] == outcomes
    chunked = evaluate_decision_transformer(env, model, 0.7, episodes=12, seed=100, context_steps=4, batch_size=5)
    assert chunked["episode_returns"] == batched["episode_returns"]
    assert env._cell == -1  # never reset: every episode ran on a copy


class _EveryEpisodePlayed:
    """A KeyDoorGrid that does not say it is deterministic, so every episode is played."""

    def __init__(self, env):
        self.env = env

    def __deepcopy__(self, memo):
        return _EveryEpisodePlayed(copy.deepcopy(self.env, memo))

    def reset(self, **kwargs):
        return self.env.reset(**kwargs)

    def step(self, action):
        return self.env.step(action)


@settings(max_examples=6, deadline=None)
@given(target=st.sampled_from([-1.0, 0.0, 0.7, 2.0]), seed=st.integers(0, 10_000), episodes=st.integers(1, 40))
def test_a_deterministic_env_plays_one_episode_per_start_with_the_same_results(target, seed, episodes):
    """Without slips an episode is decided by its start cell: playing one per start gives the
    returns, outcomes and requests of playing every episode, in episode order."""
    from reference_impl.keydoor import KeyDoorGrid

    model = _KEYDOOR_MODEL()
    env = KeyDoorGrid(seed=5)
    assert env.deterministic and not KeyDoorGrid(slip_probability=0.1).deterministic
    forwards = []
    hook = model.register_forward_pre_hook(lambda module, args: forwards.append(args[0].shape[0]))
    fast_conditions, full_conditions = [], []
    try:
        fast = evaluate_decision_transformer(env, model, target, episodes, seed, context_steps=4, conditions=fast_conditions)
        assert max(forwards) <= len(env.start_positions)  # one row per distinct start, never one per episode
        full = evaluate_decision_transformer(
            _EveryEpisodePlayed(KeyDoorGrid(seed=5)), model, target, episodes, seed, context_steps=4, conditions=full_conditions
        )
    finally:
        hook.remove()
    assert fast["episode_returns"] == full["episode_returns"]
    assert fast["outcomes"] == full["outcomes"] and fast["episodes"] == full["episodes"] == episodes
    assert fast_conditions == full_conditions
    assert fast["return_se"] == full["return_se"] or (np.isnan(fast["return_se"]) and np.isnan(full["return_se"]))
    assert len({id(c) for c in fast_conditions}) == episodes  # each episode its own list, never a shared one


def test_evaluation_reports_the_standard_error_of_its_mean():
    model = _keydoor_model()
    from reference_impl.keydoor import KeyDoorGrid

    m = evaluate_decision_transformer(KeyDoorGrid(seed=0), model, 0.5, episodes=9, seed=0, context_steps=4)
    r = np.asarray(m["episode_returns"])
    assert r.shape == (9,) and m["episodes"] == 9
    assert m["mean_return"] == pytest.approx(r.mean())
    assert m["return_sd"] == pytest.approx(r.std(ddof=1))
    assert m["return_se"] == pytest.approx(r.std(ddof=1) / 3.0)
    single = evaluate_decision_transformer(KeyDoorGrid(seed=0), model, 0.5, episodes=1, seed=0, context_steps=4)
    assert np.isnan(single["return_se"]) and np.isnan(single["return_sd"])
    sweep = dt_return_sweep(model, lambda: KeyDoorGrid(seed=0), [0.0, 0.5], episodes=9, seed=0, context_steps=4)
    assert sweep["return_se"].shape == (2,) and sweep["return_se"][1] == pytest.approx(m["return_se"])


# --------------------------------------------------------------------------- training
def _tiny_config(context_steps):
    return DTConfig(state_dim=3, action_dim=2, context_steps=context_steps, d_model=16, n_heads=2, dim_feedforward=32, dropout=0.0, lr=3e-3)


def test_the_return_condition_selects_the_behavior_that_earned_it():
    """Half of the log takes the winning arm (return 1), half the losing one (0): the
    request decides which one the trained model repeats."""
    model, losses = train_decision_transformer(
        two_arm_episodes(32), seed=3, state_dim=3, action_dim=2, context_steps=2, epochs=25, batch_size=16, config=_tiny_config(2)
    )
    assert len(losses) == 25 and losses[-1] < 0.1 < losses[0]
    sweep = dt_return_sweep(model, TwoArmEnv, [0.0, 1.0], episodes=2, seed=0, context_steps=2)
    np.testing.assert_array_equal(sweep["mean_return"], [0.0, 1.0])
    np.testing.assert_array_equal(sweep["target_return"], [0.0, 1.0])
    assert [m["outcomes"]["goal"] for m in sweep["metrics"]] == [0, 2]


def test_training_is_deterministic_for_a_seed():
    episodes = [make_episode([0.0, 0.0, 1.0]), make_episode([0.0, -1.0], truncated_end=True)] * 3
    runs = [
        train_decision_transformer(
            episodes, seed=7, state_dim=3, action_dim=2, context_steps=3, epochs=2, batch_size=4, config=_tiny_config(3)
        )
        for _ in range(2)
    ]
    assert runs[0][1] == runs[1][1]
    for p, q in zip(runs[0][0].parameters(), runs[1][0].parameters()):
        assert torch.equal(p, q)
    other, _ = train_decision_transformer(
        episodes, seed=8, state_dim=3, action_dim=2, context_steps=3, epochs=2, batch_size=4, config=_tiny_config(3)
    )
    assert not all(torch.equal(p, q) for p, q in zip(runs[0][0].parameters(), other.parameters()))


def test_training_rejects_inconsistent_arguments():
    episodes = two_arm_episodes(4)
    with pytest.raises(ValueError, match="state_dim"):
        train_decision_transformer(episodes, seed=0, state_dim=5, action_dim=2, context_steps=2, epochs=1, batch_size=2)
    with pytest.raises(ValueError, match="outside"):
        train_decision_transformer(episodes, seed=0, state_dim=3, action_dim=1, context_steps=2, epochs=1, batch_size=2)
    with pytest.raises(ValueError, match="seed"):
        train_decision_transformer(episodes, seed="0", state_dim=3, action_dim=2, context_steps=2, epochs=1, batch_size=2)
    with pytest.raises(ValueError, match="epochs"):
        train_decision_transformer(episodes, seed=0, state_dim=3, action_dim=2, context_steps=2, epochs=0, batch_size=2)


def test_smoke_on_keydoor_episodes():
    """A few real KeyDoorGrid episodes train and evaluate end to end in seconds."""
    from reference_impl.expert import NoisyExpertPolicy
    from reference_impl.keydoor import KeyDoorGrid
    from reference_impl.rollout import rollout

    env = KeyDoorGrid(seed=0)
    policy = NoisyExpertPolicy(env, 0.2, rng=0)
    episodes = [rollout(env, policy, seed=i) for i in range(6)]
    model, losses = train_decision_transformer(
        episodes, seed=1, state_dim=env.observation_dim, action_dim=env.action_dim, context_steps=4, epochs=1, batch_size=32
    )
    assert np.isfinite(losses).all()
    metrics = evaluate_decision_transformer(KeyDoorGrid(seed=1), model, 0.7, episodes=1, seed=5, context_steps=4)
    assert set(metrics) >= {"mean_return", "success_rate", "outcomes", "episodes"}
    assert sum(metrics["outcomes"].values()) == 1
