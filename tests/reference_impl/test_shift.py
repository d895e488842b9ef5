"""reference_impl.shift: the distribution-shift measures of an imitation learner."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.expert import ExpertPolicy
from reference_impl.keydoor import WIDE_LAYOUT, KeyDoorGrid
from reference_impl.rollout import play_episodes
from reference_impl.shift import episode_visits, optimal_actions, shift_metrics, state_indices


@pytest.fixture(scope="module", params=["default", "wide"])
def env(request):
    return KeyDoorGrid() if request.param == "default" else KeyDoorGrid(layout=WIDE_LAYOUT, max_steps=100)


def test_the_experts_action_is_always_optimal(env):
    table = optimal_actions(env)
    expert = ExpertPolicy(env)
    for ep in play_episodes(env, expert, episodes=20, seed=3):
        states, actions = episode_visits(env, [ep])
        assert table[states, actions].all()
        assert ep.outcome == "goal"


def test_optimal_actions_have_no_answer_on_walls_traps_and_the_goal(env):
    table = optimal_actions(env)
    for r, c in (*env.wall_positions, *env.trap_positions, env.goal_position):
        for key in (0, 1):
            assert not table[2 * (r * env.width + c) + key].any()
    # every start cell has at least one way forward
    for r, c in env.start_positions:
        assert table[2 * (r * env.width + c)].any()


def test_state_indices_match_the_environments_own_numbering(env):
    rng = np.random.default_rng(0)
    cells = [(int(rng.integers(env.height)), int(rng.integers(env.width))) for _ in range(50)]
    keys = rng.integers(0, 2, size=50).astype(bool)
    obs = np.stack([env.encode(cell, key) for cell, key in zip(cells, keys)])
    assert state_indices(env, obs).tolist() == [env.state_index(o) for o in obs]
    with pytest.raises(ValueError, match="observations"):
        state_indices(env, obs[:, :-1])


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_shift_metrics_against_a_direct_count(data):
    n_states, n_actions = data.draw(st.integers(1, 12)), data.draw(st.integers(1, 4))
    optimal = np.array(
        data.draw(st.lists(st.lists(st.booleans(), min_size=n_actions, max_size=n_actions), min_size=n_states, max_size=n_states))
    )
    visits = data.draw(st.lists(st.tuples(st.integers(0, n_states - 1), st.integers(0, n_actions - 1)), max_size=40))
    trained = data.draw(st.sets(st.integers(0, n_states - 1)))
    states = [s for s, _ in visits]
    actions = [a for _, a in visits]
    out = shift_metrics(states, actions, optimal, trained)

    def share(rows):
        return float(np.mean(rows)) if rows else float("nan")

    unseen = [s not in trained for s in states]
    scored = [(s, a) for s, a in visits if optimal[s].any()]
    expect = {
        "unseen_share": share(unseen),
        "error_unseen": share([not optimal[s, a] for s, a in scored if s not in trained]),
        "error_seen": share([not optimal[s, a] for s, a in scored if s in trained]),
    }
    for key, value in expect.items():
        assert (np.isnan(value) and np.isnan(out[key])) or out[key] == pytest.approx(value), key
    assert out["visits"] == len(visits)
    # shares are shares
    for key in expect:
        assert np.isnan(out[key]) or 0.0 <= out[key] <= 1.0


def test_training_on_every_visited_state_leaves_no_shift():
    optimal = np.array([[True, False], [False, True]])
    out = shift_metrics([0, 1, 1], [0, 0, 1], optimal, {0, 1})
    assert out["unseen_share"] == 0.0 and np.isnan(out["error_unseen"]) and out["error_seen"] == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    "states, actions, trained, match",
    [
        ([0, 1], [0], {0}, "same length"),
        ([0, 5], [0, 0], {0}, "states"),
        ([0, -1], [0, 0], {0}, "states"),
        ([0, 1], [0, 2], {0}, "actions"),
    ],
)
def test_shift_metrics_rejects_bad_input(states, actions, trained, match):
    with pytest.raises(ValueError, match=match):
        shift_metrics(states, actions, np.ones((2, 2), dtype=bool), trained)
    with pytest.raises(ValueError, match="optimal"):
        shift_metrics([0], [0], np.ones(2, dtype=bool), {0})
