"""The catalog of known mistakes: named misconceptions per kernel (never released).

Each entry (:class:`Mistake`, ``core.py``) is a wrong kernel written on the grader's
side, with an explanation in English and Russian: the entries are data (``catalog.toml``:
kernel, key, explanation, shared explanations named once), their wrong formulas one dict
(``formulas.py``). The feedback names the mistake that best explains a student's failing calls
(:func:`diagnose_mistake`, ``naming.py``): the one that reproduces at least 90% of
them, counted where both the student and the mistake return a value on valid input,
and contradicts none of the calls the student got right.

The first entries started from the mutants in ``tests/autograder/mutants``; the
catalog was widened by misconception class (sign, masking, sum vs mean, off-by-one in
time, discounting, softmax normalization, mean vs max, n vs n + 1). The held-out sets
in ``tests/autograder/heldout`` measure how well it generalises and never shape it.
"""

from __future__ import annotations

from autograder.hidden.mistakes.core import CATALOG, LEAD, Mistake, prepare
from autograder.hidden.mistakes.naming import (
    EDGE_PROPERTIES,
    MIN_SHARE,
    Diagnosis,
    diagnose_mistake,
    judged_calls,
    likely_mistake,
    outcome_at,
)

__all__ = [
    "CATALOG",
    "EDGE_PROPERTIES",
    "LEAD",
    "MIN_SHARE",
    "Diagnosis",
    "Mistake",
    "diagnose_mistake",
    "judged_calls",
    "likely_mistake",
    "prepare",
    "outcome_at",
]
