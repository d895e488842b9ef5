"""The course's run as the lab notebook shows it (``reference_impl/course_run.py``): one value
per quantity, the mean over its seeds with the 95 % interval, wherever it appears."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl import course_run
from reference_impl.lab import pins as lab_pins
from reference_impl.lab.labels import LABELS, method_slug
from reference_impl.lab.results import DEFAULT_CLAIMS

FINITE = st.floats(-1e6, 1e6, allow_nan=False)


def test_interval_of_ten_seeds_uses_the_t_quantile():
    values = np.arange(10, dtype=float)
    mean, low, high = course_run.interval(values)
    half = 2.2621571627409915 * values.std(ddof=1) / math.sqrt(10)  # t(0.975, 9)
    assert mean == 4.5 and low == pytest.approx(mean - half, rel=1e-9) and high == pytest.approx(mean + half, rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(st.lists(FINITE, min_size=1, max_size=30), FINITE)
def test_interval_holds_its_mean_and_moves_with_a_shift(values, shift):
    mean, low, high = course_run.interval(values)
    assert low <= mean <= high or math.isclose(low, high, abs_tol=1e-6)
    moved = course_run.interval(np.asarray(values) + shift)
    assert moved[0] == pytest.approx(mean + shift, abs=1e-6 * (1 + abs(shift) + max(map(abs, values))))
    if len(values) == 1:
        assert low == mean == high


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [float("inf")]])
def test_interval_names_bad_values(bad):
    with pytest.raises(ValueError, match="`values` must be finite and non-empty"):
        course_run.interval(bad)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 8).flatmap(lambda n: st.lists(st.lists(FINITE, min_size=3, max_size=3), min_size=n, max_size=n)))
def test_bands_are_the_interval_of_each_column(rows):
    runs = np.asarray(rows)
    mean, half = course_run.bands(runs)
    for j in range(runs.shape[1]):
        m, low, high = course_run.interval(runs[:, j])
        assert mean[j] == pytest.approx(m, rel=1e-9, abs=1e-9) and half[j] == pytest.approx((high - low) / 2, rel=1e-6, abs=1e-6)


def test_bands_leave_out_missing_values_column_by_column():
    runs = np.array([[1.0, np.nan, np.nan], [3.0, 2.0, np.nan], [5.0, 4.0, np.nan]])
    mean, half = course_run.bands(runs)
    assert mean[0] == 3.0 and mean[1] == 3.0 and np.isnan(mean[2])
    assert half[1] == pytest.approx((course_run.interval([2.0, 4.0])[2] - 3.0))
    assert np.isnan(half[2])


def test_compare_table_prints_both_runs_with_dashes_for_missing_values():
    table = course_run.compare_table(
        LABELS["ru"], [("раунд 0", 0.5, [0.4, 0.6, 0.5]), ("раунд 3", None, [1.0, 1.0]), ("x", 0.1, None), ("y", 1.0, "0.72 [0.55, 0.90]")]
    )
    lines = table.splitlines()
    assert LABELS["ru"]["nb.your_run"] in lines[0] and LABELS["ru"]["nb.course_run"] in lines[0]
    assert [cell.strip() for cell in lines[1].split("|")] == ["раунд 0", "0.50", course_run.format_interval([0.4, 0.6, 0.5])]
    assert lines[2].split("|")[1].strip() == "—" and lines[2].split("|")[2].strip() == "1.00"  # identical seeds: no interval
    assert lines[3].split("|")[2].strip() == "—" and lines[4].split("|")[2].strip() == "0.72 [0.55, 0.90]"


def test_course_table_names_an_unknown_number():
    course = lab_pins.load_pinned("M5_course_numbers")
    with pytest.raises(KeyError, match="no course number"):
        course_run.course_table(course, ["dagger.no_such_claim"], "en")
    lines = course_run.course_table(course, ["dagger.bc_success", "dagger.equal_budget"], "ru").splitlines()
    assert lines[0].endswith(course["rows"]["dagger.bc_success"]["text"]["ru"]) and "впереди" in lines[1]


# ------------------------------------------------------------------ one value per quantity
def committed():
    return json.loads(DEFAULT_CLAIMS.read_text(encoding="utf-8"))


def test_the_kit_ships_the_reports_numbers_as_the_notebook_prints_them():
    course = lab_pins.load_pinned("M5_course_numbers")
    document = committed()
    assert course == lab_pins.course_numbers(document)
    for cid, entry in document["claims"].items():
        shown = course_run.format_interval(entry["per_seed"], bounds=course_run.claim_bounds(cid))
        assert course["rows"][cid]["value"]["en"] == shown, cid
        assert "per_seed" not in course["rows"][cid]  # the kit ships what is shown (a seed's value could be a graded answer)


def seed_columns() -> list[tuple[str, np.ndarray]]:
    """(claim id, the same quantity's per-seed values in M5_lab_seeds.npz), for every quantity the
    notebook's tables and figures draw from the stacked seeds."""
    seeds = lab_pins.load_pinned("M5_lab_seeds")
    offline = [method_slug(str(n)) for n in lab_pins.load_pinned("M5_offline_method_results")["method_names"]]
    fqe = [method_slug(str(n)) for n in lab_pins.load_pinned("M5_offline_method_results")["fqe_names"]]
    language = [method_slug(str(n)) for n in lab_pins.load_pinned("M5_language_ilql_results")["method_names"]]
    requests = lab_pins.load_pinned("M5_decision_transformer_results")["target_return"]
    out = [("dagger.bc_success", seeds["dagger_success_rate"][:, 0]), ("dagger.dagger_success", seeds["dagger_success_rate"][:, -1])]
    out += [(f"offline.return.{m}", seeds["offline_mean_return"][:, i]) for i, m in enumerate(offline)]
    out += [(f"offline.success.{m}", seeds["offline_success_rate"][:, i]) for i, m in enumerate(offline)]
    errors = np.abs(seeds["fqe_fqe_values"] - seeds["fqe_simulated_values"])
    out += [(f"fqe.abs_error.{m}", errors[:, i]) for i, m in enumerate(fqe)]
    out += [(f"language.exact_match.{m}", seeds["language_exact_match"][:, i]) for i, m in enumerate(language)]
    out += [(f"language.heldout_exact_match.{m}", seeds["language_heldout_exact_match"][:, i]) for i, m in enumerate(language)]
    out += [(f"dt.achieved.{r:.2f}", seeds["dt_mean_return"][:, i]) for i, r in enumerate(requests)]
    return out


def test_a_quantity_has_one_value_in_the_tables_figures_and_answers():
    """The figures and the your-run tables read M5_lab_seeds.npz; the course-number tables and the
    worked answers read the report's claims: every quantity both show is the same per seed, so the
    same mean and interval."""
    from autograder.assign.claims import fill_claims

    claims = committed()["claims"]
    checked = 0
    for cid, values in seed_columns():
        if cid not in claims:
            continue
        assert np.allclose(values, claims[cid]["per_seed"], rtol=0, atol=1e-12), cid
        quoted = fill_claims(f"{{{{claim:{cid}:mean_ci:.2f}}}}", claims=claims)
        shown = course_run.format_interval(values, bounds=course_run.claim_bounds(cid))  # a share's interval stops at 0 and 1
        assert quoted == shown == lab_pins.load_pinned("M5_course_numbers")["rows"][cid]["value"]["en"], cid
        checked += 1
    assert checked >= 25
