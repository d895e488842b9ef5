"""Every source notebook executes top to bottom (nbclient, smoke profile); EN and RU agree.

The instructor notebooks carry the solutions, so running them end to end exercises
the whole student path: the setup cell finds ``m5_student`` (the kit in the same folder), the
self-checks pass, the hidden test cells award full points through the nbgrader
bridge, and the lab's loops train with the notebook's kernels and torch ports (the lab
notebook's two runs are in ``make test-slow``).
``NOTEBOOK_BUDGET`` bounds each whole notebook (a hang fails the test; no timing is asserted).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import nbformat
import pytest

from autograder.assign import sources

REPO = Path(__file__).resolve().parents[2]
SOURCE_ROOT = REPO / "source"
NOTEBOOK_BUDGET = 900  # seconds for a whole notebook; a stuck run fails instead of hanging CI
CYRILLIC = re.compile("[а-яА-ЯёЁ]")


def execute(path: Path, monkeypatch) -> nbformat.NotebookNode:
    from nbclient import NotebookClient

    monkeypatch.setenv("RL_LLM_M5_PROFILE", "smoke")
    monkeypatch.setenv("M5_NOTEBOOK", str(path))  # both languages share the folder
    # As under nbconvert, nbgrader autograde or VS Code: nothing names the notebook; its
    # language comes from the kit next to it, which the release build wrote for it.
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.delenv("__vsc_ipynb_file__", raising=False)
    monkeypatch.setenv("M5_PROGRESS", "0")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # the kernel imports the m5_student next to the notebook
    # A notebook in a student's Jupyter: not under grading, figures shown inline (another
    # test in this process may have run cells the way the grader does).
    monkeypatch.delenv("M5_GRADING", raising=False)
    monkeypatch.delenv("MPLBACKEND", raising=False)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=NOTEBOOK_BUDGET, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    # Whole-notebook budget: a guard against hangs, not a performance assertion.
    asyncio.run(asyncio.wait_for(client.async_execute(), NOTEBOOK_BUDGET))
    return nb


def _errors(nb) -> list[str]:
    return [f"{c.id}: {o.ename}: {o.evalue}" for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]


def _graded(cell) -> bool:
    return bool(cell.metadata.get("nbgrader", {}).get("grade"))


def printed_numbers(nb) -> dict[str, list[str]]:
    """Per code cell, the numbers it printed (the graded cells' feedback text is language-specific)."""
    out = {}
    for cell in nb.cells:
        if cell.cell_type != "code" or _graded(cell):
            continue
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d", "", text)  # when the assignment file was saved
        out[cell.id] = re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)
    return out


def awarded_points(nb) -> dict[str, float]:
    """Partial credit of each graded code cell: the value of its last expression."""
    points = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and _graded(cell):
            results = [o for o in cell.outputs if o.output_type == "execute_result"]
            points[cell.id] = float(results[0]["data"]["text/plain"]) if results else None
    return points


@pytest.fixture(scope="module")
def assignment_runs(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    try:
        return {lang: execute(sources.notebook_path("assignment", lang, SOURCE_ROOT), mp) for lang in ("en", "ru")}
    finally:
        mp.undo()


def test_assignment_notebooks_execute_with_full_points(assignment_runs):
    for lang, nb in assignment_runs.items():
        assert not _errors(nb), (lang, _errors(nb))
        points = awarded_points(nb)
        expected = {c.id: float(c.metadata["nbgrader"]["points"]) for c in nb.cells if c.cell_type == "code" and _graded(c)}
        assert points == expected, lang


def test_assignment_english_and_russian_print_the_same_numbers(assignment_runs):
    en, ru = printed_numbers(assignment_runs["en"]), printed_numbers(assignment_runs["ru"])
    assert en == ru
    assert sum(len(v) for v in en.values()) > 20  # the self-checks really printed results


def printed_text(nb, prefixes: tuple[str, ...]) -> dict[str, str]:
    """What the code cells whose id starts with one of ``prefixes`` printed."""
    return {
        c.id: "".join(o.get("text", "") for o in c.outputs if o.output_type == "stream")
        for c in nb.cells
        if c.cell_type == "code" and c.id.startswith(prefixes)
    }


def test_russian_notebook_prints_russian_without_jupyter_naming_it(assignment_runs):
    """No JPY_SESSION_NAME (as under nbconvert and nbgrader autograde): the self-checks, the
    answer reports and the hidden tests' feedback (what nbgrader's feedback page shows) are
    all Russian, none of their English lines appear; and the English notebook stays English."""
    from autograder.assign.student_extras import notebook
    from autograder.check import public

    for lang, other in (("ru", "en"), ("en", "ru")):
        printed = printed_text(assignment_runs[lang], ("check_", "ex", "test_"))
        checks = {cid: text for cid, text in printed.items() if cid.startswith("check_")}
        assert len(checks) == 10
        for cid, text in checks.items():
            kernel = cid[len("check_") :]
            summary = public.TEXT[lang]["summary"].split("{name}")[1].split("{passed}")[0]
            assert f"{kernel}{summary}" in text and public.TEXT[lang]["disclaimer"] in text, (lang, cid)
            assert public.TEXT[other]["disclaimer"] not in text
        # An answer test cell's first line is its visible report; the hidden part's grades follow.
        reports = [text.splitlines()[0] for cid, text in printed.items() if cid.endswith("_tests")]
        assert reports and all(r == notebook.TEXT[lang]["assigned"] for r in reports), (lang, reports)
        everything = "".join(printed.values())
        for english in ("public checks passed", "all answers assigned"):
            assert (english in everything) == (lang == "en"), (lang, english)
        graded = [text for cid, text in printed.items() if cid.startswith("test_")]
        assert graded and all(CYRILLIC.search(t) for t in graded) == (lang == "ru"), (lang, graded[:1])


@pytest.fixture(scope="module")
def lab_en():
    mp = pytest.MonkeyPatch()
    try:
        return execute(sources.notebook_path("lab", "en", SOURCE_ROOT), mp)
    finally:
        mp.undo()


@pytest.mark.slow
def test_lab_notebook_executes_in_smoke_profile(lab_en):
    """Slow (about 25 s of CPU, the smoke profile's training): the fast suite runs every
    section in a tiny profile (tests/reference_impl/lab/test_cli.py) and this notebook, Restart &
    Run All, with its parts missing (tests/notebooks/test_student_run_all.py)."""
    assert not _errors(lab_en), _errors(lab_en)
    printed = {c.id: "".join(o.get("text", "") for o in c.outputs) for c in lab_en.cells if c.cell_type == "code"}
    assert "profile: smoke" in printed["lab_setup"]
    assert "dqn_targets: [2.9 2. ]" in printed["run_environment"]  # the public checks' worked example
    for port in ("masked_token_nll", "cql_discrete_penalty", "expectile_loss", "iql_advantage_weights"):
        assert "values and gradients match" in printed[f"check_port_{port}"]
    for section in ("run_dagger", "run_dqn", "run_log", "run_offline", "run_fqe", "run_dt", "run_language", "run_takeaways"):
        assert printed[section].strip(), section
    figures = [
        c.id
        for c in lab_en.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "display_data" and "image/png" in o.get("data", {})
    ]
    assert {"run_environment", "run_dagger", "run_dqn", "run_log", "run_offline", "run_fqe", "run_dt", "run_language"} <= set(figures)


@pytest.mark.slow
def test_lab_english_and_russian_print_the_same_numbers(lab_en, monkeypatch):
    ru = execute(sources.notebook_path("lab", "ru", SOURCE_ROOT), monkeypatch)
    assert not _errors(ru), _errors(ru)
    assert printed_numbers(ru) == printed_numbers(lab_en)
