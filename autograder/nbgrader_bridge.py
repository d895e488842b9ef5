"""nbgrader front door: hidden test cells award the same points as `m5 grade`.

An autograder test cell of the assignment notebook ends with::

    ### BEGIN HIDDEN TESTS
    from autograder.nbgrader_bridge import kernel_points
    kernel_points("dqn_targets")
    ### END HIDDEN TESTS

``nbgrader autograde`` runs the notebook; when it reaches such a cell, the bridge
grades the notebook *file* (the submitted copy that nbgrader is executing) with the
sandboxed pipeline, once per kernel process, and returns the kernel's points. The
cell's value becomes nbgrader's partial credit. Feedback goes to stdout (nbgrader
gives zero to a test cell that writes to stderr).

The bridge leaves nothing in the student's folder (``autograded/<student>/...``, which
``nbgrader generate_feedback`` copies into ``feedback/``): Hypothesis caches the literal
constants of every local module it sees, the hidden suite included, with their file
paths, under ``.hypothesis/`` of the working directory; on import the bridge moves
Hypothesis' storage to a private temporary folder, removed at exit.

The grading itself never runs in the notebook's process: the student's code is
executed again, in the sandbox, from the file. Student code that runs in the
notebook before this cell could still tamper with this module (that is nbgrader's
in-process model); `m5 grade` has no such weakness and is the reference grader.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import shutil
import tempfile
from pathlib import Path

_CACHE: dict[tuple[str, float], object] = {}


def _private_hypothesis_storage() -> Path:
    """Point Hypothesis' storage (constants cache, examples) at a fresh temporary folder, removed at exit."""
    from hypothesis.configuration import set_hypothesis_home_dir  # each hidden-test cell imports this module: load only what it calls

    folder = Path(tempfile.mkdtemp(prefix="m5-bridge-hypothesis-"))
    set_hypothesis_home_dir(folder)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


HYPOTHESIS_STORAGE = _private_hypothesis_storage()


def _notebook() -> Path:
    """The notebook being autograded: $M5_NOTEBOOK, else the assignment notebook in cwd."""
    if os.environ.get("M5_NOTEBOOK"):
        return Path(os.environ["M5_NOTEBOOK"])
    candidates = []
    for path in sorted(Path.cwd().glob("*.ipynb")):
        try:
            meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
        except (OSError, ValueError):
            continue
        if (meta.get("m5") or {}).get("kind") == "assignment":
            candidates.append(path)
    if len(candidates) > 1:  # e.g. the English and the Russian notebook of one submission
        candidates = _being_executed(candidates)
    if len(candidates) != 1:
        raise RuntimeError(f"nbgrader_bridge: expected one assignment notebook in {Path.cwd()}, found {len(candidates)}; set M5_NOTEBOOK")
    return candidates[0]


def _code_cells(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    return ["".join(c.get("source", "")).strip() for c in cells if c.get("cell_type") == "code"]


def _being_executed(candidates: list[Path]) -> list[Path]:
    """The candidates whose code cells best match what this kernel has executed.

    nbgrader runs each notebook in its own kernel; the cells already run (IPython's
    ``In``) identify the notebook. Candidates with identical code count as one.
    """
    try:
        from IPython import get_ipython  # (the same)

        shell = get_ipython()
        executed = {str(s).strip() for s in (shell.user_ns.get("In", []) if shell else [])} - {""}
    except Exception:  # noqa: BLE001 - no IPython, or a shell without history: fall back to every candidate
        return candidates
    scored = [(sum(c in executed for c in _code_cells(p)), p) for p in candidates]
    best = max(score for score, _ in scored)
    if best == 0:
        return candidates
    winners = [p for score, p in scored if score == best]
    if len({tuple(_code_cells(p)) for p in winners}) == 1:
        return winners[:1]
    return winners


def _result():
    from autograder.grade import corpus_cache, pipeline  # (the same)

    path = _notebook()
    key = (str(path.resolve()), path.stat().st_mtime)
    if key not in _CACHE:
        with contextlib.redirect_stderr(io.StringIO()):  # stderr output would zero the cell
            corpus = corpus_cache.load_corpus()
            _CACHE[key] = pipeline.grade_submission(path, corpus, answers=True)
    return _CACHE[key]


def _points(group: str) -> float:
    from autograder.grade.report import feedback  # (the same)

    result = _result()
    tests = [t for t in result.tests if t.group == group]
    if not tests:
        raise RuntimeError(f"nbgrader_bridge: nothing graded under {group!r}")
    for t in tests:
        print(f"{t.name[result.language]}: {t.score:g}/{t.max_score:g}")
        if not t.passed:
            print("    " + feedback(t, result.language).replace("\n", "\n    "))
    return float(sum(t.score for t in tests))


def kernel_points(kernel: str) -> float:
    """Points of one kernel (out of 10), as `m5 grade` awards them."""
    return _points(kernel)


def answer_points(exercise: int) -> float:
    """Points of one numerical exercise (one per graded value)."""
    return _points(f"ex{int(exercise):02d}")
