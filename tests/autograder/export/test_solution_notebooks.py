"""The executed solution notebooks: current with the sources, run cleanly, no hidden tests."""

import json

import nbformat
import pytest

from autograder.export.solution_notebooks import NOTEBOOKS_DIR, SOURCE_DIR, solution_notebook, solution_notebooks

SOURCES = sorted(SOURCE_DIR.glob("*/*.ipynb"))


def code(nb):
    return [c.source for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_solution_notebook_is_the_executed_source_without_hidden_tests(source):
    path = NOTEBOOKS_DIR / source.name
    assert path.exists(), "run `make solution-notebooks`"
    executed = nbformat.read(path, as_version=4)
    assert code(executed) == code(solution_notebook(source)), "stale: run `make solution-notebooks`"
    text = json.dumps(executed)
    assert "BEGIN HIDDEN TESTS" not in text and "kernel_points" not in text and "answer_points" not in text
    for cell in executed.cells:
        if cell.cell_type == "code":
            assert cell.execution_count is not None, cell.source[:80]
            assert not [o for o in cell.outputs if o.output_type == "error"], cell.source[:80]


def test_language_selection():
    assert all(p.stem.endswith("_ru") for p in solution_notebooks("ru"))
    assert len(solution_notebooks("both")) == len(SOURCES)


def test_solution_bundle_renders_the_notebooks(tmp_path):
    from autograder.cli import main

    assert main(["solutions", "--lang", "en", "--out", str(tmp_path)]) == 0
    pages = sorted(p.name for p in (tmp_path / "notebooks").glob("*.html"))
    assert pages == sorted(p.stem + ".html" for p in solution_notebooks("en"))
    html = "".join(p.read_text() for p in (tmp_path / "notebooks").glob("*.html"))
    assert "BEGIN HIDDEN TESTS" not in html and "kernel_points" not in html
