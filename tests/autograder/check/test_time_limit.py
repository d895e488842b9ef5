"""The public checks' time limit (``autograder/check/time_limit.py``, shipped as ``m5_student.time_limit``).

Both ways of stopping a check are exercised here on Linux: the alarm (POSIX, main
thread) and the watchdog that Windows, and any thread but the main one, rely on.
"""

from __future__ import annotations

import threading
import time

import pytest

from autograder.check import time_limit as tl
from autograder.check.time_limit import CheckTimeout, time_limit

METHODS = ["alarm", "watchdog"]


def spin() -> None:
    while True:
        pass


@pytest.mark.parametrize("method", METHODS)
def test_a_python_infinite_loop_is_stopped_with_its_limit(method):
    started = time.monotonic()
    with pytest.raises(CheckTimeout) as caught, time_limit(0.3, method=method):
        spin()
    assert 0.25 <= time.monotonic() - started < 5
    assert caught.value.seconds == pytest.approx(0.3)
    assert "0.3 s" in str(caught.value)


@pytest.mark.parametrize("method", METHODS)
def test_a_swallowed_timeout_is_followed_by_another(method):
    """The kernel (or Hypothesis' engine, which then runs the kernel again) catches the first raise:
    a second one follows, and the block still ends as timed out."""
    swallowed = []

    def stubborn():
        for _ in range(3):
            try:
                deadline = time.monotonic() + 3  # bounded: without a second raise the test fails, never hangs
                while time.monotonic() < deadline:
                    pass
            except BaseException:  # noqa: BLE001 - what a student's bare except does
                swallowed.append(True)

    started = time.monotonic()
    with pytest.raises(CheckTimeout), time_limit(0.2, method=method):
        stubborn()
    assert len(swallowed) == 3 and time.monotonic() - started < 10


@pytest.mark.parametrize("method", METHODS)
def test_a_quick_block_is_never_interrupted_later(method):
    with time_limit(0.2, method=method):
        total = sum(range(1000))
    time.sleep(0.4)  # past the limit: nothing may arrive after the block ended
    assert total == 499500


def test_a_watchdog_raise_never_lands_after_its_block_ends():
    """Blocks that end right around their limit, many times: the timeout is either raised
    inside the block (or as it ends), or not at all, never in the code that follows."""
    outcomes = {"in_time": 0, "timed_out": 0}
    for i in range(150):
        limit = 0.002 + (i % 7) * 0.0005
        try:
            with time_limit(limit, method="watchdog"):
                deadline = time.perf_counter() + limit
                while time.perf_counter() < deadline:
                    pass
            outcomes["in_time"] += 1
        except CheckTimeout:
            outcomes["timed_out"] += 1
        # A late raise would surface in this loop, outside any handler, and fail the test.
        for _ in range(20000):
            pass
    assert sum(outcomes.values()) == 150


def test_the_watchdog_stops_a_loop_in_another_thread():
    result = {}

    def worker():
        assert not tl.alarm_available()  # not the main thread: the watchdog is chosen
        try:
            with time_limit(0.3):
                spin()
        except CheckTimeout as exc:
            result["seconds"] = exc.seconds

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    thread.join(10)
    assert result == {"seconds": 0.3}


def test_without_sigalrm_the_watchdog_is_chosen(monkeypatch):
    import signal

    assert tl.alarm_available()
    monkeypatch.delattr(signal, "SIGALRM")
    assert not tl.alarm_available()
    with pytest.raises(CheckTimeout), time_limit(0.2):
        spin()


def test_the_alarm_restores_the_previous_handler():
    import signal

    before = signal.getsignal(signal.SIGALRM)
    with time_limit(1.0, method="alarm"):
        pass
    assert signal.getsignal(signal.SIGALRM) is before and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"seconds": 0}, "`seconds` must be a positive number, got 0"),
        ({"seconds": -1.0}, "`seconds` must be a positive number, got -1.0"),
        ({"seconds": float("nan")}, "`seconds` must be a positive number, got nan"),
        ({"seconds": 1.0, "method": "thread"}, "`method` must be 'alarm' or 'watchdog', got 'thread'"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message), time_limit(**kwargs):
        pass


@pytest.mark.parametrize("method", METHODS)
def test_raises_landing_while_the_limit_is_disarmed_never_outlive_the_block(method, monkeypatch):
    """With raises every 0.5 ms, some land in the ``finally`` that disarms the limit. A limit
    left armed kept raising into whatever ran next (a worker of the test run, killed by it)."""
    monkeypatch.setattr(tl, "REPEAT", 0.0005)
    late = 0
    for i in range(200):
        try:
            with time_limit(0.002 + (i % 7) * 0.0005, method=method):
                deadline = time.perf_counter() + 0.002 + (i % 7) * 0.0005
                while time.perf_counter() < deadline:
                    pass
        except CheckTimeout:
            pass
        try:
            for _ in range(30000):  # a late raise lands here
                pass
        except CheckTimeout:
            late += 1
    assert late == 0
    assert threading.active_count() == 1 or all(t.name != "m5-check-watchdog" for t in threading.enumerate())


def test_a_watchdog_is_armed_only_once_its_thread_runs(monkeypatch):
    """On a loaded machine the thread that starts the watchdog may wait longer than the limit
    before it runs again: the clock starts only then, so no raise lands before the block."""
    real_start = threading.Thread.start

    def slow_start(self):
        real_start(self)
        time.sleep(0.05)  # 25 times the limit

    monkeypatch.setattr(threading.Thread, "start", slow_start)
    with time_limit(0.002, method="watchdog"):
        pass
    time.sleep(0.05)
    assert all(t.name != "m5-check-watchdog" for t in threading.enumerate())


def _spin_as(filename: str):
    """A function that spins for ``seconds``, compiled as if it lived in ``filename``."""
    namespace: dict = {"time": time}
    code = "def spin(seconds):\n    end = time.perf_counter() + seconds\n    while time.perf_counter() < end:\n        pass\n"
    exec(compile(code, filename, "exec"), namespace)
    return namespace["spin"]


def test_the_watchdog_never_raises_inside_the_limits_own_code(monkeypatch):
    """A raise landing in the exit or the disarm could skip the disarm (the watchdog then kept
    raising into whatever ran next: a worker of the test run, killed by it). So the watchdog
    waits while the checked thread runs the limit's own code, and raises once it leaves it."""
    machinery_spin = _spin_as("<the limit's own code>")
    student_spin = _spin_as("<the student's code>")
    monkeypatch.setattr(tl, "_MACHINERY", tl._MACHINERY | {"<the limit's own code>"})
    start = time.perf_counter()
    with pytest.raises(CheckTimeout), time_limit(0.01, method="watchdog"):
        machinery_spin(0.15)  # 15 times the limit: no raise may land in here
        student_spin(5.0)  # the first raise lands here, well before 5 s
    assert 0.15 <= time.perf_counter() - start < 2.0
    time.sleep(0.05)
    assert all(t.name != "m5-check-watchdog" for t in threading.enumerate())
