"""Attack: processes that outlive the call that started them.

In its first call, return_to_go starts a classic daemon (fork, setsid, fork again, so
it is nobody's child) that spins forever, and a second child in its own session that
sleeps; then it answers correctly. pessimistic_values, graded later, returns garbage
if either process is still alive (state other than zombie). The worker's parent kills
everything a batch started when the batch ends, so both kernels keep 10/10 and no
process survives the grading.
"""

import os
import signal
import time

_honest_rtg = return_to_go  # noqa: F821 - defined by the correct code above
_honest_pessimistic = pessimistic_values  # noqa: F821
_STARTED: list[int] = []


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


def _daemon(body):
    """Start ``body`` in a process that is nobody's child; return its pid."""
    read, write = os.pipe()
    first = os.fork()
    if first == 0:
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if os.fork() == 0:
            os.write(write, str(os.getpid()).encode())
            body()
        os._exit(0)
    os.waitpid(first, 0)
    pid = int(os.read(read, 32))
    os.close(read)
    os.close(write)
    return pid


def _spin():
    while True:
        pass


def _sleep():
    while True:
        time.sleep(60)


def return_to_go(rewards, gamma=1.0):
    if not _STARTED:
        _STARTED.extend([_daemon(_spin), _daemon(_sleep)])
    return _honest_rtg(rewards, gamma)


def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
    if any(_alive(pid) for pid in _STARTED):
        return [123.0]  # wrong on every input: the daemons must be gone by now
    return _honest_pessimistic(empirical_means, counts, radius_scale=radius_scale)
