"""Attacks on the worker itself: its checks, its clocks, its processes, its replies.

Each attack (``adversarial/worker_*.py``, a fragment put on top of the correct
submission) is graded with exact per-kernel scores, inside the same sealed test folder
as ``test_adversarial.py`` (nothing left running, nothing written). Time limits are
checked against generous bounds only: what matters is that they are finite and
enforced from outside the student's process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from adversarial import build  # tests/autograder is on sys.path (pytest rootdir-relative import)
from fixture_paths import FIXTURES  # tests/autograder is on sys.path (tests/conftest.py)

import reference_impl
from autograder.grade.pipeline import NOT_GRADED, grade_submission  # `corpus`: the session fixture
from autograder.grade.worker_session import Budget
from tests.autograder.workflows.test_adversarial import BUDGET, sealed  # noqa: F401 - `sealed` is a fixture used below

HERE = FIXTURES
ATTACKS = HERE / "adversarial"
KERNELS = reference_impl.KERNEL_NAMES
ROOT = HERE.parents[1]


def scores(result) -> dict[str, float]:
    return {k: got for k, (got, _) in result.by_group().items() if k in KERNELS}


def expected(lost: dict[str, float]) -> dict[str, float]:
    return {k: float(lost.get(k, 10)) for k in KERNELS}


# Attacks put on top of another attack rather than on the plain correct submission.
ON_TOP_OF = {"worker_patch_checks": "mutate_inputs"}


def write_attack(name: str, folder: Path) -> Path:
    base = None
    if name in ON_TOP_OF:
        base = build.compose((build.ATTACKS / f"{ON_TOP_OF[name]}.py").read_text(encoding="utf-8"))
    path = folder / f"{name}.py"
    path.write_text(build.compose((ATTACKS / f"{name}.py").read_text(encoding="utf-8"), base), encoding="utf-8")
    return path


def failures(result, kernel: str, lang: str = "en") -> list[str]:
    return [t.failure.message[lang] for t in result.tests if t.group == kernel and not t.passed]


# ---------------------------------------------------------------- .py attacks
ATTACK_SCORES = {
    # the parent compares the shared input buffer itself: patching the child changes
    # nothing, the two mutating kernels of mutate_inputs still lose their point
    "worker_patch_checks": ({"behavior_support_mask": 9, "fqe_targets": 9}, None),
    # the daemons are killed when return_to_go's batch ends, before pessimistic_values runs
    "worker_orphans": ({}, None),
    # the parent refuses the 256 MB message head unread: only the flooding kernel is lost
    "worker_forge_huge_reply": ({"iql_advantage_weights": 0}, "communication"),
    # forged outcome columns: in call order they clash with the child's own outcomes,
    # and dims that wrap around in 64 bits are refused; only the forging kernel is lost
    "worker_forge_bunch": ({"iql_advantage_weights": 0}, "communication"),
    "worker_forge_bunch_wrap": ({"iql_advantage_weights": 0}, "communication"),
}


@pytest.mark.parametrize("attack", sorted(ATTACK_SCORES))
def test_worker_attack_is_graded_as_deserved(attack, corpus, sealed):
    (sealed / "inputs").mkdir()
    result = grade_submission(write_attack(attack, sealed / "inputs"), corpus, shrink=False, budget=BUDGET)
    lost, reason = ATTACK_SCORES[attack]
    assert scores(result) == expected(lost)
    if reason:
        kernel = next(iter(lost))
        assert all(reason in text for text in failures(result, kernel))


def test_patched_checks_lose_exactly_the_no_mutation_points(corpus, sealed):
    (sealed / "inputs").mkdir()
    result = grade_submission(write_attack("worker_patch_checks", sealed / "inputs"), corpus, shrink=False, budget=BUDGET)
    lost = [(t.group, t.key) for t in result.tests if not t.passed]
    assert sorted(lost) == [("behavior_support_mask", "no_mutation"), ("fqe_targets", "no_mutation")]


# ---------------------------------------------------------------- time
SLEEPER = (ATTACKS / "worker_sleeper_cell.py").read_text(encoding="utf-8")


def _setup_cell(source: str, grade_id: str):
    return nbformat.v4.new_code_cell(
        source, metadata={"nbgrader": {"solution": True, "grade": False, "locked": False, "grade_id": grade_id, "schema_version": 3}}
    )


def _sleeper_notebook(folder: Path, count: int, position: int) -> Path:
    cells = [(position + i, _setup_cell(SLEEPER, f"sleep-{i}")) for i in range(count)]
    nb = build.notebook_from_source(build.BASE_SUBMISSION.read_text(), extra_cells=cells)
    return build.write_notebook(nb, folder / "sleepers.ipynb")


@pytest.mark.beside
@pytest.mark.parametrize("idle_wall", [2.0, 1000.0])
def test_cells_that_block_sigalrm_and_sleep_are_stopped_from_outside(corpus, sealed, idle_wall):
    """Two sleepers among the setup cells: each is killed and left out, for idling
    (its process does not run) or, with the idle watch out of reach, at its outside
    deadline; every kernel defined by the other cells keeps full marks."""
    (sealed / "inputs").mkdir()
    path = _sleeper_notebook(sealed / "inputs", count=2, position=2)
    budget = Budget(kernel_timeout=4.0, load_timeout=40.0, cell_timeout=1.0, idle_wall=idle_wall)
    result = grade_submission(path, corpus, shrink=False, budget=budget)
    assert scores(result) == expected({})
    for lang, why in (
        ("en", "slept or waited instead of running" if idle_wall < 10 else "time limit of one cell (1 s)"),
        ("ru", "спала или ждала" if idle_wall < 10 else "лимит времени на одну ячейку (1 с)"),
    ):
        sleeping = [n[lang] for n in result.notes if "sleep-" in n[lang]]
        assert len(sleeping) == 2 and all(why in n for n in sleeping), sleeping


@pytest.mark.beside
def test_two_hundred_sleeping_cells_cost_one_load_cap_not_hours(corpus, sealed):
    """200 sleepers before the kernels: the cells' wall-clock cap ends loading, and
    every kernel fails with the cap's own message (EN and RU)."""
    (sealed / "inputs").mkdir()
    path = _sleeper_notebook(sealed / "inputs", count=200, position=1)
    budget = Budget(kernel_timeout=4.0, load_timeout=3.0, cell_timeout=1.0)
    start = time.monotonic()
    result = grade_submission(path, corpus, shrink=False, budget=budget)
    elapsed = time.monotonic() - start
    assert scores(result) == expected({k: 0 for k in KERNELS})
    for kernel in KERNELS:
        assert set(failures(result, kernel)) == {NOT_GRADED["cells"]["en"].format(k=kernel, limit=3.0)}
        assert set(failures(result, kernel, "ru")) == {NOT_GRADED["cells"]["ru"].format(k=kernel, limit=3.0)}
    assert elapsed < 120  # a generous bound: uncapped, 200 cells x (1 s + grace) is 10 minutes


SLEEPING_KERNEL = """

import signal as _signal
import time as _time


def masked_token_nll(token_log_probs, mask):
    _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGALRM})
    _time.sleep(10**6)
"""


@pytest.mark.beside
@pytest.mark.parametrize("cap", ["submission_wall", "submission_timeout"])
def test_submission_wall_cap_fails_every_kernel_not_yet_graded(corpus, sealed, correct_source, cap):
    """masked_token_nll sleeps with SIGALRM blocked, the idle watch out of reach: its
    call backstop (10 s here) stops it. By then the submission is past its cap, be it the
    honest one (submission_wall plus 3 x the little CPU it used) or the backstop
    (submission_timeout): the kernels before it keep their marks, it is lost as timed
    out, and every later kernel fails with the cap's message (EN and RU)."""
    (sealed / "inputs").mkdir()
    path = sealed / "inputs" / "sleeping_kernel.py"
    path.write_text(correct_source + SLEEPING_KERNEL)
    budget = Budget(kernel_timeout=4.0, load_timeout=20.0, cell_timeout=10.0, idle_wall=1000.0, call_wall=10.0, **{cap: 6.0})
    start = time.monotonic()
    result = grade_submission(path, corpus, shrink=False, budget=budget)
    elapsed = time.monotonic() - start
    later = KERNELS[KERNELS.index("masked_token_nll") + 1 :]
    assert scores(result) == expected({"masked_token_nll": 0, **{k: 0 for k in later}})
    # stopped by the worker's call backstop, or (the 6 s backstop) by the grader first
    assert all("time limit" in text for text in failures(result, "masked_token_nll"))
    for kernel in later:
        for lang, words in (("en", "total time limit"), ("ru", "общий лимит времени")):
            told = failures(result, kernel, lang)
            assert told and all(words in text and kernel in text for text in told), told
    assert elapsed < 10.0 + 60  # the call backstop, plus generous room for a loaded machine


def test_the_submission_cap_grows_with_the_cpu_its_code_used():
    """120 s plus 3 x the CPU used, at most 1,500 s: the 40 ms loop's 444 s of CPU earn
    it 1,452 s; a sleeper that used none has 120 s."""
    from autograder.grade.worker_session import WorkerSession

    session = WorkerSession([], [])
    assert session.time_limit == 120.0
    session._charge(444.0)
    assert session.time_limit == 120.0 + 3 * 444.0
    for forged in (-1.0, float("nan"), "9", 1e9, True):
        session._charge(forged)
    assert session.time_limit == 120.0 + 3 * 444.0
    session._charge(100.0)
    assert session.time_limit == 1500.0


SLEEPS_IN_EVERY_CALL = """

import signal as _signal
import time as _time


def _sleeping(fn):
    def asleep(*args, **kwargs):
        _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGALRM})
        _time.sleep(10**6)
        return fn(*args, **kwargs)
    return asleep


for _name in NAMES:
    globals()[_name] = _sleeping(globals()[_name])
"""


@pytest.mark.beside
def test_a_kernel_that_sleeps_is_cut_for_idling_and_only_it_fails(corpus, sealed, correct_source):
    """masked_token_nll blocks SIGALRM and sleeps in every call: the parent sees that its
    process is not running and stops it once the idle limit passes (not at the 20 s
    call backstop); the kernel fails and says why in both languages, the rest of the
    batch is not waited for, and every other kernel keeps its marks."""
    (sealed / "inputs").mkdir()
    path = sealed / "inputs" / "sleeping_kernel.py"
    path.write_text(correct_source + SLEEPS_IN_EVERY_CALL.replace("NAMES", repr(("masked_token_nll",))))
    result = grade_submission(path, corpus, shrink=False)
    assert scores(result) == expected({"masked_token_nll": 0})
    for lang, limit in (("en", "2 s"), ("ru", "2 с")):
        told = set(failures(result, "masked_token_nll", lang))
        assert len(told) == 1 and limit in next(iter(told)), told
        assert ("slept or waited" if lang == "en" else "спал или ждал") in next(iter(told))


@pytest.mark.beside
def test_a_kernel_that_sleeps_a_little_in_every_call_is_cut_by_its_batch_total(corpus, sealed, correct_source):
    """Each call sleeps less than the idle limit of one call (0.3 s of 0.5 s): the
    batch's calls together may idle 5 x 0.5 s, and then the kernel is cut."""
    (sealed / "inputs").mkdir()
    path = sealed / "inputs" / "dozing_kernel.py"
    path.write_text(correct_source + SLEEPS_IN_EVERY_CALL.replace("10**6", "0.3").replace("NAMES", repr(("masked_token_nll",))))
    result = grade_submission(path, corpus, shrink=False, budget=Budget(idle_wall=0.5))
    assert scores(result) == expected({"masked_token_nll": 0})
    told = failures(result, "masked_token_nll")
    assert told and all("slept or waited" in text and "2.5 s in all" in text for text in told), told


def test_budgets_let_a_40ms_per_call_loop_pass(corpus):
    """The documented budgets are consistent: at 40 ms of CPU per call, every kernel's
    batch fits its CPU budget twice over, and the whole corpus fits the submission's
    wall-clock cap even when a neighbor leaves it a third of a core."""
    budget = Budget()
    for kc in corpus.values():
        assert 2 * 0.040 * len(kc.calls) <= budget.batch_cpu(len(kc.calls)), kc.kernel
        assert budget.call_timeout >= 0.040 * 50
    total = 0.040 * sum(len(kc.calls) for kc in corpus.values())
    # the honest cap: a third of a core makes the kernels' wall 3 x their CPU; the rest
    # (cells, starting sandboxes, judging) fits the 120 s base, and the backstop is above it
    assert budget.load_timeout <= budget.submission_wall / 2
    assert budget.submission_wall + budget.wall_factor * total <= budget.submission_timeout


SLOWDOWN = """

import time as _time


def _forty_ms(fn):
    def slow(*args, **kwargs):
        end = _time.process_time() + 0.040
        while _time.process_time() < end:
            pass
        return fn(*args, **kwargs)
    return slow


for _name in ("dqn_targets", "double_dqn_targets", "masked_token_nll", "cql_discrete_penalty", "expectile_loss",
              "return_to_go", "pessimistic_values", "behavior_support_mask", "fqe_targets",
              "iql_advantage_weights"):
    globals()[_name] = _forty_ms(globals()[_name])
"""


@pytest.mark.slow
def test_a_correct_loop_at_40ms_per_call_gets_full_marks(corpus, tmp_path):
    """The plain-loop submission slowed to 40 ms of CPU per call (about 35 s per
    kernel; under the old 30 s batch deadline it failed as "far too slow")."""
    path = tmp_path / "slow_loops.py"
    path.write_text((HERE / "submissions" / "correct_loops.py").read_text() + SLOWDOWN)
    result = grade_submission(path, corpus, shrink=False, kernels=["expectile_loss"])
    assert result.by_group() == {"expectile_loss": (10.0, 10.0)}


# ---------------------------------------------------------------- grader memory
FORGERS = {
    # a JSON header claiming 256 MB
    "huge_header": "head = struct.pack('>Q', HUGE) + struct.pack('>I', HUGE - 4)",
    # a small header, then a 256 MB blob
    "huge_blob": "head = struct.pack('>Q', HUGE) + struct.pack('>I', 2) + b'{}'",
}
FORGER = """
import os, struct
HUGE = 256 << 20
{head}
os.write(1, head)
chunk = b"[" * (1 << 20)
try:
    for _ in range(256):
        os.write(1, chunk)
except OSError:
    pass
"""
GRADER = """
import json, os, subprocess, sys
import numpy as np
from autograder.grade.worker import wire
from autograder.grade.worker_session import WorkerSession
from autograder.grade.worker_handle import WorkerLost, WorkerProcess


def peak_kb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


request = wire.encode_request({"op": "call", "kernel": "return_to_go", "call_timeout": 2.0,
                               "calls": [[[np.zeros(8)], {}]] * 100})
session = WorkerSession([], ["return_to_go"])
before = peak_kb()
session.worker = WorkerProcess(subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdin=subprocess.PIPE,
                                                stdout=subprocess.PIPE))
try:
    session.call_batch(request, 100)
    reason = None
except WorkerLost as lost:
    reason = lost.reason
session.close()
print(json.dumps({"reason": reason, "grew_mb": (peak_kb() - before) / 1024}))
"""


@pytest.mark.parametrize("forger", sorted(FORGERS))
def test_a_forged_256mb_reply_is_refused_without_growing_the_grader(forger, tmp_path):
    """A worker that answers with a 256 MB frame costs the kernel (a protocol loss),
    and the grading process's peak memory (measured in its own subprocess) barely moves."""
    done = subprocess.run(
        [sys.executable, "-c", GRADER, FORGER.format(head=FORGERS[forger])], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    assert measured["reason"] == "protocol"
    assert measured["grew_mb"] < 100, measured  # the requirement is < 500 MB; a refused frame costs ~nothing
