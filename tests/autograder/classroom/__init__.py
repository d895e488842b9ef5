"""Helpers of the classroom tests (release, student kit, nbgrader front door and exchange).

``tests/autograder`` is on ``sys.path`` (pytest's rootdir-relative import), so tests
import this as ``classroom``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat

from autograder.assign import sources

REPO = Path(__file__).resolve().parents[3]
SOURCE_ROOT = REPO / "source"
RELEASE_ROOT = REPO / "release"
# The bug a "wrong" submission has: dqn_targets bootstraps through terminal states.
TERMINAL_MASK = "np.copyto(next_values, 0.0, where=terminated)"
TERMINAL_BUG = "pass  # bug: bootstraps through terminal states"


def notebook(kind: str, lang: str, root: Path = SOURCE_ROOT) -> Path:
    """A notebook of the committed source (default) or release (``root=RELEASE_ROOT``)."""
    return sources.notebook_path(kind, lang, root)


def filled_notebook(release_path: Path, source_path: Path, edits: dict[str, tuple[str, str]] | None = None
                    ) -> nbformat.NotebookNode:
    """The release notebook with every solution cell replaced by the instructor's version.

    ``edits`` maps a cell id to (old, new): a text replaced in that cell afterwards (to
    plant a bug or a wrong answer); the old text must be there.
    """
    nb = nbformat.read(release_path, as_version=4)
    solutions = {c.id: c.source for c in nbformat.read(source_path, as_version=4).cells}
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = solutions[cell.id]
        if cell.id in (edits or {}):
            old, new = edits[cell.id]
            assert old in cell.source, (cell.id, old)
            cell.source = cell.source.replace(old, new)
    return nb


def run_nbgrader(course: Path, *args: str, env: dict[str, str] | None = None,
                 timeout: float = 900) -> subprocess.CompletedProcess:
    """``nbgrader ARGS`` in ``course``; fails the test with its output when it fails."""
    bin_dir = Path(sys.executable).parent  # nbgrader runs `alembic` from PATH
    # The notebook kernels import the bridge of this checkout, not whichever one is installed.
    python_path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    full_env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "M5_PROGRESS": "0",
                "PYTHONPATH": python_path, **(env or {})}
    full_env.pop("M5_NOTEBOOK", None)
    proc = subprocess.run([str(bin_dir / "nbgrader"), *args], cwd=course, env=full_env, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, f"nbgrader {' '.join(args)}:\n" + proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc
