"""The digest of a kernel's outputs on the hidden inputs (``autograder/grade/output_digest.py``,
``judge.outputs_digest``): the same for the same outputs whatever float noise lies below the
rounding and however often it is computed, different for different logic, and none for a
kernel that was not run to the end."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.grade import judge, output_digest
from autograder.grade.corpus_cache import load_corpus
from autograder.grade.output_digest import DIGITS, digest, rounded
from autograder.hidden.mistakes import CATALOG

FINITE = st.floats(min_value=-1e15, max_value=1e15, allow_nan=False, allow_infinity=False)  # int64 and float32 hold them


def _ok(*values) -> list[dict]:
    return [{"s": "ok", "v": np.asarray(v, dtype=np.float64), "mut": False} for v in values]


# ------------------------------------------------------------------ the digest alone
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(10 ** (DIGITS - 1) + 1, 10**DIGITS - 1), st.integers(-11, 300), st.booleans()), min_size=1, max_size=30),
    st.lists(st.floats(-0.35, 0.55), min_size=30, max_size=30),
    st.lists(st.floats(-1e-9, 1e-9), min_size=30, max_size=30),
)
def test_noise_below_the_rounding_step_never_changes_the_digest(grid, offsets, noise):
    """A value a step holds (digits q: from q - 0.382 to q + 0.618 once scaled) with a margin
    stays in it under relative noise of 1e-9 (equivalent float64 formulas differ by about
    1e-15): the same digits, the same digest."""
    exact = np.array([((-q if negative else q) + off) * 10.0 ** (e - DIGITS + 1) for (q, e, negative), off in zip(grid, offsets)])
    noisy = exact * (1 + np.asarray(noise[: len(exact)]))
    assert np.array_equal(rounded(exact), rounded(noisy))
    assert np.array_equal(rounded(exact)[:, 0], [(-1 if negative else 1) * q for q, _, negative in grid])
    assert digest("k", _ok(exact), []) == digest("k", _ok(noisy), [])


@settings(max_examples=200, deadline=None)
@given(st.lists(FINITE, min_size=0, max_size=40), st.sampled_from([np.float64, np.float32, np.int64]))
def test_the_digest_is_the_same_on_every_run_and_for_every_way_the_array_arrives(values, dtype):
    array = np.asarray(values, dtype=np.float64)
    if dtype is not np.float64:  # values the narrower type holds exactly: the same outputs
        array = array.astype(dtype).astype(np.float64)
    once = digest("k", _ok(array), [])
    read_only = array.astype(dtype)
    read_only.flags.writeable = False
    assert digest("k", [{"s": "ok", "v": read_only, "mut": True}], []) == once  # the write flag is no output
    assert digest("k", _ok(array.copy()), []) == once == digest("k", _ok(array), [])
    assert len(once) == output_digest.DIGEST_CHARS and output_digest.well_formed({"k": once})


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(-1000, 1000), min_size=2, max_size=6, unique=True), min_size=1, max_size=8))
def test_max_written_min_gives_another_digest(rows):
    maxima = [float(max(r)) for r in rows]
    minima = [float(min(r)) for r in rows]
    assert digest("dqn_targets", _ok(maxima), []) != digest("dqn_targets", _ok(minima), [])


def test_noise_around_zero_is_zero_and_the_non_finite_values_are_kept_apart():
    assert digest("k", _ok([0.0, 1.0]), []) == digest("k", _ok([1e-17, 1.0]), []) == digest("k", _ok([-0.0, 1.0]), [])
    kinds = {digest("k", _ok([v]), []) for v in (np.nan, np.inf, -np.inf, 0.0, 1.0)}
    assert len(kinds) == 5
    assert digest("k", _ok([1.0, 2.0]), []) != digest("k", _ok([[1.0, 2.0]]), [])  # the shape is an output too


def test_an_error_counts_by_its_type_and_an_agreeing_call_by_its_agreement():
    raised = lambda name, msg: [{"s": "raised", "exc": [name, "Exception"], "msg": msg}]  # noqa: E731
    assert digest("k", raised("TypeError", "at 0x7f01"), []) == digest("k", raised("TypeError", "at 0x7f99"), [])
    assert digest("k", raised("TypeError", ""), []) != digest("k", raised("KeyError", ""), [])
    # a call that agrees with the reference is one token, whatever the student's float noise
    assert digest("k", _ok([1.0, 2.0]), [0]) == digest("k", _ok([1.0000001, 2.0]), [0]) != digest("k", _ok([1.0, 2.0]), [])
    assert digest("k", _ok([1.0]), []) != digest("other", _ok([1.0]), [])


@pytest.mark.parametrize("status", ["timeout", "idle", "unsent"])
def test_a_call_that_did_not_run_to_the_end_leaves_no_digest(status):
    assert digest("k", [*_ok([1.0]), {"s": status}], []) is None


@pytest.mark.parametrize(
    "value, ok",
    [
        ({}, True),
        ({"dqn_targets": "0123456789abcdef", "fqe_targets": None}, True),
        ({"dqn_targets": "0123456789ABCDEF"}, False),
        ({"dqn_targets": "0123456789abcde"}, False),
        ({"dqn_targets": 12}, False),
        ({"": None}, False),
        (["dqn_targets"], False),
        (None, False),
    ],
)
def test_a_records_outputs_are_kernel_names_to_digests_or_null(value, ok):
    assert output_digest.well_formed(value) is ok


# ------------------------------------------------------------------ on the real corpus
def _noisy(outcomes: list[dict], seed: int, relative: float) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for o in outcomes:
        v = o.get("v")
        if o.get("s") == "ok" and np.asarray(v).dtype.kind == "f":
            v = np.asarray(v, dtype=np.float64)
            with np.errstate(invalid="ignore"):  # inf * (1 + e) is inf, NaN stays NaN
                v = v * (1 + relative * rng.standard_normal(v.shape))
            o = {**o, "v": v}
        out.append(o)
    return out


def _verdict_kept(kc, exact: list[dict], noisy: list[dict]) -> list[dict]:
    """``noisy``, but the exact outcome back wherever the noise changed whether a call agrees
    with the reference (a value on the grading tolerance's edge: the grade would change too)."""
    flipped = judge.reference_agreement(kc, exact) ^ judge.reference_agreement(kc, noisy)
    assert len(flipped) <= len(exact) // 100
    return [exact[i] if i in flipped else o for i, o in enumerate(noisy)]


def test_every_correct_kernel_has_one_digest_and_every_catalog_mistake_another(corpus):
    """The reference's own outcomes, and the same with float noise, digest as one; each named
    likely mistake (outcomes computed here, as the worker would report them) digests otherwise,
    with or without noise far below the rounding that leaves every call's verdict as it was."""
    for kernel, kc in corpus.items():
        exact = [{k: v for k, v in o.items() if k != "scale"} for o in kc.expected]
        correct = judge.outputs_digest(kc, exact)
        assert correct is not None and judge.outputs_digest(kc, _noisy(exact, 1, 1e-9)) == correct, kernel
        for mistake in CATALOG[kernel]:
            wrong = [mistake.outcome(call) for call in kc.calls]
            found = judge.outputs_digest(kc, wrong)
            assert found != correct, mistake.name
            assert judge.outputs_digest(kc, _verdict_kept(kc, wrong, _noisy(wrong, 2, 1e-14))) == found, mistake.name


def test_the_corpus_as_the_cache_returns_it_gives_the_same_digests(corpus):
    """The corpus read back from its disk cache again (new objects, their properties
    re-attached) digests every kernel's outcomes as the one the session holds."""
    reread = load_corpus()
    for kernel, kc in corpus.items():
        assert reread[kernel] is not kc
        for mistake in CATALOG[kernel][:2]:
            wrong = [mistake.outcome(call) for call in kc.calls]
            assert judge.outputs_digest(reread[kernel], wrong) == judge.outputs_digest(kc, wrong), mistake.name
