"""Mutation adequacy of the hidden suite: every realistic wrong kernel loses points.

Each mutant of ``mutants/mutants.py`` is appended to the correct base submission and
graded on its own kernel only (fast, ``shrink=False``); it must score below 10. A
few mutants are graded in full to show that the other nine kernels keep 10/10, i.e.
one wrong kernel costs only its own points.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from mutants import mutants as mutants_mod  # tests/autograder is on sys.path (pytest rootdir-relative import)

import reference_impl
from autograder.grade.pipeline import grade_submission  # `corpus`: the session fixture in conftest.py

MUTANTS = mutants_mod.MUTANTS
BY_NAME = {m.name: m for m in MUTANTS}
# One fully graded mutant per kind of damage: a wrong formula, a wrong dtype, a crash on
# float flags, a NaN on -inf padding, a missing input check.
FULLY_GRADED = [
    "dqn_targets-bitwise_not_flags",
    "masked_token_nll-multiplies_by_mask",
    "return_to_go-int_output",
    "pessimistic_values-zero_for_unseen",
    "fqe_targets-no_policy_checks",
]


def _grade(mutant, tmp_path: Path, corpus, spare, kernels=None):
    path = tmp_path / f"{mutant.name}.py"
    path.write_text(mutants_mod.compose(mutant), encoding="utf-8")
    return grade_submission(path, corpus, shrink=False, kernels=kernels, spare=spare)


def test_corpus_is_large_and_covers_every_kernel():
    per_kernel = Counter(m.kernel for m in MUTANTS)
    assert len(MUTANTS) >= 60
    assert set(per_kernel) == set(reference_impl.KERNEL_NAMES)
    assert min(per_kernel.values()) >= 5, per_kernel
    assert len(BY_NAME) == len(MUTANTS), "mutant ids must be unique per kernel"
    assert set(FULLY_GRADED) <= set(BY_NAME)
    assert set(mutants_mod.MISCONCEPTION) == set(BY_NAME), "every mutant names its misconception (or None)"


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_mutant_is_a_complete_redefinition(mutant):
    """The source compiles and defines exactly its own kernel (so the base's other kernels stay)."""
    namespace: dict = {}
    exec(compile(mutants_mod.BASE_SUBMISSION.read_text() + "\n" + mutant.source, mutant.name, "exec"), namespace)
    defined = [line.split("(")[0][4:] for line in mutant.source.splitlines() if line.startswith("def ")]
    assert defined == [mutant.kernel]
    assert callable(namespace[mutant.kernel])


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_mutant_loses_points_on_its_kernel(mutant, corpus, tmp_path, recycled):
    result = _grade(mutant, tmp_path, corpus, recycled, kernels=[mutant.kernel])
    assert result.notes == []  # the submission loads: points are lost to the bug alone
    got, total = result.by_group()[mutant.kernel]
    assert total == 10
    assert got < 10, f"mutant survived ({mutant.description}): the hidden suite has a gap"
    named = {t.failure.likely_mistake["id"] for t in result.tests if t.failure and t.failure.likely_mistake}
    expected = mutants_mod.MISCONCEPTION[mutant.name]
    assert named == ({expected} if expected else set()), f"feedback names {named}, the mutant embodies {expected}"


@pytest.mark.parametrize("name", FULLY_GRADED)
def test_mutant_costs_only_its_own_kernel(name, corpus, tmp_path, recycled):
    mutant = BY_NAME[name]
    scores = _grade(mutant, tmp_path, corpus, recycled).by_group()
    assert scores[mutant.kernel][0] < 10
    others = {k: v for k, v in scores.items() if k != mutant.kernel}
    assert others == {k: (10.0, 10.0) for k in reference_impl.KERNEL_NAMES if k != mutant.kernel}


def test_grading_only_some_kernels_leaves_the_rest_out(corpus, tmp_path, recycled):
    mutant = BY_NAME["expectile_loss-swapped_tau"]
    result = _grade(mutant, tmp_path, corpus, recycled, kernels=["expectile_loss", "return_to_go"])
    assert set(result.by_group()) == {"expectile_loss", "return_to_go"}
    assert result.by_group()["return_to_go"] == (10.0, 10.0)
    with pytest.raises(ValueError, match="kernels"):
        grade_submission(tmp_path / f"{mutant.name}.py", corpus, shrink=False, kernels=["no_such_kernel"])
