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
import sys
import threading
import time

REPEAT = 0.2  # seconds between raises once the limit is reached
POLL = 0.01  # seconds between the watchdog's looks at its flag


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
def _armed(arm, stop, seconds: float):
    """Run the block between ``arm()`` and ``stop()``; raise :class:`CheckTimeout` after it when
    ``stop()`` says the limit was reached (the block ended anyway: the kernel's bare ``except:``
    swallowed the raise, or it was still pending), so the check still timed out.

    ``stop`` first sets a flag after which no new raise is made (at most one already on its
    way can still land); a raise that lands before ``stop`` returns is caught here and
    ``stop`` (idempotent) runs again. Without this, a raise landing in the ``finally`` before
    the timer was disarmed left it armed, raising every :data:`REPEAT` seconds into whatever
    the thread ran next. The retry is written out in the ``finally``, not called: a raise
    already on its way lands at the next function entry, and one landing at a helper's
    entry, before its ``try``, would skip the disarm; here it lands inside ``stop``, in this
    ``try``.
    """
    try:
        arm()
        yield
    finally:
        while True:
            try:
                fired = stop()
                break
            except CheckTimeout:
                continue
    if fired:
        raise CheckTimeout(seconds)


_MACHINERY = frozenset({__file__, contextlib.__file__})


def _is_machinery(frame) -> bool:
    """Whether ``frame`` runs the limit's own code (this module, contextlib's ``__exit__``), where
    neither way of stopping a check raises."""
    return frame is not None and frame.f_code.co_filename in _MACHINERY


def _alarm(seconds: float):
    state = {"disarming": False, "fired": False}

    def on_alarm(signum, frame):
        if state["disarming"]:
            return
        state["fired"] = True
        # Never raise inside the limit's own machinery (this module, contextlib's __exit__): a raise
        # landing between the block's end and the disarm would skip it and leave the timer armed.
        # The timer repeats, so the raise comes again once the checked code runs.
        if _is_machinery(frame):
            return
        raise CheckTimeout(seconds)

    def stop() -> bool:
        state["disarming"] = True  # from here on the handler never raises
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        return state["fired"]

    def arm() -> None:
        # Again every REPEAT seconds after the limit: a raise swallowed on its way (by the kernel's bare
        # ``except:``, or inside Hypothesis' own code, which then runs the kernel again) is followed by another.
        signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT)

    previous = signal.signal(signal.SIGALRM, on_alarm)
    return _armed(arm, stop, seconds)


# Looked up once: the first lookup runs ctypes' own Python code, where the checked thread
# must not be when the watchdog decides whether it may raise (see _in_machinery).
_SET_ASYNC_EXC = ctypes.pythonapi.PyThreadState_SetAsyncExc


def _raise_in_thread(thread_id: int, exc_type: type[BaseException] | None) -> int:
    """Ask CPython to raise ``exc_type`` in thread ``thread_id`` at its next bytecode (None: clear a pending one)."""
    return _SET_ASYNC_EXC(ctypes.c_ulong(thread_id), ctypes.py_object(exc_type) if exc_type is not None else None)


def _in_machinery(thread_id: int) -> bool:
    """Whether thread ``thread_id`` is running the limit's own code (this module, contextlib's
    ``__exit__``): the watchdog does not raise there, as the alarm's handler does not."""
    return _is_machinery(sys._current_frames().get(thread_id))


class _Watchdog:
    """One timer thread for one block: raises at the limit and again every :data:`REPEAT` seconds
    until :meth:`stop`, and never after it returns.

    The two threads share plain attributes only, never a lock or an event: a raise landing
    in the checked thread between a lock's acquire and its release would leave the lock
    held and both threads waiting on each other.
    """

    def __init__(self, seconds: float):
        self.thread_id = threading.get_ident()
        self.exc_type = type("CheckTimeout", (CheckTimeout,), {"limit": seconds, "__module__": __name__})
        self.seconds = seconds
        self.disarming = False
        self.fired = False
        self.exited = False
        self.armed_at: float | None = None
        self.timer = threading.Thread(target=self._run, name="m5-check-watchdog", daemon=True)

    def _run(self) -> None:
        try:
            deadline = None
            while not self.disarming:
                now = time.monotonic()
                if deadline is None and self.armed_at is not None:
                    deadline = self.armed_at + self.seconds
                if deadline is None or now < deadline:
                    time.sleep(POLL if deadline is None else min(deadline - now, POLL))
                    continue
                if _in_machinery(self.thread_id):
                    # A raise landing in the exit or the disarm could skip the disarm and leave
                    # this thread raising into whatever runs next; wait until the thread is
                    # back in the checked code (or the block has ended and disarmed).
                    time.sleep(POLL / 20)
                    continue
                self.fired = True
                _raise_in_thread(self.thread_id, self.exc_type)
                deadline = now + REPEAT
        finally:
            self.exited = True  # from here on this thread never raises

    def arm(self) -> None:
        """Start the clock, once the timer thread is running (a raise can then only land in the block)."""
        self.timer.start()
        self.armed_at = time.monotonic()

    def stop(self) -> bool:
        """Disarm; True when the limit was reached. Idempotent (see :func:`_armed`)."""
        self.disarming = True  # the timer raises at most once more
        if self.armed_at is not None:  # otherwise it never raised and never will
            while not self.exited:
                time.sleep(POLL / 20)
        _raise_in_thread(self.thread_id, None)  # drop a raise still pending
        return self.fired


def _watchdog(seconds: float):
    watchdog = _Watchdog(seconds)
    return _armed(watchdog.arm, watchdog.stop, seconds)
