"""The BFS expert is optimal and reaches the goal from every start; the noisy expert is seeded."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.expert import UNREACHABLE, ExpertPolicy, NoisyExpertPolicy, plan_distances
from reference_impl.keydoor import KeyDoorGrid
from reference_impl.rollout import rollout

ENV = KeyDoorGrid()
EXPERT = ExpertPolicy(ENV)
FREE_CELLS = [
    (r, c)
    for r in range(ENV.height)
    for c in range(ENV.width)
    if (r, c) not in ENV.wall_positions
    and (r, c) not in ENV.trap_positions
    and (r, c) not in (ENV.goal_position, ENV.key_position, ENV.door_position)
]


def forward_bfs_length(env, start):
    """Independent check: forward BFS through env.step on a fresh copy of the state."""
    seen = {(start, False)}
    queue = deque([(start, False, 0)])
    while queue:
        pos, key, d = queue.popleft()
        for a in range(4):
            env.reset(start=start)
            env._cell = pos[0] * env.width + pos[1]  # white box: jump to the queued state
            env._has_key = key
            _, _, terminated, _, info = env.step(a)
            npos, nkey = info["state"]["position"], info["state"]["has_key"]
            if info["outcome"] == "goal":
                return d + 1
            if terminated or (npos, nkey) in seen:
                continue
            seen.add((npos, nkey))
            queue.append((npos, nkey, d + 1))
    return None


@pytest.mark.parametrize("start", ENV.start_positions)
def test_expert_reaches_goal_optimally_from_every_start(start):
    episode = rollout(ENV, EXPERT, seed=0, start=start)
    assert episode.outcome == "goal"
    assert episode.length < ENV.max_steps
    assert episode.length == forward_bfs_length(KeyDoorGrid(), start)
    assert episode.return_ == pytest.approx(ENV.goal_reward - ENV.step_cost * (episode.length - 1))
    assert not any(t.truncated for t in episode.transitions)


@settings(max_examples=30, deadline=None)
@given(cell=st.sampled_from(FREE_CELLS), has_key=st.booleans())
def test_expert_from_any_reachable_state_follows_distances(cell, has_key):
    """From any state with a finite distance, the expert's next state is one step closer."""
    d = plan_distances(ENV)
    here = d[cell[0], cell[1], int(has_key)]
    if here == UNREACHABLE:
        return
    env = KeyDoorGrid()
    env.reset(start=(6, 0))
    env._cell, env._has_key = cell[0] * env.width + cell[1], has_key
    _, _, terminated, _, info = env.step(EXPERT.action_for(cell, has_key))
    (r, c), k = info["state"]["position"], info["state"]["has_key"]
    assert d[r, c, int(k)] == here - 1
    assert info["outcome"] in (None, "goal")


def test_distance_table_facts():
    d = plan_distances(ENV)
    gr, gc = ENV.goal_position
    assert d[gr, gc, 0] == d[gr, gc, 1] == 0
    for r, c in ENV.trap_positions + ENV.wall_positions:
        assert (d[r, c] == UNREACHABLE).all()
    # Without the key the room is sealed: outside cells need the detour through the key.
    for start in ENV.start_positions:
        assert d[start[0], start[1], 0] > d[start[0], start[1], 1]


def test_label_matches_single_calls():
    obs = np.stack([ENV.encode(p, k) for p in FREE_CELLS[:20] for k in (False, True)])
    labels = EXPERT.label(obs)
    assert labels.tolist() == [EXPERT(o) for o in obs]
    with pytest.raises(ValueError, match="observations"):
        EXPERT.label(obs[:, :5])


def test_noisy_expert_is_seeded_and_epsilon_checked():
    a = [rollout(ENV, NoisyExpertPolicy(ENV, 0.3, rng=7), seed=i).return_ for i in range(5)]
    b = [rollout(ENV, NoisyExpertPolicy(ENV, 0.3, rng=7), seed=i).return_ for i in range(5)]
    assert a == b
    zero_noise = NoisyExpertPolicy(ENV, 0.0, rng=1)
    assert rollout(ENV, zero_noise, seed=0, start=(6, 0)).length == rollout(ENV, EXPERT, seed=0, start=(6, 0)).length
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match="epsilon"):
            NoisyExpertPolicy(ENV, bad)


def test_fully_random_expert_is_much_worse_than_expert():
    noisy = NoisyExpertPolicy(ENV, 1.0, rng=0)
    outcomes = [rollout(ENV, noisy, seed=i).outcome for i in range(40)]
    assert outcomes.count("goal") <= 2
