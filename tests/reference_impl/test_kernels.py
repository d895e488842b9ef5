"""Reference kernels: worked values of the module, Hypothesis properties, bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from reference_impl import (
    KernelInputError,
    behavior_support_mask,
    cql_discrete_penalty,
    double_dqn_targets,
    dqn_targets,
    expectile_loss,
    fqe_targets,
    iql_advantage_weights,
    masked_token_nll,
    pessimistic_values,
    return_to_go,
)

settings.register_profile("kernels", max_examples=60, deadline=None, derandomize=True, database=None)
settings.load_profile("kernels")

# ---------------------------------------------------------------- strategies
finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
gammas = st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0))


@st.composite
def transition_batches(draw, with_online=False, with_policy=False):
    b = draw(st.integers(1, 12))
    a = draw(st.integers(1, 6))
    out = {
        "rewards": draw(hnp.arrays(np.float64, b, elements=finite)),
        "terminated": draw(hnp.arrays(np.bool_, b)),
        "next_q": draw(hnp.arrays(np.float64, (b, a), elements=finite)),
        "gamma": draw(gammas),
    }
    if with_online:
        out["online"] = draw(hnp.arrays(np.float64, (b, a), elements=finite))
    if with_policy:
        raw = draw(hnp.arrays(np.float64, (b, a), elements=st.floats(0.01, 1.0)))
        out["policy"] = raw / raw.sum(axis=1, keepdims=True)
    return out


# ---------------------------------------------------------------- worked values
def test_worked_values_of_the_module():
    np.testing.assert_allclose(dqn_targets([0.2, -1.0], [0, 1], [[1.1, 1.6], [10, 20]], gamma=0.95), [1.72, -1.0])
    assert cql_discrete_penalty([2.0, 0.0, -1.0], 0) == pytest.approx(0.169846, abs=1e-6)
    np.testing.assert_allclose(return_to_go([1.0, 0.0, -0.5, 2.0]), [2.5, 1.5, 1.5, 2.0])
    np.testing.assert_allclose(fqe_targets([-0.1], [False], [[2.0, 4.0]], [[0.25, 0.75]], gamma=0.9), [3.05])
    logp, mask = [-0.2, -1.0, -0.4, -3.0, -2.0, -1.0], [1, 1, 1, 0, 0, 0]
    assert masked_token_nll(logp, mask) == pytest.approx(0.533333, abs=1e-6)
    assert -np.sum(np.multiply(logp, mask)) / 6 == pytest.approx(0.266667, abs=1e-6)
    np.testing.assert_allclose(dqn_targets([1, -1, 0], [0, 1, 0], [[4, 0], [100, 0], [3, 0]], gamma=0.9), [4.6, -1.0, 2.7])
    q_target, q_online = [[10, 1], [-1, 7]], [[0, 1], [1, 0]]
    np.testing.assert_allclose(dqn_targets([0, 0], [0, 0], q_target, gamma=0.9), [9.0, 6.3])
    np.testing.assert_allclose(double_dqn_targets([0, 0], [0, 0], q_online, q_target, gamma=0.9), [0.9, -0.9])
    assert expectile_loss(np.array([0.0, 2.0, 3.0]) - 1.0, 0.8) == pytest.approx(1.4)
    np.testing.assert_allclose(return_to_go([1.0, 0.0, -0.5, 2.0], gamma=0.5), [1.125, 0.25, 0.5, 2.0])
    np.testing.assert_allclose(pessimistic_values([1, 0.5, 2, 0.8], [4, 1, 0, 100]), [0.5, -0.5, -np.inf, 0.7])


def test_outputs_are_float64_and_inputs_untouched():
    r, d, q = np.array([1, 2]), np.array([0, 1]), np.array([[1, 2], [3, 4]])
    copies = [x.copy() for x in (r, d, q)]
    out = dqn_targets(r, d, q)
    assert out.dtype == np.float64 and out.shape == (2,)
    for before, after in zip(copies, (r, d, q)):
        np.testing.assert_array_equal(before, after)
    assert isinstance(masked_token_nll([-1.0], [1]), float)
    assert isinstance(cql_discrete_penalty([1.0, 2.0], 1), float)
    assert isinstance(expectile_loss([1.0], 0.3), float)
    assert return_to_go([1, 2, 3]).dtype == np.float64
    assert behavior_support_mask([0.2, 0.8]).dtype == np.bool_


# ---------------------------------------------------------------- dqn / double dqn
@given(transition_batches())
def test_dqn_matches_formula_and_terminal_rows_ignore_next_q(batch):
    y = dqn_targets(batch["rewards"], batch["terminated"], batch["next_q"], gamma=batch["gamma"])
    expected = batch["rewards"] + batch["gamma"] * (~batch["terminated"]) * batch["next_q"].max(axis=1)
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-9)
    garbage = batch["next_q"].copy()
    garbage[batch["terminated"]] = np.nan  # never read on terminal rows
    y2 = dqn_targets(batch["rewards"], batch["terminated"].astype(float), garbage, gamma=batch["gamma"])
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(y[batch["terminated"]], batch["rewards"][batch["terminated"]])


@given(transition_batches(with_online=True))
def test_double_dqn_equals_dqn_on_equal_tables_and_never_exceeds_it(batch):
    args = (batch["rewards"], batch["terminated"])
    g = batch["gamma"]
    same = double_dqn_targets(*args, batch["next_q"], batch["next_q"], gamma=g)
    np.testing.assert_allclose(same, dqn_targets(*args, batch["next_q"], gamma=g))
    double = double_dqn_targets(*args, batch["online"], batch["next_q"], gamma=g)
    assert (double <= dqn_targets(*args, batch["next_q"], gamma=g) + 1e-9).all()


def test_double_dqn_takes_first_index_on_ties():
    y = double_dqn_targets([0.0], [0], [[5.0, 5.0, 1.0]], [[1.0, 2.0, 3.0]], gamma=1.0)
    assert y.tolist() == [1.0]


def test_truncated_transition_bootstraps():
    # A time-limit cut is passed as not terminated: its target keeps gamma * max Q.
    assert dqn_targets([0.0], [False], [[2.0, 3.0]], gamma=0.5).tolist() == [1.5]


# ---------------------------------------------------------------- masked nll
@given(st.data())
def test_masked_nll_is_mean_over_active_tokens(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=5))
    logp = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-20, 0)))
    mask = data.draw(hnp.arrays(np.bool_, shape))
    assume(mask.any())
    padded = np.where(mask, logp, -np.inf)  # padding is never read
    value = masked_token_nll(padded, mask.astype(int))
    assert value == pytest.approx(-logp[mask].mean(), rel=1e-12, abs=1e-12)
    assert value >= 0


# ---------------------------------------------------------------- cql penalty
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 8), st.integers(1, 6)), elements=finite), st.data(), finite)
def test_cql_penalty_nonnegative_shift_invariant_and_batch_mean(q, data, shift):
    actions = data.draw(hnp.arrays(np.int64, q.shape[0], elements=st.integers(0, q.shape[1] - 1)))
    value = cql_discrete_penalty(q, actions)
    assert value >= 0
    assert value == pytest.approx(cql_discrete_penalty(q + shift, actions), abs=1e-6)
    rows = [cql_discrete_penalty(q[i], int(actions[i])) for i in range(q.shape[0])]
    assert value == pytest.approx(np.mean(rows), abs=1e-9)
    ref = np.log(np.sum(np.exp(q - q.max(1, keepdims=True)), axis=1)) + q.max(1) - q[np.arange(len(actions)), actions]
    assert value == pytest.approx(ref.mean(), rel=1e-9, abs=1e-9)


@given(st.floats(-1e4, 1e4), st.floats(-1e4, 1e4))
def test_cql_penalty_is_exact_for_large_q(a, b):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = cql_discrete_penalty([a, b], 0)
    exact = max(a, b) - a + math.log1p(math.exp(-abs(a - b)))
    assert value == pytest.approx(exact, rel=1e-12, abs=1e-9)
    assert math.isfinite(value)


# ---------------------------------------------------------------- expectile
@given(hnp.arrays(np.float64, st.integers(1, 30), elements=finite), st.floats(0.01, 0.99))
def test_expectile_half_is_half_mse_and_weights_are_asymmetric(u, tau):
    assert expectile_loss(u, 0.5) == pytest.approx(0.5 * np.mean(u**2), rel=1e-12, abs=1e-12)
    expected = np.mean(np.where(u < 0, 1 - tau, tau) * u**2)
    assert expectile_loss(u, tau) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    pos = np.abs(u) + 1.0
    assert expectile_loss(pos, tau) == pytest.approx(tau / (1 - tau) * expectile_loss(-pos, tau), rel=1e-9)


# ---------------------------------------------------------------- return to go
@given(hnp.arrays(np.float64, st.integers(0, 40), elements=finite), gammas, st.floats(-5, 5))
def test_return_to_go_recursion_and_linearity(r, gamma, scale):
    g = return_to_go(r, gamma)
    assert g.shape == r.shape
    if len(r):
        assert g[-1] == r[-1]
        np.testing.assert_allclose(g[:-1], r[:-1] + gamma * g[1:], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(return_to_go(scale * r, gamma), scale * g, rtol=1e-9, atol=1e-6)
    other = r[::-1].copy()
    np.testing.assert_allclose(return_to_go(r + other, gamma), g + return_to_go(other, gamma), rtol=1e-9, atol=1e-6)


def _step_recursion(r: np.ndarray, gamma: float) -> np.ndarray:
    """G_t = r_t + gamma * G_{t+1}, one step at a time: the definition, as a reference."""
    out, after = np.empty_like(r), 0.0
    for t in range(len(r) - 1, -1, -1):
        after = out[t] = r[t] + gamma * after
    return out


# Blocks of the vectorised scan hold about 345 / |ln gamma| steps: these gammas and
# lengths cross block boundaries (and the scan of the block starts recurses).
block_gammas = st.one_of(st.floats(1e-6, 0.999), st.sampled_from([1e-200, 1e-100, 0.01, 0.5, 0.9, 0.99]))


@settings(max_examples=40)
@given(st.integers(1, 4000), block_gammas, st.floats(1e-3, 1e3), st.integers(0, 2**32 - 1))
def test_return_to_go_matches_the_step_recursion_across_blocks(length, gamma, scale, seed):
    r = np.random.default_rng(seed).normal(size=length) * scale
    expected = _step_recursion(r, gamma)
    got = return_to_go(r, gamma)
    assert got[-1] == r[-1]
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12 * np.abs(expected).max())


def test_return_to_go_keeps_tiny_and_huge_rewards():
    """The block weights gamma**j never reach underflow, so tiny rewards keep their digits
    and huge ones do not overflow where the recursion does not."""
    for scale in (1e-300, 1e300):
        r = np.random.default_rng(1).normal(size=5000) * scale
        for gamma in (0.01, 0.5, 0.99):
            np.testing.assert_allclose(return_to_go(r, gamma), _step_recursion(r, gamma), rtol=1e-9)


def test_return_to_go_is_accurate_on_long_episodes():
    r = np.random.default_rng(0).uniform(0, 1, size=100_000)
    undiscounted = return_to_go(r)
    for t in (0, 50_000, 99_999):  # math.fsum is exactly rounded: an independent reference
        exact = math.fsum(r[t:].tolist())
        assert abs(undiscounted[t] - exact) <= 1e-9 * exact
    discounted = return_to_go(r, 0.999)
    t = 99_000
    exact = math.fsum((0.999 ** np.arange(len(r) - t) * r[t:]).tolist())
    assert abs(discounted[t] - exact) <= 1e-9 * exact
    assert return_to_go([1, 2, 3]).tolist() == [6.0, 5.0, 3.0]


# ---------------------------------------------------------------- pessimistic values
@given(st.data())
def test_pessimistic_values_increase_with_counts(data):
    n = data.draw(st.integers(1, 10))
    means = data.draw(hnp.arrays(np.float64, n, elements=finite))
    counts = data.draw(hnp.arrays(np.float64, n, elements=st.floats(0, 1e6)))
    more = counts + data.draw(st.floats(0.5, 100))
    scale = data.draw(st.floats(0, 10))
    low, high = pessimistic_values(means, counts, radius_scale=scale), pessimistic_values(means, more, radius_scale=scale)
    assert (high >= low).all()
    assert (high <= means).all()
    assert np.isneginf(low[counts == 0]).all()
    seen = counts > 0
    np.testing.assert_allclose(low[seen], means[seen] - scale / np.sqrt(counts[seen]))


def test_pessimistic_values_ignore_means_of_unseen_arms():
    out = pessimistic_values([np.nan, 1.0], [0, 4])
    assert np.isneginf(out[0]) and out[1] == 0.5


# ---------------------------------------------------------------- support mask
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 6)), elements=st.floats(0, 1)), st.floats(0, 1), st.floats(0, 1))
def test_support_mask_contains_argmax_and_grows_as_ratio_falls(p, r1, r2):
    assume((p.max(axis=1) > 0).all())
    lo, hi = sorted((r1, r2))
    wide, narrow = behavior_support_mask(p, lo), behavior_support_mask(p, hi)
    assert wide[np.arange(len(p)), p.argmax(axis=1)].all()
    assert (narrow <= wide).all()
    np.testing.assert_array_equal(behavior_support_mask(p[0], hi), narrow[0])
    assert behavior_support_mask(p, 0.0).all()


def test_support_mask_is_relative_not_absolute():
    # 0.1 / 0.2 = 0.5 >= 0.35 although 0.1 < 0.35
    assert behavior_support_mask([0.1, 0.2, 0.05], 0.35).tolist() == [True, True, False]


# ---------------------------------------------------------------- fqe
@given(transition_batches(with_policy=True), st.data())
def test_fqe_with_one_hot_policy_is_sarsa_and_matches_formula(batch, data):
    b, a = batch["next_q"].shape
    nxt = data.draw(hnp.arrays(np.int64, b, elements=st.integers(0, a - 1)))
    one_hot = np.eye(a)[nxt]
    args = (batch["rewards"], batch["terminated"])
    sarsa = batch["rewards"] + batch["gamma"] * (~batch["terminated"]) * batch["next_q"][np.arange(b), nxt]
    np.testing.assert_allclose(fqe_targets(*args, batch["next_q"], one_hot, gamma=batch["gamma"]), sarsa, atol=1e-9)
    expected = batch["rewards"] + batch["gamma"] * (~batch["terminated"]) * (batch["policy"] * batch["next_q"]).sum(1)
    np.testing.assert_allclose(fqe_targets(*args, batch["next_q"], batch["policy"], gamma=batch["gamma"]), expected, atol=1e-9)


# ---------------------------------------------------------------- iql weights
@given(hnp.arrays(np.float64, st.integers(1, 20), elements=finite), st.floats(0, 100), st.floats(0.1, 1e3))
def test_iql_weights_monotone_capped_and_exact(adv, beta, cap):
    w = iql_advantage_weights(adv, beta, max_weight=cap)
    assert ((w >= 0) & (w <= cap * (1 + 1e-12))).all()  # exp may underflow to 0
    order = np.argsort(adv, kind="stable")
    assert (np.diff(w[order]) >= -1e-12 * cap).all()
    with np.errstate(over="ignore"):
        expected = np.minimum(np.exp(beta * adv), cap)
    np.testing.assert_allclose(w, expected, rtol=1e-12)


def test_iql_weights_do_not_overflow_or_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = iql_advantage_weights([1e6, -1e6, 0.0], 1.0, max_weight=50.0)
    assert w.tolist() == pytest.approx([50.0, 0.0, 1.0])


# ---------------------------------------------------------------- bad input
Q2 = [[1.0, 2.0], [3.0, 4.0]]
BAD_INPUTS = [
    # (call, argument named in the message)
    (lambda: dqn_targets([1.0, 2.0], [0, 1], [1.0, 2.0]), "next_q_target"),
    (lambda: dqn_targets([1.0, 2.0, 3.0], [0, 1], Q2), "terminated"),
    (lambda: dqn_targets([1.0, 2.0], [0, 1], [[1.0], [2.0], [3.0]]), "next_q_target"),
    (lambda: dqn_targets([1.0, 2.0], [0, 1], np.zeros((2, 0))), "next_q_target"),
    (lambda: dqn_targets([1.0, 2.0], [0, 1], Q2, gamma=1.5), "gamma"),
    (lambda: dqn_targets([1.0, 2.0], [0, 1], Q2, gamma=float("nan")), "gamma"),
    (lambda: dqn_targets([1.0, 2.0], [0, 0.5], Q2), "terminated"),
    (lambda: dqn_targets([1.0, np.inf], [0, 1], Q2), "rewards"),
    (lambda: dqn_targets([1.0, 2.0], [0, 1], [[np.nan, 1.0], [1.0, 2.0]]), "next_q_target"),
    (lambda: dqn_targets([[1.0, 2.0]], [0], Q2), "rewards"),
    (lambda: dqn_targets(["a", "b"], [0, 1], Q2), "rewards"),
    (lambda: dqn_targets([1.0, [2.0, 3.0]], [0, 1], Q2), "rewards"),
    (lambda: double_dqn_targets([1.0, 2.0], [0, 1], Q2, [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]), "next_q_target"),
    (lambda: double_dqn_targets([1.0, 2.0], [0, 1], [[np.nan, 1.0], [1.0, 2.0]], Q2), "next_q_online"),
    (lambda: double_dqn_targets([1.0, 2.0], [0, 1], Q2, Q2, gamma=-0.1), "gamma"),
    (lambda: masked_token_nll([-1.0, -2.0], [1, 0, 1]), "mask"),
    (lambda: masked_token_nll([-1.0, -2.0], [0, 0]), "mask"),
    (lambda: masked_token_nll([-1.0, -2.0], [2, 0]), "mask"),
    (lambda: masked_token_nll([-1.0, np.nan], [1, 1]), "token_logprobs"),
    (lambda: cql_discrete_penalty([1.0, 2.0], 2), "actions"),
    (lambda: cql_discrete_penalty([1.0, 2.0], -1), "actions"),
    (lambda: cql_discrete_penalty([1.0, 2.0], 0.5), "actions"),
    (lambda: cql_discrete_penalty(Q2, [0]), "actions"),
    (lambda: cql_discrete_penalty(Q2, 0), "actions"),
    (lambda: cql_discrete_penalty([1.0, 2.0], [0, 1]), "actions"),
    (lambda: cql_discrete_penalty([], 0), "q_values"),
    (lambda: cql_discrete_penalty(np.zeros((0, 3)), np.zeros(0, int)), "q_values"),
    (lambda: cql_discrete_penalty([[[1.0]]], [0]), "q_values"),
    (lambda: cql_discrete_penalty([1.0, np.inf], 0), "q_values"),
    (lambda: expectile_loss([1.0], 0.0), "tau"),
    (lambda: expectile_loss([1.0], 1.0), "tau"),
    (lambda: expectile_loss([1.0], float("nan")), "tau"),
    (lambda: expectile_loss([], 0.5), "diff"),
    (lambda: expectile_loss([np.nan], 0.5), "diff"),
    (lambda: return_to_go([[1.0, 2.0]]), "rewards"),
    (lambda: return_to_go([1.0], gamma=2.0), "gamma"),
    (lambda: return_to_go([1.0, np.nan]), "rewards"),
    (lambda: pessimistic_values([1.0, 2.0], [1.0]), "counts"),
    (lambda: pessimistic_values([1.0], [-1.0]), "counts"),
    (lambda: pessimistic_values([1.0], [np.inf]), "counts"),
    (lambda: pessimistic_values([1.0], [1.0], radius_scale=-1.0), "radius_scale"),
    (lambda: pessimistic_values([1.0], [1.0], radius_scale=np.inf), "radius_scale"),
    (lambda: pessimistic_values([np.nan], [3.0]), "empirical_means"),
    (lambda: behavior_support_mask([0.5, -0.1]), "probabilities"),
    (lambda: behavior_support_mask([0.0, 0.0]), "probabilities"),
    (lambda: behavior_support_mask([[0.5, 0.5], [0.0, 0.0]]), "probabilities"),
    (lambda: behavior_support_mask([0.5, 0.5], 1.5), "threshold_ratio"),
    (lambda: behavior_support_mask([0.5, 0.5], -0.1), "threshold_ratio"),
    (lambda: behavior_support_mask(np.zeros((2, 0))), "probabilities"),
    (lambda: behavior_support_mask(np.ones((2, 2, 2))), "probabilities"),
    (lambda: behavior_support_mask([np.nan, 1.0]), "probabilities"),
    (lambda: fqe_targets([0.0], [0], [[1.0, 2.0]], [[0.5, 0.6]]), "next_policy_probs"),
    (lambda: fqe_targets([0.0], [0], [[1.0, 2.0]], [[0.0, 0.0]]), "next_policy_probs"),
    (lambda: fqe_targets([0.0], [0], [[1.0, 2.0]], [[1.5, -0.5]]), "next_policy_probs"),
    (lambda: fqe_targets([0.0], [0], [[1.0, 2.0]], [[1.0]]), "next_policy_probs"),
    (lambda: fqe_targets([0.0], [3], [[1.0, 2.0]], [[0.5, 0.5]]), "terminated"),
    (lambda: fqe_targets([0.0], [0], [[1.0, 2.0]], [[0.5, 0.5]], gamma=1.01), "gamma"),
    (lambda: iql_advantage_weights([1.0], -0.5), "beta"),
    (lambda: iql_advantage_weights([1.0], np.inf), "beta"),
    (lambda: iql_advantage_weights([1.0], 1.0, max_weight=0.0), "max_weight"),
    (lambda: iql_advantage_weights([1.0], 1.0, max_weight=-3.0), "max_weight"),
    (lambda: iql_advantage_weights([np.nan], 1.0), "advantages"),
]


@pytest.mark.parametrize("call,argument", BAD_INPUTS, ids=[f"{i:02d}-{arg}" for i, (_, arg) in enumerate(BAD_INPUTS)])
def test_bad_input_raises_value_error_naming_the_argument(call, argument):
    with pytest.raises(KernelInputError) as info:
        call()
    assert f"`{argument}`" in str(info.value)
    assert isinstance(info.value, ValueError)


# ---------------------------------------------------------------- empty batches and episodes
# What each contract says about an empty batch: the shape clauses ((B,) -> (B,), "any
# shape", (B, A) -> same shape) allow B = 0 unless the "Raises" clause names it.
EMPTY_ALLOWED = [
    ("dqn_targets", lambda: dqn_targets(np.zeros(0), np.zeros(0, bool), np.zeros((0, 3))), (0,), np.float64),
    ("double_dqn_targets", lambda: double_dqn_targets(np.zeros(0), [], np.zeros((0, 3)), np.zeros((0, 3))), (0,), np.float64),
    ("return_to_go", lambda: return_to_go([], gamma=0.9), (0,), np.float64),
    ("return_to_go", lambda: return_to_go(np.zeros(0, int)), (0,), np.float64),
    ("pessimistic_values", lambda: pessimistic_values(np.zeros((0, 4)), np.zeros((0, 4))), (0, 4), np.float64),
    ("behavior_support_mask", lambda: behavior_support_mask(np.zeros((0, 3))), (0, 3), np.bool_),
    ("fqe_targets", lambda: fqe_targets(np.zeros(0), [], np.zeros((0, 2)), np.zeros((0, 2))), (0,), np.float64),
    ("iql_advantage_weights", lambda: iql_advantage_weights(np.zeros((2, 0)), 3.0), (2, 0), np.float64),
]
EMPTY_REFUSED = [  # the "Raises" clause names these
    (lambda: masked_token_nll([], []), "mask"),  # "a mask with no active entry"
    (lambda: cql_discrete_penalty(np.zeros((0, 3)), np.zeros(0, int)), "q_values"),  # "an empty ... batch"
    (lambda: expectile_loss([], 0.7), "diff"),  # "diff is empty"
    (lambda: dqn_targets([1.0], [0], np.zeros((1, 0))), "next_q_target"),  # "an empty action axis"
    (lambda: behavior_support_mask(np.zeros((2, 0))), "probabilities"),
]


@pytest.mark.parametrize("kernel, call, shape, dtype", EMPTY_ALLOWED, ids=[c[0] for c in EMPTY_ALLOWED])
def test_an_empty_batch_gives_an_empty_result_where_the_contract_allows_it(kernel, call, shape, dtype):
    out = call()
    assert out.shape == shape and out.dtype == dtype


@pytest.mark.parametrize("call, argument", EMPTY_REFUSED)
def test_an_empty_input_the_contract_refuses_raises_naming_the_argument(call, argument):
    with pytest.raises(ValueError, match=f"`{argument}`"):
        call()
