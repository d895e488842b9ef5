"""Hostile submissions: each is graded exactly as it deserves, and nothing else happens.

Every attack in ``adversarial/attacks/`` is a fragment put on top of the correct
submission (see ``adversarial/build.py``), so the attacked kernels get the score
their honest behavior earns and every other kernel keeps 10/10. For each attack the
test checks the exact per-kernel scores, that the grader survives, that no process
is left behind, that nothing is written outside the output folder (the temp tree,
the working directory, /tmp, home), and that grading twice gives the same scores.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import psutil
import pytest
from adversarial import build  # tests/autograder is on sys.path (pytest rootdir-relative import)
from fixture_paths import FIXTURES  # tests/autograder is on sys.path (tests/conftest.py)

import reference_impl
from autograder.grade import report, sandbox
from autograder.grade.pipeline import grade_submission  # `corpus`: the session fixture in conftest.py
from autograder.grade.worker_session import Budget

HERE = FIXTURES
KERNELS = reference_impl.KERNEL_NAMES
# The default batch deadline is 30 s; a shorter one keeps the attacks that need it fast.
BUDGET = Budget(kernel_timeout=4.0, load_timeout=40.0, cell_timeout=10.0)


# attack -> the kernels that deserve less than 10, with their exact scores.
EXPECTED: dict[str, dict[str, float]] = {
    "infinite_loop": {"dqn_targets": 0},
    "infinite_loop_ignoring_alarm": {"double_dqn_targets": 0},
    "memory_bomb": {"expectile_loss": 0},
    "fork_bomb": {"cql_discrete_penalty": 0},
    "sys_exit_at_import": {k: 0 for k in KERNELS},
    "sys_exit_after_definitions": {},
    "os_exit_in_kernel": {"return_to_go": 0},
    "kill_parent": {"pessimistic_values": 0},
    # swapped tau is worth 3 (as its mutant); the vandalised dqn input costs the
    # no-mutation point; the patched np.allclose breaks the base's own policy check.
    "monkeypatch_comparisons": {"dqn_targets": 9, "expectile_loss": 3, "fqe_targets": 9},
    # zeros / a constant float get nothing: invariance and no-mutation points are earned
    # only with a passing value check; a stalling __array__ gets 0; the lying ndarray
    # subclass holds the right numbers.
    "lying_return_values": {"dqn_targets": 0, "masked_token_nll": 0, "iql_advantage_weights": 0},
    "mutate_inputs": {"behavior_support_mask": 9, "fqe_targets": 9},
    "peek_at_reference": {"masked_token_nll": 0},
    "fake_results_json": {"return_to_go": 4},  # forward cumsum, as its mutant (empty episodes right)
    "print_fake_json": {},
    "forge_protocol_frames": {"iql_advantage_weights": 0},
    "network_access": {},
    "print_flood": {},
    # constants pass no value check, so their invariance / no-mutation points are withheld
    "hardcoded_examples": {"dqn_targets": 0, "cql_discrete_penalty": 0, "return_to_go": 0, "pessimistic_values": 0, "fqe_targets": 0},
    # noise gets nothing: its validation is real, but the bad-input point is gated on a
    # passing value check like every other point; the 1-in-50 coin of the support mask
    # (reseeded before every batch) lands in every value property of today's corpus
    "nondeterministic": {"expectile_loss": 0, "behavior_support_mask": 0, "iql_advantage_weights": 0},
    # under the worker's fixed hash seed the answer comes out reversed: no value check holds
    "hash_dependent": {"return_to_go": 0},
}
# Why the attacked kernel lost everything, as the student reads it (feedback text).
REASONS = {
    "infinite_loop": "did not finish within its time limit",  # the worker's per-call timer
    "infinite_loop_ignoring_alarm": "did not finish within its time limit",  # the parent's CPU clock, not SIGALRM
    "memory_bomb": "MemoryError",
    "os_exit_in_kernel": "stopped",
    "kill_parent": "stopped",
    "sys_exit_at_import": "not defined",
    "forge_protocol_frames": "communication",
}
NOTES = {
    "sys_exit_at_import": "SystemExit",
    "sys_exit_after_definitions": "SystemExit",
}
# Determinism: attacks whose outcome could plausibly vary (randomness, hashing, crashes
# and worker restarts) are graded twice in the fast run; the others once here and twice
# under -m slow (those that wait out a time limit, and those that are plainly stable),
# to keep this file fast.
SLOW = {"fork_bomb", "infinite_loop_ignoring_alarm", "infinite_loop", "lying_return_values", "notebook_setup_disables_timer"}
REGRADED_IN_FAST_RUN = {
    "nondeterministic",
    "hash_dependent",
    "monkeypatch_comparisons",
    "kill_parent",
    "os_exit_in_kernel",
    "forge_protocol_frames",
    "mutate_inputs",
    "memory_bomb",
    "notebook_setup_kills_worker",
    "notebook_syntax_error_in_one_cell",
}


def expected_scores(attack: str) -> dict[str, float]:
    return {k: float(EXPECTED[attack].get(k, 10)) for k in KERNELS}


# ---------------------------------------------------------------- fixtures and checks
def _tree(root: Path, skip: Path | None = None) -> dict[str, tuple]:
    """Every file and folder below ``root`` (except ``skip``) with size and mtime."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if skip is not None and (here == skip or skip in here.parents):
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            path = here / name
            if path == skip:
                continue
            try:
                st = path.lstat()
            except OSError:
                continue
            found[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return found


HOST_TARGETS = [
    Path(p)
    for p in (
        "/tmp/results.json",
        "/tmp/results/results.json",
        "/tmp/g/results.json",
        "/tmp/grades/results.json",
        "/results.json",
        "/autograder",
        "/autograder/results/results.json",
    )
] + [Path.home() / "results.json"]


def _suspicious_host_paths() -> dict[str, int]:
    """Places an attack aims at outside the test folder: the exact paths the attacks
    write to, and any /tmp entry named like results. (Other /tmp entries come and go
    with other people's processes; the grader's own scratch lives in the private
    temp dir that ``sealed`` checks.)"""
    found = {}
    for entry in os.scandir("/tmp"):
        if "results" in entry.name:
            found[entry.path] = entry.stat(follow_symlinks=False).st_mtime_ns
    for path in HOST_TARGETS:
        if path.exists():
            found[str(path)] = path.lstat().st_mtime_ns
    return found


def _wait_no_children(timeout: float = 5.0) -> list:
    deadline = time.monotonic() + timeout
    while True:
        left = psutil.Process().children(recursive=True)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


@pytest.fixture
def sealed(tmp_path, monkeypatch):
    """A private cwd and temp dir; on exit: nothing left running, nothing written."""
    cwd, private_tmp, out = tmp_path / "cwd", tmp_path / "tmp", tmp_path / "out"
    for folder in (cwd, private_tmp, out):
        folder.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))  # the worker's scratch goes here
    host_before = _suspicious_host_paths()
    yield tmp_path
    assert _wait_no_children() == [], "a process outlived the grading"
    base = sandbox.probe_isolation()[0].cgroup_base
    if base is not None:
        assert list(base.glob(f"m5-sandbox-{os.getpid()}-*")) == [], "a sandbox cgroup was left behind"
    assert list(cwd.iterdir()) == [], "something was written into the working directory"
    assert list(private_tmp.iterdir()) == [], "a scratch folder was left behind"
    assert _suspicious_host_paths() == host_before, "something was written to /tmp, home or /autograder"


def grade_into(path: Path, corpus, out: Path):
    """Grade as ``m5 grade`` does and write results.json; return (SubmissionResult, results.json)."""
    result = grade_submission(path, corpus, shrink=False, budget=BUDGET)
    written = report.write_results(result, out / path.stem)
    data = json.loads(written.read_text(encoding="utf-8"))
    return result, data


def check_graded(attack: str, path: Path, corpus, tmp_path: Path, times: int) -> None:
    inputs_before = _tree(tmp_path, skip=tmp_path / "out")
    runs = []
    for _ in range(times):
        runs.append(grade_into(path, corpus, tmp_path / "out"))  # returning at all: the grader survived
    result, data = runs[0]
    scores = {k: got for k, (got, _) in result.by_group().items()}
    assert scores == expected_scores(attack)
    assert data["score"] == pytest.approx(sum(expected_scores(attack).values()))
    assert "FAKE" not in json.dumps(data)
    if attack in NOTES:
        assert any(NOTES[attack] in n["en"] for n in result.notes), result.notes
    if attack in REASONS:
        lost = [t for t in data["tests"] if t["status"] == "failed"]
        assert any(REASONS[attack] in t["output"] for t in lost), [t["output"] for t in lost][:3]
    for _, again in runs[1:]:  # determinism: the same file, graded afresh, the same scores
        assert [(t["name"], t["score"]) for t in again["tests"]] == [(t["name"], t["score"]) for t in data["tests"]]
    # Only out/ may have changed under the test folder (cwd and the temp dir are checked by `sealed`).
    after = _tree(tmp_path, skip=tmp_path / "out")
    assert {k: v for k, v in after.items() if not k.startswith(("cwd", "tmp"))} == {
        k: v for k, v in inputs_before.items() if not k.startswith(("cwd", "tmp"))
    }
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [path.stem]
    assert sorted(p.name for p in (tmp_path / "out" / path.stem).iterdir()) == ["results.json"]


# ---------------------------------------------------------------- .py attacks
def test_every_attack_file_has_an_expectation():
    assert sorted(EXPECTED) == build.attack_names()


@pytest.mark.parametrize("attack", sorted(EXPECTED))
def test_attack_is_contained_and_graded_as_deserved(attack, corpus, sealed):
    (sealed / "inputs").mkdir()
    path = build.write_attack(attack, sealed / "inputs")
    check_graded(attack, path, corpus, sealed, times=2 if attack in REGRADED_IN_FAST_RUN else 1)


@pytest.mark.slow
@pytest.mark.parametrize("attack", sorted(set(EXPECTED) - REGRADED_IN_FAST_RUN))
def test_attack_regrades_identically(attack, corpus, sealed):
    (sealed / "inputs").mkdir()
    path = build.write_attack(attack, sealed / "inputs")
    check_graded(attack, path, corpus, sealed, times=2)


# ---------------------------------------------------------------- notebook attacks
def _setup_cell(source: str, grade_id: str):
    return nbformat.v4.new_code_cell(
        source, metadata={"nbgrader": {"solution": True, "grade": False, "locked": False, "grade_id": grade_id, "schema_version": 3}}
    )


KILLER_SETUP = """import os
import signal


def configure(level=os.killpg(0, signal.SIGKILL)):  # the default runs at definition time
    return level
"""
TIMER_OFF_SETUP = """import signal

signal.signal(signal.SIGALRM, signal.SIG_IGN)  # hoping to make every call untimed
"""
LOOPING_RTG = """def return_to_go(rewards, gamma=1.0):
    while True:
        pass
"""
BROKEN_CELL = """def cql_discrete_penalty(q_values, actions):
    return (q_values[0]


def expectile_loss(diff, tau):
    return 0.0
"""


def _lying_answers() -> str:
    """Every numerical answer is an object equal to everything, holding the value 0."""
    lines = ["class Agrees(float):", "    def __eq__(self, other):", "        return True", "", "    __hash__ = float.__hash__", ""]
    lines += [f"{row.split(' = ')[0]} = Agrees(0.0)" for row in build.answers_source().splitlines()]
    return "\n".join(lines)


STALLING_ANSWER = """

class Stalling:
    def __array__(self, dtype=None, copy=None):
        while True:
            pass


ex13_gradient = Stalling()
"""


def _notebook(name: str):
    base = build.BASE_SUBMISSION.read_text()
    if name == "notebook_stalling_answer":
        nb = build.notebook_from_source(base)
        nb.cells[-1].source += STALLING_ANSWER  # overrides one answer of the answers cell
        return nb
    if name == "notebook_malformed_metadata":
        # Student-controlled JSON: metadata of the wrong types everywhere (valid for json,
        # not for nbformat). The kernels' own cells keep proper metadata.
        nb = build.notebook_from_source(base)
        nb.metadata = ["not", "a", "dict"]
        nb.cells[1].metadata = {"nbgrader": "solution please"}
        nb.cells[3].metadata = ["x"]
        nb.cells.append(
            {
                "cell_type": "code",
                "metadata": {"nbgrader": {"grade_id": {"nested": 1}, "solution": True}},
                "source": [1, 2, "# numbers where text belongs"],
            }
        )
        nb.cells.append("not a cell at all")
        return nb
    if name == "notebook_lying_answers":
        nb = build.notebook_from_source(base, answers=False)
        nb.cells.append(_setup_cell(_lying_answers(), "answers"))
        return nb
    if name == "notebook_setup_kills_worker":
        return build.notebook_from_source(base, extra_cells=[(2, _setup_cell(KILLER_SETUP, "config"))])
    if name == "notebook_setup_disables_timer":
        return build.notebook_from_source(
            base, extra_cells=[(2, _setup_cell(TIMER_OFF_SETUP, "config"))], replace={"return_to_go": LOOPING_RTG}
        )
    if name == "notebook_syntax_error_in_one_cell":
        nb = build.notebook_from_source(base, replace={"cql_discrete_penalty": BROKEN_CELL})
        nb.cells = [c for c in nb.cells if "def expectile_loss" not in c.source or "cql" in c.source]
        return nb
    raise KeyError(name)


NOTEBOOK_EXPECTED = {
    "notebook_setup_kills_worker": ({}, "stopped the grading process"),
    "notebook_setup_disables_timer": ({"return_to_go": 0}, None),
    "notebook_syntax_error_in_one_cell": ({"cql_discrete_penalty": 0, "expectile_loss": 0}, "SyntaxError"),
    "notebook_lying_answers": ({}, None),
    "notebook_malformed_metadata": ({}, None),
    "notebook_stalling_answer": ({}, None),
}
LYING_ANSWERS = {"notebook_lying_answers"}  # every numerical answer must score 0
# The worker re-arms its SIGALRM handler before every call, so a setup cell that
# ignores SIGALRM cannot turn a hung call into a whole-batch timeout.
NOTEBOOK_REASONS = {"notebook_setup_disables_timer": "did not finish within its time limit"}


def check_notebook(name: str, corpus, sealed: Path, times: int) -> None:
    (sealed / "inputs").mkdir()
    path = sealed / "inputs" / f"{name}.ipynb"
    nb = _notebook(name)
    if name == "notebook_malformed_metadata":  # nbformat would refuse to write it
        path.write_text(json.dumps(nb), encoding="utf-8")
    else:
        build.write_notebook(nb, path)
    lost, note = NOTEBOOK_EXPECTED[name]
    runs = [grade_into(path, corpus, sealed / "out") for _ in range(times)]
    first, data = runs[0]
    scores = first.by_group()
    assert {k: scores[k][0] for k in KERNELS} == {k: float(lost.get(k, 10)) for k in KERNELS}
    answers = {k: v for k, v in scores.items() if k not in KERNELS}
    if name in LYING_ANSWERS:
        assert answers and all(got == 0 for got, _ in answers.values())
    elif name == "notebook_stalling_answer":  # only the stalling answer is lost
        lost_answers = [t["name"] for t in data["tests"] if t["status"] == "failed"]
        assert len(lost_answers) == 1 and "ex13_gradient" in lost_answers[0]
    else:
        assert answers and all(got == total for got, total in answers.values())  # the answers cell still counts
    if note:
        assert any(note in n["en"] for n in first.notes), first.notes
    if name in NOTEBOOK_REASONS:
        lost_tests = [t for t in data["tests"] if t["status"] == "failed"]
        assert lost_tests and all(NOTEBOOK_REASONS[name] in t["output"] for t in lost_tests)
    for _, again in runs[1:]:
        assert [(t["name"], t["score"]) for t in again["tests"]] == [(t["name"], t["score"]) for t in data["tests"]]


@pytest.mark.parametrize("name", sorted(NOTEBOOK_EXPECTED))
def test_notebook_attack_costs_only_its_cells(name, corpus, sealed):
    check_notebook(name, corpus, sealed, times=2 if name in REGRADED_IN_FAST_RUN else 1)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(NOTEBOOK_EXPECTED) - REGRADED_IN_FAST_RUN))
def test_notebook_attack_regrades_identically(name, corpus, sealed):
    check_notebook(name, corpus, sealed, times=2)


# ---------------------------------------------------------------- end to end: `m5 grade`
CLI_ATTACKS = ["kill_parent", "print_fake_json", "fake_results_json"]


def test_m5_grade_cli_grades_a_folder_of_attacks(tmp_path):
    """The real command on a folder: exit 0, one honest results.json per file, grades.csv,
    no forged report on stdout, no sandbox process alive afterwards."""
    inputs, out, private_tmp, cwd = (tmp_path / n for n in ("inputs", "out", "tmp", "cwd"))
    for folder in (inputs, private_tmp, cwd):
        folder.mkdir()
    for attack in CLI_ATTACKS:
        build.write_attack(attack, inputs)
    env = {**os.environ, "TMPDIR": str(private_tmp), "M5_PROGRESS": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "grade", str(inputs), "--out", str(out), "--no-shrink"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "FAKE" not in done.stdout
    for attack in CLI_ATTACKS:  # one folder per submission, named by its path (suffix kept)
        data = json.loads((out / f"{attack}.py" / "results.json").read_text())
        # `m5 grade` also grades the exNN_ answers of a .py: compare the kernels' points
        kernel_points = sum(t["score"] for t in data["tests"] if not re.match(r"ex\d\d", t["name"]))
        assert kernel_points == pytest.approx(sum(expected_scores(attack).values()))
        assert "FAKE" not in json.dumps(data)
    rows = (out / "grades.csv").read_text().splitlines()
    assert len(rows) == 1 + len(CLI_ATTACKS)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [
            *(f"{a}.py" for a in CLI_ATTACKS),
            "grades.csv",
            "class_report.html",
            "class_report.json",
            "grades.json",
            "grades_final.csv",
            "similarity_pairs.json",
            "written_answers.json",
        ]
    )
    assert list(cwd.iterdir()) == [] and list(private_tmp.iterdir()) == []
    leftovers = [p for p in psutil.process_iter(["cmdline"]) if any(str(private_tmp) in part for part in (p.info["cmdline"] or []))]
    assert leftovers == []
