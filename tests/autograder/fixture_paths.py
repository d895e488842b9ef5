"""Where the grading tests' fixtures live, for test modules at any depth of tests/autograder.

The test modules mirror the package tree (``tests/autograder/grade/test_judge.py``
tests ``autograder/grade/judge.py``); the fixtures they share (``submissions/``,
``adversarial/``, ``heldout/``, ``claims/``, ``marking_corpus/``...) stay in one place here.
"""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent  # tests/autograder
REPO = FIXTURES.parents[1]
