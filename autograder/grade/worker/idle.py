"""The idle watch: how long a student process has spent not running while the parent
waits for it (docs/grading.md, "Time budgets").

A correct kernel or cell computes: while the parent waits for its result, one of its
threads is always running or runnable (state ``R`` in ``/proc/<pid>/task/*/stat``).
A thread that waits for CPU on a loaded machine is still ``R``, so preemption is never
counted. Sleeping, blocking, waiting for its own subprocess, being stopped: none of
these is ``R``. A disk wait (``D``) counts only when two samples in a row find it, so
the short reads of an import are not taken for idling. The watch adds up the sampled intervals in which no thread of the
process was ``R``, less the CPU it used in them, and says when the sum passes a limit.

Only the process itself counts, not its descendants: a kernel blocked waiting for a
subprocess it started is idle (correct kernels never start one). Intervals in which the
process waits for the parent (its outcomes unread in the pipe, or a watched call whose
inputs the parent has not placed yet) are never counted: the caller says so.

Part of the worker package placed read-only at /m5 (see ``__init__.py``); it imports
only the standard library.
"""

from __future__ import annotations

import array
import fcntl
import os
import termios

RUNNING = b"R"
DISK = b"D"
MAX_STEP = 0.25  # the most one sampled interval adds (a parent descheduled longer counts less, never more)


def thread_states(pid: int) -> list[bytes]:
    """The state letter of every thread of ``pid`` ([] if it is gone)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    states = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue  # the thread ended meanwhile
        fields = stat[stat.rfind(b")") + 2 :].split(maxsplit=1)
        if fields:
            states.append(fields[0])
    return states


def state(pid: int) -> bytes:
    """R if some thread of ``pid`` runs or waits only for a CPU; else D if some thread is
    in an uninterruptible wait (mostly disk reads); else the main thread's state (S, T,
    t, Z, ...; X if gone). The main thread is looked at first (one read), the others
    only when it is not running."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return b"X"
    main = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]
    if main == RUNNING:
        return RUNNING
    states = thread_states(pid)
    if RUNNING in states:
        return RUNNING
    return DISK if DISK in states else main


def is_running(pid: int) -> bool:
    """Some thread of ``pid`` runs or waits only for a CPU."""
    return state(pid) == RUNNING


def unread_bytes(fd: int) -> int:
    """Bytes waiting in the pipe ``fd`` (either end); 0 if that cannot be told."""
    count = array.array("i", [0])
    try:
        fcntl.ioctl(fd, termios.FIONREAD, count, True)
    except OSError:
        return 0
    return count[0]


class IdleWatch:
    """Idle seconds of one process, sampled by the parent while it waits for a result.

    :meth:`sample` is called at every look at the child's clocks; :meth:`reset` starts
    a new call, cell or statement; ``waiting`` True at a sample means the child waits for
    the parent, and the interval that ends there is not counted.
    """

    def __init__(self, pid: int, limit: float):
        self.pid = pid
        self.limit = limit
        self.idle = 0.0  # since the last reset
        self.total = 0.0  # since this watch began
        self._last: tuple[float, float] | None = None  # (wall, CPU) at the last sample
        self._disk = False  # the last sample found the process in D

    def reset(self) -> None:
        """A new call, cell or statement starts: its idle time starts at zero."""
        self.idle = 0.0

    def sample(self, now: float, cpu: float, waiting: bool = False) -> bool:
        """Account the interval since the last sample; True once the idle time since the
        last reset exceeds the limit."""
        last, self._last = self._last, (now, cpu)
        if last is None or waiting:
            return False
        seen, was_disk = state(self.pid), self._disk
        self._disk = seen == DISK
        # A disk wait counts only when it lasts from one sample to the next: the short
        # reads of an import are not idling, a process held in D (a vfork child that
        # never execs) is.
        if seen == RUNNING or (seen == DISK and not was_disk):
            return False
        step = min(now - last[0], MAX_STEP) - max(0.0, cpu - last[1])
        if step > 0:
            self.idle += step
            self.total += step
        return self.idle > self.limit


PF_EXITING = 0x4  # /proc/<pid>/stat flags: the process has begun to exit
SIGKILL_BIT = 1 << 8


def dying(pid: int) -> bool:
    """``pid`` is gone, a zombie, exiting, or has a SIGKILL pending (sent, not yet acted
    on: the signal is marked pending before kill() returns to its sender)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        with open(f"/proc/{pid}/status", "rb") as handle:
            status = handle.read()
    except OSError:
        return True
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 7 or fields[0] in (b"Z", b"X", b"x") or int(fields[6]) & PF_EXITING:
        return True
    return any(line.startswith((b"SigPnd:", b"ShdPnd:")) and int(line.split()[1], 16) & SIGKILL_BIT for line in status.splitlines())
