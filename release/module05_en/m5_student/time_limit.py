"""A time limit for one public check that works wherever CPython runs (shipped as ``m5_student.time_limit``).

Two ways to stop a check that runs too long, chosen per call:

* **alarm** (Linux, macOS, in the main thread): ``SIGALRM`` from ``setitimer``; the
  handler raises :class:`CheckTimeout`, which also interrupts a blocking ``time.sleep``.
* **watchdog** (Windows, which has neither; any other thread; any platform whose
  ``signal`` module lacks them): a timer thread asks the interpreter to raise
  :class:`CheckTimeout` in the checked thread (``PyThreadState_SetAsyncExc``). It stops
  Python loops, the usual infinite loop; a call blocked inside C code (a sleep, one huge
  numpy operation) is stopped when that call returns.

Either way the check's own code runs in the calling thread, unchanged. :class:`CheckTimeout`
derives from ``BaseException``, so Hypothesis and the kernel's ``except Exception`` do not
swallow it.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import threading


REPEAT = 0.2  # seconds between raises once the limit is reached


class CheckTimeout(BaseException):
    """A check ran past its limit; :attr:`seconds` is that limit."""

    # The watchdog can only raise an exception class, not an instance: it raises a
    # subclass whose ``limit`` is its own seconds.
    limit: float = 0.0

    @property
    def seconds(self) -> float:
        return float(self.args[0]) if self.args else float(self.limit)

    def __str__(self) -> str:
        return f"the check did not finish within {self.seconds:g} s"


def alarm_available() -> bool:
    """Whether SIGALRM can time the calling thread (POSIX, main thread)."""
    return (
        hasattr(signal, "SIGALRM")
        and hasattr(signal, "setitimer")
        and hasattr(signal, "ITIMER_REAL")
        and threading.current_thread() is threading.main_thread()
    )


@contextlib.contextmanager
def time_limit(seconds: float, *, method: str | None = None):
    """Raise :class:`CheckTimeout` in the calling thread if the block runs past ``seconds``.

    ``method`` forces "alarm" or "watchdog" (tests); by default the alarm where it works,
    else the watchdog.
    """
    if not seconds > 0:
        raise ValueError(f"time_limit: `seconds` must be a positive number, got {seconds!r}")
    method = method or ("alarm" if alarm_available() else "watchdog")
    if method not in ("alarm", "watchdog"):
        raise ValueError(f"time_limit: `method` must be 'alarm' or 'watchdog', got {method!r}")
    limit = _alarm if method == "alarm" else _watchdog
    with limit(seconds):
        yield


@contextlib.contextmanager
def _alarm(seconds: float):
    fired = []

    def on_alarm(signum, frame):
        fired.append(True)
        raise CheckTimeout(seconds)

    previous = signal.signal(signal.SIGALRM, on_alarm)
    # Again every REPEAT seconds after the limit: a raise swallowed on its way (by the kernel's bare
    # ``except:``, or inside Hypothesis' own code, which then runs the kernel again) is followed by another.
    signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if fired:  # the limit was reached but the block ended anyway: the check still timed out
        raise CheckTimeout(seconds)


def _raise_in_thread(thread_id: int, exc_type: type[BaseException] | None) -> int:
    """Ask CPython to raise ``exc_type`` in thread ``thread_id`` at its next bytecode (None: clear a pending one)."""
    set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    return set_async_exc(ctypes.c_ulong(thread_id), ctypes.py_object(exc_type) if exc_type is not None else None)


class _Watchdog:
    """One timer thread for one block: raises at the limit and again every :data:`REPEAT` seconds
    until :meth:`stop`, and never after it."""

    def __init__(self, seconds: float):
        self.thread_id = threading.get_ident()
        self.exc_type = type("CheckTimeout", (CheckTimeout,), {"limit": seconds, "__module__": __name__})
        self.lock = threading.Lock()
        self.active = True
        self.fired = False
        self.stopped = threading.Event()
        self.timer = threading.Thread(target=self._run, args=(seconds,), name="m5-check-watchdog", daemon=True)

    def _run(self, seconds: float) -> None:
        wait = seconds
        while not self.stopped.wait(wait):
            with self.lock:
                if not self.active:
                    return
                self.fired = True
                _raise_in_thread(self.thread_id, self.exc_type)
            wait = REPEAT

    def stop(self) -> bool:
        """Disarm; True when the limit was reached (a raise still pending is cleared, not delivered later)."""
        with self.lock:
            self.active = False
            self.stopped.set()
            if self.fired:
                _raise_in_thread(self.thread_id, None)
            return self.fired


@contextlib.contextmanager
def _watchdog(seconds: float):
    watchdog = _Watchdog(seconds)
    watchdog.timer.start()
    try:
        yield
    finally:
        # Reached the limit but the block ended anyway (the kernel's bare ``except:``
        # swallowed the raise, or it was still pending): the check still timed out.
        if watchdog.stop():
            raise CheckTimeout(seconds)
