"""The tests mirror the package tree, and every path a text names exists.

``autograder/grade/judge.py`` is tested by ``tests/autograder/grade/test_judge.py``. A module
without a test file of its own names, below, the test file that covers it and why it has none
of its own (most are internals reached only through a module above them). Tests of whole
workflows (a term, the hostile corpus, nbgrader's exchange, a SLURM cluster) live in
``tests/autograder/workflows/``; the fixtures they share stay in ``tests/autograder``
(``tests/README.md``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("autograder", "reference_impl")

# module (path without .py) -> (the test file that covers it, why it has no file of its own)
TESTED_ELSEWHERE = {
    "autograder/assign/kit_readme": ("tests/autograder/assign/test_release_readme.py", "the kit's README, checked as released"),
    "autograder/assign/lab_text": ("tests/autograder/assign/test_lab_source.py", "the lab notebook's text, checked where it is assembled"),
    "autograder/assign/nbgrader_late": (
        "tests/autograder/grade/test_late.py",
        "nbgrader's late-submission settings, checked with lateness",
    ),
    "autograder/assign/notebooks": ("tests/autograder/assign/test_release.py", "the notebook builder, checked through the release"),
    "autograder/assign/sources": ("tests/autograder/workflows/test_nbgrader_exchange.py", "the instructor sources, used by nbgrader"),
    "autograder/assign/stubs": ("tests/autograder/assign/test_release.py", "stubbing, checked on the released kernels"),
    "autograder/assign/student_extras/__main__": (
        "tests/autograder/check/test_student_kit.py",
        "the kit's entry point, run as students run it",
    ),
    "autograder/assign/student_extras/notebook": ("tests/notebooks/test_execute.py", "the kit's notebook helpers, run inside notebooks"),
    "autograder/check/kit": ("tests/autograder/check/test_student_kit.py", "the kit's loader, run from a released copy"),
    "autograder/check/public": ("tests/autograder/check/test_public_checks.py", "the public checks, run against each kernel"),
    "autograder/check/public_text": ("tests/autograder/check/test_public_checks.py", "the public checks' messages"),
    "autograder/check/selfcheck": ("tests/autograder/check/test_student_kit.py", "the self-check, run as students run it"),
    "autograder/cli_docs": ("tests/test_docs.py", "the generated command table and CLI page"),
    "autograder/cli_parser": ("tests/autograder/test_cli.py", "the parser, through the commands"),
    "autograder/demo": ("tests/autograder/test_cli.py", "m5 demo, run as a command"),
    "autograder/export/feedback_lms": ("tests/autograder/export/test_feedback.py", "the LMS feedback files, beside the HTML feedback"),
    "autograder/export/solutions": ("tests/solutions/test_solutions.py", "the solution bundle, checked page by page"),
    "autograder/grade/call_forms": ("tests/autograder/grade/test_worker_session.py", "the call framing of a worker session"),
    "autograder/grade/copy_clusters": ("tests/autograder/grade/test_similarity.py", "the clusters of the similarity flags"),
    "autograder/grade/outputs": ("tests/autograder/grade/test_atomic_writes.py", "atomic writes, killed at every rename"),
    "autograder/grade/score": ("tests/autograder/test_cli.py", "scores, through m5 grade's outputs"),
    "autograder/grade/shrink": ("tests/autograder/grade/test_judge.py", "shrinking, through the judge's failing cases"),
    "autograder/grade/written": ("tests/autograder/marking/test_sheets.py", "the written answers, through the marking sheets"),
    "autograder/hidden/kernels": ("tests/autograder/hidden/test_contracts.py", "the hidden suite's kernels, through their contracts"),
    "autograder/hidden/mistakes/core": ("tests/autograder/hidden/test_mistakes.py", "naming likely mistakes"),
    "autograder/hidden/mistakes/formulas": ("tests/autograder/hidden/test_mistakes.py", "the catalog's formulas, through naming"),
    "autograder/hidden/mistakes/naming": ("tests/autograder/hidden/test_mistakes.py", "naming, on the held-out mistakes"),
    "autograder/i18n/references": ("tests/solutions/test_solutions.py", "the references of the worked answers"),
    "autograder/marking/api": ("tests/autograder/marking/test_server.py", "the marking page's API, through its server"),
    "autograder/marking/model": ("tests/autograder/marking/test_store.py", "the marking records, through the store"),
    "reference_impl/common": ("tests/reference_impl/test_decision_transformer.py", "seeding and progress, through the learners"),
    "reference_impl/exercises": ("tests/solutions/test_solutions.py", "the exercise list, through the solutions"),
    "reference_impl/language_task": ("tests/reference_impl/test_language.py", "the token task, through the ILQL-like pipeline"),
    "reference_impl/numerics": ("tests/reference_impl/lab/test_design.py", "the numerics settings, through the run's machine record"),
    "reference_impl/offline_data": ("tests/reference_impl/test_offline.py", "the offline logs, through the offline methods"),
    "reference_impl/offline_methods": ("tests/reference_impl/test_offline.py", "the offline learners, on exact critics"),
    "reference_impl/records": ("tests/reference_impl/test_rollout.py", "episode records, through rollouts"),
    "reference_impl/validation": ("tests/reference_impl/test_kernels.py", "argument checks, through every kernel's bad input"),
    # sandbox internals: the sandbox is tested as one unit, by attack
    "autograder/grade/sandbox/cgroups": ("tests/autograder/grade/sandbox/test_sandbox_cgroups.py", "the cgroup limits"),
    "autograder/grade/sandbox/cmdline": ("tests/autograder/grade/sandbox/test_sandbox.py", "bubblewrap's command line, through launches"),
    "autograder/grade/sandbox/files": ("tests/autograder/grade/sandbox/test_sandbox_attacks.py", "the scratch files, under attack"),
    "autograder/grade/sandbox/hiding": ("tests/autograder/grade/sandbox/test_sandbox.py", "what the sandbox hides"),
    "autograder/grade/sandbox/launch": ("tests/autograder/grade/sandbox/test_sandbox.py", "launching, through the sandbox's entry point"),
    "autograder/grade/sandbox/limits": ("tests/autograder/grade/sandbox/test_sandbox_limits.py", "the resource limits"),
    "autograder/grade/sandbox/paths": ("tests/autograder/grade/sandbox/test_sandbox.py", "the bound paths, from odd checkouts"),
    "autograder/grade/sandbox/plan": ("tests/autograder/grade/sandbox/test_sandbox.py", "the launch plan, through launches"),
    "autograder/grade/sandbox/probe": ("tests/autograder/grade/sandbox/test_sandbox_fallback.py", "the probe, with and without bubblewrap"),
    "autograder/grade/sandbox/process": ("tests/autograder/grade/sandbox/test_sandbox_fallback.py", "process control, on the fallback"),
    "autograder/grade/sandbox/seccomp": ("tests/autograder/grade/sandbox/test_sandbox_attacks.py", "the system-call filter, under attack"),
    # the worker runs inside the sandbox: tested as a process, by its messages and by attack
    "autograder/grade/worker/child": ("tests/autograder/grade/worker/test_worker.py", "the cell-running child"),
    "autograder/grade/worker/main": ("tests/autograder/grade/worker/test_worker.py", "the worker's entry point, started as a process"),
    "autograder/grade/worker/messages": ("tests/autograder/grade/worker/test_worker.py", "the worker's messages"),
    "autograder/grade/worker/parent": ("tests/autograder/grade/worker/test_worker.py", "the worker's parent side"),
    "autograder/grade/worker/proctree": ("tests/autograder/grade/worker/test_idle.py", "the process tree, through the idle watch"),
    "autograder/grade/worker/wire": ("tests/autograder/grade/worker/test_worker_attacks.py", "the wire format, under forged replies"),
    "autograder/grade/worker_handle": (
        "tests/autograder/grade/worker/test_worker_attacks.py",
        "the grader's handle on the worker process, under attack",
    ),
    # the lab: its report is checked as a whole, from a tiny run and from the committed run
    "reference_impl/lab/caveats": ("tests/reference_impl/lab/test_results.py", "the report's caveats"),
    "reference_impl/lab/claims": ("tests/reference_impl/lab/test_results.py", "the claims registry, against the committed run"),
    "reference_impl/lab/comparisons": ("tests/reference_impl/lab/test_results.py", "the comparisons, against the committed run"),
    "reference_impl/lab/figures": ("tests/reference_impl/lab/test_cli.py", "the lab's figures, drawn by a tiny run"),
    "reference_impl/lab/labels": ("tests/reference_impl/lab/test_cli.py", "the report's labels in both languages"),
    "reference_impl/lab/number_format": ("tests/reference_impl/lab/test_results.py", "the numbers the texts quote"),
    "reference_impl/lab/pins": ("tests/reference_impl/lab/test_cli.py", "the pins, written twice"),
    "reference_impl/lab/profiles": ("tests/reference_impl/lab/test_cli.py", "the run profiles"),
    "reference_impl/lab/report": ("tests/reference_impl/lab/test_cli.py", "the report, from a tiny run"),
    "reference_impl/lab/runners": ("tests/reference_impl/lab/test_cli.py", "the sections' runners"),
    "reference_impl/lab/__main__": ("tests/reference_impl/lab/test_cli.py", "python -m reference_impl.lab, the command's entry"),
}


def modules() -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if path.name == "__init__.py" or "assets" in relative.parts:
                continue
            found.append(relative.with_suffix("").as_posix())
    return found


def own_test_file(module: str) -> Path:
    folder, name = module.rsplit("/", 1)
    return ROOT / "tests" / folder / f"test_{name}.py"


def mentions(test_file: Path, module: str) -> bool:
    """The test file names the module (an import, or its dotted or file name) or a module
    that imports it: the cover is at most one step away."""
    text = test_file.read_text(encoding="utf-8")
    dotted, name = module.replace("/", "."), module.rsplit("/", 1)[1]
    if dotted in text or re.search(rf"\b{re.escape(name)}\b", text):
        return True
    importers = [
        p for p in (ROOT / module.split("/")[0]).rglob("*.py") if re.search(rf"\b{re.escape(name)}\b", p.read_text(encoding="utf-8"))
    ]
    return any(re.search(rf"\b{re.escape(p.stem)}\b", text) for p in importers if p.stem != "__init__")


def test_the_modules_are_found():
    assert len(modules()) > 100


@pytest.mark.parametrize("module", modules())
def test_every_module_has_a_test_file_or_a_stated_reason(module):
    if own_test_file(module).is_file():
        assert module not in TESTED_ELSEWHERE, f"{module} has its own test file: drop it from TESTED_ELSEWHERE"
        return
    assert module in TESTED_ELSEWHERE, f"{module}: no {own_test_file(module).relative_to(ROOT)} and no entry in TESTED_ELSEWHERE"
    cover, reason = TESTED_ELSEWHERE[module]
    assert (ROOT / cover).is_file(), f"{module}: {cover} does not exist"
    assert reason, module
    assert mentions(ROOT / cover, module), f"{module}: {cover} does not name it or a module that imports it"


def test_no_stated_reason_names_a_module_that_is_gone():
    assert sorted(set(TESTED_ELSEWHERE) - set(modules())) == []


def test_the_layout_check_can_fail(tmp_path):
    cover = tmp_path / "test_other.py"
    cover.write_text("def test_nothing():\n    pass\n", encoding="utf-8")
    assert not mentions(cover, "reference_impl/kernels")


NAMED_TEST_PATH = re.compile(r"\btests/[\w/]+\.py\b")
TEXTS = ("*.md", "*.py", "*.toml", "Makefile", "*.sbatch", "*.yaml")
HISTORY = {"CHANGELOG.md", "bench/HISTORY.md"}  # history names the files of its time


def texts() -> list[Path]:
    found = {ROOT / ".ci" / "run"}
    for pattern in TEXTS:
        for path in ROOT.rglob(pattern):
            relative = path.relative_to(ROOT)
            if relative.parts[0] in {".venv", ".git", "release", "source", "solutions"} or relative.as_posix() in HISTORY:
                continue
            found.add(path)
    return sorted(found)


def test_every_test_path_a_text_names_exists():
    missing = []
    for path in texts():
        for named in NAMED_TEST_PATH.findall(path.read_text(encoding="utf-8", errors="replace")):
            if not (ROOT / named).exists() and "*" not in named:
                missing.append(f"{path.relative_to(ROOT)}: {named}")
    assert missing == []
