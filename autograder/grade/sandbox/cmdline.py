"""The command lines that build a sandbox from a plan: bubblewrap's mounts, or the
fallback's private tree, and the launcher that signals a finished set-up."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from autograder.grade.sandbox import files as sfiles
from autograder.grade.sandbox import paths
from autograder.grade.sandbox.limits import SANDBOX_UID, Limits
from autograder.grade.sandbox.plan import INSIDE_FILES, INSIDE_SCRATCH, Plan

BLOCKED_INIT = b'raise ImportError("this package is not available inside the grading sandbox")\n'
UNSHARE_FLAGS = ("--pid", "--fork", "--kill-child", "--mount", "--mount-proc", "--net", "--ipc", "--uts")


# Runs inside the sandbox before the worker: caps the task count of the worker's uid
# when no pids cgroup does (n >= 0), signals that bwrap's setup is complete, then
# becomes the worker.
_LAUNCHER = (
    "import os,resource,sys;"
    "n=int(sys.argv[1]);"
    "n>=0 and resource.setrlimit(resource.RLIMIT_NPROC,(n,n));"
    "r=int(sys.argv[2]);"
    "os.write(r,b'1');"
    "os.close(r);"
    "os.execv(sys.argv[3],sys.argv[3:])"
)


def launcher(limits: Limits, nproc: bool, ready_fd: int, argv: list[str]) -> list[str]:
    """The launcher command; it writes one byte to ``ready_fd`` once it runs, i.e.
    once bubblewrap's setup (parent-death signals included) is complete."""
    cap = limits.max_processes if nproc else -1
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(cap), str(ready_fd), *argv]


def _bind(path: Path) -> list[str]:
    return ["--ro-bind", str(path), str(path)]


def bwrap_argv(
    plan: Plan, limits: Limits, hide: tuple, files: dict[str, bytes], ro_dirs: dict[str, Path], fds: list[int], as_pid_1: bool = False
) -> list[str]:
    """The bwrap command line (up to and including ``--``); descriptors it must inherit
    are appended to ``fds``. ``as_pid_1``: the command is the sandbox's pid 1, with no
    bwrap reaper there (a recycled sandbox's zygote: a reaper would be a dumpable
    process of the student's uid that outlives every submission).

    The steps run in this order: bwrap mounts in the order given, and each later mount
    covers what an earlier one put at the same place."""
    args = _namespace_args(plan, fds, as_pid_1)
    args += _dev_and_tmp_args(limits)
    args += _system_args()
    args += _root_args(plan, hide, fds)
    args += _placed_file_args(plan, files, ro_dirs, fds)
    # Scratch: a private tmpfs (nosuid, nodev, size-capped) that vanishes with the sandbox.
    args += ["--size", str(limits.max_scratch_bytes), "--tmpfs", INSIDE_SCRATCH, "--chdir", INSIDE_SCRATCH]
    # bwrap builds the new root on a writable tmpfs: make it read-only so the
    # size-capped tmpfs mounts are the only writable places.
    args += ["--remount-ro", "/", "--"]
    return args


def _namespace_args(plan: Plan, fds: list[int], as_pid_1: bool) -> list[str]:
    """bwrap itself, every namespace new, the sandbox's uid, no capabilities, and the
    seccomp filter (its descriptor appended to ``fds``)."""
    args = [
        plan.bwrap,
        "--unshare-all",
        "--unshare-user",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--hostname",
        "m5-sandbox",
    ]
    if as_pid_1:
        args.append("--as-pid-1")
    if plan.disable_userns:
        args.append("--disable-userns")
    if plan.seccomp is not None:
        args += ["--seccomp", str(sfiles.data_fd(plan.seccomp, fds))]
    return args


def _dev_and_tmp_args(limits: Limits) -> list[str]:
    """/proc, a read-only /dev, and size-capped tmpfs mounts at /dev/shm and /tmp."""
    # --dev builds /dev on a writable, RAM-backed tmpfs: make it read-only and give
    # /dev/shm (which multiprocessing and torch use) its own size-capped tmpfs.
    return [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(limits.max_tmp_bytes),
        "--tmpfs",
        "/dev/shm",
        "--remount-ro",
        "/dev",
        "--size",
        str(limits.max_tmp_bytes),
        "--tmpfs",
        "/tmp",
    ]


def _system_args() -> list[str]:
    """The host's system directories (read-only, or the symlinks they are) and the few
    /etc files a Python process needs, where present."""
    args: list[str] = []
    for name in paths.SYSTEM_DIRS:
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            args += _bind(path)
    for name in paths.ETC_FILES:
        args += ["--ro-bind-try", name, name]
    return args


def _root_args(plan: Plan, hide: tuple, fds: list[int]) -> list[str]:
    """The interpreter's roots, read-only, with every hidden path inside them masked
    (an empty directory or file; a masked package's ``__init__`` refuses the import);
    roots inside a masked directory come back read-only."""
    roots = list(plan.roots)
    visible_roots = paths.minimal_roots(roots)
    args: list[str] = []
    for root in visible_roots:
        args += _bind(root)
    hidden = list(plan.hidden) + [Path(h).resolve() for h in hide if os.path.lexists(h)]
    # A hidden path outside every bound root is invisible already; mask the rest.
    exposed = [h for h in hidden if any(paths.is_within(h, r) for r in visible_roots)]
    for path in paths.minimal_roots(exposed):
        if path.is_dir():
            args += ["--tmpfs", str(path)]
            if path in plan.masked_packages:
                args += ["--ro-bind-data", str(sfiles.data_fd(BLOCKED_INIT, fds)), str(path / "__init__.py")]
        else:
            args += ["--ro-bind-data", str(sfiles.data_fd(b"", fds)), str(path)]
        # Interpreter directories that live inside a hidden one come back read-only.
        for root in roots:
            if root != path and paths.is_within(root, path):
                args += _bind(root)
    return args


def _placed_file_args(plan: Plan, files: dict[str, bytes], ro_dirs: dict[str, Path], fds: list[int]) -> list[str]:
    """The plan's masked files (emptied), ``files`` at /m5/<name> and ``ro_dirs`` at their
    inside paths, all read-only."""
    args: list[str] = []
    for masked in plan.masked_files:
        args += ["--ro-bind-data", str(sfiles.data_fd(b"", fds)), str(masked)]
    for name, content in files.items():
        args += ["--ro-bind-data", str(sfiles.data_fd(content, fds)), f"{INSIDE_FILES}/{name}"]
    for inside, host in ro_dirs.items():
        args += ["--ro-bind", str(host), inside]
    return args


def relocate(value: str, tree: Path) -> str:
    """Fallback: map an inside path (/m5/..., /scratch/...) to the private tree."""
    for inside in (INSIDE_FILES, INSIDE_SCRATCH):
        if value == inside or value.startswith(inside + "/"):
            return str(tree / inside.lstrip("/")) + value[len(inside) :]
    return value
