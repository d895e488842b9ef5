"""KeyDoorGrid dynamics, encoding, stopping semantics and the Gymnasium contract."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.keydoor import ACTION_DELTAS, ACTION_NAMES, KeyDoorGrid, draw_grid

UP, RIGHT, DOWN, LEFT = range(4)


def walk(env, actions):
    out = None
    for a in actions:
        out = env.step(a)
    return out


def test_public_attributes():
    env = KeyDoorGrid()
    assert ACTION_NAMES == ("up", "right", "down", "left")
    assert env.action_dim == 4 and env.action_space.n == 4
    assert (env.height, env.width) == (7, 11)
    assert env.observation_dim == env.height + env.width + 1 == env.observation_space.shape[0]
    assert (6, 0) in env.start_positions and len(env.start_positions) >= 3
    special = {env.key_position, env.door_position, env.goal_position}
    assert len(special) == 3
    for p in (*env.start_positions, *special, *env.trap_positions):
        assert p not in env.wall_positions


@pytest.mark.filterwarnings("ignore:.*alternative render modes")
def test_check_env_passes():
    check_env(KeyDoorGrid(render_mode="ansi"), skip_render_check=False)


def test_lab_reset_form_and_state_info():
    env = KeyDoorGrid(seed=5)
    obs, info = env.reset(start=(6, 0), seed=5)
    assert info["state"] == {"position": (6, 0), "has_key": False, "step": 0}
    assert obs.dtype == np.float32 and obs.shape == (env.observation_dim,)
    obs2, info2 = env.reset(options={"start": (2, 0)})
    assert info2["state"]["position"] == (2, 0)


def test_observation_encoding_round_trips():
    env = KeyDoorGrid()
    obs = env.encode((3, 4), has_key=True)
    expected = np.zeros(env.observation_dim, dtype=np.float32)
    expected[3] = 1.0
    expected[env.height + 4] = 1.0
    expected[-1] = 1.0
    np.testing.assert_array_equal(obs, expected)
    assert env.decode(obs) == ((3, 4), True)
    assert env.decode(env.encode((0, 10), False)) == ((0, 10), False)


def test_walls_and_grid_edge_block_movement():
    env = KeyDoorGrid()
    env.reset(start=(6, 0))
    obs, reward, terminated, truncated, info = env.step(LEFT)  # off the grid
    assert info["state"]["position"] == (6, 0)
    assert reward == pytest.approx(-env.step_cost) and not terminated and not truncated
    env.reset(start=(6, 6))
    _, _, _, _, info = env.step(RIGHT)  # (6, 7) is a wall
    assert info["state"]["position"] == (6, 6)


def test_door_blocks_without_key_and_opens_with_it():
    env = KeyDoorGrid()
    env.reset(start=(3, 4))
    _, _, _, _, info = walk(env, [RIGHT, RIGHT, RIGHT])  # (3,5) (3,6) then the closed door
    assert info["state"]["position"] == (3, 6)
    # Fetch the key: up to row 0 via column 5 ((2, 6) is a trap), left to the key, back.
    path = [LEFT, UP, UP, UP, LEFT, LEFT, LEFT]
    _, _, _, _, info = walk(env, path)
    assert info["state"]["position"] == (0, 2) and info["state"]["has_key"]
    _, _, terminated, _, info = walk(env, [RIGHT, RIGHT, RIGHT, DOWN, DOWN, DOWN, RIGHT, RIGHT])
    assert info["state"]["position"] == (3, 7) and not terminated
    assert env.decode(env.encode((3, 7), True)) == ((3, 7), True)


def test_goal_terminates_with_goal_reward():
    env = KeyDoorGrid()
    env.reset(start=(2, 0))
    env._has_key = True  # white-box shortcut: teleporting is not part of the API
    env._cell = 1 * env.width + 10  # (1, 10), just below the goal
    obs, reward, terminated, truncated, info = env.step(UP)
    assert terminated and not truncated
    assert reward == env.goal_reward and info["outcome"] == "goal"
    with pytest.raises(RuntimeError):
        env.step(UP)


def test_trap_terminates_with_trap_reward():
    env = KeyDoorGrid()
    env.reset(start=(6, 0))
    _, reward, terminated, truncated, info = walk(env, [UP, UP, RIGHT])  # (4, 1) is a trap
    assert (4, 1) in env.trap_positions
    assert terminated and not truncated and info["outcome"] == "trap"
    assert reward == env.trap_reward


def test_time_limit_truncates_and_never_terminates():
    env = KeyDoorGrid(max_steps=5)
    env.reset(start=(6, 0))
    for i in range(5):
        _, reward, terminated, truncated, info = env.step(LEFT)
        assert not terminated
        assert truncated == (i == 4)
    assert info["outcome"] == "timeout" and info["state"]["step"] == 5


def test_slip_is_seeded():
    def positions(seed):
        env = KeyDoorGrid(slip_probability=0.5)
        env.reset(seed=seed, start=(6, 0))
        return [env.step(UP)[4]["state"]["position"] for _ in range(4)]

    assert positions(3) == positions(3)


@pytest.mark.parametrize("bad", [-1, 4, 1.5, "up", None, True, np.float32(1.0)])
def test_invalid_action_raises(bad):
    env = KeyDoorGrid()
    env.reset(start=(6, 0))
    with pytest.raises(ValueError, match="action"):
        env.step(bad)


def test_numpy_integer_action_is_accepted():
    env = KeyDoorGrid()
    env.reset(start=(6, 0))
    assert env.step(np.int64(UP))[4]["state"]["position"] == (5, 0)


@pytest.mark.parametrize("start", [(1, 1), (4, 1), (0, 10), (9, 9), (0, 2), "a"])
def test_bad_start_raises(start):
    with pytest.raises(ValueError, match="start"):
        KeyDoorGrid().reset(start=start)


@pytest.mark.parametrize("kwargs", [{"max_steps": 0}, {"slip_probability": 1.0}, {"render_mode": "human"}, {"step_cost": float("nan")}])
def test_bad_constructor_arguments_raise(kwargs):
    with pytest.raises(ValueError):
        KeyDoorGrid(**kwargs)


@settings(max_examples=40, deadline=None)
@given(actions=st.lists(st.integers(0, 3), min_size=1, max_size=60), start=st.sampled_from(KeyDoorGrid().start_positions))
def test_random_walks_respect_invariants(actions, start):
    """Never inside a wall, move at most one cell, key never lost, flags exclusive."""
    env = KeyDoorGrid()
    obs, info = env.reset(start=start)
    prev, had_key = info["state"]["position"], False
    for a in actions:
        obs, reward, terminated, truncated, info = env.step(a)
        pos, key = info["state"]["position"], info["state"]["has_key"]
        assert pos not in env.wall_positions
        assert abs(pos[0] - prev[0]) + abs(pos[1] - prev[1]) <= 1
        if pos != prev:
            assert (pos[0] - prev[0], pos[1] - prev[1]) == ACTION_DELTAS[a]
        assert key or not had_key
        if pos == env.door_position:
            assert key
        assert env.decode(obs) == (pos, key)
        assert not (terminated and truncated)
        assert terminated == (pos in env.trap_positions or pos == env.goal_position)
        prev, had_key = pos, key
        if terminated or truncated:
            break


def test_text_render_and_drawing():
    env = KeyDoorGrid(render_mode="ansi")
    env.reset(start=(6, 0))
    text = env.render()
    lines = text.strip().split("\n")
    assert len(lines) == env.height and all(len(line) == env.width for line in lines)
    assert lines[6][0] == "A" and "K" in lines[0] and "G" in lines[0]

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    out = draw_grid(env, ax, title="t", xlabel="столбец", ylabel="строка")
    assert out is ax and ax.get_xlabel() == "столбец" and ax.get_ylabel() == "строка"
    texts = {t.get_text() for t in ax.texts}
    assert {"K", "D", "G", "×"} <= texts
    plt.close(fig)


def test_wide_layout_is_a_valid_environment_with_more_start_cells():
    from reference_impl.expert import plan_distances
    from reference_impl.keydoor import LAYOUT, WIDE_LAYOUT

    env = KeyDoorGrid(layout=WIDE_LAYOUT, max_steps=100)
    check_env(env, skip_render_check=True)
    assert env.observation_dim == len(WIDE_LAYOUT) + len(WIDE_LAYOUT[0]) + 1
    assert len(env.start_positions) > len(KeyDoorGrid().start_positions)
    assert env.ascii().count("\n") == len(WIDE_LAYOUT) and "S" not in env.ascii()
    distances = plan_distances(env)
    assert all(distances[r, c, 0] > 0 for r, c in env.start_positions)  # every start can reach the goal
    assert KeyDoorGrid(layout=list(LAYOUT)).layout == LAYOUT


@pytest.mark.parametrize(
    "layout, match",
    [
        ("..K", "sequence of row strings"),
        ((), "sequence of row strings"),
        (("S.KDG", "S.."), "equal length"),
        (("S.KDGz",), "'z'"),
        (("S.KKDG",), "one key"),
        (("S.K.G",), "one door"),
        (("..KDG",), "start cell"),
    ],
)
def test_bad_layouts_are_refused_with_the_reason(layout, match):
    with pytest.raises(ValueError, match=match):
        KeyDoorGrid(layout=layout)


def test_a_deep_copy_steps_on_its_own_and_shares_only_the_read_only_tables():
    """Decision Transformer evaluation steps one deep copy per episode: a copy must go on
    exactly as the original would (slips included: its own copy of the generator) and never move it."""
    actions = (RIGHT, UP, UP, LEFT, DOWN, RIGHT, RIGHT, UP, UP, RIGHT)
    original = KeyDoorGrid(seed=41, slip_probability=0.3)
    original.reset(seed=7)
    original.step(UP)
    clone = copy.deepcopy(original)
    assert clone._obs_table is original._obs_table and clone._next_cell is original._next_cell
    assert clone.np_random is not original.np_random and clone.action_space is not original.action_space
    state = original._state()
    from_clone = [clone.step(a) for a in actions]
    assert original._state() == state  # stepping the copy left the original where it was
    from_original = [original.step(a) for a in actions]
    for (obs_a, *rest_a), (obs_b, *rest_b) in zip(from_clone, from_original):
        assert np.array_equal(obs_a, obs_b) and rest_a == rest_b


@settings(max_examples=25, deadline=None)
@given(seeds=st.tuples(st.integers(0, 2**31), st.integers(0, 2**31)), actions=st.lists(st.integers(0, 3), max_size=60))
def test_without_slips_an_episode_is_decided_by_its_start_and_actions(seeds, actions):
    """What ``deterministic`` promises (the Decision Transformer's evaluation relies on it):
    two resets on the same start cell, whatever their seeds, give the same steps."""
    env = KeyDoorGrid()
    assert env.deterministic
    start = env.start_positions[seeds[0] % len(env.start_positions)]
    runs = []
    for seed in seeds:
        obs, _ = env.reset(seed=seed, start=start)
        steps = [obs.tolist()]
        for a in actions:
            obs, reward, terminated, truncated, info = env.step(a)
            steps.append((obs.tolist(), reward, terminated, truncated, info.get("outcome")))
            if terminated or truncated:
                break
        runs.append(steps)
    assert runs[0] == runs[1]
    assert not KeyDoorGrid(slip_probability=0.05).deterministic
