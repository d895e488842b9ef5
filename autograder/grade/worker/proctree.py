"""What the parent reads in /proc: a process's state, CPU clock and descendants."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time

from . import recycle

_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_reap_children = recycle.reap_children  # children that have exited
KILL_FAST_ROUNDS = 20  # rounds of kill_descendants without a pause (a fork bomb refills quickly)
KILL_POLL = 0.001  # then the pause between rounds (s) ...
KILL_WAIT = 5.0  # ... for at most this long in all (s)


def _stat_fields(pid: int) -> list[bytes] | None:
    """The fields of /proc/<pid>/stat after the command name (which may hold spaces and
    parentheses): state, ppid, ..., utime at [11], stime at [12]. None: no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()


def _proc_children(pid: int) -> list[int] | None:
    """Direct children of ``pid`` from /proc/<pid>/task/*/children (None: not available)."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as handle:
                found += [int(p) for p in handle.read().split()]
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            continue
    return found


def _scan_children(pid: int) -> list[int]:
    """Direct children of ``pid`` from a scan of every /proc/<n>/stat."""
    found = []
    for entry in os.listdir("/proc"):
        fields = _stat_fields(int(entry)) if entry.isdigit() else None
        if fields and len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(entry))
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (zombies included)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        children = _proc_children(current)
        if children is None:
            children = _scan_children(current)
        found += children
        todo += children
    return found


def kill_descendants(keep: int | None = None, wait: float = KILL_WAIT) -> None:
    """SIGKILL every process below this one except ``keep``, until none is left (a fork
    bomb refills the tree while it is being killed; the pids cgroup bounds it).

    A killed process ends only once it is scheduled, which on a loaded machine can take
    longer than many rounds of this loop: after the first rounds it waits a little
    between them, for at most ``wait`` seconds in all."""
    me = os.getpid()
    deadline = time.monotonic() + wait
    for round_ in itertools.count():
        alive = [p for p in descendants(me) if p != keep and process_state(p) not in (b"Z", None)]
        if not alive or time.monotonic() > deadline:
            break
        for pid in alive:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        _reap_children()
        if round_ >= KILL_FAST_ROUNDS:
            time.sleep(KILL_POLL)
    _reap_children()


def process_state(pid: int) -> bytes | None:
    fields = _stat_fields(pid)
    return fields[0] if fields else None


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (all its threads), from /proc/<pid>/stat."""
    fields = _stat_fields(pid)
    if not fields or len(fields) < 13:
        return None
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK
