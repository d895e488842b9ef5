"""The demo's correct submission (``autograder/assets/demo/correct.py``, what ``make demo``
grades) meets every clause of its kernels' docstrings, the ValueError cases included:
each bad input the contracts name raises ValueError naming the bad argument.

The hidden suite grades that bad input raises ValueError, not the message's wording;
naming the argument is what the notebook asks, so the demo (and the reference) do it.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import reference_impl

NAN, INF = float("nan"), float("inf")
QB = [[1.0, 2.0], [3.0, 4.0]]

# (kernel, args, kwargs, the argument the message must name), one row per ValueError case of the contracts.
BAD_INPUTS = [
    ("dqn_targets", ([1.0, 2.0], [0, 1], [1.0, 2.0]), {}, "next_q_target"),  # wrong shapes
    ("dqn_targets", ([1.0, 2.0], [0, 1], np.zeros((2, 0))), {}, "next_q_target"),  # empty action axis
    ("dqn_targets", ([1.0, 2.0], [0, 2], QB), {}, "terminated"),  # non-0/1 flags
    ("dqn_targets", ([NAN, 2.0], [0, 1], QB), {}, "rewards"),  # non-finite used values
    ("dqn_targets", ([1.0, 2.0], [0, 1], [[INF, 2.0], [3.0, 4.0]]), {}, "next_q_target"),
    ("dqn_targets", ([1.0, 2.0], [0, 1], QB), {"gamma": 1.5}, "gamma"),
    ("double_dqn_targets", ([1.0, 2.0], [0, 1], QB, [[1.0, 2.0, 3.0]] * 2), {}, "next_q_target"),  # tables differ
    ("double_dqn_targets", ([1.0, 2.0], [0, 1], QB, [[NAN, 2.0], [3.0, 4.0]]), {}, "next_q_target"),
    ("double_dqn_targets", ([1.0, 2.0], [0, 1], QB, QB), {"gamma": -0.1}, "gamma"),
    ("masked_token_nll", ([-1.0, -2.0], [1, 0, 1]), {}, "mask"),  # shape mismatch
    ("masked_token_nll", ([-1.0, -2.0], [2, 0]), {}, "mask"),  # non-0/1 mask
    ("masked_token_nll", ([-1.0, -2.0], [0, 0]), {}, "mask"),  # no active entry
    ("masked_token_nll", ([NAN, -2.0], [1, 0]), {}, "token_logprobs"),  # non-finite active
    ("masked_token_nll", ([-INF, -2.0], [1, 1]), {}, "token_logprobs"),
    ("cql_discrete_penalty", ([[[1.0]]], [0]), {}, "q_values"),  # wrong shapes
    ("cql_discrete_penalty", (np.zeros((2, 0)), [0, 0]), {}, "q_values"),  # empty action axis
    ("cql_discrete_penalty", ([NAN, 1.0], 0), {}, "q_values"),  # non-finite Q
    ("cql_discrete_penalty", ([1.0, 2.0], 0.5), {}, "actions"),  # non-integer
    ("cql_discrete_penalty", (QB, [0, 5]), {}, "actions"),  # out of range
    ("expectile_loss", ([1.0], 0.0), {}, "tau"),
    ("expectile_loss", ([1.0], 1.0), {}, "tau"),
    ("expectile_loss", ([], 0.5), {}, "diff"),
    ("expectile_loss", ([1.0, NAN], 0.5), {}, "diff"),
    ("expectile_loss", ([INF], 0.5), {}, "diff"),
    ("return_to_go", ([[1.0, 2.0]],), {}, "rewards"),
    ("return_to_go", ([1.0, NAN],), {}, "rewards"),
    ("return_to_go", ([1.0],), {"gamma": 2.0}, "gamma"),
    ("pessimistic_values", ([1.0, 2.0], [1.0]), {}, "counts"),
    ("pessimistic_values", ([1.0], [-1.0]), {}, "counts"),
    ("pessimistic_values", ([1.0], [INF]), {}, "counts"),
    ("pessimistic_values", ([NAN, 1.0], [1.0, 0.0]), {}, "empirical_means"),  # non-finite where n > 0
    ("pessimistic_values", ([1.0], [1.0]), {"radius_scale": -1.0}, "radius_scale"),
    ("pessimistic_values", ([1.0], [1.0]), {"radius_scale": INF}, "radius_scale"),
    ("behavior_support_mask", (np.ones((2, 2, 2)),), {}, "probabilities"),  # other ranks
    ("behavior_support_mask", (np.zeros((2, 0)),), {}, "probabilities"),  # empty action axis
    ("behavior_support_mask", ([0.5, -0.1],), {}, "probabilities"),
    ("behavior_support_mask", ([NAN, 1.0],), {}, "probabilities"),
    ("behavior_support_mask", ([INF, 1.0],), {}, "probabilities"),
    ("behavior_support_mask", ([0.0, 0.0],), {}, "probabilities"),
    ("behavior_support_mask", ([0.5, 0.5],), {"threshold_ratio": 1.5}, "threshold_ratio"),
    ("fqe_targets", ([0.0], [0], [[1.0, 2.0]], [[1.0]]), {}, "next_policy_probs"),
    ("fqe_targets", ([0.0], [0], [[1.0, 2.0]], [[1.5, -0.5]]), {}, "next_policy_probs"),
    ("fqe_targets", ([0.0], [0], [[1.0, 2.0]], [[NAN, 1.0]]), {}, "next_policy_probs"),
    ("fqe_targets", ([0.0], [0], [[1.0, 2.0]], [[0.0, 0.0]]), {}, "next_policy_probs"),
    ("fqe_targets", ([0.0], [0], [[1.0, 2.0]], [[0.5, 0.6]]), {}, "next_policy_probs"),
    ("fqe_targets", ([0.0], [0], [[NAN, 2.0]], [[0.5, 0.5]]), {}, "next_q"),
    ("fqe_targets", ([0.0], [0], [[1.0, 2.0]], [[0.5, 0.5]]), {"gamma": 1.5}, "gamma"),
    ("iql_advantage_weights", ([1.0], -0.5), {}, "beta"),
    ("iql_advantage_weights", ([1.0], INF), {}, "beta"),
    ("iql_advantage_weights", ([1.0], 1.0), {"max_weight": 0.0}, "max_weight"),
    ("iql_advantage_weights", ([1.0], 1.0), {"max_weight": INF}, "max_weight"),
    ("iql_advantage_weights", ([1.0, NAN], 1.0), {}, "advantages"),
]

# Inputs the contracts allow that hold NaN or inf where the kernel never reads: no error.
UNREAD_NON_FINITE = [
    ("dqn_targets", ([1.0], [1], [[NAN, INF]]), {}, [1.0]),
    ("masked_token_nll", ([-1.0, -INF], [1, 0]), {}, 1.0),
    ("pessimistic_values", ([NAN, 1.0], [0, 4]), {}, [-INF, 0.5]),
]


def _demo():
    from autograder.demo import CORRECT

    spec = importlib.util.spec_from_file_location("m5_demo_correct", CORRECT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module", params=["demo", "reference"])
def kernels(request):
    return _demo() if request.param == "demo" else reference_impl


def test_every_contract_raises_clause_has_a_bad_input_here():
    assert {row[0] for row in BAD_INPUTS} == set(reference_impl.KERNEL_NAMES)


@pytest.mark.parametrize("name, args, kwargs, argument", BAD_INPUTS, ids=[f"{row[0]}-{i}" for i, row in enumerate(BAD_INPUTS)])
def test_bad_input_raises_value_error_naming_the_argument(kernels, name, args, kwargs, argument):
    with pytest.raises(ValueError) as caught:
        getattr(kernels, name)(*args, **kwargs)
    assert f"`{argument}`" in str(caught.value), str(caught.value)


@pytest.mark.parametrize("name, args, kwargs, want", UNREAD_NON_FINITE, ids=[row[0] for row in UNREAD_NON_FINITE])
def test_non_finite_values_that_are_never_read_are_fine(kernels, name, args, kwargs, want):
    np.testing.assert_allclose(getattr(kernels, name)(*args, **kwargs), want)


@pytest.mark.parametrize(
    "lang, sentence",
    [
        ("en", "the wording of the message is not graded"),
        ("ru", "текст сообщения не оценивается"),
    ],
)
def test_the_notebook_says_that_error_messages_are_not_graded(lang, sentence):
    import nbformat
    from classroom import RELEASE_ROOT  # tests/autograder is on sys.path

    from autograder.assign import sources

    nb = nbformat.read(sources.notebook_path("assignment", lang, RELEASE_ROOT), as_version=4)
    text = " ".join(" ".join(c.source.split()) for c in nb.cells if c.cell_type == "markdown")
    assert sentence in text
