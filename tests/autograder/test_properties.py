"""Judging one outcome against the reference: tolerances, shapes, errors."""
import numpy as np

from autograder.grade.properties import compare, scale_of, values_close

OK = lambda v, scale=None: {"s": "ok", "v": np.asarray(v), **({"scale": scale} if scale else {})}


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
