"""CQL alpha sweep (reference_impl.cql_sweep): the measures on hand-built cases, the seeds rule, the committed report."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

from reference_impl import cql_sweep as cs
from reference_impl.keydoor import KeyDoorGrid
from reference_impl.offline import logged_pair_share, q_value_errors
from reference_impl.offline_data import collect_offline_dataset, to_arrays
from reference_impl.offline_methods import OfflineLog, train_offline_dqn
from reference_impl.stats import paired_difference, verdict

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "lab-results"


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads((RESULTS / "cql_alpha.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def tiny() -> cs.SweepSettings:
    """Smaller than --quick so the suite stays fast: 10 episodes, 1 epoch."""
    return dataclasses.replace(cs.quick_settings(), dataset_episodes=10, train_epochs=1, bootstrap_resamples=200)


# --------------------------------------------------------------------------- measures on hand-built cases
def test_logged_mask_and_error_split_on_a_hand_built_table():
    states, actions = np.array([9, 5, 5, 7, 9, 9]), np.array([2, 0, 1, 2, 2, 3])
    distinct, first, mask = cs.logged_mask(states, actions, 4)
    assert distinct.tolist() == [5, 7, 9] and first.tolist() == [1, 3, 0]
    assert mask.tolist() == [[True, True, False, False], [False, False, True, False], [False, False, True, True]]
    q_true = np.arange(12, dtype=float).reshape(3, 4)
    q_learned = q_true + np.where(mask, 2.0, -1.0)  # +2 on each of the 5 logged pairs, -1 on the 7 unlogged ones
    assert cs.q_error_split(q_learned, q_true, mask) == pytest.approx((2.0, -1.0))
    on, off = cs.q_error_split(q_true, q_true, np.ones((3, 4), bool))
    assert on == 0.0 and np.isnan(off)


def test_shares_and_gap_on_a_hand_built_case():
    mask = np.array([[True, True, False, False], [False, False, True, False], [False, False, True, True]])
    greedy = np.array([3, 2, 2])  # unlogged at the first state, logged at the other two
    assert cs.logged_greedy_share(greedy, mask) == pytest.approx(2 / 3)
    assert cs.agreement_share(greedy, np.array([3, 0, 2])) == pytest.approx(2 / 3)
    counts = np.array([[1, 1, 0, 0], [0, 0, 4, 0], [0, 0, 2, 1]])
    # the gap term 1 / pi_beta(pi(s)|s) - 1 is zero only at the second state (the log holds only action 2 there)
    assert cs.gap_zero_share(greedy, counts) == pytest.approx(1 / 3)
    q_rows, true_rows = np.array([[5.0, 1.0], [0.0, 3.0]]), np.array([[4.0, 0.0], [0.0, 0.5]])
    assert cs.greedy_gap(q_rows, true_rows, np.array([0, 1])) == pytest.approx((1.0 + 2.5) / 2)


def test_start_outcomes_is_exact_for_an_always_up_policy():
    env = KeyDoorGrid()
    up = np.zeros(env.tabular_model()["observations"].shape[0], dtype=np.int64)
    # (2,0), (6,0) walk to row 0 and time out (-0.50); (6,4) stops under a wall (-0.50);
    # (3,4) enters the trap (1,4) on step 2 (-0.01 - 1); (6,6) enters the trap (2,6) on step 4 (-0.03 - 1).
    expected = {(2, 0): -0.5, (6, 0): -0.5, (6, 4): -0.5, (3, 4): -1.01, (6, 6): -1.03}
    ret, success = cs.start_outcomes(env, up)
    assert ret == pytest.approx(np.mean([expected[s] for s in env.start_positions]))
    assert success == 0.0
    with pytest.raises(ValueError, match="deterministic"):
        cs.start_outcomes(KeyDoorGrid(slip_probability=0.1), up)


def test_bootstrap_interval_stays_in_the_unit_interval_and_is_deterministic():
    values = [0.0, 0.2, 1.0, 0.8, 0.4]
    first = cs.bootstrap_mean_interval(values, 500, seed=3)
    assert first == cs.bootstrap_mean_interval(values, 500, seed=3)
    mean, low, high = first
    assert 0.0 <= low <= mean <= high <= 1.0 and mean == pytest.approx(0.48)
    assert cs.bootstrap_mean_interval([0.0, 0.0, 0.0], 100, seed=1) == (0.0, 0.0, 0.0)


def test_grid_rule():
    alphas = [0.0, 0.1, 1.0, 10.0, 100.0]
    assert cs.choose_report_alphas(alphas, [0.2, 0.5, 0.95, 0.99, 1.0], 0.9, 10.0) == [0.0, 0.1, 1.0, 10.0]
    assert cs.choose_report_alphas(alphas, [0.2, 0.5, 0.6, 0.7, 0.95], 0.9, 10.0) == alphas
    assert cs.choose_report_alphas(alphas, [0.2, 0.5, 0.6, 0.7, 0.8], 0.9, 10.0) == alphas


def test_sweep_measures_what_the_lab_measures(tiny):
    """On one tiny run, the sweep's Q errors and logged share equal the lab's own functions (reference_impl.offline)."""
    env = KeyDoorGrid()
    arrays = to_arrays(collect_offline_dataset(7, 10, "mediocre", env=env)[1])
    run = train_offline_dqn(OfflineLog.from_arrays(arrays), env.action_dim, epochs=1, seed=700)
    lab = q_value_errors(env, run.networks["q"], run.policy, arrays["observations"], arrays["actions"], 0.99)
    _, info = cs.load_log(env, 7, dataclasses.replace(tiny, dataset_episodes=10))
    ours = cs.measure_policy(env, env.tabular_model(), info, run.policy, run.networks["q"], None, 0.99)
    assert ours["logged_error"] == pytest.approx(lab["logged_error"], abs=1e-5)
    assert ours["unlogged_error"] == pytest.approx(lab["unlogged_error"], abs=1e-5)
    assert ours["logged_share"] == logged_pair_share(env, run.policy, arrays["observations"], arrays["actions"])


# --------------------------------------------------------------------------- the sweep and its seeds
def test_quick_sweep_runs_and_is_deterministic(tiny, tmp_path):
    first = cs.dump_json(cs.run_sweep(tiny, show_progress=False))
    assert first == cs.dump_json(cs.run_sweep(tiny, show_progress=False))
    data = json.loads(first)
    assert data["report"]["alphas"] == [0.0, 1.0] and len(data["report"]["per_seed"]["cql"]["1"]["return"]) == 2
    for out in (tmp_path / "a", tmp_path / "b"):
        cs.write_outputs(data, out)
    for name in ("cql_alpha.json", "cql_alpha.md", "cql_alpha.ru.md", "cql_alpha.png", "cql_alpha.ru.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert (tmp_path / "a" / "cql_alpha.json").read_text(encoding="utf-8") == first


def test_design_and_report_seeds_are_disjoint(committed):
    # The lab's report runs the same fresh block as this sweep's report: both are report seeds,
    # and neither may be a design seed of the sweep.
    assert set(cs.LAB_OFFSETS) == set(cs.REPORT_OFFSETS) and not set(cs.LAB_OFFSETS) & set(cs.DESIGN_OFFSETS)
    blocks = [set(cs.DESIGN_OFFSETS), set(cs.REPORT_OFFSETS)]
    quick = cs.quick_settings()
    blocks.append(set(quick.design_offsets) | set(quick.report_offsets))
    for i, a in enumerate(blocks):
        for b in blocks[i + 1 :]:
            assert not a & b
    seeds = committed["seeds"]
    assert not set(seeds["design_offsets"]) & set(seeds["report_offsets"])
    assert not set(seeds["design_seeds"]) & set(seeds["report_seeds"])
    lab_claims = json.loads((RESULTS / "claims.json").read_text(encoding="utf-8"))["claims"]["offline.return.cql"]["seed_ids"]
    assert not set(lab_claims) & set(seeds["design_seeds"])
    with pytest.raises(ValueError, match="overlap"):
        cs.SweepSettings(design_offsets=(100,), report_offsets=(100, 101))


# --------------------------------------------------------------------------- the committed report
def test_committed_grid_follows_its_rule(committed):
    design, alphas = committed["design"], committed["report"]["alphas"]
    agreement = [design["mean_by_alpha"][cs.alpha_key(a)]["bc_agreement"] for a in design["alphas"]]
    assert alphas == cs.choose_report_alphas(design["alphas"], agreement, design["agreement_target"], design["min_top_alpha"])
    assert alphas[0] == 0.0 and len(alphas) >= 6
    ratios = np.asarray(alphas[2:]) / np.asarray(alphas[1:-1])
    assert all(np.isclose(r, 3.0) or np.isclose(r, 10 / 3) for r in ratios)  # half-decades: 0.01, 0.03, 0.1, ...


def test_every_verdict_follows_its_interval(committed):
    per_seed, cmp = committed["report"]["per_seed"], committed["comparisons"]
    checked = 0
    for target, ref in (("vs_alpha0", per_seed["cql"]["0"]), ("vs_bc", per_seed["bc"])):
        for key, by_measure in cmp[target].items():
            for m, c in by_measure.items():
                assert c["verdict"] == verdict(c["low"], c["high"])
                again = paired_difference(per_seed["cql"][key][m], ref[m])
                assert (again["low"], again["high"], again["verdict"]) == pytest.approx((c["low"], c["high"], c["verdict"]))
                checked += 1
    assert checked == 4 * len(committed["report"]["alphas"]) - 2


@pytest.mark.parametrize(
    "name, words",
    [
        ("cql_alpha.md", ("ahead", "behind", "no detectable difference")),
        ("cql_alpha.ru.md", ("впереди", "позади", "различие не обнаружено")),
    ],
)
def test_every_verdict_in_the_reports_follows_its_printed_interval(name, words):
    text = (RESULTS / name).read_text(encoding="utf-8")
    found = re.findall(r"\[([+-]?\d+\.\d+), ([+-]?\d+\.\d+)\], (" + "|".join(words) + ")", text)
    assert found
    for low, high, word in found:
        low, high = float(low), float(high)
        assert {words[0]: low >= 0 and high > 0, words[1]: high <= 0 and low < 0, words[2]: low <= 0 <= high}[word], (low, high, word)


def test_share_intervals_respect_the_unit_interval(committed):
    for name, block in committed["summary"].items():
        groups = block.values() if name == "cql" else [block]
        for group in groups:
            for m, s in group.items():
                if m in cs.SHARES or m.endswith("share"):
                    assert s["method"] == "bootstrap percentile", (name, m)
                    assert 0.0 <= s["low"] <= s["mean"] <= s["high"] <= 1.0, (name, m)
                else:
                    assert s["method"] == "one-sample t", (name, m)


def test_committed_markdown_is_what_the_module_writes(committed):
    assert (RESULTS / "cql_alpha.md").read_text(encoding="utf-8") == cs.render_report(committed, "en")
    assert (RESULTS / "cql_alpha.ru.md").read_text(encoding="utf-8") == cs.render_report(committed, "ru")
    assert (RESULTS / "cql_alpha.json").read_text(encoding="utf-8") == cs.dump_json(committed)
