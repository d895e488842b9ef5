"""The idle watch (autograder/grade/worker/idle.py): what counts as not running.

A process that computes, even one preempted on a machine with more runnable processes
than cores, is never idle; one that sleeps, is stopped or waits for a child of its own
is. No timing is asserted: each test samples until the outcome is known.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from autograder.grade.worker import idle

SPIN = "while True: pass"
SLEEP = "import time; time.sleep(600)"
THREAD_SPINS = "import threading, time\nthreading.Thread(target=lambda: [0 for _ in iter(int, 1)], daemon=True).start()\ntime.sleep(600)"
WAITS_FOR_CHILD = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'while True: pass'])"


@pytest.fixture
def started():
    procs = []

    def start(code: str) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", code])
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        for pid in _descendants(proc.pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.wait()


def _wait_until(condition, seconds: float = 30.0) -> None:
    """Poll ``condition`` every 10 ms until it holds (a test fails if it never does)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the process never reached the state the test needs"
        time.sleep(0.01)


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def _descendants(pid: int) -> list[int]:
    from autograder.grade.worker.proctree import descendants

    return descendants(pid)


def _watch(pid: int, samples: int, limit: float = 0.3) -> idle.IdleWatch:
    """Sample ``pid`` ``samples`` times, 20 ms apart (CPU read as the parent reads it)."""
    from autograder.grade.worker.proctree import cpu_seconds

    watch = idle.IdleWatch(pid, limit)
    for _ in range(samples):
        watch.sample(time.monotonic(), cpu_seconds(pid) or 0.0)
        time.sleep(0.02)
    return watch


def test_processes_that_compute_are_never_idle_even_when_preempted(started):
    """Three spinners per core: each waits for a CPU most of the time, in state R."""
    from autograder.grade.worker.proctree import cpu_seconds

    spinners = [started(SPIN) for _ in range(3 * (os.cpu_count() or 1))]
    _wait_until(lambda: all((cpu_seconds(p.pid) or 0.0) > 0.02 for p in spinners))  # all of them running
    assert all(_watch(p.pid, 50).total == 0.0 for p in spinners[:2])


def test_a_thread_that_computes_keeps_its_sleeping_process_running(started):
    proc = started(THREAD_SPINS)
    _wait_until(lambda: _threads(proc.pid) >= 2)  # the computing thread has started
    assert _watch(proc.pid, 50).total == 0.0


@pytest.mark.parametrize(
    "code, stop", [(SLEEP, False), (SPIN, True), (WAITS_FOR_CHILD, False)], ids=["sleeps", "stopped", "waits_for_its_child"]
)
def test_sleeping_stopped_or_waiting_for_its_own_child_is_idle(started, code, stop):
    # No wait for the process to settle: while it starts it computes, which is never
    # idle, so the sampling below only ends once it sleeps, is stopped or waits.
    proc = started(code)
    if stop:
        os.kill(proc.pid, signal.SIGSTOP)
    watch = idle.IdleWatch(proc.pid, 0.3)
    from autograder.grade.worker.proctree import cpu_seconds

    while not watch.sample(time.monotonic(), cpu_seconds(proc.pid) or 0.0):
        time.sleep(0.02)
    assert watch.idle > 0.3


def test_intervals_in_which_the_child_waits_for_the_parent_are_not_counted(started):
    proc = started(SLEEP)
    watch = idle.IdleWatch(proc.pid, 0.1)
    for _ in range(30):
        assert not watch.sample(time.monotonic(), 0.0, waiting=True)
        time.sleep(0.02)
    assert watch.total == 0.0


def test_unread_bytes_sees_what_lies_in_a_pipe():
    r, w = os.pipe()
    try:
        assert idle.unread_bytes(r) == 0
        os.write(w, b"abc")
        assert idle.unread_bytes(r) == idle.unread_bytes(w) == 3
    finally:
        os.close(r)
        os.close(w)


def test_a_disk_wait_counts_only_when_two_samples_in_a_row_find_it(monkeypatch):
    """The short reads of an import are not idling; a process held in D is."""
    seen = iter([b"D", b"R", b"D", b"S", b"D", b"D", b"D"])
    monkeypatch.setattr(idle, "state", lambda pid: next(seen))
    watch = idle.IdleWatch(1, 10.0)
    counted = []
    for step in range(8):  # the first sample only starts the clock
        before = watch.total
        watch.sample(step * 0.1, 0.0)
        counted.append(round(watch.total - before, 3))
    assert counted == [0, 0, 0, 0, 0.1, 0, 0.1, 0.1]
