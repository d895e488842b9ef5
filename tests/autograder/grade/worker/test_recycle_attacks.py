"""Recycling hands nothing on: attacker -> victim pairs graded in one class run.

An attacker tries to leave something in its sandbox for the next submission there:
lowered limits, a nice value or a CPU set on the zygote (which runs as the same uid),
files that fill /scratch, /tmp and /dev/shm while no directory lists them, memfds, an
abstract unix socket, SysV objects, a hostname. The seccomp allow-list refuses the
calls that reach another process or make a socket; the zygote kills what survives and
checks its own state before every fork (``recycle.Baseline``). Each victim is a
correct submission that writes cache files, allocates memory and loses every point
if it sees anything inherited: its grades must equal its solo grading.
"""

from __future__ import annotations

import dataclasses
import json
import sys

import pytest

import autograder.grade.worker_handle as worker_handle
from autograder.demo import CORRECT
from autograder.grade import sandbox
from autograder.grade.pipeline import KERNELS, grade_many
from autograder.grade.sandbox import seccomp
from autograder.grade.worker.recycle import WRITABLE_DIRS, Baseline
from tests.autograder.grade.worker.test_recycle import _files  # tests/autograder is on sys.path; `recycles` is conftest's

pytestmark = pytest.mark.skipif(sandbox.isolation().level != "bubblewrap", reason="recycling needs bubblewrap's pid namespace")

COVERT = "m5-covert-channel"  # the attacker's abstract unix socket

# What a process in a fresh sandbox sees; printed by PROBE, then compared by VICTIM.
PROBE = """
import json, os, resource
print(json.dumps({"limits": {n: resource.getrlimit(getattr(resource, n)) for n in
                             ("RLIMIT_AS", "RLIMIT_NOFILE", "RLIMIT_STACK", "RLIMIT_CPU", "RLIMIT_FSIZE",
                              "RLIMIT_MEMLOCK", "RLIMIT_NPROC", "RLIMIT_CORE")},
                  "nice": os.getpriority(os.PRIO_PROCESS, 0),
                  "affinity": sorted(os.sched_getaffinity(0)),
                  "host": os.uname().nodename}))
"""

# Everything an attacker may try on the processes it shares the sandbox with: the
# zygote (the parent's parent of the student's process), pid 1 and every other pid;
# then SysV IPC and the hostname. Each attempt may fail; none may reach the next one.
LIMIT_ATTACKS = """
import os as _os, resource as _r, socket as _socket, ctypes as _ctypes

def _ppid(pid):
    with open("/proc/%d/stat" % pid, "rb") as _fh:
        _stat = _fh.read()
    return int(_stat[_stat.rfind(b")") + 2:].split()[1])

def _attempt(fn, *args):
    try:
        fn(*args)
    except (OSError, ValueError):
        pass

_ZYGOTE = _ppid(_os.getppid())
_TARGETS = [_ZYGOTE, 1] + [int(p) for p in _os.listdir("/proc") if p.isdigit() and int(p) != _os.getpid()]
_TARGETS = TARGETS
for _pid in _TARGETS:
    for _which, _value in ((_r.RLIMIT_AS, 300 << 20), (_r.RLIMIT_NOFILE, 16), (_r.RLIMIT_STACK, 64 << 10)):
        _attempt(_r.prlimit, _pid, _which, (_value, _value))
    _attempt(_os.setpriority, _os.PRIO_PROCESS, _pid, 19)
    _attempt(_os.sched_setaffinity, _pid, {min(_os.sched_getaffinity(0))})
_attempt(_os.setpriority, _os.PRIO_USER, 0, 19)
_attempt(_os.setpriority, _os.PRIO_PGRP, 0, 19)
_attempt(_socket.sethostname, "attacker")
_libc = _ctypes.CDLL(None, use_errno=True)
_libc.shmget(0, 1 << 20, 0o1666)   # IPC_PRIVATE, IPC_CREAT | 0666
_libc.msgget(0, 0o1666)
_libc.semget(0, 1, 0o1666)
"""

# Fills /scratch, /tmp and /dev/shm with unlinked files (O_TMPFILE) and a memfd, all
# held by a garbage cycle of unix sockets (each end of a socketpair queued in the
# other) and by a detached process started while the grader reads the numerical
# answers, which also listens on an abstract unix socket.
SPACE_ATTACKS = (
    '''
import os as _os, socket as _socket, array as _array

def _fill(memfds):
    """Descriptors of unlinked files that take all free space, and of ``memfds``
    memfds of 32 MB (RLIMIT_FSIZE caps each file)."""
    held = []
    for _place in ("/scratch", "/tmp", "/dev/shm"):
        while True:
            try:
                _fd = _os.open(_place, _os.O_TMPFILE | _os.O_RDWR, 0o600)
            except OSError:
                break
            held.append(_fd)
            try:
                _os.posix_fallocate(_fd, 0, 32 << 20)
            except OSError:
                break
    for _ in range(memfds):
        try:
            _fd = _os.memfd_create("hog")
            held.append(_fd)
            _os.posix_fallocate(_fd, 0, 32 << 20)
        except OSError:
            break
    return held

def _cycle(held):
    """A socketpair whose ends sit in each other's queues, carrying ``held``: no
    process owns it once closed."""
    try:
        _a, _b = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_DGRAM)
        _a.sendmsg([b"x"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, _array.array("i", held + [_a.fileno()]))])
        _b.sendmsg([b"x"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, _array.array("i", [_b.fileno()]))])
        _a.close()
        _b.close()
    except OSError:
        pass

if not _os.path.exists("/scratch/.attacked"):  # once per sandbox, not at every load
    open("/scratch/.attacked", "w").close()
    _held = _fill(32)  # 1 GB of memfds
    _cycle(_held)
    for _fd in _held:
        _os.close(_fd)


class _Survivor:
    def __array__(self, dtype=None, copy=None):
        import time
        if _os.fork() == 0:
            _os.setsid()
            if _os.fork() == 0:
                _keep = []
                try:
                    _listener = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
                    _listener.bind("\\0%s")
                    _listener.listen(8)
                    _keep.append(_listener.fileno())
                except OSError:
                    pass
                _keep += _fill(8)
                _cycle(_keep)  # nothing is released when this process is killed: no collection runs
                while True:
                    time.sleep(1)
            _os._exit(0)
        import numpy
        return numpy.asarray(1.0)


ex09_active_mean_nll = _Survivor()
'''
    % COVERT
)

ATTACKER = CORRECT.read_text() + LIMIT_ATTACKS.replace("TARGETS", "_TARGETS") + SPACE_ATTACKS
# Only the zygote's limits, priority and CPU set (its worker parent stays sound and
# exits cleanly), or only the space: the zygote's own checks must see each alone.
ATTACKERS_OF_THE_ZYGOTE = {
    "limits": CORRECT.read_text() + LIMIT_ATTACKS.replace("TARGETS", "[_ZYGOTE]"),
    "space": CORRECT.read_text() + SPACE_ATTACKS,
}

# A correct submission that needs what a fresh sandbox gives: its limits, priority and
# CPU set, free space for cache files, memory; it loses every point if anything of the
# last submission is there (a process, a socket, a SysV object, a changed hostname).
VICTIM_CHECKS = """
import os as _os, resource as _r, socket as _socket
_EXPECTED = %r
_TRACES = []


def _ancestors():
    pid, seen = _os.getpid(), set()
    while pid > 0 and pid not in seen:
        seen.add(pid)
        with open("/proc/%%d/stat" %% pid, "rb") as _fh:
            stat = _fh.read()
        pid = int(stat[stat.rfind(b")") + 2:].split()[1])
    return seen


def _limits():
    for _name, _value in _EXPECTED["limits"].items():
        if list(_r.getrlimit(getattr(_r, _name))) != list(_value):
            _TRACES.append(_name)
    if _os.getpriority(_os.PRIO_PROCESS, 0) != _EXPECTED["nice"]:
        _TRACES.append("nice")
    if sorted(_os.sched_getaffinity(0)) != _EXPECTED["affinity"]:
        _TRACES.append("affinity")
    if _os.uname().nodename != _EXPECTED["host"]:
        _TRACES.append("hostname")


def _space():
    for _place in ("/scratch", "/tmp", "/dev/shm"):
        _st = _os.statvfs(_place)
        if _st.f_bfree < 0.9 * _st.f_blocks:
            _TRACES.append("space " + _place)
        with open(_place + "/victim_cache.bin", "wb") as _fh:  # a cache file
            _fh.write(b"c" * (8 << 20))


def _neighbours():
    _TRACES.extend("pid %%s" %% p for p in _os.listdir("/proc") if p.isdigit() and int(p) not in _ancestors())
    try:  # pid 1 outlives every submission: the last one could have rewritten its memory
        open("/proc/1/mem", "r+b").close()
        _TRACES.append("pid 1 writable")
    except OSError:
        pass
    for _listing in ("/proc/net/unix", "/proc/net/tcp", "/proc/net/tcp6", "/proc/sysvipc/shm",
                     "/proc/sysvipc/msg", "/proc/sysvipc/sem"):
        with open(_listing) as _fh:
            if len(_fh.read().splitlines()) > 1:
                _TRACES.append(_listing)


def _covert():
    try:
        _peer = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except PermissionError:
        return  # no sockets in the sandbox
    try:
        _peer.connect("\\0%s")
        _TRACES.append("covert channel")
    except OSError:
        pass


def _memory():
    import numpy as _np
    _block = _np.ones(64 << 20)  # 512 MB, every page touched
    del _block


for _check in (_limits, _space, _neighbours, _memory, _covert):
    try:
        _check()
    except Exception as _exc:  # MemoryError, OSError: a sandbox that is not as fresh
        _TRACES.append(repr(_exc))
"""

VICTIM_END = """

if _TRACES:
    for _name in %r:
        del globals()[_name]
""" % (list(KERNELS),)


@pytest.fixture(scope="module")
def fresh_state() -> dict:
    """What a process of a fresh sandbox sees (the default limits, as in grade_many)."""
    result = sandbox.run([sys.executable, "-I", "/m5/probe.py"], files={"probe.py": PROBE.encode()}, limits=sandbox.Limits(), timeout=60)
    return json.loads(result.stdout.decode().strip().splitlines()[-1])


@pytest.fixture
def victim(fresh_state) -> str:
    return VICTIM_CHECKS % (fresh_state, COVERT) + CORRECT.read_text() + VICTIM_END


def _tests(result) -> list[str]:
    return [repr(t) for t in result.tests]


def _class_run_after_attackers(tmp_path, corpus, victim: str, attacker: str = ATTACKER) -> tuple[list, object]:
    """Grade the victim alone, then [attacker, attacker, victim, victim] in one --jobs 1
    class run: two sandboxes taken in turn, so each victim gets an attacker's sandbox."""
    (tmp_path / "solo").mkdir()
    (tmp_path / "class").mkdir()
    solo = grade_many(_files(tmp_path / "solo", victim), corpus, jobs=1, shrink=False, answers=True)[0]
    paths = _files(tmp_path / "class", attacker, attacker, victim, victim)
    return grade_many(paths, corpus, jobs=1, shrink=False, answers=True), solo


def test_victims_of_recycled_sandboxes_keep_their_solo_grades(tmp_path, corpus, recycles, victim):
    results, solo = _class_run_after_attackers(tmp_path, corpus, victim)
    assert sum(t.score for t in solo.tests if t.group in KERNELS) == 100, [t.key for t in solo.tests if not t.passed]
    assert recycles == [True, True]  # every attack refused or cleared: both sandboxes recycled
    for result in results[2:]:
        assert _tests(result) == _tests(solo), (recycles, [t.key for t in result.tests if not t.passed])


@pytest.fixture
def old_seccomp_rules(monkeypatch):
    """The allow-list as it was before (prlimit64, setpriority, sched_setaffinity on
    any pid; sockets): only the zygote's own checks stand between the pair."""
    from autograder.grade.sandbox import probe

    loose = seccomp.ALLOWED_SYSCALLS + ("prlimit64", "setpriority", "sched_setaffinity") + seccomp.DENIED_SOCKET_SYSCALLS
    monkeypatch.setattr(seccomp, "ALLOWED_SYSCALLS", loose)
    monkeypatch.setattr(seccomp, "CONDITIONAL_SYSCALLS", {})
    seccomp.seccomp_program.cache_clear()
    plan, info = probe.probe_isolation()
    program = seccomp.seccomp_program()
    monkeypatch.setattr(probe, "probe_isolation", lambda: (dataclasses.replace(plan, seccomp=program), info))
    yield
    seccomp.seccomp_program.cache_clear()


@pytest.mark.parametrize("attack", sorted(ATTACKERS_OF_THE_ZYGOTE))
def test_the_zygote_refuses_to_recycle_what_the_old_rules_let_an_attacker_change(
    tmp_path, corpus, recycles, victim, old_seccomp_rules, attack
):
    results, solo = _class_run_after_attackers(tmp_path, corpus, victim, ATTACKERS_OF_THE_ZYGOTE[attack])
    if attack == "limits":
        assert True not in recycles  # the zygote saw its own limits changed: each victim got a new sandbox
    for result in results[2:]:
        assert _tests(result) == _tests(solo), (recycles, [t.key for t in result.tests if not t.passed])


def test_socket_calls_and_other_processes_limits_are_refused_with_eperm():
    result = sandbox.run(
        [sys.executable, "-I", "/m5/probe.py"],
        files={
            "probe.py": b"""
import json, os, resource, socket
found = {}
def attempt(name, fn, *args):
    try:
        fn(*args)
        found[name] = "allowed"
    except OSError as exc:
        found[name] = type(exc).__name__
attempt("unix", socket.socket, socket.AF_UNIX, socket.SOCK_STREAM)
attempt("inet", socket.socket, socket.AF_INET, socket.SOCK_STREAM)
attempt("socketpair", socket.socketpair)
attempt("prlimit 1", resource.prlimit, 1, resource.RLIMIT_NOFILE, (16, 16))
attempt("prio user", os.setpriority, os.PRIO_USER, 0, 19)
attempt("prio 1", os.setpriority, os.PRIO_PROCESS, 1, 19)
attempt("affinity 1", os.sched_setaffinity, 1, {0})
attempt("sethostname", socket.sethostname, "x")
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def sysv(name, *args):
    def call():
        if getattr(libc, name)(*args) < 0:
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number))
    return call
attempt("shmget", sysv("shmget", 0, 1 << 20, 0o1600))
attempt("msgget", sysv("msgget", 0, 0o1600))
attempt("semget", sysv("semget", 0, 1, 0o1600))
attempt("mq_open", sysv("mq_open", b"/m5q", 0o100 | 2, 0o600, None))
# what a process may still do to itself
attempt("own nofile", resource.setrlimit, resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE))
attempt("read pid 1", resource.prlimit, 1, resource.RLIMIT_NOFILE)
attempt("own nice", os.nice, 1)
attempt("own affinity", os.sched_setaffinity, 0, os.sched_getaffinity(0))
print(json.dumps(found))
"""
        },
        limits=sandbox.Limits(),
        timeout=60,
    )
    found = json.loads(result.stdout.decode().strip().splitlines()[-1])
    own = ("own nofile", "read pid 1", "own nice", "own affinity")
    assert {k: v for k, v in found.items() if k not in own} == dict.fromkeys(set(found) - set(own), "PermissionError")
    assert [found[k] for k in own] == ["allowed"] * 4


def _baseline(**changes) -> Baseline:
    fields = {
        "limits": (((1, 2),), 0, 0, (0, 1)),
        "host": ("m5-sandbox", "(none)"),
        "space": ((10, 5),) * 3,
        "fds": (0, 1, 2),
        "lists": (b"header\n",),
    }
    return Baseline({**fields, **changes})


@pytest.mark.parametrize(
    "field, changed",
    [
        ("limits", (((1, 1),), 0, 0, (0, 1))),
        ("limits", (((1, 2),), 19, 0, (0, 1))),
        ("limits", (((1, 2),), 0, 0, (0,))),
        ("host", ("attacker", "(none)")),
        ("space", ((10, 5), (9, 5), (10, 5))),
        ("space", ((10, 5), (10, 4), (10, 5))),
        ("fds", (0, 1, 2, 7)),
        ("lists", (b"header\nsocket\n",)),
    ],
)
def test_a_baseline_differs_in_whatever_a_submission_changed(field, changed):
    assert _baseline() == _baseline()
    assert _baseline() != _baseline(**{field: changed})
    assert _baseline().differences(_baseline(**{field: changed})) == [field]


def test_the_baseline_covers_every_writable_directory_and_namespace_list():
    now = Baseline.now()
    assert len(now.fields["space"]) == len(WRITABLE_DIRS)
    assert set(now.fields) == {"limits", "host", "space", "fds", "lists"}


def test_openmp_and_blas_threads_still_work_under_the_narrowed_rules():
    """OpenMP may bind its threads (sched_setaffinity of a thread id, now refused):
    torch and numpy with two threads each, bound or not, still compute."""
    script = b"""
import json, numpy, torch
torch.set_num_threads(2)
a = torch.ones(512, 512)
print(json.dumps({"torch": float((a @ a).sum()), "threads": torch.get_num_threads(),
                  "numpy": float(numpy.linalg.inv(numpy.eye(200) * 2).sum())}))
"""
    for bind in ({}, {"OMP_PROC_BIND": "true"}):
        env = {"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2", "MKL_NUM_THREADS": "2", **bind}
        result = sandbox.run(
            [sys.executable, "-I", "/m5/threads.py"], files={"threads.py": script}, env=env, limits=sandbox.Limits(), timeout=120
        )
        assert result.returncode == 0, result.stderr_tail
        assert json.loads(result.stdout.decode().strip().splitlines()[-1]) == {"torch": 512.0**3, "threads": 2, "numpy": 100.0}


class _FakeCgroup:
    def __init__(self, held):
        self.held = held

    def shmem_bytes(self):
        return self.held


class _FakeProc:
    def __init__(self, held, files=1 << 20):
        self.sandbox_cgroup = None if held == "no cgroup" else _FakeCgroup(held)
        self.sandbox_file_bytes = files


def test_the_grader_refuses_a_sandbox_whose_cgroup_still_holds_shared_memory():
    bound = (1 << 20) + worker_handle.RECYCLE_SHMEM_SLACK
    assert worker_handle.shared_memory_back(_FakeProc(bound)) is True
    assert worker_handle.shared_memory_back(_FakeProc(bound + 1)) is False  # a memfd kept alive by no process
    assert worker_handle.shared_memory_back(_FakeProc(None)) is True  # no readable memory cgroup
    assert worker_handle.shared_memory_back(_FakeProc("no cgroup")) is True


def test_a_recycled_sandbox_holds_no_more_shared_memory_than_a_fresh_one(tmp_path, corpus, monkeypatch, recycles):
    """After attackers that filled every tmpfs and 1.25 GB of memfds, the cgroup's
    shared memory at hand-over is within the bound (read from the real cgroup)."""
    from autograder.grade.sandbox import cgroups

    seen = []
    real = cgroups.WorkerCgroup.shmem_bytes
    monkeypatch.setattr(cgroups.WorkerCgroup, "shmem_bytes", lambda self: seen.append(real(self)) or seen[-1])
    paths = _files(tmp_path, ATTACKER, ATTACKER, CORRECT.read_text(), CORRECT.read_text())
    grade_many(paths, corpus, jobs=1, shrink=False, answers=True)
    assert recycles == [True, True]
    if None in seen:
        pytest.skip("no readable memory cgroup here")
    print("shmem at hand-over:", seen)
    assert len(seen) == 2 and max(seen) <= worker_handle.RECYCLE_SHMEM_SLACK + (8 << 20), seen
