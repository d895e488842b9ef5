"""The released assignment notebook, filled in as a student would, survives Restart & Run All.

A student's Part 2 answers may use numpy (the part says "by hand or with numpy"), so
``np`` must be defined before the first answer cell, not only by a later cell that
happens to have run in an interactive session. The test copies the released folder
(notebook + ``m5_student`` kit), writes every numerical answer as a numpy expression
and every kernel from the worked solutions, and runs the notebook top to bottom in a
fresh kernel (nbclient), in English and in Russian: no cell may fail, every answer
report says "all assigned", and the self-check from a terminal finds 20/20 answers.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.assign import sources
from reference_impl import exercises

REPO = Path(__file__).resolve().parents[2]
RELEASE_ROOT = REPO / "release"
SOURCE_ROOT = REPO / "source"
BUDGET = 600  # seconds for the whole notebook: a hang fails instead of blocking CI
MARKERS = (sources.BEGIN, sources.END)


def numpy_answer(name: str, value) -> str:
    """``value`` written as a student might, with numpy (a list through an array, a number through np.float64)."""
    if isinstance(value, (list, tuple)):
        return f"{name} = np.array({[float(x) for x in value]!r}).tolist()"
    return f"{name} = float(np.float64({float(value)!r}))"


def filled_notebook(lang: str) -> nbformat.NotebookNode:
    """The released notebook with numpy-written answers and the worked kernels in its answer cells."""
    nb = nbformat.read(sources.notebook_path("assignment", lang, RELEASE_ROOT), as_version=4)
    instructor = nbformat.read(sources.notebook_path("assignment", lang, SOURCE_ROOT), as_version=4)
    kernels = {
        c.id: "\n".join(line for line in c.source.splitlines() if line.strip() not in MARKERS)
        for c in instructor.cells
        if c.cell_type == "code" and c.id.startswith("kernel_")
    }
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if cell.id.endswith("_answer"):
            number = int(cell.id[2:4])
            values = exercises.answers(number)
            cell.source = "\n".join(numpy_answer(name, values[name]) for name in exercises.ANSWER_NAMES[number])
        elif cell.id.startswith("kernel_") and cell.id != "kernel_imports":
            cell.source = kernels[cell.id]
    return nb


def _errors(nb) -> list[str]:
    return [f"{c.id}: {o.ename}: {o.evalue}" for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]


@pytest.mark.parametrize("lang", sources.LANGS)
def test_numpy_answers_survive_restart_and_run_all(lang, tmp_path, monkeypatch):
    from nbclient import NotebookClient

    from autograder.assign.student_extras import notebook as kit_notebook

    folder = tmp_path / sources.ASSIGNMENTS[lang]
    shutil.copytree(RELEASE_ROOT / sources.ASSIGNMENTS[lang], folder)
    path = folder / sources.NOTEBOOK_NAMES["assignment", lang]
    nb = filled_notebook(lang)
    first_answer = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.id.endswith("_answer"))
    assert "np." in nb.cells[first_answer].source  # the answers really use numpy
    nbformat.write(nb, path)

    for name in ("M5_GRADING", "MPLBACKEND", "JPY_SESSION_NAME", "__vsc_ipynb_file__"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("M5_PROGRESS", "0")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    # A fresh kernel of this interpreter (ipykernel's native "python3" spec runs sys.executable).
    client = NotebookClient(nb, timeout=BUDGET, kernel_name="python3", resources={"metadata": {"path": str(folder)}})
    asyncio.run(asyncio.wait_for(client.async_execute(), BUDGET))

    assert not _errors(nb), (lang, _errors(nb))
    reports = {
        c.id: "".join(o.get("text", "") for o in c.outputs if o.output_type == "stream")
        for c in nb.cells
        if c.cell_type == "code" and c.id.endswith("_tests")
    }
    assert len(reports) == len(exercises.NUMERICAL_NUMBERS)
    assert all(text.splitlines()[0] == kit_notebook.TEXT[lang]["assigned"] for text in reports.values()), (lang, reports)
    checks = [c for c in nb.cells if c.cell_type == "code" and c.id.startswith("check_")]
    assert len(checks) == 10 and all(c.outputs for c in checks)
    stray = [c.id for c in checks for o in c.outputs if o.output_type == "execute_result"]
    assert not stray, stray  # a self-check prints its report and ends without a True/False output

    # The self-check from a terminal, on the saved file, agrees: every answer assigned.
    nbformat.write(nb, path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    done = subprocess.run(
        [sys.executable, "-m", "m5_student", "check", path.name], cwd=folder, env=env, capture_output=True, text=True, timeout=BUDGET
    )
    total = len(exercises.all_graded_answers())
    expected = {"en": f"{total}/{total} assigned", "ru": f"{total} из {total} присвоены"}[lang]
    assert expected in done.stdout, (lang, done.stdout, done.stderr)
    assert done.returncode == 0, (lang, done.stdout, done.stderr)


def test_lab_with_missing_parts_runs_to_the_end_with_one_line_each(tmp_path, monkeypatch):
    """The untouched lab (no torch ports) next to an assignment whose `dqn_targets` is still a
    stub: Restart & Run All ends without an error; each section that needs a missing part
    says in one line what to implement and where, and the port checks print no stray True/False."""
    from nbclient import NotebookClient

    lang = "en"
    folder = tmp_path / sources.ASSIGNMENTS[lang]
    shutil.copytree(RELEASE_ROOT / sources.ASSIGNMENTS[lang], folder)
    assignment = filled_notebook(lang)
    stub = next(
        c
        for c in nbformat.read(sources.notebook_path("assignment", lang, RELEASE_ROOT), as_version=4).cells
        if c.id == "kernel_dqn_targets"
    )
    next(c for c in assignment.cells if c.id == "kernel_dqn_targets").source = stub.source
    nbformat.write(assignment, folder / sources.NOTEBOOK_NAMES["assignment", lang])
    lab = nbformat.read(folder / sources.NOTEBOOK_NAMES["lab", lang], as_version=4)

    for name in ("M5_GRADING", "JPY_SESSION_NAME", "__vsc_ipynb_file__"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("RL_LLM_M5_PROFILE", "smoke")
    monkeypatch.setenv("M5_PROGRESS", "0")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    client = NotebookClient(lab, timeout=BUDGET, kernel_name="python3", resources={"metadata": {"path": str(folder)}})
    asyncio.run(asyncio.wait_for(client.async_execute(), BUDGET))

    assert not _errors(lab), _errors(lab)
    printed = {c.id: "".join(o.get("text", "") for o in c.outputs if o.output_type == "stream") for c in lab.cells if c.cell_type == "code"}
    skipped = "This section did not run:"
    assert "implement `dqn_targets` in the assignment notebook (m05_assignment_en.ipynb, Part 3)" in printed["run_dqn"]
    for cell in ("run_dt", "run_language"):
        assert printed[cell].count(skipped) == 1 and "_torch` in this lab notebook (section 5a)" in printed[cell], cell
    assert skipped in printed["run_offline"] and "section 5b" in printed["run_fqe"]
    assert printed["run_dagger"].strip() and skipped not in printed["run_dagger"]  # needs no missing part
    for port in ("masked_token_nll", "cql_discrete_penalty", "expectile_loss", "iql_advantage_weights"):
        cell = next(c for c in lab.cells if c.id == f"check_port_{port}")
        assert f"write `{port}_torch` in the cell above" in printed[cell.id]
        assert not [o for o in cell.outputs if o.output_type == "execute_result"], port  # no stray False
    assert "Traceback" not in "".join(printed.values())


@pytest.mark.parametrize("lang", sources.LANGS)
def test_an_untouched_notebook_runs_to_the_end_and_says_what_is_left_to_write(lang, tmp_path, monkeypatch):
    """Restart & Run All on the released notebook as downloaded ends without an error: the
    answer cells run (their stubs assign None) and report "not assigned yet", each kernel
    check says "not implemented yet", and a kernel called by hand raises NotImplementedError
    saying, in the notebook's language, which function to write in place of the stub line."""
    from nbclient import NotebookClient

    from autograder.assign.student_extras import notebook as kit_notebook
    from autograder.check import public

    folder = tmp_path / sources.ASSIGNMENTS[lang]
    shutil.copytree(RELEASE_ROOT / sources.ASSIGNMENTS[lang], folder)
    nb = nbformat.read(folder / sources.NOTEBOOK_NAMES["assignment", lang], as_version=4)
    nb.cells.append(
        nbformat.v4.new_code_cell("try:\n    return_to_go([1.0])\nexcept NotImplementedError as exc:\n    print(type(exc).__name__, exc)")
    )
    for name in ("M5_GRADING", "MPLBACKEND", "JPY_SESSION_NAME", "__vsc_ipynb_file__"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("M5_PROGRESS", "0")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    client = NotebookClient(nb, timeout=BUDGET, kernel_name="python3", resources={"metadata": {"path": str(folder)}})
    asyncio.run(asyncio.wait_for(client.async_execute(), BUDGET))

    assert not _errors(nb), (lang, _errors(nb))
    printed = {c.id: "".join(o.get("text", "") for o in c.outputs if o.output_type == "stream") for c in nb.cells if c.cell_type == "code"}
    reports = [text for cid, text in printed.items() if cid.endswith("_tests")]
    assert len(reports) == len(exercises.NUMERICAL_NUMBERS)
    assert all(text.startswith(kit_notebook.TEXT[lang]["unassigned"].split("{")[0]) for text in reports), reports
    checks = {cid.removeprefix("check_"): text for cid, text in printed.items() if cid.startswith("check_")}
    assert len(checks) == 10
    assert all(public.TEXT[lang]["not_impl"].format(name=kernel) in text for kernel, text in checks.items()), checks
    said = kit_notebook.TEXT[lang]["stub"].format(name="return_to_go")
    assert printed[nb.cells[-1].id].strip() == f"NotImplementedError {said}"
