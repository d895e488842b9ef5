"""Judging one outcome against the reference: tolerances, shapes, errors."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder.grade.properties import compare, scale_of, values_close


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

from autograder.grade.properties import flatten_expected, passing_calls  # noqa: E402

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
