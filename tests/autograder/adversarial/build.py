"""Build submissions for the grader tests: attack fragments on a correct base, notebooks.

* :func:`compose` puts an attack fragment (``attacks/<name>.py``) after the correct
  base submission, so the fragment's definitions replace the base's (the later
  ``def`` wins) and its module-level code runs at import. A fragment holding the line
  ``# <correct submission here>`` gets the base at that line instead.
* :func:`notebook_from_source` splits a ``.py`` submission into notebook cells (one
  per top-level function, imports and helpers in a setup cell) with nbgrader
  metadata, so every notebook test starts from a known-correct notebook.
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat

from autograder.demo import CORRECT
from reference_impl import exercises

HERE = Path(__file__).resolve().parent
ATTACKS = HERE / "attacks"
SUBMISSIONS = HERE.parent / "submissions"
BASE_SUBMISSION = CORRECT  # the demo's correct submission: one copy for demo, tests, bench
BASE_MARKER = "# <correct submission here>"


def attack_names() -> list[str]:
    return sorted(p.stem for p in ATTACKS.glob("*.py"))


def compose(fragment: str, base: str | None = None) -> str:
    """The full attack submission: correct base + fragment (or base at the marker)."""
    base = BASE_SUBMISSION.read_text(encoding="utf-8") if base is None else base
    if BASE_MARKER in fragment:
        return fragment.replace(BASE_MARKER, base)
    return f"{base.rstrip()}\n\n\n# ---- attack ----\n{fragment}"


def write_attack(name: str, folder: Path) -> Path:
    path = folder / f"{name}.py"
    path.write_text(compose((ATTACKS / f"{name}.py").read_text(encoding="utf-8")), encoding="utf-8")
    return path


def _solution_cell(source: str, grade_id: str) -> nbformat.NotebookNode:
    meta = {"nbgrader": {"solution": True, "grade": False, "locked": False, "grade_id": grade_id, "schema_version": 3}}
    return nbformat.v4.new_code_cell(source, metadata=meta)


def kernel_cells(source: str) -> dict[str, str]:
    """Top-level chunks of a .py submission: {"setup": imports and helpers, name: def}."""
    tree = ast.parse(source)
    lines = source.splitlines()
    setup, kernels = [], {}
    for node in tree.body:
        start = (node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno) - 1
        chunk = "\n".join(lines[start : node.end_lineno])
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            kernels[node.name] = chunk
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):  # skip the docstring
            setup.append(chunk)
    return {"setup": "\n\n".join(setup), **kernels}


def answers_source() -> str:
    """A cell assigning every numerical answer of the module (exercises 9-15) correctly."""
    rows = []
    for number in exercises.ANSWER_NAMES:
        for name, answer in exercises.graded_answers(number).items():
            rows.append(f"{name} = {answer.value!r}")
    return "\n".join(rows)


def notebook_from_source(
    source: str, *, extra_cells=(), replace: dict[str, str] | None = None, answers: bool = True
) -> nbformat.NotebookNode:
    """A notebook with nbgrader cells for ``source``'s setup and kernels.

    ``replace`` maps a kernel name to new source for its cell; ``extra_cells`` are
    (position, NotebookNode) pairs inserted after the cells are built (position in
    the final list, e.g. 1 puts a cell right after the title).
    """
    chunks = kernel_cells(source)
    for name, text in (replace or {}).items():
        chunks[name] = text
    cells = [nbformat.v4.new_markdown_cell("# Module 5: kernels\nMy answers.")]
    cells.append(_solution_cell(chunks.pop("setup"), "setup"))
    for name, text in chunks.items():
        cells.append(nbformat.v4.new_markdown_cell(f"## `{name}`"))
        cells.append(_solution_cell(text, f"{name}-solution"))
    if answers:
        cells.append(_solution_cell(answers_source(), "answers"))
    for position, cell in extra_cells:
        cells.insert(position, cell)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def write_notebook(nb: nbformat.NotebookNode, path: Path) -> Path:
    nbformat.validate(nb)
    nbformat.write(nb, str(path))
    return path
