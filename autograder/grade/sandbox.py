"""The sandbox that untrusted student code runs in during grading.

One call to :func:`spawn` starts one worker process under these layers:

* **bubblewrap** (``bwrap``), when it works here: new user, pid, network, ipc, uts and
  cgroup namespaces; an allow-list file system (system directories, the Python
  installation and its site-packages, all read-only; a private size-capped ``/tmp``;
  the scratch folder read-write at its own path and nothing else writable); the
  project's own packages (``reference_impl``, ``autograder``) and any extra ``hide``
  path masked; uid/gid 65534 inside; no capabilities; a new session; killed when the
  grader dies.
* **a pids cgroup** (v1 or v2, whichever is writable), capping every task the worker
  can create. This is the fork-bomb guard that works when the grader runs as root:
  the kernel ignores ``RLIMIT_NPROC`` for (anything mapped to) root.
* **rlimits**: CPU seconds, address space, file size, no core files; plus
  ``RLIMIT_NPROC`` set inside the sandbox (effective only when the worker's real uid
  is not root, i.e. when the grader itself is unprivileged).
* **wall clock**: :func:`run` (or the caller) enforces a timeout, then :func:`terminate`
  kills the pid namespace and every task in the cgroup and reaps them.

If bubblewrap is missing or cannot start, :func:`isolation` reports
``level="fallback"`` with a loud ``warning``; the fallback still applies rlimits, the
cgroup, a new session, parent-death kill, a scrubbed environment and, when ``unshare``
works, pid/network/ipc/uts namespaces, but it cannot hide files.
"""
from __future__ import annotations

import errno
import functools
import itertools
import os
import platform
import select
import shutil
import signal
import site
import stat
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Limits",
    "Isolation",
    "SandboxResult",
    "isolation",
    "spawn",
    "terminate",
    "run",
    "STDERR_NAME",
    "read_tail",
    "seccomp_program",
    "SANDBOX_UID",
]

BWRAP_CANDIDATES = ("/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap")
UNSHARE_CANDIDATES = ("/usr/bin/unshare", "/bin/unshare")
STDERR_NAME = "sandbox-stderr.log"  # the worker's stderr, inside the scratch folder
SANDBOX_UID = 65534  # "nobody"
# bwrap's monitor and its pid-1 reaper (or unshare alone) also sit in the cgroup.
_CGROUP_OVERHEAD = 2
_PROJECT_PACKAGES = ("reference_impl", "autograder")
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Only the /etc entries the dynamic loader and the C library need; the rest of /etc
# (shadow, keys, host configuration) stays out of sight.
_ETC_FILES = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
    "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/alternatives",
)
_BLOCKED_INIT = (
    b'raise ImportError("this package is not available inside the grading sandbox")\n'
)


# ---------------------------------------------------------------- configuration
@dataclass(frozen=True)
class Limits:
    """Resource limits for one sandboxed worker.

    cpu_seconds:     RLIMIT_CPU per process (SIGXCPU at the limit, SIGKILL one second later).
    memory_bytes:    RLIMIT_AS per process (``import torch`` alone reserves a few GiB).
    max_processes:   tasks (processes and threads) the worker may have alive at once;
                     enforced by a pids cgroup (plus RLIMIT_NPROC when not root).
    max_file_bytes:  RLIMIT_FSIZE: largest file any process may write (the stderr
                     log included).
    max_tmp_bytes:   size of the private tmpfs mounted on /tmp (bubblewrap only).
    """

    cpu_seconds: int = 120
    memory_bytes: int = 4 << 30
    max_processes: int = 64
    max_file_bytes: int = 64 << 20
    max_tmp_bytes: int = 256 << 20

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "memory_bytes", "max_processes", "max_file_bytes", "max_tmp_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"Limits.{name} must be an int, got {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"Limits.{name} must be positive, got {value}")


@dataclass(frozen=True)
class Isolation:
    """What the sandbox can actually do on this machine (see :func:`isolation`).

    level:       "bubblewrap" or "fallback".
    warning:     None when every protection is in place, else a loud one-paragraph
                 message for the CLI and the results file.
    process_cap: "cgroup" (pids cgroup), "rlimit" (RLIMIT_NPROC as a non-root uid)
                 or "none".
    details:     free-form facts (paths, probe errors) for logs.
    """

    level: str
    warning: str | None
    process_cap: str
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class SandboxResult:
    """Outcome of :func:`run`. ``returncode`` is the worker's exit status as the grader
    sees it (bubblewrap reports death by signal N as 128+N; a plain child as -N)."""

    returncode: int | None
    stdout: bytes
    stdout_truncated: bool
    timed_out: bool
    stderr_tail: str
    wall_seconds: float


# ---------------------------------------------------------------- path discovery
def _project_package_dirs() -> list[Path]:
    """Directories of this project's own packages, wherever they are installed."""
    dirs = []
    for name in _PROJECT_PACKAGES:
        try:
            module = __import__(name)
        except ImportError:
            continue
        for entry in getattr(module, "__path__", []):
            dirs.append(Path(entry).resolve())
    return dirs


def _hidden_paths(package_dirs: list[Path], python_roots: list[Path]) -> list[Path]:
    """What to hide: the project's package directories, plus the checkout they live in.

    The checkout is the common parent of the packages, unless that parent is part of
    the Python installation (a non-editable install puts the packages straight into
    site-packages, which must stay visible) or the file-system root.
    """
    hidden = list(package_dirs)
    if package_dirs:
        parent = Path(os.path.commonpath([str(d.parent) for d in package_dirs]))
        if parent != Path("/") and not any(_is_within(parent, r) for r in python_roots):
            hidden.append(parent)
    return hidden


def _site_dirs() -> list[Path]:
    dirs = []
    for entry in site.getsitepackages():
        path = Path(entry)
        if path.is_dir():
            dirs.append(path.resolve())
    return dirs


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _python_roots() -> list[Path]:
    """Directories the interpreter needs: its prefixes, site-packages and the real
    location of the executable. Returned resolved (symlinks followed)."""
    candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    candidates.update(str(p) for p in _site_dirs())
    executable = Path(sys.executable).resolve()
    candidates.add(str(executable.parent.parent))
    roots = set()
    for entry in candidates:
        path = Path(entry)
        if path.exists():
            roots.add(path.resolve())
            if path.absolute() != path.resolve():
                roots.add(path.absolute())
    return sorted(roots)


def _pth_masks_and_extra_roots(hidden: list[Path]) -> tuple[list[Path], list[Path]]:
    """Split site-packages hooks into ones to mask (editable finders of this project,
    .pth files pointing into hidden places) and extra directories .pth files add."""
    masks: list[Path] = []
    extra: list[Path] = []
    hidden_strings = [str(h) for h in hidden]
    for site_dir in _site_dirs():
        for item in sorted(site_dir.iterdir()):
            name = item.name
            if name.startswith("__editable__") or name.endswith(".egg-link"):
                if item.is_file():
                    masks.append(item)
                continue
            if not name.endswith(".pth") or not item.is_file():
                continue
            try:
                text = item.read_text(errors="replace")
            except OSError:
                continue
            if any(h in text for h in hidden_strings):
                masks.append(item)
                continue
            for line in text.splitlines():
                line = line.strip()
                if line and not line.startswith(("#", "import")) and os.path.isabs(line) and os.path.isdir(line):
                    extra.append(Path(line).resolve())
    return masks, extra


def _minimal_roots(paths: list[Path]) -> list[Path]:
    """Drop paths that lie inside another path of the list."""
    result: list[Path] = []
    for path in sorted(set(paths), key=lambda p: (len(p.parts), str(p))):
        if not any(_is_within(path, kept) for kept in result):
            result.append(path)
    return result


# ---------------------------------------------------------------- pids cgroup
def _cgroup_bases() -> list[Path]:
    """Directories where a child pids cgroup could be created: this process's own
    cgroup in a v1 ``pids`` hierarchy and in the v2 unified hierarchy."""
    try:
        membership = Path("/proc/self/cgroup").read_text().splitlines()
        mountinfo = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    v1_mounts: dict[str, str] = {}
    v2_mount = None
    for line in mountinfo:
        left, _, right = line.partition(" - ")
        fields = left.split()
        rfields = right.split()
        if len(fields) < 5 or len(rfields) < 3:
            continue
        mount_point, fstype, options = fields[4], rfields[0], rfields[2]
        if fstype == "cgroup2" and v2_mount is None:
            v2_mount = mount_point
        elif fstype == "cgroup":
            for option in options.split(","):
                v1_mounts.setdefault(option, mount_point)
    bases = []
    for line in membership:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, rel = parts
        rel = rel.lstrip("/")
        if "pids" in controllers.split(",") and "pids" in v1_mounts:
            bases.append(Path(v1_mounts["pids"]) / rel)
        elif controllers == "" and v2_mount is not None:
            bases.append(Path(v2_mount) / rel)
    return bases


_cgroup_counter = itertools.count()


class _PidsCgroup:
    """A fresh pids cgroup for one worker; removed by :func:`terminate`."""

    def __init__(self, base: Path, limit: int):
        self.path = base / f"m5-sandbox-{os.getpid()}-{next(_cgroup_counter)}"
        self.path.mkdir()
        try:
            (self.path / "pids.max").write_text(str(limit))
        except OSError:
            self.remove()
            raise

    def pids(self) -> list[int]:
        try:
            text = (self.path / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(x) for x in text.split()]

    def kill_all(self, timeout: float = 5.0) -> bool:
        """SIGKILL every member until the cgroup is empty; True when it is."""
        deadline = time.monotonic() + timeout
        while True:
            pids = self.pids()
            if not pids:
                return True
            if time.monotonic() > deadline:
                return False
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.01)

    def remove(self) -> None:
        try:
            self.path.rmdir()
        except OSError:
            pass


def _cgroup_base_for_pids() -> Path | None:
    """The first base where a child with a working ``pids.max`` can be made."""
    for base in _cgroup_bases():
        try:
            group = _PidsCgroup(base, 8)
        except OSError:
            continue
        ok = (group.path / "pids.max").exists() and (group.path / "cgroup.procs").exists()
        group.remove()
        if ok:
            _remove_stale_cgroups(base)
            return base
    return None


def _remove_stale_cgroups(base: Path) -> None:
    """Kill what is left in cgroups of graders that died (their pid is gone), e.g. a
    sandbox orphaned because its grader was SIGKILLed mid-spawn, and remove them."""
    for child in base.glob("m5-sandbox-*-*"):
        try:
            owner = int(child.name.split("-")[2])
        except (IndexError, ValueError):
            continue
        if owner != os.getpid() and not Path(f"/proc/{owner}").exists():
            stale = _PidsCgroup.__new__(_PidsCgroup)
            stale.path = child
            if stale.kill_all(timeout=2.0):
                stale.remove()


# ---------------------------------------------------------------- probing
def _find_bwrap() -> str | None:
    found = shutil.which("bwrap")
    if found:
        return found
    for candidate in BWRAP_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def _find_unshare() -> str | None:
    found = shutil.which("unshare")
    if found:
        return found
    for candidate in UNSHARE_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def _bwrap_supports(bwrap: str, option: str) -> bool:
    try:
        out = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return option.encode() in out


@dataclass(frozen=True)
class _Plan:
    """Everything spawn needs, computed once by the probe."""

    level: str
    bwrap: str | None = None
    unshare: str | None = None
    disable_userns: bool = False
    cgroup_base: Path | None = None
    drop_to_uid: int | None = None  # fallback only
    roots: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    masked_packages: tuple[Path, ...] = ()
    masked_files: tuple[Path, ...] = ()


def _probe_run(argv_prefix: list[str], extra_fds=()) -> tuple[bool, str]:
    """Run a trivial interpreter behind ``argv_prefix``; (worked, why not)."""
    with tempfile.TemporaryDirectory(prefix="m5-sandbox-probe-") as tmp:
        os.chmod(tmp, 0o755)  # reachable for a dropped uid too
        try:
            done = subprocess.run(
                [*argv_prefix, sys.executable, "-I", "-S", "-c", "print('ok')"],
                capture_output=True, timeout=60, cwd=tmp,
                env=_default_env(Path(tmp)), pass_fds=extra_fds,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return False, f"{type(exc).__name__}: {exc}"
    if done.returncode == 0 and done.stdout.strip() == b"ok":
        return True, ""
    return False, (done.stderr or done.stdout).decode(errors="replace").strip()[-500:]


def _build_plan() -> tuple[_Plan, dict]:
    details: dict = {"python": sys.executable, "euid": os.geteuid()}
    hidden_pkgs = _project_package_dirs()
    hidden = _hidden_paths(hidden_pkgs, _python_roots())
    details["hidden"] = [str(h) for h in hidden]
    masked_files, extra_roots = _pth_masks_and_extra_roots(hidden)
    roots = _python_roots() + [r for r in extra_roots if not any(_is_within(r, h) for h in hidden)]
    site_dirs = _site_dirs()
    masked_packages = [d for d in hidden_pkgs if any(d.parent == s for s in site_dirs)]
    cgroup_base = _cgroup_base_for_pids()
    details["cgroup"] = str(cgroup_base) if cgroup_base else None
    common = dict(
        cgroup_base=cgroup_base, roots=tuple(roots), hidden=tuple(hidden),
        masked_packages=tuple(masked_packages), masked_files=tuple(masked_files),
    )

    bwrap = _find_bwrap()
    details["bwrap"] = bwrap
    if bwrap is not None:
        plan = _Plan(level="bubblewrap", bwrap=bwrap,
                     disable_userns=_bwrap_supports(bwrap, "--disable-userns"), **common)
        with tempfile.TemporaryDirectory(prefix="m5-sandbox-probe-") as tmp:
            argv, fds = _bwrap_argv(plan, Path(tmp), Limits(), ())
            try:
                ok, why = _probe_run(argv, fds)
            finally:
                for fd in fds:
                    os.close(fd)
        if ok:
            return plan, details
        details["bwrap_error"] = why

    unshare = _find_unshare()
    if unshare is not None:
        ok, why = _probe_run([unshare, *_UNSHARE_FLAGS, "--"])
        if not ok:
            details["unshare_error"] = why
            unshare = None
    details["unshare"] = unshare
    drop_to = None
    if os.geteuid() == 0:
        prefix = _prepare(Limits(), cgroup_fd=None, nproc=False, drop_to_uid=SANDBOX_UID)
        ok, why = _probe_run(prefix)
        if ok:
            drop_to = SANDBOX_UID
        else:
            details["uid_drop_error"] = why
    return _Plan(level="fallback", unshare=unshare, drop_to_uid=drop_to, **common), details


def _warning_for(plan: _Plan, details: dict) -> str | None:
    problems = []
    if plan.level == "fallback":
        reason = details.get("bwrap_error") or "bwrap not found"
        problems.append(
            f"bubblewrap is unavailable ({reason}); student code runs WITHOUT file-system "
            "isolation: it can read the hidden tests and reference_impl"
        )
        uid = plan.drop_to_uid if plan.drop_to_uid is not None else os.geteuid()
        if uid == 0:
            problems.append("it runs as ROOT and can write anywhere")
        if plan.unshare is None:
            problems.append("there is no pid or network namespace (network is open, "
                            "kill(-1) reaches other processes of the same user)")
    if plan.cgroup_base is None and not _nproc_effective(plan):
        problems.append("no pids cgroup is writable and RLIMIT_NPROC is ignored for root: "
                        "a fork bomb is NOT capped")
    if not problems:
        return None
    return "SANDBOX WARNING: " + "; ".join(problems) + "."


def _nproc_effective(plan: _Plan) -> bool:
    """RLIMIT_NPROC binds only when the worker's real uid is not root."""
    if plan.level == "bubblewrap":
        return os.geteuid() != 0
    return (plan.drop_to_uid if plan.drop_to_uid is not None else os.geteuid()) != 0


@functools.lru_cache(maxsize=1)
def _probe() -> tuple[_Plan, Isolation]:
    plan, details = _build_plan()
    if plan.cgroup_base is not None:
        cap = "cgroup"
    elif _nproc_effective(plan):
        cap = "rlimit"
    else:
        cap = "none"
    info = Isolation(level=plan.level, warning=_warning_for(plan, details), process_cap=cap, details=details)
    return plan, info


def isolation() -> Isolation:
    """Probe (once per process, cached) what isolation works here.

    Call ``isolation.cache_clear()`` to probe again (tests do, after faking a missing
    bwrap). The probe runs a trivial interpreter through the very sandbox spawn uses.
    """
    return _probe()[1]


isolation.cache_clear = _probe.cache_clear  # type: ignore[attr-defined]


# ---------------------------------------------------------------- command lines
_UNSHARE_FLAGS = ("--pid", "--fork", "--kill-child", "--mount", "--mount-proc", "--net", "--ipc", "--uts")

# Runs inside the sandbox before the worker: caps the task count of the worker's uid
# (binding only for a non-root real uid), then becomes the worker.
_LAUNCHER = (
    "import os,resource,sys;"
    "n=int(sys.argv[1]);"
    "resource.setrlimit(resource.RLIMIT_NPROC,(n,n));"
    "r=int(sys.argv[2]);"
    "os.write(r,b'1');"
    "os.close(r);"
    "os.execv(sys.argv[3],sys.argv[3:])"
)
_READY_TIMEOUT = 30.0


def _launcher(limits: Limits, ready_fd: int, argv: list[str]) -> list[str]:
    """The launcher command; it writes one byte to ``ready_fd`` once it runs, i.e.
    once bubblewrap's setup (parent-death signals included) is complete."""
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(limits.max_processes), str(ready_fd), *argv]


def _await_ready(read_fd: int, timeout: float) -> bool:
    """Wait for the launcher's byte; False on EOF (setup failed) or timeout."""
    try:
        ready, _, _ = select.select([read_fd], [], [], timeout)
        return bool(ready) and os.read(read_fd, 1) == b"1"
    except OSError:
        return False
    finally:
        os.close(read_fd)


def _bind_real(path: Path) -> list[str]:
    return ["--ro-bind", str(path), str(path)]


# ---------------------------------------------------------------- seccomp
# A deny-list of system calls no grading worker needs and that are classic kernel
# attack surface or sandbox-escape tools (x86_64 numbers). They fail with EPERM.
_DENIED_SYSCALLS_X86_64 = {
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
    "perf_event_open": 298, "bpf": 321, "userfaultfd": 323,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "add_key": 248, "request_key": 249, "keyctl": 250,
    "mount": 165, "umount2": 166, "pivot_root": 155, "move_mount": 429, "open_tree": 428,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "unshare": 272, "setns": 308, "open_by_handle_at": 304,
    "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
    "delete_module": 176, "swapon": 167, "swapoff": 168, "reboot": 169, "acct": 163,
    "quotactl": 179, "fanotify_init": 300, "vhangup": 153,
}
_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_SYSCALL_BIT = 0x40000000


def _bpf(code: int, jt: int, jf: int, k: int) -> bytes:
    """One classic-BPF instruction (struct sock_filter)."""
    return struct.pack("=HBBI", code, jt, jf, k)


def seccomp_program(machine: str | None = None) -> bytes | None:
    """The seccomp filter bwrap installs (raw struct sock_filter array), or None on
    architectures it is not written for.

    Program: a foreign architecture (e.g. 32-bit ``int 0x80``) kills the process; x32
    system calls and the deny-list return EPERM; everything else is allowed.
    """
    if (machine or platform.machine()) != "x86_64":
        return None
    load_word, jump_eq, jump_ge, ret = 0x20, 0x15, 0x35, 0x06
    allow, kill, eperm = 0x7FFF0000, 0x80000000, 0x00050000 | errno.EPERM
    numbers = sorted(_DENIED_SYSCALLS_X86_64.values())
    program = [
        _bpf(load_word, 0, 0, 4),  # seccomp_data.arch
        _bpf(jump_eq, 1, 0, _AUDIT_ARCH_X86_64),
        _bpf(ret, 0, 0, kill),
        _bpf(load_word, 0, 0, 0),  # seccomp_data.nr
    ]
    # Jumps count instructions after this one; the EPERM return is the very last.
    remaining = len(numbers) + 1  # compares still to come, then "allow"
    program.append(_bpf(jump_ge, remaining, 0, _X32_SYSCALL_BIT))
    for index, number in enumerate(numbers):
        program.append(_bpf(jump_eq, len(numbers) - index, 0, number))
    program += [_bpf(ret, 0, 0, allow), _bpf(ret, 0, 0, eperm)]
    return b"".join(program)


def _file_with(content: bytes, dest: Path, fds: list[int]) -> list[str]:
    """Arguments that put a read-only file holding ``content`` at ``dest``.

    (A bind of /dev/null would not do: device nodes are unusable on mounts made in a
    user namespace, so reading it fails with EACCES instead of giving an empty file.)
    """
    return ["--ro-bind-data", str(_data_fd(content, fds)), str(dest)]


def _data_fd(content: bytes, fds: list[int]) -> int:
    """A pipe's read end holding ``content`` (appended to ``fds`` for pass_fds)."""
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, content)  # far below the pipe buffer, never blocks
    finally:
        os.close(write_fd)
    fds.append(read_fd)
    return read_fd


def _bwrap_argv(plan: _Plan, scratch: Path, limits: Limits, hide: tuple[Path, ...]) -> tuple[list[str], list[int]]:
    """The bwrap command line (up to and including ``--``) and fds it must inherit."""
    args = [
        plan.bwrap, "--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
        "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "m5-sandbox",
    ]
    if plan.disable_userns:
        args.append("--disable-userns")
    fds: list[int] = []
    program = seccomp_program()
    if program is not None:
        args += ["--seccomp", str(_data_fd(program, fds))]
    # --dev builds /dev on a writable, RAM-backed tmpfs: make it read-only and give
    # /dev/shm (which multiprocessing and torch use) its own size-capped tmpfs.
    args += ["--proc", "/proc", "--dev", "/dev", "--size", str(limits.max_tmp_bytes), "--tmpfs", "/dev/shm",
             "--remount-ro", "/dev", "--size", str(limits.max_tmp_bytes), "--tmpfs", "/tmp"]
    for name in _SYSTEM_DIRS:
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            args += _bind_real(path)
    for name in _ETC_FILES:
        args += ["--ro-bind-try", name, name]
    roots = list(plan.roots)
    for root in _minimal_roots(roots):
        args += _bind_real(root)

    hidden = list(plan.hidden) + [Path(h).resolve() for h in hide if os.path.lexists(h)]
    visible_roots = _minimal_roots(roots)
    # A hidden path outside every bound root is invisible already; mask the rest.
    exposed = [h for h in hidden if any(_is_within(h, r) for r in visible_roots)]
    for path in _minimal_roots(exposed):
        if path.is_dir():
            args += ["--tmpfs", str(path)]
            if path in plan.masked_packages:
                args += _file_with(_BLOCKED_INIT, path / "__init__.py", fds)
        else:
            args += _file_with(b"", path, fds)
        # Interpreter directories that live inside a hidden one come back read-only.
        for root in roots:
            if root != path and _is_within(root, path):
                args += _bind_real(root)
    for masked in plan.masked_files:
        args += _file_with(b"", masked, fds)
    args += ["--bind", str(scratch), str(scratch), "--chdir", str(scratch)]
    # bwrap builds the new root on a tmpfs that is writable (and only RAM-bounded):
    # make it read-only so scratch and the size-capped /tmp are the only writable places.
    args += ["--remount-ro", "/", "--"]
    return args, fds


# ---------------------------------------------------------------- child setup
# The first program of every spawn, run by the grader's own interpreter before bwrap
# (or the worker itself in the fallback). Doing this setup in a fresh process rather
# than in a Popen preexec_fn keeps spawn safe in a multi-threaded grader: code run
# between fork and exec can deadlock on a lock another thread held at fork time.
# argv: parent_pid cgroup_fd cpu_s as_bytes fsize_bytes nproc drop_uid -- command...
# (-1 disables cgroup_fd, nproc and drop_uid).
_PREPARE = """\
import ctypes, os, resource, sys
parent, cgroup_fd, cpu, address, fsize, nproc, uid = map(int, sys.argv[1:8])
if cgroup_fd >= 0:  # join the pids cgroup before anything can fork
    os.write(cgroup_fd, str(os.getpid()).encode())
    os.close(cgroup_fd)
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU, then SIGKILL
resource.setrlimit(resource.RLIMIT_AS, (address, address))
resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a core file would land in scratch
if nproc >= 0:
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
if uid >= 0:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
# Last, as a uid change clears it: SIGKILL this process when the grader dies.
ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)
if os.getppid() != parent:  # the grader died before the line above
    os._exit(1)
os.execv(sys.argv[9], sys.argv[9:])
"""


def _prepare(limits: Limits, *, cgroup_fd: int | None, nproc: bool, drop_to_uid: int | None) -> list[str]:
    """Command prefix that applies the limits, joins the cgroup, arms the parent-death
    signal and then execs the rest of the command line."""
    return [
        sys.executable, "-I", "-S", "-c", _PREPARE, str(os.getpid()),
        str(-1 if cgroup_fd is None else cgroup_fd), str(limits.cpu_seconds), str(limits.memory_bytes),
        str(limits.max_file_bytes), str(limits.max_processes if nproc else -1),
        str(-1 if drop_to_uid is None else drop_to_uid), "--",
    ]


def _default_env(scratch: Path) -> dict[str, str]:
    """A minimal environment: nothing of the grader's (tokens, paths) leaks in."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(scratch),
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


# ---------------------------------------------------------------- public API
def spawn(
    argv: list[str],
    *,
    scratch: Path,
    limits: Limits = Limits(),
    env: dict | None = None,
    hide: tuple | list = (),
) -> subprocess.Popen:
    """Start ``argv`` inside the sandbox and return the Popen.

    argv:    e.g. ``[sys.executable, "-I", str(scratch / "worker.py")]``; argv[0] must be
             an absolute path visible inside (this interpreter, or something under /usr).
    scratch: an existing directory; the only writable place, mounted at the same path;
             it is the working directory. The worker's stderr goes to
             ``scratch / STDERR_NAME`` (capped by ``limits.max_file_bytes``).
    env:     extra variables layered over a minimal default environment (the grader's
             own environment is never passed on).
    hide:    extra paths (files or directories) to make invisible inside, on top of the
             project packages and project root, which are always hidden.

    stdin and stdout are binary pipes. Always finish with :func:`terminate`.
    Raises ValueError for a bad argv/scratch/limits/env.
    """
    if not isinstance(argv, (list, tuple)) or not argv or not all(isinstance(a, str) for a in argv):
        raise ValueError("spawn: argv must be a non-empty list of str")
    if not os.path.isabs(argv[0]):
        raise ValueError(f"spawn: argv[0] must be an absolute path, got {argv[0]!r}")
    if not isinstance(limits, Limits):
        raise ValueError(f"spawn: limits must be a Limits, got {type(limits).__name__}")
    scratch = Path(scratch)
    if not scratch.is_dir():
        raise ValueError(f"spawn: scratch {str(scratch)!r} is not an existing directory")
    scratch = scratch.resolve()
    full_env = _default_env(scratch)
    if env is not None:
        if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise ValueError("spawn: env must be a dict of str to str")
        full_env.update(env)

    plan, _ = _probe()
    # A read-write bind of scratch would expose whatever lies below it.
    for inner in (Path("/"), *plan.hidden, *plan.roots):
        if _is_within(inner, scratch):
            raise ValueError(f"spawn: scratch {str(scratch)!r} must not contain {str(inner)!r}")
    cgroup = None
    if plan.cgroup_base is not None:
        try:
            cgroup = _PidsCgroup(plan.cgroup_base, limits.max_processes + _CGROUP_OVERHEAD)
        except OSError:
            cgroup = None  # the probe said it works; failing now only loses the cap
    pass_fds: list[int] = []
    ready_read = None
    if plan.level == "bubblewrap":
        prefix, pass_fds = _bwrap_argv(plan, scratch, limits, tuple(hide))
        ready_read, ready_write = os.pipe()
        pass_fds.append(ready_write)
        command = [*prefix, *_launcher(limits, ready_write, list(argv))]
        drop_to, nproc_outside = None, False
    else:
        command = list(argv)
        if plan.unshare is not None:
            command = [plan.unshare, *_UNSHARE_FLAGS, "--", *command]
        drop_to, nproc_outside = plan.drop_to_uid, True

    cgroup_fd = os.open(cgroup.path / "cgroup.procs", os.O_WRONLY) if cgroup is not None else None
    if cgroup_fd is not None:
        pass_fds.append(cgroup_fd)
    command = [*_prepare(limits, cgroup_fd=cgroup_fd, nproc=nproc_outside, drop_to_uid=drop_to), *command]
    stderr_fd = _create_private_file(scratch / STDERR_NAME)
    try:
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=stderr_fd if stderr_fd is not None else subprocess.DEVNULL,
            cwd=scratch, env=full_env, start_new_session=True, pass_fds=pass_fds,
        )
    except BaseException:
        if cgroup is not None:
            cgroup.kill_all()
            cgroup.remove()
        if ready_read is not None:
            os.close(ready_read)
        raise
    finally:
        if stderr_fd is not None:
            os.close(stderr_fd)
        for fd in pass_fds:  # the cgroup fd included
            os.close(fd)
    proc.sandbox_cgroup = cgroup  # type: ignore[attr-defined]
    proc.sandbox_stderr = scratch / STDERR_NAME if stderr_fd is not None else None  # type: ignore[attr-defined]
    proc.sandbox_level = plan.level  # type: ignore[attr-defined]
    # bwrap and unshare reap the worker themselves once it is killed.
    proc.sandbox_wrapped = plan.level == "bubblewrap" or plan.unshare is not None  # type: ignore[attr-defined]
    if ready_read is not None:
        # bwrap arms the parent-death kill of its inner processes only during setup;
        # were the grader killed before that, they would outlive it (a known bwrap
        # race). Returning only once the launcher runs keeps that window inside spawn.
        proc.sandbox_started = _await_ready(ready_read, _READY_TIMEOUT)  # type: ignore[attr-defined]
    return proc


def _descendants(pid: int) -> list[int]:
    """All descendants of ``pid``, from a scan of /proc (parent links in .../stat)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: parse after the last ")".
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def terminate(proc: subprocess.Popen) -> None:
    """Kill the whole sandbox (every descendant) and reap it. Idempotent; never raises.

    Inside out, so that every process is reaped by its own parent and no zombie is
    handed to the machine's init: first SIGKILL everything below the outer process
    (found in the pids cgroup and by walking /proc), which takes the pid namespace
    down; the outer bwrap/unshare then reaps its child and exits by itself. Only then
    is the outer process (and its group) killed if still alive, and reaped. Last,
    stragglers still in the cgroup are killed and the cgroup removed.
    """
    try:
        cgroup = getattr(proc, "sandbox_cgroup", None)
        if proc.returncode is None:
            inner = set(_descendants(proc.pid))
            if cgroup is not None:
                inner.update(cgroup.pids())
            inner.discard(proc.pid)
            for pid in inner:
                _kill_quietly(pid)
            if inner and getattr(proc, "sandbox_wrapped", False):
                try:
                    proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    pass
        if proc.returncode is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            _kill_quietly(proc.pid)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if cgroup is not None and cgroup.kill_all():
            cgroup.remove()
            proc.sandbox_cgroup = None  # type: ignore[attr-defined]
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
    except Exception:  # noqa: BLE001 - terminate is called from cleanup paths
        pass


def _create_private_file(path: Path) -> int | None:
    """Create ``path`` afresh for writing, or return None if that is not safe.

    Scratch is writable by the (possibly earlier) sandboxed code, which may have left a
    symlink there pointing at a host file: never follow links, never reuse the entry.
    """
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError:
        return None  # e.g. a directory planted under that name
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError:
        return None


def read_tail(path: Path | None, limit: int = 4096) -> str:
    """Up to ``limit`` trailing bytes of a file the sandbox could have tampered with,
    decoded leniently. Refuses symlinks (which could point at host files), FIFOs and
    anything else that is not a regular file; returns "" then or on any error."""
    if path is None:
        return ""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return ""
        os.lseek(fd, max(0, info.st_size - limit), os.SEEK_SET)
        return os.read(fd, limit).decode(errors="replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


def run(
    argv: list[str],
    *,
    scratch: Path,
    input: bytes = b"",
    timeout: float = 60.0,
    limits: Limits = Limits(),
    env: dict | None = None,
    hide: tuple | list = (),
    max_output_bytes: int = 16 << 20,
) -> SandboxResult:
    """Run ``argv`` in the sandbox to completion: feed ``input``, read at most
    ``max_output_bytes`` of stdout, stop at ``timeout`` wall seconds, then
    :func:`terminate` (always). Never hangs on a worker that floods or stalls.
    """
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ValueError(f"run: timeout must be a positive number, got {timeout!r}")
    if not (isinstance(max_output_bytes, int) and max_output_bytes >= 0):
        raise ValueError(f"run: max_output_bytes must be a non-negative int, got {max_output_bytes!r}")
    scratch = Path(scratch)
    start = time.monotonic()
    proc = spawn(argv, scratch=scratch, limits=limits, env=env, hide=hide)
    chunks: list[bytes] = []
    received = 0
    truncated = timed_out = False
    try:
        out_fd = proc.stdout.fileno()
        in_fd = proc.stdin.fileno()
        os.set_blocking(in_fd, False)
        pending = memoryview(input)
        if not pending:
            proc.stdin.close()
            in_fd = -1
        while True:
            remaining = timeout - (time.monotonic() - start)
            if remaining <= 0:
                timed_out = True
                break
            writers = [in_fd] if in_fd >= 0 else []
            readable, writable, _ = select.select([out_fd], writers, [], min(remaining, 0.5))
            if writable:
                try:
                    sent = os.write(in_fd, pending[:65536])
                    pending = pending[sent:]
                except (BrokenPipeError, BlockingIOError):
                    sent = -1
                if sent < 0 or not pending:
                    proc.stdin.close()
                    in_fd = -1
            if readable:
                data = os.read(out_fd, 1 << 16)
                if not data:
                    break
                room = max_output_bytes - received
                chunks.append(data[:room])
                received += min(len(data), room)
                if len(data) > room:
                    truncated = True
                    break
        if not timed_out and not truncated:
            try:
                proc.wait(timeout=max(0.1, timeout - (time.monotonic() - start)))
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        returncode = proc.poll()
        stderr_path = proc.sandbox_stderr
        terminate(proc)
    return SandboxResult(
        returncode=returncode, stdout=b"".join(chunks), stdout_truncated=truncated,
        timed_out=timed_out, stderr_tail=read_tail(stderr_path),
        wall_seconds=time.monotonic() - start,
    )
