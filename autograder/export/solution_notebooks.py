"""Solution notebooks: the instructor sources, hidden tests removed, executed, outputs kept.

`make solution-notebooks` (or ``python -m autograder.export.solution_notebooks``)
executes every notebook of ``source/module05_{en,ru}/`` in the smoke profile and writes it to
``solutions/notebooks/``; `m5 solutions` renders those to HTML for the students.
Hidden test blocks are stripped *before* execution, so their source never reaches an
output or a saved notebook.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

import nbformat

from autograder.assign.release import ensure_kits
from autograder.export.solutions import strip_hidden_tests

PROJECT = Path(__file__).resolve().parents[2]
SOURCE_DIR = PROJECT / "source"  # one folder per nbgrader assignment (module05_en, module05_ru)
NOTEBOOKS_DIR = PROJECT / "solutions" / "notebooks"
NOTEBOOK_BUDGET = 900  # seconds per whole notebook: a guard against hangs


@contextlib.contextmanager
def _environment(**values: str):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


def execute_notebook(nb, folder: Path, *, notebook_path: Path | None = None, profile: str = "smoke"):
    """Run ``nb`` top to bottom with nbclient, as if it lived in ``folder``; returns it."""
    from nbclient import NotebookClient  # only when notebooks are executed

    env = {"RL_LLM_M5_PROFILE": profile, "M5_PROGRESS": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    if notebook_path is not None:
        env["M5_NOTEBOOK"] = str(notebook_path)  # the nbgrader bridge grades this file
    # No timing metadata: a rebuilt notebook differs from the committed one only where its content does.
    client = NotebookClient(
        nb, timeout=NOTEBOOK_BUDGET, kernel_name="python3", record_timing=False, resources={"metadata": {"path": str(folder)}}
    )
    with _environment(**env):
        asyncio.run(asyncio.wait_for(client.async_execute(), NOTEBOOK_BUDGET))
    return nb


def solution_notebook(source: Path):
    """The source notebook with hidden tests removed and without outputs (not yet run)."""
    nb = strip_hidden_tests(nbformat.read(source, as_version=4))
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def build_solution_notebooks(out_dir: Path = NOTEBOOKS_DIR, source_dir: Path = SOURCE_DIR, profile: str = "smoke") -> list[Path]:
    ensure_kits(source_dir)  # the notebooks import the kit beside them (a build output, not in git)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for source in sorted(source_dir.glob("*/*.ipynb")):
        nb = execute_notebook(solution_notebook(source), source.parent, notebook_path=source, profile=profile)
        path = out_dir / source.name
        nbformat.write(nb, path)
        written.append(path)
        print(f"wrote {path}")
    return written


def solution_notebooks(lang: str = "both", folder: Path = NOTEBOOKS_DIR) -> list[Path]:
    """The committed executed notebooks of one language (or both)."""
    suffixes = ("_en", "_ru") if lang == "both" else (f"_{lang}",)
    return sorted(p for p in folder.glob("*.ipynb") if p.stem.endswith(suffixes))


if __name__ == "__main__":
    build_solution_notebooks()
    sys.exit(0)
