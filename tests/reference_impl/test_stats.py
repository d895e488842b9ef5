"""Intervals over seeds and the words they allow (reference_impl.stats)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.stats import VERDICTS, paired_difference, student_t_cdf, student_t_quantile, verdict

# Two-sided 95 % critical values t_{0.975, df} from published tables.
TABLE = {1: 12.7062, 2: 4.3027, 4: 2.7764, 9: 2.2622, 19: 2.0930, 29: 2.0452, 120: 1.9799}


@pytest.mark.parametrize("df,value", sorted(TABLE.items()))
def test_the_t_quantile_matches_the_published_table(df, value):
    assert student_t_quantile(0.975, df) == pytest.approx(value, abs=5e-4)


def test_the_t_cdf_is_symmetric_and_tends_to_the_normal():
    assert student_t_cdf(0.0, 5) == pytest.approx(0.5)
    assert student_t_cdf(-1.3, 7) == pytest.approx(1 - student_t_cdf(1.3, 7))
    normal = 0.5 * (1 + math.erf(1.96 / math.sqrt(2)))
    assert student_t_cdf(1.96, 10_000) == pytest.approx(normal, abs=1e-4)


finite = st.floats(-5, 5, allow_nan=False, width=32)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(finite, finite), min_size=2, max_size=15))
def test_the_interval_holds_the_effect_and_swapping_the_methods_mirrors_it(pairs):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    forward, backward = paired_difference(a, b), paired_difference(b, a)
    assert forward["low"] <= forward["effect"] <= forward["high"]
    assert forward["effect"] == pytest.approx(-backward["effect"], abs=1e-9)
    assert forward["low"] == pytest.approx(-backward["high"], abs=1e-9)
    mirrored = {"ahead": "behind", "behind": "ahead", "no detectable difference": "no detectable difference"}
    if min(abs(forward["low"]), abs(forward["high"])) > 1e-9:  # away from the boundary rounding can flip
        assert backward["verdict"] == mirrored[forward["verdict"]]
    assert forward["n_seeds"] == len(pairs) and forward["paired"]


def test_the_words_follow_the_interval_not_the_count_of_seeds():
    # Ahead on 4 of 5 seeds, but by noise: the interval contains zero.
    noisy = paired_difference([0.12, -0.003, 0.003, 0.033, 0.017], [0, 0, 0, 0, 0])
    assert noisy["verdict"] == "no detectable difference" and noisy["low"] < 0 < noisy["high"]
    clear = paired_difference([0.7, 0.6, 0.8, 0.75, 0.65], [0.1, -0.2, 0.0, 0.2, -0.1])
    assert clear["verdict"] == "ahead" and clear["low"] > 0
    assert paired_difference([0.79] * 5, [0.79] * 5)["verdict"] == "no detectable difference"  # a tie


def test_a_wider_confidence_gives_a_wider_interval():
    a, b = np.linspace(0, 1, 8), np.linspace(0, 1, 8)[::-1] * 0.5
    narrow, wide = paired_difference(a, b, 0.8), paired_difference(a, b, 0.99)
    assert wide["low"] < narrow["low"] and wide["high"] > narrow["high"]


@pytest.mark.parametrize("a,b,match", [
    ([1.0], [0.0], "at least 2"),
    ([1.0, 2.0], [0.0], "equal length"),
    ([1.0, float("nan")], [0.0, 0.0], "finite"),
    ([[1.0, 2.0]], [[0.0, 0.0]], "1-D"),
])
def test_bad_input_is_named(a, b, match):
    with pytest.raises(ValueError, match=match):
        paired_difference(a, b)


def test_verdict_rejects_an_inverted_interval_and_knows_only_its_words():
    with pytest.raises(ValueError, match="low <= high"):
        verdict(1.0, 0.0)
    assert {verdict(0.1, 0.2), verdict(-0.2, -0.1), verdict(-0.1, 0.1)} == set(VERDICTS)
