"""Session setup shared by every test folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# The grading tests mirror the package tree (tests/autograder/grade/worker/...); the fixtures
# they share (classroom/, adversarial/, heldout/, mutants/, habits/ and the helper modules
# beside them) live in tests/autograder and are imported by their own names at any depth.
sys.path.insert(0, str(Path(__file__).resolve().parent / "autograder"))


def pytest_configure(config):
    """Build the student kit beside the instructor notebooks in source/ once per run (it is
    a build output, not in git; notebooks, nbgrader courses and the Russian-contract tests
    read it). Only the controlling process builds: xdist workers start after it. `make
    test` builds it before starting its two pytest processes and sets
    M5_TESTS_KIT_PREBUILT=1, so that neither rebuilds it while the other reads it."""
    if hasattr(config, "workerinput") or os.environ.get("M5_TESTS_KIT_PREBUILT") == "1":
        return
    if config.getoption("m5_submission", None) is not None:  # grading one submission (docs/pytest_plugin.md) reads no kit
        return
    from autograder.assign.release import ensure_kits

    ensure_kits()


def pytest_collection_modifyitems(config, items):
    """`make test` collects the tests marked `beside` only from the files whose text says
    `mark.beside` (its BESIDE_FILES): a test marked any other way would be run by neither
    of its two processes, so it is refused here."""
    for item in items:
        if item.get_closest_marker("beside") and "mark.beside" not in item.path.read_text(encoding="utf-8"):
            raise pytest.UsageError(f"{item.nodeid}: mark it with `pytest.mark.beside` in its own file (make test looks for that text)")
