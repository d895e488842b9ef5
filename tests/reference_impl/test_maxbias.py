"""The maximization-bias experiment (reference_impl.maxbias): exact values, kernels, seeds, determinism, committed report."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl import kernels, maxbias
from reference_impl.maxbias import (
    LEFT,
    METHODS,
    RIGHT,
    SHARES,
    Settings,
    check_textbook_values,
    env_step,
    epsilon_greedy,
    render_markdown,
    run_experiment,
    run_learner,
    summarize,
    td_update,
    true_values,
)
from reference_impl.stats import verdict

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "lab-results"
TEXTBOOK = Settings()
QUICK_REPORT = tuple(range(maxbias.QUICK_REPORT_OFFSET, maxbias.QUICK_REPORT_OFFSET + 10))


@pytest.fixture(scope="module")
def tiny():
    """A small run: 2 design seeds, K in {1, 25}, the 10 quick seeds (never the report block)."""
    return run_experiment((0, 1), QUICK_REPORT, candidates=(1, 25), command="test")


@pytest.fixture(scope="module")
def committed():
    return json.loads((RESULTS / "maxbias.json").read_text(encoding="utf-8"))


def test_true_values_are_the_textbook_ones_and_follow_bellman_optimality():
    values = true_values(TEXTBOOK)
    check_textbook_values(values)
    assert values["A"][RIGHT] == 0.0 and values["A"][LEFT] == pytest.approx(-0.1) and np.allclose(values["B"], -0.1)
    other = true_values(replace(TEXTBOOK, gamma=0.5, reward_mean=-0.3, b_actions=4))
    assert other["A"][LEFT] == pytest.approx(0.5 * -0.3) and other["B"].shape == (4,)
    with pytest.raises(AssertionError):
        check_textbook_values(other)


def test_the_mdp_steps_as_described():
    rng = np.random.default_rng(0)
    assert env_step(maxbias.A, RIGHT, rng, TEXTBOOK) == (0.0, None)
    assert env_step(maxbias.A, LEFT, rng, TEXTBOOK) == (0.0, maxbias.B)
    draws = [env_step(maxbias.B, a % 10, rng, TEXTBOOK) for a in range(20_000)]
    assert all(nxt is None for _, nxt in draws)
    rewards = np.array([r for r, _ in draws])
    assert abs(rewards.mean() + 0.1) < 0.03 and abs(rewards.std() - 1.0) < 0.03


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 1),
    st.integers(0, 9),
    st.floats(-5, 5, allow_nan=False),
    st.floats(0.01, 1.0),
    st.lists(st.floats(-3, 3, allow_nan=False), min_size=12, max_size=12),
)
def test_the_tabular_update_changes_only_its_own_entry(state, action, target, alpha, flat):
    action = action % (2 if state == maxbias.A else 10)
    table = (np.array(flat[:2]), np.array(flat[2:]))
    before = tuple(row.copy() for row in table)
    new = td_update(table, state, action, target, alpha)
    for s in (0, 1):
        assert np.array_equal(table[s], before[s])  # the input is untouched
        changed = np.flatnonzero(new[s] != before[s])
        assert set(changed) <= ({action} if s == state else set())
    old = before[state][action]
    assert new[state][action] == pytest.approx(old + alpha * (target - old))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([-1.0, 0.0, 0.5]), min_size=1, max_size=10), st.integers(0, 2**31))
def test_greedy_choice_is_an_argmax_and_ties_are_broken_at_random(values, seed):
    values = np.array(values)
    action = epsilon_greedy(values, 0.0, np.random.default_rng(seed))
    assert values[action] == values.max()


def test_random_tie_breaking_reaches_every_tied_action():
    rng = np.random.default_rng(1)
    assert {epsilon_greedy(np.zeros(3), 0.0, rng) for _ in range(200)} == {0, 1, 2}


@pytest.mark.parametrize(
    "method,kernel",
    [("dqn", "dqn_targets"), ("q_learning", "dqn_targets"), ("double_dqn", "double_dqn_targets"), ("double_q", "double_dqn_targets")],
)
def test_learners_use_the_course_kernels(monkeypatch, method, kernel):
    s = replace(TEXTBOOK, episodes=30, first_episodes=10, target_update_interval=5)
    base = run_learner(method, 3, s)
    calls = []
    original = getattr(kernels, kernel)

    def shifted(*args, **kw):
        calls.append(1)
        return original(*args, **kw) + 1.0

    monkeypatch.setattr(kernels, kernel, shifted)
    patched = run_learner(method, 3, s)
    assert calls and not np.allclose(base["over_a"], patched["over_a"])
    monkeypatch.undo()
    assert np.array_equal(run_learner(method, 3, s, kernel_fns={kernel: shifted})["over_a"], patched["over_a"])


def test_with_k_1_double_dqn_is_dqn_is_q_learning():
    s = replace(TEXTBOOK, episodes=60, first_episodes=20, target_update_interval=1)
    runs = [run_learner(m, 7, s) for m in ("dqn", "double_dqn", "q_learning")]
    for run in runs[1:]:
        for key in runs[0]:
            assert np.array_equal(run[key], runs[0][key])


def test_an_unknown_method_or_overlapping_seeds_raise():
    with pytest.raises(ValueError, match="method"):
        run_learner("sarsa", 0, TEXTBOOK)
    with pytest.raises(ValueError, match="overlap"):
        run_experiment((0, 1), (1, 2), candidates=(1,))


def test_the_experiment_is_deterministic_to_the_byte(tiny, tmp_path):
    again = run_experiment((0, 1), QUICK_REPORT, candidates=(1, 25), command="test")
    assert json.dumps(again) == json.dumps(tiny)
    assert render_markdown(again, "ru") == render_markdown(tiny, "ru")
    maxbias.draw_figure(tiny, tmp_path / "a.png", "en")
    maxbias.draw_figure(again, tmp_path / "b.png", "en")
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()


def test_a_quick_run_shows_the_textbook_effect(tiny):
    """Sign test on the interval: Q-learning goes left more than Double Q-learning, and its target overestimates more."""
    by_id = {c["id"]: c for c in tiny["comparisons"]}
    assert by_id["q_learning_vs_double_q.left_share_first"]["low"] > 0
    assert by_id["q_learning_vs_double_q.over_t_mean"]["low"] > 0
    assert tiny["methods"]["q_learning"]["over_a_mean"]["low"] > 0  # one-sample: Q-learning overestimates Q(A, left)


def test_design_and_report_seeds_are_disjoint(committed):
    looked = set(committed["seeds"]["design"]) | set(committed["search"]["development"]["looked_at"]["design"])
    looked |= set(committed["search"]["development"]["looked_at"]["quick_report"])
    report = set(committed["seeds"]["report"])
    assert len(report) >= 10 and not looked & report
    assert committed["search"]["design_seeds"] == committed["seeds"]["design"]
    assert committed["settings"]["target_update_interval"] == committed["search"]["chosen"]


def test_the_committed_numbers_are_what_the_per_seed_values_give(committed):
    assert summarize(committed["per_seed"]) == {"methods": committed["methods"], "comparisons": committed["comparisons"]}


def test_every_verdict_follows_its_interval_and_shares_stay_in_range(committed, tiny):
    for data in (committed, tiny):
        for c in data["comparisons"]:
            assert c["low"] <= c["effect"] <= c["high"] and c["verdict"] == verdict(c["low"], c["high"])
            if c["quantity"] in SHARES:
                assert c["low"] >= -1.0 and c["high"] <= 1.0
        for m in METHODS:
            for q, cell in data["methods"][m].items():
                assert cell["low"] <= cell["mean"] <= cell["high"]
                if q in SHARES:
                    assert cell["low"] >= 0.0 and cell["high"] <= 1.0
                else:
                    assert cell["verdict"] == verdict(cell["low"], cell["high"])
        for kd in ("over_mean", "over_end"):
            if data["keydoor"]:
                assert data["keydoor"][kd]["verdict"] == verdict(data["keydoor"][kd]["low"], data["keydoor"][kd]["high"])


def test_the_committed_reports_are_what_the_module_writes_from_the_committed_json(committed):
    assert (RESULTS / "maxbias.md").read_text(encoding="utf-8") == render_markdown(committed, "en")
    assert (RESULTS / "maxbias.ru.md").read_text(encoding="utf-8") == render_markdown(committed, "ru")
    for name in ("maxbias.png", "maxbias.ru.png"):
        assert (RESULTS / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_report_states_each_comparison_with_its_own_verdict_word(committed):
    text = render_markdown(committed, "en")
    for c in committed["comparisons"]:
        row = next(line for line in text.splitlines() if line.startswith("| ") and f"{c['effect']:+.3f} (95 % CI {c['low']:+.3f}" in line)
        assert row.endswith(f": {c['verdict']} |")
    assert "one-sample 95 % CI" in text and "one-sample 95 % CI" not in text.split("## Results")[0]
