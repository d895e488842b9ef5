"""Resource limits of one worker, and the keeper: the small trusted process that applies
them, drops root, and reaps everything the sandbox leaves behind.

Every spawn starts with the keeper, run by the grader's own interpreter::

    grader ── keeper ── bwrap ── bwrap (pid 1 of the sandbox) ── worker
                 └──── (orphans of the sandbox are reparented here and reaped)

The keeper joins the worker's cgroups, sets the rlimits, makes unreadable host
directories the interpreter lives in reachable for the unprivileged uid (a private
mount namespace, root only), in the fallback as root puts the command into new pid,
network, ipc and uts namespaces, drops to that uid, becomes a child subreaper and
arms a parent-death SIGKILL; without bubblewrap, the command's process loads the seccomp
allow-list (no_new_privs, then PR_SET_SECCOMP) right before its exec. It then forks the command and waits: once the command exits it
kills whatever of the sandbox is still a child of it, reaps it all and exits with the
command's status. bwrap's outer process exits without waiting for its inner pid-1
process, which was therefore left as a zombie of the machine's init on every run; as a
subreaper, the keeper reaps it.

The keeper is a separate program, not a Popen ``preexec_fn``: code run between fork and
exec in a multi-threaded grader can deadlock on a lock another thread held at fork time.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from dataclasses import dataclass

SANDBOX_UID = 65534  # "nobody"
# Exit codes of the keeper when it cannot set the sandbox up (it writes one line to stderr).
LIMITS_FAILED = 121  # an rlimit cannot be raised: the grader runs under a lower hard limit
SETUP_FAILED = 122  # a namespace or mount of the keeper's own setup failed
CGROUP_FAILED = 123  # joining the worker's cgroup failed


@dataclass(frozen=True)
class Limits:
    """Resource limits for one sandboxed worker.

    cpu_seconds:        RLIMIT_CPU per process (SIGXCPU at the limit, SIGKILL one second later).
    memory_bytes:       RLIMIT_AS per process (``import torch`` alone reserves a few GiB).
    total_memory_bytes: memory cgroup limit on everything the worker holds at once
                        (all its processes plus its tmpfs files); OOM-kill above it.
    cpu_cores:          CPU bandwidth of the whole worker (cgroup cpu.max / CFS quota),
                        e.g. 1.0 = one core, however many processes it starts.
    max_processes:      tasks (processes and threads) the worker may have alive at once;
                        enforced by a pids cgroup (RLIMIT_NPROC without one, when not root).
    max_file_bytes:     RLIMIT_FSIZE: largest file any process may write (its captured
                        stderr included).
    max_tmp_bytes:      size of each private tmpfs on /tmp and /dev/shm (bubblewrap only).
    max_scratch_bytes:  size of the private tmpfs on /scratch, the working directory.
    """

    cpu_seconds: int = 120
    memory_bytes: int = 4 << 30
    total_memory_bytes: int = 3 << 30
    cpu_cores: float = 1.0
    max_processes: int = 64
    max_file_bytes: int = 64 << 20
    max_tmp_bytes: int = 256 << 20
    max_scratch_bytes: int = 256 << 20

    def __post_init__(self) -> None:
        for name in (
            "cpu_seconds",
            "memory_bytes",
            "total_memory_bytes",
            "max_processes",
            "max_file_bytes",
            "max_tmp_bytes",
            "max_scratch_bytes",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"Limits.{name} must be an int, got {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"Limits.{name} must be positive, got {value}")
        cores = self.cpu_cores
        if isinstance(cores, bool) or not isinstance(cores, (int, float)) or not 0 < cores <= 1024:
            raise ValueError(f"Limits.cpu_cores must be a number in (0, 1024], got {cores!r}")


def rlimits(limits: Limits, *, nproc: bool) -> list[tuple[str, int, int]]:
    """The (name, soft, hard) rlimits the keeper sets; RLIMIT_NPROC only when asked
    (it counts every process of the uid on the host, so it is a last resort)."""
    wanted = [
        ("RLIMIT_CPU", limits.cpu_seconds, limits.cpu_seconds + 1),  # SIGXCPU, then SIGKILL
        ("RLIMIT_AS", limits.memory_bytes, limits.memory_bytes),
        ("RLIMIT_FSIZE", limits.max_file_bytes, limits.max_file_bytes),
        ("RLIMIT_CORE", 0, 0),  # a core dump would be a large write nobody reads
    ]
    if nproc:
        wanted.append(("RLIMIT_NPROC", limits.max_processes, limits.max_processes))
    return wanted


def unraisable_limits(limits: Limits) -> list[str]:
    """Limits this process cannot give a worker: the requested hard limit is above the
    grader's own hard limit and the grader may not raise it (not root). Each entry is a
    readable sentence; the list is empty when every limit can be set."""
    if os.geteuid() == 0:
        return []  # root may raise hard limits (the keeper's probe run proves it)
    problems = []
    for name, _, hard in rlimits(limits, nproc=False):
        current = resource.getrlimit(getattr(resource, name))[1]
        if current != resource.RLIM_INFINITY and current < hard:
            problems.append(f"{name} is capped at {current} for this process (ulimit), the worker needs {hard}")
    return problems


KEEPER = r"""
import ctypes, json, os, resource, signal, sys
config = json.loads(sys.argv[1])
command = sys.argv[2:]
libc = ctypes.CDLL(None, use_errno=True)

def fail(code, message):
    os.write(2, (message + "\n").encode())
    os._exit(code)

for fd in config["cgroup_fds"]:  # join the worker's cgroups before anything can fork
    try:
        os.write(fd, str(os.getpid()).encode())
    except OSError as exc:
        fail(%(cgroup)d, "M5-SANDBOX: cannot join the worker cgroup: %%s" %% exc)
    os.close(fd)
for name, soft, hard in config["rlimits"]:
    which = getattr(resource, name)
    try:
        resource.setrlimit(which, (soft, hard))
    except (ValueError, OSError) as exc:
        fail(%(limits)d, "M5-SANDBOX: cannot set %%s to %%d, the grader's hard limit is %%d (%%s)"
             %% (name, hard, resource.getrlimit(which)[1], exc))

def check(result, what):
    if result != 0:
        fail(%(setup)d, "M5-SANDBOX: %%s failed: %%s" %% (what, os.strerror(ctypes.get_errno())))

program = None
if config["seccomp_fd"] is not None:
    # Without bubblewrap the keeper loads the seccomp allow-list itself, just before the
    # command's exec: the raw BPF comes in a memory file (no pyseccomp under -I -S).
    fd = config["seccomp_fd"]
    program = os.pread(fd, os.fstat(fd).st_size, 0)
    os.close(fd)

def load_seccomp():
    # PR_SET_NO_NEW_PRIVS, then PR_SET_SECCOMP(SECCOMP_MODE_FILTER, struct sock_fprog):
    # every process the command starts inherits the filter and can never shed it.
    if program is None:
        return
    count = len(program) // 8  # struct sock_filter is 8 bytes
    buffer = ctypes.create_string_buffer(program, len(program))
    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    fprog = Fprog(count, ctypes.cast(buffer, ctypes.c_void_p))
    check(libc.prctl(38, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    check(libc.prctl(22, 2, ctypes.byref(fprog), 0, 0), "loading the seccomp filter")

if config["reveal"]:
    # Host directories the unprivileged uid cannot walk into (e.g. /root/.pyenv under a
    # 0700 /root): in a private mount namespace, cover the closed directory with an open
    # tmpfs and bind back, read-only, only what the sandbox needs from it.
    os.umask(0o022)
    check(libc.unshare(0x00020000), "unshare(CLONE_NEWNS)")
    check(libc.mount(None, b"/", None, (1 << 14) | (1 << 18), None), "making mounts private")
    # Opened in the new namespace (a bind source must be one of its mounts), before the
    # covers hide them.
    held = {p: os.open(p, os.O_PATH | os.O_CLOEXEC) for _, paths in config["reveal"] for p in paths}
    for cover, paths in config["reveal"]:
        check(libc.mount(b"tmpfs", cover.encode(), b"tmpfs", 2 | 4, b"mode=0755"), "tmpfs on " + cover)
        for path in paths:
            source = "/proc/self/fd/%%d" %% held[path]
            if os.path.isdir(source):
                os.makedirs(path, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
            check(libc.mount(source.encode(), path.encode(), None, 4096 | (1 << 14), None), "bind of " + path)
            check(libc.mount(None, path.encode(), None, 4096 | 32 | 1 | 2 | 4, None), "read-only " + path)
    for fd in held.values():
        os.close(fd)

def drop_root(uid):
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)

if config["isolate"]:
    # Root without bubblewrap: new pid, network, ipc and uts namespaces (and a mount
    # namespace for the new /proc), made while still root; the command, pid 1 there,
    # mounts /proc and then drops root itself.
    check(libc.unshare(0x20000000 | 0x40000000 | 0x08000000 | 0x04000000), "unshare(namespaces)")
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans of the sandbox come here
child = os.fork()
if child == 0:
    try:
        if config["isolate"]:  # its own mount namespace: the keeper keeps the host's /proc
            check(libc.unshare(0x00020000), "unshare(CLONE_NEWNS)")
            check(libc.mount(None, b"/", None, (1 << 14) | (1 << 18), None), "making mounts private")
            check(libc.mount(b"proc", b"/proc", b"proc", 2 | 4 | 8, None), "mounting /proc")
        drop_root(config["uid"])
        libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG SIGKILL: dies with the keeper
        load_seccomp()
        os.execv(command[0], command)
    finally:
        os._exit(127)
drop_root(config["uid"])
libc.prctl(1, 9, 0, 0, 0)   # PR_SET_PDEATHSIG SIGKILL; after the uid change, which clears it
if os.getppid() != config["parent"]:  # the grader died before the line above
    os.kill(child, signal.SIGKILL)
    os._exit(1)

# Hold nothing of the sandbox's plumbing: the grader sees EOF as soon as the command
# and its descendants are gone, and a failed bwrap setup closes its readiness pipe.
for fd in config["pass_fds"]:
    try:
        os.close(fd)
    except OSError:
        pass
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 0)
os.dup2(null, 1)

def children():
    found = set()
    for task in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%%s/children" %% task) as handle:
                found.update(int(pid) for pid in handle.read().split())
        except OSError:
            pass
    return found

status, main_done = 0, False
while True:
    if main_done:  # nothing of the sandbox outlives its main process
        for pid in children():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    try:
        pid, wait_status = os.wait()
    except ChildProcessError:
        break
    except InterruptedError:
        continue
    if pid == child:
        status, main_done = wait_status, True
code = os.waitstatus_to_exitcode(status)
os._exit(128 - code if code < 0 else code)
""" % {"limits": LIMITS_FAILED, "setup": SETUP_FAILED, "cgroup": CGROUP_FAILED}


def keeper_argv(
    limits: Limits,
    *,
    cgroup_fds: list[int],
    pass_fds: list[int],
    nproc: bool,
    drop_to_uid: int | None,
    reveal: list[tuple[str, list[str]]],
    isolate: bool = False,
    seccomp_fd: int | None = None,
) -> list[str]:
    """Command prefix that runs the keeper; the sandboxed command follows it.
    ``isolate`` (root only): the keeper itself puts the command into new pid, network,
    ipc and uts namespaces before it drops root. ``seccomp_fd`` (fallback): a descriptor
    holding the raw BPF of the allow-list, which the keeper loads (with no_new_privs)
    right before the command's exec."""
    config = {
        "parent": os.getpid(),
        "cgroup_fds": list(cgroup_fds),
        "pass_fds": list(pass_fds),
        "rlimits": rlimits(limits, nproc=nproc),
        "uid": drop_to_uid,
        "reveal": reveal,
        "isolate": isolate,
        "seccomp_fd": seccomp_fd,
    }
    return [sys.executable, "-I", "-S", "-c", KEEPER, json.dumps(config)]


def default_env(home: str) -> dict[str, str]:
    """A minimal environment: nothing of the grader's (tokens, paths) leaks in."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "M5_PROGRESS": "0",
    }
