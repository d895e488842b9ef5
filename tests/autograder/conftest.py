"""Shared fixtures of the grader tests: one corpus per test session (disk-cached)."""
from __future__ import annotations

from pathlib import Path

import pytest

SUBMISSIONS = Path(__file__).parent / "submissions"


@pytest.fixture(scope="session")
def corpus():
    from autograder.grade.pipeline import load_corpus

    return load_corpus()


@pytest.fixture(scope="session")
def correct_source() -> str:
    from autograder.demo import CORRECT

    return CORRECT.read_text()
