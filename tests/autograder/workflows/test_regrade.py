"""The same grade on every regrade, hostile or not.

A submission that kills the zygote (the sandbox's first process) ends its sandbox, but
only once the kernel acts on that death; meanwhile the worker parent went on, and
whether its next reply reached the grader first depended on timing (a kernel graded 10
or 0 from one run to the next). The parent now writes no reply once the process it was
forked from is dying: the step in which it was killed is always the one lost.

The fast test takes timing out of it: the worker runs under a stand-in for the zygote
whose death tears nothing down (the slowest possible sandbox teardown). The slow test
regrades every attack five times in real sandboxes and demands one score each.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest
from adversarial import build  # tests/autograder is on sys.path (pytest rootdir-relative import)

import reference_impl
from autograder.demo import CORRECT
from autograder.grade.extract import extract
from autograder.grade.pipeline import grade_submission
from autograder.grade.worker_handle import WORKER_ENTRY, WORKER_PACKAGE, WorkerLost, WorkerProcess
from autograder.grade.worker_session import WorkerSession
from tests.autograder.grade.worker.test_worker_attacks import write_attack
from tests.autograder.workflows.test_adversarial import BUDGET, EXPECTED, sealed  # noqa: F401 - `sealed` is a fixture used below

KERNELS = reference_impl.KERNEL_NAMES
KILL_THE_KEEPER = '''

import os as _os, signal as _signal


def _kill_the_keeper():
    """SIGKILL the worker parent's parent: the zygote in a recycled sandbox."""
    with open("/proc/{}/stat".format(_os.getppid()), "rb") as _fh:
        _stat = _fh.read()
    _os.kill(int(_stat[_stat.rfind(b")") + 2:].split()[1]), _signal.SIGKILL)
'''
AT_LOAD = KILL_THE_KEEPER + "\n_kill_the_keeper()\n"
IN_A_CALL = (
    KILL_THE_KEEPER
    + """

_dqn_targets = dqn_targets


def dqn_targets(*args, **kwargs):
    if not _os.environ.get("M5_TEST_KILLED"):
        _os.environ["M5_TEST_KILLED"] = "1"
        _kill_the_keeper()
    return _dqn_targets(*args, **kwargs)
"""
)
# Stands for the zygote: starts the worker and waits; its death ends nothing.
KEEPER = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"


@pytest.fixture
def keeper_session(tmp_path):
    """A WorkerSession on a worker started (outside any sandbox) by a stand-in zygote."""
    sessions = []

    def start(source: str) -> WorkerSession:
        path = tmp_path / "kernels.py"
        path.write_text(source)
        session = WorkerSession(extract(path, set(KERNELS)).cells, list(KERNELS))
        session.worker = WorkerProcess(
            subprocess.Popen(
                [sys.executable, "-c", KEEPER, sys.executable, "-s", "-P", str(WORKER_PACKAGE / WORKER_ENTRY)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                start_new_session=True,
                cwd=tmp_path,
            )
        )
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        with contextlib.suppress(OSError, AttributeError):  # (no worker left: AttributeError)
            os.killpg(session.worker.pid, signal.SIGKILL)
        for pid in _orphans():
            os.kill(pid, signal.SIGKILL)


def _orphans() -> list[int]:
    """Workers of this test reparented away from the killed keeper (matched by path)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if str(WORKER_PACKAGE / WORKER_ENTRY).encode() in handle.read() and int(entry) != os.getpid():
                        found.append(int(entry))
            except OSError:
                pass
    return found


def _load(session: WorkerSession) -> str:
    """Load the cells; "loaded", or the reason the worker was lost."""
    session._send_load()
    try:
        while not session._take_load_reply(session._receive(time.monotonic() + 60, session._load_limits())):
            pass
    except WorkerLost as lost:
        return lost.reason
    return "loaded"


def test_a_cell_that_kills_the_zygote_is_always_the_step_lost(keeper_session):
    """Old code: the parent went on and reported the cells loaded (every kernel found)."""
    session = keeper_session(CORRECT.read_text() + AT_LOAD)
    assert _load(session) == "crashed"
    assert session._current_cell == session.cells[0].id  # the .py file: the cell blamed


def test_a_call_that_kills_the_zygote_loses_its_kernel_every_time(keeper_session, corpus):
    """Old code: dqn_targets's batch was answered (its kernel graded 10)."""
    session = keeper_session(CORRECT.read_text() + IN_A_CALL)
    assert _load(session) == "loaded"
    kc = corpus["dqn_targets"]
    with pytest.raises(WorkerLost) as lost:
        session.call_batch(kc.request, len(kc.calls))
    assert lost.value.reason == "crashed"


# ---------------------------------------------------------------- every attack, five times
FILE_ATTACKS = sorted(p.stem for pattern in ("worker_*.py", "sandbox_*.py") for p in build.HERE.glob(pattern))
ATTACKS = sorted(EXPECTED) + FILE_ATTACKS


@pytest.mark.slow
@pytest.mark.parametrize("attack", ATTACKS)
def test_every_attack_gets_one_score_in_five_regrades(attack, corpus, sealed):
    """Each adversarial attack (attacks/*.py and the worker_* files) graded five times,
    each in a fresh grading: one set of scores."""
    (sealed / "inputs").mkdir()
    writer = write_attack if attack in FILE_ATTACKS else build.write_attack
    path = writer(attack, sealed / "inputs")
    seen = set()
    for _ in range(5):
        result = grade_submission(path, corpus, shrink=False, budget=BUDGET)
        seen.add(tuple(sorted((t.group, t.key, t.score) for t in result.tests)))
    assert len(seen) == 1, f"{attack}: {len(seen)} different gradings in five"
