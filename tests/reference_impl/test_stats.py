"""Intervals over seeds and the words they allow (reference_impl.stats)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl import stats
from reference_impl.stats import (
    VERDICTS,
    episode_return_bounds,
    episodes_for_standard_error,
    paired_difference,
    student_t_cdf,
    student_t_quantile,
    verdict,
)

# Two-sided 95 % critical values t_{0.975, df} from published tables.
TABLE = {1: 12.7062, 2: 4.3027, 4: 2.7764, 9: 2.2622, 19: 2.0930, 29: 2.0452, 120: 1.9799}


@pytest.mark.parametrize("df,value", sorted(TABLE.items()))
def test_the_t_quantile_matches_the_published_table(df, value):
    assert student_t_quantile(0.975, df) == pytest.approx(value, abs=5e-4)


def test_the_t_cdf_is_symmetric_and_tends_to_the_normal():
    assert student_t_cdf(0.0, 5) == pytest.approx(0.5)
    assert student_t_cdf(-1.3, 7) == pytest.approx(1 - student_t_cdf(1.3, 7))
    normal = 0.5 * (1 + math.erf(1.96 / math.sqrt(2)))
    assert student_t_cdf(1.96, 10_000) == pytest.approx(normal, abs=1e-4)


finite = st.floats(-5, 5, allow_nan=False, width=32)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(finite, finite), min_size=2, max_size=15))
def test_the_interval_holds_the_effect_and_swapping_the_methods_mirrors_it(pairs):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    forward, backward = paired_difference(a, b), paired_difference(b, a)
    assert forward["low"] <= forward["effect"] <= forward["high"]
    assert forward["effect"] == pytest.approx(-backward["effect"], abs=1e-9)
    assert forward["low"] == pytest.approx(-backward["high"], abs=1e-9)
    mirrored = {"ahead": "behind", "behind": "ahead", "no detectable difference": "no detectable difference"}
    if min(abs(forward["low"]), abs(forward["high"])) > 1e-9:  # away from the boundary rounding can flip
        assert backward["verdict"] == mirrored[forward["verdict"]]
    assert forward["n_seeds"] == len(pairs) and forward["paired"]


def test_the_words_follow_the_interval_not_the_count_of_seeds():
    # Ahead on 4 of 5 seeds, but by noise: the interval contains zero.
    noisy = paired_difference([0.12, -0.003, 0.003, 0.033, 0.017], [0, 0, 0, 0, 0])
    assert noisy["verdict"] == "no detectable difference" and noisy["low"] < 0 < noisy["high"]
    clear = paired_difference([0.7, 0.6, 0.8, 0.75, 0.65], [0.1, -0.2, 0.0, 0.2, -0.1])
    assert clear["verdict"] == "ahead" and clear["low"] > 0
    assert paired_difference([0.79] * 5, [0.79] * 5)["verdict"] == "no detectable difference"  # a tie


def test_a_wider_confidence_gives_a_wider_interval():
    a, b = np.linspace(0, 1, 8), np.linspace(0, 1, 8)[::-1] * 0.5
    narrow, wide = paired_difference(a, b, 0.8), paired_difference(a, b, 0.99)
    assert wide["low"] < narrow["low"] and wide["high"] > narrow["high"]


@pytest.mark.parametrize(
    "a,b,match",
    [
        ([1.0], [0.0], "at least 2"),
        ([1.0, 2.0], [0.0], "equal length"),
        ([1.0, float("nan")], [0.0, 0.0], "finite"),
        ([[1.0, 2.0]], [[0.0, 0.0]], "1-D"),
    ],
)
def test_bad_input_is_named(a, b, match):
    with pytest.raises(ValueError, match=match):
        paired_difference(a, b)


def test_verdict_rejects_an_inverted_interval_and_knows_only_its_words():
    with pytest.raises(ValueError, match="low <= high"):
        verdict(1.0, 0.0)
    assert {verdict(0.1, 0.2), verdict(-0.2, -0.1), verdict(-0.1, 0.1)} == set(VERDICTS)


def test_episode_return_bounds_of_the_keydoor_reward_design():
    # Worst: a trap after 49 step costs; best: the goal after 17 step costs (18 steps).
    low, high = episode_return_bounds(step_cost=0.01, goal_reward=1.0, trap_reward=-1.0, max_steps=50, shortest_goal_steps=18)
    assert low == pytest.approx(-1.49) and high == pytest.approx(0.83)
    # A goal out of reach within the limit leaves only traps and timeouts.
    assert episode_return_bounds(step_cost=0.01, goal_reward=1.0, trap_reward=-1.0, max_steps=5, shortest_goal_steps=9) == pytest.approx(
        (-1.04, -0.05)
    )


@given(
    st.floats(0.0, 0.2),
    st.floats(-2.0, 2.0),
    st.floats(-2.0, 2.0),
    st.integers(1, 60),
    st.integers(1, 60),
    st.lists(st.tuples(st.sampled_from(("goal", "trap", "timeout")), st.integers(1, 60)), min_size=1, max_size=20),
)
@settings(max_examples=200, deadline=None)
def test_every_episode_return_lies_within_the_bounds(cost, goal, trap, max_steps, shortest, episodes):
    low, high = episode_return_bounds(step_cost=cost, goal_reward=goal, trap_reward=trap, max_steps=max_steps, shortest_goal_steps=shortest)
    for end, k in episodes:
        if end == "timeout":
            k = max_steps
        k = min(k, max_steps)
        if end == "goal" and k < shortest:
            continue  # the goal cannot be reached that fast
        last = {"goal": goal, "trap": trap, "timeout": -cost}[end]
        ret = -cost * (k - 1) + last
        assert low - 1e-9 <= ret <= high + 1e-9


def test_episodes_for_standard_error_follows_popoviciu():
    # KeyDoorGrid: returns in [-1.49, 0.83], half-range 1.16: ceil((1.16 / 0.05)^2) + 1 = 540.
    assert episodes_for_standard_error(-1.49, 0.83, 0.05) == 540
    assert episodes_for_standard_error(0.0, 0.0, 0.05) == 1
    with pytest.raises(ValueError, match="max_se"):
        episodes_for_standard_error(0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="low"):
        episodes_for_standard_error(1.0, 0.0, 0.1)
    with pytest.raises(ValueError, match="step_cost"):
        episode_return_bounds(step_cost=-0.1, goal_reward=1.0, trap_reward=-1.0, max_steps=5, shortest_goal_steps=1)
    with pytest.raises(ValueError, match="max_steps"):
        episode_return_bounds(step_cost=0.1, goal_reward=1.0, trap_reward=-1.0, max_steps=0, shortest_goal_steps=1)


@given(st.floats(-3.0, 3.0), st.floats(0.0, 4.0), st.floats(0.01, 0.5), st.integers(0, 2**32 - 1))
@settings(max_examples=100, deadline=None)
def test_the_episode_count_bounds_the_standard_error_of_any_sample(low, width, max_se, seed):
    """Whatever the returns in [low, high] (the worst case: half at each end), the measured
    SE of n = episodes_for_standard_error(...) of them is <= max_se."""
    high = low + width
    n = episodes_for_standard_error(low, high, max_se)
    if n > 20000:
        return
    rng = np.random.default_rng(seed)
    worst = np.where(np.arange(n) % 2 == 0, low, high)
    for sample in (worst, rng.uniform(low, high, n), rng.choice([low, high], n)):
        if n > 1:
            assert sample.std(ddof=1) / math.sqrt(n) <= max_se + 1e-12


@given(st.lists(st.floats(0, 1), min_size=1, max_size=30), st.integers(0, 2**31))
def test_the_bootstrap_interval_of_a_share_holds_its_mean_and_stays_in_the_values_range(values, seed):
    mean, low, high = stats.bootstrap_mean_interval(values, np.random.default_rng(seed), 200)
    assert min(values) - 1e-12 <= low <= mean <= high <= max(values) + 1e-12
    assert (mean, low, high) == stats.bootstrap_mean_interval(values, np.random.default_rng(seed), 200)


@pytest.mark.parametrize("values, resamples", [([], 10), ([1.0, float("nan")], 10), ([1.0], 0), ([1.0], True)])
def test_the_bootstrap_refuses_what_it_cannot_resample(values, resamples):
    with pytest.raises(ValueError, match="bootstrap_mean_interval: `(values|resamples)`"):
        stats.bootstrap_mean_interval(values, np.random.default_rng(0), resamples)
