"""The lab's tasks (`m5 lab --jobs N`): grouped by shared cache, and in worker processes giving the one-process results."""

from __future__ import annotations

import functools
import json
import math
import pickle

import numpy as np
import pytest

from reference_impl import online_dqn
from reference_impl.lab import cli as lab_cli
from reference_impl.lab import runners as lab_runners
from reference_impl.lab.profiles import SECTIONS
from reference_impl.lab.tasks import SHARED_CACHE, task_groups
from tests.reference_impl.lab.test_cli import TINY_DQN, use_tiny


def shrink_online_dqn() -> None:
    """Worker set-up: online DQN trained with TINY_DQN, as ``use_tiny`` patches it in this
    process (a spawned worker starts from the unpatched modules)."""
    tiny_dqn = functools.partial(online_dqn.train_online_dqn, config=TINY_DQN)
    lab_runners.train_online_dqn = tiny_dqn
    online_dqn.train_online_dqn = tiny_dqn


def same(a, b) -> bool:
    """Exact recursive equality of results: dicts, sequences, arrays (dtype too; NaN equals
    NaN), numbers, random generators (their state) and plain objects (their attributes)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, np.random.Generator):
        return same(a.bit_generator.state, b.bit_generator.state)
    if hasattr(a, "__dict__"):
        return same(vars(a), vars(b))
    return bool(a == b)


def test_same_sees_any_difference_in_nested_results():
    results = {"dqn": [{"seed": 5, "curve": np.array([0.5, np.nan]), "names": ["bc", "cql"], "rng": np.random.default_rng(1)}]}
    assert same(results, pickle.loads(pickle.dumps(results)))
    for path, value in [
        (("seed",), 6),
        (("seed",), 5.0),
        (("curve",), np.array([0.5, 1.0])),
        (("curve",), np.array([0.5, np.nan], dtype=np.float32)),
        (("names",), ["bc"]),
        (("rng",), np.random.default_rng(2)),
    ]:
        changed = pickle.loads(pickle.dumps(results))
        changed["dqn"][0][path[0]] = value
        assert not same(results, changed), path


@pytest.mark.parametrize("sections", [SECTIONS, ("offline", "fqe", "dt"), ("dagger",)])
def test_task_groups_hold_every_task_once_and_keep_shared_sections_together(sections):
    offsets = [3, 4, 5]
    groups = task_groups(sections, offsets)
    tasks = [(s, g.offset) for g in groups for s in g.sections]
    expected = [(s, k) for s in sections for k in (offsets[:1] if s == "environment" else offsets)]
    assert sorted(tasks) == sorted(expected)
    for group in groups:  # a cache is shared within a group only, and only by the same offset's sections
        assert len(group.sections) == 1 or set(group.sections) <= set(SHARED_CACHE)
        assert list(group.sections) == [s for s in sections if s in group.sections]  # lab order
        assert group.need_fqe == ("fqe" in sections)
    if "dt" in sections:  # the longest first
        assert [g.sections for g in groups[: len(offsets)]] == [("dt",)] * len(offsets)


def test_two_workers_give_exactly_the_one_process_results(monkeypatch, tmp_path):
    monkeypatch.setenv("M5_PROGRESS", "0")
    use_tiny(monkeypatch)
    saved, claims = {}, {}
    for jobs in (1, 2):  # the same --out: claims.json names it in its command
        options = lab_cli.parse_options(["--profile", "smoke", "--seeds", "2", "--jobs", str(jobs), "--out", str(tmp_path)], {})
        run = lab_cli.run_lab(options, worker_setup=shrink_online_dqn)
        saved[jobs] = pickle.loads((tmp_path / lab_cli.RESULTS_FILE).read_bytes())
        claims[jobs] = json.loads((tmp_path / lab_cli.CLAIMS_FILE).read_text(encoding="utf-8"))
        assert [r["seed"] for r in run["results"]["dqn"]] == [5, 6]  # in offset order
    assert same(saved[1]["results"], saved[2]["results"])
    assert saved[1]["options"] == saved[2]["options"] and saved[1]["seconds"].keys() == saved[2]["seconds"].keys()
    assert all(seconds > 0 for seconds in saved[2]["seconds"].values())
    for document in claims.values():
        del document["wall_seconds"]
    assert claims[1] == claims[2]
    assert claims[1]["claims"]  # something was compared


def test_jobs_must_be_a_positive_integer(capsys, tmp_path):
    for bad in ("0", "x", "-2"):
        assert lab_cli.main(["--jobs", bad, "--out", str(tmp_path / "never")]) == 2
        err = capsys.readouterr().err
        assert "--jobs" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "never").exists()
