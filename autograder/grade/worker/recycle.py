"""The recycling zygote: one sandbox serves one submission after another.

Part of the worker package placed read-only at /m5 (see ``__init__.py``); it imports
only the standard library and nothing of the package. The zygote (:func:`zygote`)
is the sandbox's pid 1 in a class run (``bwrap --as-pid-1``): it never runs student
code and is not dumpable. It forks one trusted worker parent per submission and,
between two of them, kills every other process of the sandbox, empties the writable
directories, drains the grader's pipe and checks that everything the next submission shares with the last one is as
it was before any student code ran (:class:`Baseline`): its own limits, priority and
CPU set, the hostname, the free space of the writable directories, its own open
descriptors, the sockets and SysV objects of the namespaces. Only then does it say
"clean" on a pipe no submission holds. Any doubt ends the zygote, and with it the
sandbox: the grader starts a new one (docs/sandbox.md, "Recycling").
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import time

RECYCLE_FD_ENV = "M5_RECYCLE_FD"  # set by the grader: this worker is a recycling zygote
RECYCLED = b"R"  # zygote -> grader, on the recycle pipe: clean, next parent forked
WRITABLE_DIRS = ("/scratch", "/tmp", "/dev/shm")  # the sandbox's only writable places (emptied between parents)
CLEAN_ROUNDS = 400  # kill rounds before the zygote gives up (a fork bomb refills)
# Files of the sandbox's own namespaces (network, IPC) that list what lives there: a
# socket, a SysV segment, queue or semaphore set. They must read as before.
NAMESPACE_LISTS = (
    "/proc/net/unix",
    "/proc/net/tcp",
    "/proc/net/tcp6",
    "/proc/net/udp",
    "/proc/net/udp6",
    "/proc/net/raw",
    "/proc/net/raw6",
    "/proc/net/packet",
    "/proc/sysvipc/shm",
    "/proc/sysvipc/msg",
    "/proc/sysvipc/sem",
)
RLIMITS = tuple(sorted(getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_")))


def zygote(serve, proto_in: int, recycle_fd: int, files) -> int:
    """Serve one submission after another from one sandbox, each from a fresh fork.

    ``serve()`` is the trusted worker parent's whole life (``worker.serve_parent``);
    ``files`` is the grader's tree remover (``sandbox/files.py``). This process never
    runs student code and never reads what a submission wrote. Before each fork it
    checks the sandbox against the :class:`Baseline` taken before the first; after
    each parent it kills, empties and drains (:func:`clean_sandbox`, :func:`drain`).
    Any doubt returns 1, which ends the sandbox.
    """
    if os.getpid() != 1:  # a reaper of bubblewrap's would be pid 1, dumpable, and outlive submissions
        return serve()  # one submission only: the grader sees no "clean" byte and starts a new sandbox
    kept = setup_mounts()  # before any student code runs
    baseline = Baseline.now()
    handlers = ignore_signals()
    while True:
        if Baseline.now() != baseline:
            return 1
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                restore_signals(handlers)
                os.close(recycle_fd)
                code = serve()
            finally:
                os._exit(code)
        status = wait_for(pid)
        if status is None:
            return 1
        if status != 0 or not clean_sandbox(files, kept) or not drain(proto_in):
            return 1
        if Baseline.now() != baseline:
            return 1
        try:
            os.write(recycle_fd, RECYCLED)
        except OSError:
            return 1


# Never ignored: SIGCHLD (ignoring it would reap children before wait_for sees them) and
# the signals of a fault in the process itself.
KEPT_SIGNALS = {
    signal.SIGKILL,
    signal.SIGSTOP,
    signal.SIGCHLD,
    signal.SIGSEGV,
    signal.SIGBUS,
    signal.SIGFPE,
    signal.SIGILL,
    signal.SIGABRT,
    signal.SIGSYS,
    signal.SIGTRAP,
}


def ignore_signals() -> dict:
    """Ignore every signal that could stop or end the zygote from inside (SIGALRM, SIGINT
    and the rest with a handler: as pid 1 it gets only those); the handlers they had,
    for :func:`restore_signals` in each worker parent. A submission can then neither end
    the sandbox early nor make its own grade depend on when the sandbox dies."""
    saved = {}
    for sig in signal.valid_signals():
        if sig in KEPT_SIGNALS:
            continue
        with contextlib.suppress(OSError, ValueError):  # not catchable here
            saved[sig] = signal.signal(sig, signal.SIG_IGN)
    return saved


def restore_signals(saved: dict) -> None:
    """Put back the handlers :func:`ignore_signals` replaced (a handler set outside
    Python reads back as None: the default then)."""
    for sig, handler in saved.items():
        signal.signal(sig, signal.SIG_DFL if handler is None else handler)


class Baseline:
    """What a submission shares with the next one in a recycled sandbox, as read by
    the zygote: equal snapshots mean nothing it could change there has changed."""

    def __init__(self, fields: dict):
        self.fields = fields

    @classmethod
    def now(cls) -> "Baseline":
        """The present state."""
        return cls(
            {"limits": own_limits(), "host": own_identity(), "space": free_space(), "fds": own_descriptors(), "lists": namespace_lists()}
        )

    def __eq__(self, other) -> bool:
        return isinstance(other, Baseline) and self.fields == other.fields

    def differences(self, other: "Baseline") -> list[str]:
        """The names of the fields that differ (for tests and messages)."""
        return sorted(k for k in self.fields.keys() | other.fields.keys() if self.fields.get(k) != other.fields.get(k))


def own_limits() -> tuple:
    """Every rlimit, the nice value, the scheduling policy and the CPU set of this
    process: a worker parent forked from it inherits all of them."""
    limits = tuple(resource.getrlimit(r) for r in RLIMITS)
    return (limits, os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0), tuple(sorted(os.sched_getaffinity(0))))


def own_identity() -> tuple:
    """The hostname and domain name of the UTS namespace the next submission shares."""
    name = os.uname()
    try:
        with open("/proc/sys/kernel/domainname", encoding="ascii", errors="replace") as fh:
            domain = fh.read()
    except OSError:
        domain = None
    return name.nodename, domain


def free_space() -> tuple:
    """Free blocks and inodes of each writable directory. Space an unlinked but open
    file holds (``O_TMPFILE``) shows here though no directory lists it."""
    found = []
    for path in WRITABLE_DIRS:
        try:
            st = os.statvfs(path)
        except OSError:
            found.append(None)
            continue
        found.append((st.f_bfree, st.f_ffree))
    return tuple(found)


def own_descriptors() -> tuple:
    """The descriptors this process holds (none may appear from elsewhere)."""
    try:
        return tuple(sorted(int(fd) for fd in os.listdir("/proc/self/fd")))
    except OSError:
        return ()


def namespace_lists() -> tuple:
    """The contents of NAMESPACE_LISTS (None where unreadable), minus the listing's
    own descriptor: the sockets, SysV objects of the shared namespaces."""
    found = []
    for path in NAMESPACE_LISTS:
        try:
            with open(path, "rb") as fh:
                found.append(fh.read())
        except OSError:
            found.append(None)
    return tuple(found)


def _unescape_mount(field: str) -> str:
    """A mount point as /proc/self/mountinfo writes it (space, tab, newline and
    backslash as octal escapes)."""
    for code in ("\\040", "\\011", "\\012", "\\134"):
        field = field.replace(code, chr(int(code[1:], 8)))
    return field


def setup_mounts(mountinfo: str = "/proc/self/mountinfo") -> list[tuple[str, int, int]]:
    """The sandbox's own mounts inside its writable directories, outermost only, as
    (path, st_dev, st_ino): an interpreter bound under /tmp when the grader's venv lives
    there. Read by the zygote before any student code runs; emptying the writable
    directories keeps them, and a changed one stops the recycling."""
    try:
        with open(mountinfo, encoding="utf-8", errors="surrogateescape") as fh:
            points = [_unescape_mount(fields[4]) for fields in map(str.split, fh) if len(fields) > 4]
    except OSError:
        return []
    inside = sorted(p for p in points if any(p.startswith(d + "/") for d in WRITABLE_DIRS))
    outermost = [p for p in inside if not any(p.startswith(q + "/") for q in inside if q != p)]
    kept = []
    for path in outermost:
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            continue
        kept.append((path, st.st_dev, st.st_ino))
    return kept


def wait_for(pid: int) -> int | None:
    """Wait until child ``pid`` exits, reaping every orphan that dies meanwhile (the
    zygote is the sandbox's pid 1 and the subreaper of everything); its wait status,
    or None if it cannot be waited for."""
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return None
        if done == pid:
            return status


def reap_children() -> None:
    """Collect every exited child (no zombies)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except OSError:
            return
        if pid == 0:
            return


def kill_everyone_else() -> bool:
    """SIGKILL every process of the sandbox but this one (its pid 1, ``bwrap
    --as-pid-1``), in rounds, until /proc lists no other; False if they do not all die."""
    me = os.getpid()
    for _ in range(CLEAN_ROUNDS):
        try:
            os.kill(-1, signal.SIGKILL)  # every process this one may signal, except itself and pid 1
        except ProcessLookupError:
            pass
        except OSError:
            return False
        reap_children()
        others = [int(e) for e in os.listdir("/proc") if e.isdigit() and int(e) not in (1, me)]
        if not others:
            return True
        time.sleep(0.001)
    return False


def clean_sandbox(files, kept: list[tuple[str, int, int]]) -> bool:
    """Kill every process of the sandbox but this one, then empty the
    writable directories (``files.empty_tree``: the grader's own remover of hostile
    trees) but for the sandbox's own mounts in ``kept`` (:func:`setup_mounts`), which
    must be the same ones afterwards. True only when all of it is verified."""
    if not kill_everyone_else():
        return False
    for path in WRITABLE_DIRS:
        keep = tuple(p for p, _, _ in kept if p.startswith(path + "/"))
        if not files.empty_tree(path, keep):
            return False
    for path, dev, ino in kept:
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            return False
        if (st.st_dev, st.st_ino) != (dev, ino):
            return False
    return True


def drain(fd: int) -> bool:
    """Discard grader input the last parent left unread; False if the grader is gone."""
    os.set_blocking(fd, False)
    try:
        while True:
            try:
                if not os.read(fd, 1 << 16):
                    return False
            except BlockingIOError:
                return True
    finally:
        os.set_blocking(fd, True)
