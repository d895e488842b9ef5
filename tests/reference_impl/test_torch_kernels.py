"""Torch twins agree with the numpy kernels in value and have correct gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from reference_impl import kernels as K
from reference_impl import torch_kernels as T

torch.set_num_threads(1)

FINITE = st.floats(-50.0, 50.0, allow_nan=False, allow_infinity=False)
SETTINGS = settings(max_examples=60, deadline=None)


def t64(x) -> torch.Tensor:
    return torch.as_tensor(np.asarray(x, dtype=np.float64))


@st.composite
def q_batches(draw):
    b = draw(st.integers(1, 6))
    a = draw(st.integers(1, 5))
    q = draw(hnp.arrays(np.float64, (b, a), elements=FINITE))
    actions = draw(hnp.arrays(np.int64, (b,), elements=st.integers(0, a - 1)))
    return q, actions


# ----------------------------------------------------------------- value agreement
@SETTINGS
@given(q_batches())
def test_cql_penalty_matches_numpy(batch):
    q, actions = batch
    got = T.cql_discrete_penalty_torch(t64(q), torch.as_tensor(actions))
    assert got.dim() == 0
    assert got.item() == pytest.approx(K.cql_discrete_penalty(q, actions), rel=1e-10, abs=1e-10)
    assert got.item() >= -1e-12


@SETTINGS
@given(q_batches())
def test_cql_penalty_single_row_matches_numpy(batch):
    q, actions = batch
    got = T.cql_discrete_penalty_torch(t64(q[0]), torch.tensor(int(actions[0])))
    assert got.item() == pytest.approx(K.cql_discrete_penalty(q[0], int(actions[0])), rel=1e-10, abs=1e-10)


def test_cql_penalty_stable_for_huge_q():
    q = torch.tensor([[1e6, 1e6 - 1.0, -1e6]], dtype=torch.float64)
    got = T.cql_discrete_penalty_torch(q, torch.tensor([1]))
    assert got.item() == pytest.approx(K.cql_discrete_penalty(q.numpy(), [1]))
    assert math.isfinite(got.item())


@SETTINGS
@given(
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5), elements=FINITE),
    st.floats(0.01, 0.99),
)
def test_expectile_loss_matches_numpy(diff, tau):
    got = T.expectile_loss_torch(t64(diff), tau)
    assert got.item() == pytest.approx(K.expectile_loss(diff, tau), rel=1e-10, abs=1e-12)


@SETTINGS
@given(st.data())
def test_masked_token_nll_matches_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=5))
    logp = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-30.0, 0.0)))
    mask = data.draw(hnp.arrays(np.bool_, shape))
    mask.flat[data.draw(st.integers(0, mask.size - 1))] = True
    padded = np.where(mask, logp, -np.inf)  # padding may hold -inf
    got = T.masked_token_nll_torch(t64(padded), torch.as_tensor(mask))
    assert got.item() == pytest.approx(K.masked_token_nll(padded, mask), rel=1e-10, abs=1e-12)


@SETTINGS
@given(
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=5), elements=st.floats(-1e6, 1e6)),
    st.floats(0.0, 10.0),
    st.floats(0.5, 1e3),
)
def test_advantage_weights_match_numpy_and_never_overflow(adv, beta, cap):
    got = T.iql_advantage_weights_torch(t64(adv), beta, cap).numpy()
    want = K.iql_advantage_weights(adv, beta, cap)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=0)
    assert np.isfinite(got).all() and (got <= cap * (1 + 1e-12)).all()


@SETTINGS
@given(q_batches(), st.floats(0.0, 1.0), st.data())
def test_target_twins_match_numpy(batch, gamma, data):
    next_q, _ = batch
    b, a = next_q.shape
    rewards = data.draw(hnp.arrays(np.float64, (b,), elements=FINITE))
    done = data.draw(hnp.arrays(np.bool_, (b,)))
    other = data.draw(hnp.arrays(np.float64, (b, a), elements=FINITE))
    probs = data.draw(hnp.arrays(np.float64, (b, a), elements=st.floats(0.01, 1.0)))
    probs = probs / probs.sum(axis=1, keepdims=True)
    r, d = t64(rewards), torch.as_tensor(done)
    np.testing.assert_allclose(
        T.dqn_targets_torch(r, d, t64(next_q), gamma).numpy(), K.dqn_targets(rewards, done, next_q, gamma), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(
        T.double_dqn_targets_torch(r, d, t64(next_q), t64(other), gamma).numpy(),
        K.double_dqn_targets(rewards, done, next_q, other, gamma),
        rtol=1e-12,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        T.fqe_targets_torch(r, d, t64(next_q), t64(probs), gamma).numpy(),
        K.fqe_targets(rewards, done, next_q, probs, gamma),
        rtol=1e-10,
        atol=1e-10,
    )


def test_double_dqn_twin_takes_first_index_on_ties():
    online = torch.tensor([[3.0, 3.0, 1.0]], dtype=torch.float64)
    target = torch.tensor([[10.0, 20.0, 30.0]], dtype=torch.float64)
    y = T.double_dqn_targets_torch(torch.zeros(1, dtype=torch.float64), torch.tensor([False]), online, target, 1.0)
    assert y.item() == 10.0


def test_targets_ignore_terminal_rows_and_are_detached():
    q = torch.tensor([[1.0, 2.0], [float("nan"), float("inf")]], dtype=torch.float64, requires_grad=True)
    y = T.dqn_targets_torch(torch.tensor([0.0, 1.0], dtype=torch.float64), torch.tensor([0, 1]), q, 0.5)
    assert y.tolist() == [1.0, 1.0]
    assert not y.requires_grad


# ----------------------------------------------------------------- gradients
@settings(max_examples=15, deadline=None)
@given(q_batches())
def test_cql_penalty_gradcheck_and_closed_form(batch):
    q, actions = batch
    q_t = t64(q).requires_grad_(True)
    a_t = torch.as_tensor(actions)
    assert torch.autograd.gradcheck(lambda x: T.cql_discrete_penalty_torch(x, a_t), (q_t,))
    T.cql_discrete_penalty_torch(q_t, a_t).backward()
    onehot = np.eye(q.shape[1])[actions]
    soft = np.exp(q - q.max(axis=1, keepdims=True))
    soft /= soft.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(q_t.grad.numpy(), (soft - onehot) / q.shape[0], atol=1e-10)


@settings(max_examples=15, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 8), elements=FINITE.filter(lambda x: abs(x) > 1e-3)), st.floats(0.05, 0.95))
def test_expectile_loss_gradcheck(diff, tau):
    x = t64(diff).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda u: T.expectile_loss_torch(u, tau), (x,))


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_masked_token_nll_gradcheck_with_inf_padding(data):
    n = data.draw(st.integers(2, 8))
    logp = data.draw(hnp.arrays(np.float64, (n,), elements=st.floats(-10.0, -0.01)))
    mask = data.draw(hnp.arrays(np.bool_, (n,)))
    mask[0] = True
    x = t64(logp).requires_grad_(True)
    m = torch.as_tensor(mask)
    assert torch.autograd.gradcheck(lambda lp: T.masked_token_nll_torch(lp, m), (x,))
    # -inf padding gives zero gradient, not NaN.
    padded = torch.where(m, t64(logp), torch.tensor(-math.inf, dtype=torch.float64)).requires_grad_(True)
    T.masked_token_nll_torch(padded, m).backward()
    assert torch.isfinite(padded.grad).all()
    assert (padded.grad[~m] == 0).all()


def test_advantage_weights_gradcheck_below_cap():
    adv = torch.tensor([-1.0, 0.0, 0.5, 1.2], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: T.iql_advantage_weights_torch(x, 1.5, 100.0).sum(), (adv,))


# ----------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: T.cql_discrete_penalty_torch(torch.zeros(2, 3), torch.tensor([0, 3])), "actions"),
        (lambda: T.cql_discrete_penalty_torch(torch.zeros(2, 3), torch.tensor([0.0, 1.0])), "actions"),
        (lambda: T.cql_discrete_penalty_torch(torch.zeros(2, 0), torch.tensor([0, 0])), "q_values"),
        (lambda: T.cql_discrete_penalty_torch(torch.zeros(3), torch.tensor([0])), "actions"),
        (lambda: T.cql_discrete_penalty_torch(torch.tensor([[1.0, float("nan")]]), torch.tensor([0])), "q_values"),
        (lambda: T.expectile_loss_torch(torch.zeros(3), 1.0), "tau"),
        (lambda: T.expectile_loss_torch(torch.zeros(0), 0.5), "diff"),
        (lambda: T.expectile_loss_torch(np.zeros(3), 0.5), "diff"),
        (lambda: T.masked_token_nll_torch(torch.zeros(3), torch.zeros(3)), "mask"),
        (lambda: T.masked_token_nll_torch(torch.zeros(3), torch.tensor([1, 2, 0])), "mask"),
        (lambda: T.masked_token_nll_torch(torch.zeros(3), torch.ones(2)), "mask"),
        (lambda: T.masked_token_nll_torch(torch.tensor([-math.inf, 0.0]), torch.tensor([1, 1])), "token_logprobs"),
        (lambda: T.iql_advantage_weights_torch(torch.zeros(2), -1.0), "beta"),
        (lambda: T.iql_advantage_weights_torch(torch.zeros(2), 1.0, 0.0), "max_weight"),
        (lambda: T.dqn_targets_torch(torch.zeros(2), torch.zeros(3), torch.zeros(2, 2)), "terminated"),
        (lambda: T.dqn_targets_torch(torch.zeros(2), torch.zeros(2), torch.zeros(2, 2), 1.5), "gamma"),
        (lambda: T.fqe_targets_torch(torch.zeros(1), torch.zeros(1), torch.zeros(1, 2), torch.tensor([[0.7, 0.7]])), "next_policy_probs"),
    ],
)
def test_bad_input_names_the_argument(call, argument):
    with pytest.raises(ValueError, match=f"`{argument}`"):
        call()
