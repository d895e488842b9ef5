"""FQE against exact policy evaluation on a tiny tabular MDP with a known answer."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from reference_impl import kernels
from reference_impl.fqe import (
    FQEConfig,
    exact_policy_evaluation,
    fit_fqe,
    fqe_regression_loss,
    policy_value,
    tabular_fqe,
)

torch.set_num_threads(1)

GAMMA = 0.9
# Three states, two actions, deterministic moves. Terminal moves end the task.
#   s0: a0 -> s1 (r 0)            a1 -> s2 (r -0.1)
#   s1: a0 -> goal (r +1, end)    a1 -> s0 (r 0)
#   s2: a0 -> s2 (r -0.1)         a1 -> trap (r -1, end)
MOVES = {  # (s, a): (next state, reward, terminated)
    (0, 0): (1, 0.0, False),
    (0, 1): (2, -0.1, False),
    (1, 0): (0, 1.0, True),  # next state is irrelevant once terminated
    (1, 1): (0, 0.0, False),
    (2, 0): (2, -0.1, False),
    (2, 1): (0, -1.0, True),
}
POLICY = np.array([[0.7, 0.3], [0.6, 0.4], [0.5, 0.5]])


def tiny_mdp():
    p = np.zeros((3, 2, 3))
    term = np.zeros((3, 2, 3))
    r = np.zeros((3, 2))
    for (s, a), (s2, rew, done) in MOVES.items():
        p[s, a, s2] = 1.0
        term[s, a, s2] = float(done)
        r[s, a] = rew
    return p, r, term


def tiny_log(repeats: int = 3):
    rows = [(s, a, *MOVES[(s, a)]) for (s, a) in MOVES for _ in range(repeats)]
    s, a, s2, r, done = map(np.asarray, zip(*rows))
    return s.astype(int), a.astype(int), r.astype(float), s2.astype(int), done.astype(bool)


def exact_q():
    p, r, term = tiny_mdp()
    return exact_policy_evaluation(p, r, term, POLICY, GAMMA)


def test_exact_policy_evaluation_satisfies_the_bellman_equation():
    q = exact_q()
    for (s, a), (s2, rew, done) in MOVES.items():
        expected = rew + (0.0 if done else GAMMA * POLICY[s2] @ q[s2])
        assert q[s, a] == pytest.approx(expected, abs=1e-12)


def test_exact_policy_evaluation_known_value_of_a_two_step_chain():
    # s0 -a0-> s1 (r 0), s1 -a0-> end (r 1): Q(s0, a0) = gamma * 1.
    p = np.zeros((2, 1, 2))
    p[0, 0, 1] = p[1, 0, 0] = 1.0
    term = np.zeros_like(p)
    term[1, 0, 0] = 1.0
    q = exact_policy_evaluation(p, np.array([[0.0], [1.0]]), term, np.ones((2, 1)), 0.5)
    np.testing.assert_allclose(q, [[0.5], [1.0]])


def test_tabular_fqe_recovers_exact_policy_evaluation():
    s, a, r, s2, done = tiny_log()
    q = tabular_fqe(s, a, r, s2, done, POLICY, GAMMA, iterations=300)
    np.testing.assert_allclose(q, exact_q(), atol=1e-8)


def test_tabular_fqe_averages_under_the_policy_instead_of_maximising():
    s, a, r, s2, done = tiny_log()
    greedy_like = tabular_fqe(s, a, r, s2, done, np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), GAMMA, iterations=300)
    mixed = tabular_fqe(s, a, r, s2, done, POLICY, GAMMA, iterations=300)
    assert greedy_like[0, 0] > mixed[0, 0] + 0.05  # evaluation depends on the evaluated policy


def test_tabular_fqe_on_sampled_stochastic_log_matches_its_empirical_mdp():
    rng = np.random.default_rng(3)
    # s0: a0 goes to s1 w.p. 0.7 else stays; both actions in s1 end the task.
    rows = []
    for _ in range(400):
        s, a = int(rng.integers(0, 2)), int(rng.integers(0, 2))
        if s == 0:
            s2 = 1 if (a == 0 and rng.random() < 0.7) else 0
            rows.append((s, a, s2, -0.1, False))
        else:
            rows.append((s, a, 0, 1.0 if a == 0 else -1.0, True))
    s, a, s2, r, done = map(np.asarray, zip(*rows))
    pi = np.array([[0.8, 0.2], [0.9, 0.1]])
    q = tabular_fqe(s, a, r.astype(float), s2, done.astype(bool), pi, 0.95, iterations=400)
    p_hat = np.zeros((2, 2, 2))
    r_hat = np.zeros((2, 2))
    t_hat = np.zeros((2, 2, 2))
    for si in range(2):
        for ai in range(2):
            rows_sa = (s == si) & (a == ai)
            r_hat[si, ai] = r[rows_sa].mean()
            for sj in range(2):
                hit = rows_sa & (s2 == sj)
                p_hat[si, ai, sj] = hit.sum() / rows_sa.sum()
                t_hat[si, ai, sj] = done[hit].mean() if hit.any() else 0.0
    np.testing.assert_allclose(q, exact_policy_evaluation(p_hat, r_hat, t_hat, pi, 0.95), atol=1e-6)


def test_timeouts_bootstrap_but_terminals_do_not():
    # (s1, a1) -> s0 is not terminal; a row the time limit cut looks exactly like it and
    # must bootstrap from s0. Marking it terminal (conflating the flags) zeroes its value.
    s, a, r, s2, done = tiny_log()
    q = tabular_fqe(s, a, r, s2, done, POLICY, GAMMA, iterations=300)
    assert q[1, 1] == pytest.approx(GAMMA * POLICY[0] @ q[0])  # (1, 1) is non-terminal
    wrongly_terminal = done | ((s == 1) & (a == 1))
    q_bad = tabular_fqe(s, a, r, s2, wrongly_terminal, POLICY, GAMMA, iterations=300)
    assert q_bad[1, 1] == 0.0 and q[1, 1] != 0.0


def test_tabular_fqe_uses_the_pluggable_kernel():
    s, a, r, s2, done = tiny_log()
    calls = []

    def spy(*args, **kwargs):
        calls.append(1)
        return kernels.fqe_targets(*args, **kwargs)

    tabular_fqe(s, a, r, s2, done, POLICY, GAMMA, iterations=5, targets_kernel=spy)
    assert len(calls) == 5


def one_hot_log():
    s, a, r, s2, done = tiny_log(repeats=20)
    eye = np.eye(3, dtype=np.float32)
    return {
        "observations": eye[s],
        "actions": a,
        "rewards": r,
        "next_observations": eye[s2],
        "terminals": done,
        "timeouts": np.zeros_like(done),
    }


def table_policy(obs: np.ndarray) -> np.ndarray:
    return POLICY[np.argmax(obs, axis=1)]


def test_neural_fqe_with_linear_one_hot_model_approaches_exact_value():
    data = one_hot_log()
    cfg = FQEConfig(gamma=GAMMA, iterations=60, steps_per_iteration=60, batch_size=64, learning_rate=0.05)
    q_net = fit_fqe(data, table_policy, 2, cfg, seed=0, make_q_net=lambda d, a: torch.nn.Linear(d, a, bias=False))
    with torch.no_grad():
        q = q_net(torch.eye(3)).double().numpy()
    np.testing.assert_allclose(q, exact_q(), atol=0.03)
    start = np.eye(3, dtype=np.float32)[[0]]
    assert policy_value(q_net, start, table_policy) == pytest.approx(POLICY[0] @ exact_q()[0], abs=0.03)


def test_fit_fqe_is_deterministic_in_its_seed():
    data = one_hot_log()
    cfg = FQEConfig(gamma=GAMMA, iterations=3, steps_per_iteration=5, hidden=8)
    outs = []
    for _ in range(2):
        net = fit_fqe(data, table_policy, 2, cfg, seed=7)
        with torch.no_grad():
            outs.append(net(torch.eye(3)).numpy())
    np.testing.assert_array_equal(outs[0], outs[1])


def test_fqe_regression_loss_is_mse_on_chosen_actions():
    q = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    loss = fqe_regression_loss(q, torch.tensor([1, 0]), torch.tensor([0.0, 1.0]))
    assert loss.item() == pytest.approx((4.0 + 4.0) / 2)
    with pytest.raises(ValueError, match="targets"):
        fqe_regression_loss(q, torch.tensor([1, 0]), torch.zeros(3))


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: FQEConfig(gamma=1.5), "gamma"),
        (lambda: FQEConfig(iterations=0), "iterations"),
        (lambda: fit_fqe({"actions": np.zeros(2)}, table_policy, 2), "data"),
        (lambda: fit_fqe(one_hot_log(), lambda o: np.ones((len(o), 3)) / 3, 2), "policy"),
        (lambda: tabular_fqe([0], [5], [0.0], [0], [False], POLICY, 0.9), "actions"),
        (lambda: policy_value(torch.nn.Linear(3, 2), np.zeros((0, 3)), table_policy), "initial_observations"),
    ],
)
def test_bad_input_raises_value_error_naming_the_problem(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()
