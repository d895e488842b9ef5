"""Judging one outcome against the reference: tolerances, shapes, errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder.grade.properties import compare, flatten_expected, passing_calls, same_outcome, same_values, scale_of, values_close


def OK(v, scale=None):
    return {"s": "ok", "v": np.asarray(v), **({"scale": scale} if scale else {})}


def test_float32_rounding_is_accepted_but_real_errors_are_not():
    want = np.array([1234.5678, -0.001, 3.0])
    assert compare(OK(want.astype(np.float32)), OK(want)) is None
    assert compare(OK(want + [0, 0, 0.1]), OK(want)) is not None  # beyond 1e-5 * max|value|


def test_tolerance_scales_with_the_inputs():
    assert values_close(np.array([1e-3]), np.array([0.0]), scale=1000.0)
    assert not values_close(np.array([1e-3]), np.array([0.0]), scale=1.0)
    assert scale_of(np.array([np.inf, -3.0]), np.array([[7.0]])) == 7.0


def test_infinities_must_match_and_nan_never_matches():
    assert compare(OK([-np.inf, 0.5]), OK([-np.inf, 0.5])) is None
    assert compare(OK([0.0, 0.5]), OK([-np.inf, 0.5])) is not None
    assert compare(OK([np.nan]), OK([0.0])) is not None


def test_shape_must_match_except_scalar_as_single_element():
    assert compare(OK([0.5]), OK(0.5)) is None
    assert compare(OK([[1.0, 2.0]]), OK([1.0, 2.0])).message["en"].startswith("wrong output shape")


def test_bool_outputs_compare_exactly():
    assert compare(OK([True, False]), OK([True, False])) is None
    assert compare(OK([True, True]), OK([True, False])) is not None


def test_errors_where_the_reference_raises_must_be_value_errors():
    want = {"s": "raised", "exc": ["KernelInputError", "ValueError"]}
    assert compare({"s": "raised", "exc": ["ValueError", "Exception"]}, want) is None
    assert compare({"s": "raised", "exc": ["TypeError"], "msg": "TypeError: x"}, want) is not None
    assert compare(OK([1.0]), want).message["en"].startswith("expected a ValueError")
    assert compare({"s": "raised", "exc": ["IndexError"], "msg": "boom"}, OK([1.0])).message["ru"].startswith("ошибка")


# ---------------------------------------------------------------- the vectorised check

_ELEMS = st.one_of(st.sampled_from([0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e3]), st.floats(-10, 10))


@st.composite
def _outcome_pairs(draw):
    """(student, reference) outcomes of one call: near misses, shapes, errors, bools."""
    if draw(st.integers(0, 9)) == 0:
        want = {"s": "raised", "exc": ["KernelInputError", "ValueError"]}
        got = draw(
            st.sampled_from([{"s": "raised", "exc": ["ValueError"]}, {"s": "raised", "exc": ["TypeError"]}, {"s": "ok", "v": np.zeros(1)}])
        )
        return got, want
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    if draw(st.booleans()) and shape:
        w = draw(hnp.arrays(np.bool_, shape))
        g = w ^ draw(hnp.arrays(np.bool_, shape)) if draw(st.booleans()) else w.copy()
        return {"s": "ok", "v": g}, {"s": "ok", "v": w, "scale": 1.0}
    w = draw(hnp.arrays(np.float64, shape, elements=_ELEMS))
    noise = draw(st.sampled_from([0.0, 1e-7, 1e-4, 1.0]))
    g = (w + noise).astype(draw(st.sampled_from([np.float64, np.float32])))
    if draw(st.integers(0, 5)) == 0:
        g = g.reshape(-1) if g.ndim != 1 else g[None]
    status = draw(st.sampled_from(["ok"] * 8 + ["raised", "timeout"]))
    got = {"s": status, "v": g} if status == "ok" else {"s": status, "exc": ["IndexError"]}
    return got, {"s": "ok", "v": w, "scale": draw(st.sampled_from([None, 1.0, 50.0]))}


@settings(max_examples=150, deadline=None)
@given(st.lists(_outcome_pairs(), min_size=1, max_size=12))
def test_the_vectorised_check_agrees_with_compare_call_by_call(pairs):
    outcomes = [g for g, _ in pairs]
    expected = [{k: v for k, v in w.items() if v is not None} for _, w in pairs]
    passed = passing_calls(flatten_expected(expected, range(len(pairs))), outcomes)
    assert passed == {i for i, (g, w) in enumerate(zip(outcomes, expected)) if compare(g, w) is None}


# ---------------------------------------------------------------- same_values: same_outcome of many pairs at once
NASTY = st.sampled_from([0.0, -0.0, 1.0, 1e-300, 1e300, np.nan, np.inf, -np.inf, 3.5, -2.25])
DTYPES = st.sampled_from([np.float64, np.float32, np.int64, np.bool_])


@st.composite
def arrays(draw, shape=None):
    dtype = draw(DTYPES)
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)) if shape is None else shape
    if dtype == np.bool_:
        return draw(hnp.arrays(dtype, shape))
    if dtype == np.int64:
        return draw(hnp.arrays(dtype, shape, elements=st.integers(-5, 5)))
    return draw(hnp.arrays(dtype, shape, elements=st.one_of(NASTY, st.floats(-10, 10, width=32))))


@st.composite
def pairs(draw):
    want = draw(arrays())
    kind = draw(st.sampled_from(["near", "same_shape", "any"]))
    if kind == "near" and want.dtype.kind == "f":
        noise = draw(hnp.arrays(np.float64, want.shape, elements=st.sampled_from([0.0, 1e-9, 1e-6, 1e-4, -1e-5])))
        with np.errstate(all="ignore"):
            got = (want.astype(np.float64) * (1 + noise) + noise).astype(draw(st.sampled_from([np.float64, np.float32])))
    elif kind == "same_shape":
        got = draw(arrays(shape=want.shape))
    else:
        got = draw(arrays())
    scale = draw(st.one_of(st.none(), st.sampled_from([1.0, 2.5, 1e6])))
    return got, want, scale


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # Hypothesis fitting 1e300 into float32
@settings(max_examples=300, deadline=None)
@given(st.lists(pairs(), max_size=6))
def test_same_values_is_same_outcome_pair_by_pair(cases):
    with np.errstate(all="ignore"):
        one_by_one = [same_outcome({"s": "ok", "v": g}, {"s": "ok", "v": w}, s) for g, w, s in cases]
    assert same_values(cases).tolist() == one_by_one


def test_the_edges_agree_with_same_outcome():
    cases = [
        (np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), None),  # NaN where the mistake has NaN: a match
        (np.array([np.nan]), np.array(np.nan), None),  # ... but not across shapes
        (np.array([1, 0]), np.array([np.nan, 0.0]), None),  # ... nor from integers
        (np.array([np.inf]), np.array([np.inf]), None),
        (np.array([1e308]), np.array([np.inf]), 1.0),  # an infinity is matched exactly
        (np.array([1.0]), np.array(True), None),  # a one-value got against a scalar want
        (np.array([1.0, 0.0]), np.array([True, False]), None),
        (np.zeros((2, 0)), np.zeros((0, 2)), None),
        (np.array(1.00001), np.array(1.0), None),
        (np.array(1.0001), np.array(1.0), None),
    ]
    expected = [same_outcome({"s": "ok", "v": g}, {"s": "ok", "v": w}, s) for g, w, s in cases]
    assert same_values(cases).tolist() == expected
    assert expected[:4] == [True, False, False, True] and expected[4] is False and expected[-2:] == [True, False]
