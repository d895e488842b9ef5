"""The multi-tensor optimizers give the weights of torch's per-tensor defaults, bit for bit."""

from __future__ import annotations

import copy

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.optimizers import adam, adamw, polyak_update


def _net(seed: int) -> torch.nn.Sequential:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))


def _train(net, optimizer, seed: int, steps: int = 25) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        x, y = torch.randn(8, 5, generator=g), torch.randn(8, 3, generator=g)
        loss = ((net(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return torch.cat([p.detach().flatten() for p in net.parameters()])


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    lr=st.sampled_from([1e-4, 1e-3, 3e-3, 0.1]),
    weight_decay=st.sampled_from([0.0, 1e-4, 0.01]),
    decoupled=st.booleans(),
)
def test_the_multi_tensor_step_equals_the_per_tensor_default(seed, lr, weight_decay, decoupled):
    net = _net(seed)
    twin = copy.deepcopy(net)
    if decoupled:
        ours = adamw(net.parameters(), lr=lr, weight_decay=weight_decay)
        default = torch.optim.AdamW(twin.parameters(), lr=lr, weight_decay=weight_decay, foreach=False)
    else:
        ours = adam(net.parameters(), lr=lr, weight_decay=weight_decay)
        default = torch.optim.Adam(twin.parameters(), lr=lr, weight_decay=weight_decay, foreach=False)
    assert torch.equal(_train(net, ours, seed), _train(twin, default, seed))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), rate=st.floats(0.0, 1.0))
def test_polyak_update_moves_each_weight_toward_the_source(seed, rate):
    target, source = _net(seed), _net(seed + 1)
    expected = [t.detach() + rate * (s.detach() - t.detach()) for t, s in zip(target.parameters(), source.parameters())]
    before = [s.detach().clone() for s in source.parameters()]
    polyak_update(target, source, rate)
    for got, want in zip(target.parameters(), expected):
        torch.testing.assert_close(got.detach(), want, rtol=0, atol=1e-6)
    assert all(torch.equal(s, b) for s, b in zip(source.parameters(), before))  # the source is only read


def test_polyak_update_at_the_ends_keeps_or_copies():
    target, source = _net(0), _net(1)
    kept = [p.detach().clone() for p in target.parameters()]
    polyak_update(target, source, 0.0)
    assert all(torch.equal(p, k) for p, k in zip(target.parameters(), kept))
    polyak_update(target, source, 1.0)
    assert all(torch.equal(p, s) for p, s in zip(target.parameters(), source.parameters()))


def test_polyak_update_rejects_a_bad_rate_or_mismatched_networks():
    with pytest.raises(ValueError, match="`rate` must lie in"):
        polyak_update(_net(0), _net(1), 1.5)
    with pytest.raises(ValueError, match="`rate` must lie in"):
        polyak_update(_net(0), _net(1), float("nan"))
    with pytest.raises(ValueError, match="parameter tensors"):
        polyak_update(_net(0), torch.nn.Linear(5, 3), 0.5)
