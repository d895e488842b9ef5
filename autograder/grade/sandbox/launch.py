"""Probe what isolation works here, start a worker in it, stop it, run it to completion."""
from __future__ import annotations

import functools
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from autograder.grade.sandbox import cgroups, files as sfiles, hiding, paths, seccomp
from autograder.grade.sandbox.limits import (
    LIMITS_FAILED, SANDBOX_UID, Limits, default_env, keeper_argv, unraisable_limits,
)

BWRAP_CANDIDATES = ("/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap")
UNSHARE_CANDIDATES = ("/usr/bin/unshare", "/bin/unshare")
INSIDE_FILES = "/m5"          # provided files and directories, read-only
INSIDE_SCRATCH = "/scratch"   # private size-capped tmpfs; cwd and HOME
_BLOCKED_INIT = (
    b'raise ImportError("this package is not available inside the grading sandbox")\n'
)
_UNSHARE_FLAGS = ("--pid", "--fork", "--kill-child", "--mount", "--mount-proc", "--net", "--ipc", "--uts")
_READY_TIMEOUT = 30.0


class SandboxUnavailable(RuntimeError):
    """No sandbox this grader may use can start here (see ``isolation().fatal``)."""


@dataclass(frozen=True)
class Isolation:
    """What the sandbox can actually do on this machine (see :func:`isolation`).

    level:       "bubblewrap", "fallback" or "none" (nothing usable: see ``fatal``).
    warning:     None when every protection is in place, else a loud one-paragraph
                 message for the CLI and the results file.
    process_cap: "cgroup" (pids cgroup), "rlimit" (RLIMIT_NPROC as a non-root uid)
                 or "none".
    details:     free-form facts (paths, probe errors) for logs.
    fatal:       None, or why grading must not start at all (e.g. the grader runs under
                 ``ulimit -v`` below what a worker needs, or student code could only run
                 as root). The CLI prints it and exits non-zero; :func:`spawn` raises
                 :class:`SandboxUnavailable` with it.
    """

    level: str
    warning: str | None
    process_cap: str
    details: dict = field(default_factory=dict)
    fatal: str | None = None


@dataclass(frozen=True)
class SandboxResult:
    """Outcome of :func:`run`. ``returncode`` is the worker's exit status as the grader
    sees it: the exit code, or 128+N for death by signal N."""

    returncode: int | None
    stdout: bytes
    stdout_truncated: bool
    timed_out: bool
    stderr_tail: str
    wall_seconds: float


@dataclass(frozen=True)
class _Plan:
    """Everything spawn needs, computed once by the probe."""

    level: str
    bwrap: str | None = None
    unshare: str | None = None
    isolate: bool = False  # fallback as root: the keeper makes the namespaces itself
    disable_userns: bool = False
    cgroups: cgroups.CgroupLayout = cgroups.CgroupLayout()
    drop_to_uid: int | None = None
    seccomp: bytes | None = None
    roots: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    masked_packages: tuple[Path, ...] = ()
    masked_files: tuple[Path, ...] = ()
    secrets: tuple[Path, ...] = ()  # hidden by file permissions in a root fallback

    @property
    def hides_by_permissions(self) -> bool:
        """A fallback that runs code as uid 65534 takes other users' read permission
        away from the secrets (:mod:`.hiding`)."""
        return self.level == "fallback" and self.drop_to_uid is not None

    @property
    def keeper_seccomp(self) -> bool:
        """The keeper loads the allow-list itself (fallback; not before unshare(1),
        which needs system calls the list denies)."""
        return self.seccomp is not None and self.level == "fallback" and self.unshare is None

    @property
    def cgroup_base(self) -> Path | None:
        """Where the workers' pids cgroups are made (None without one)."""
        entry = self.cgroups.bases.get("pids")
        return entry[0] if entry else None

    @property
    def nproc_rlimit(self) -> bool:
        """Whether RLIMIT_NPROC must stand in for a missing pids cgroup; it binds only
        for a non-root uid (and counts all of that uid's processes on the host)."""
        return self.cgroup_base is None and (self.drop_to_uid is not None or os.geteuid() != 0)


# ---------------------------------------------------------------- argument checks
def _check_argv(argv) -> list[str]:
    if not isinstance(argv, (list, tuple)) or not argv or not all(isinstance(a, str) for a in argv):
        raise ValueError("spawn: argv must be a non-empty list of str")
    if not os.path.isabs(argv[0]):
        raise ValueError(f"spawn: argv[0] must be an absolute path, got {argv[0]!r}")
    return list(argv)


def _check_env(env) -> dict[str, str]:
    if env is None:
        return {}
    if not isinstance(env, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ValueError("spawn: env must be a mapping of str to str")
    return dict(env)


def _check_name(kind: str, name) -> str:
    if not isinstance(name, str) or not name or "/" in name or name in (".", "..") or "\0" in name:
        raise ValueError(f"spawn: {kind} name {name!r} must be one plain file name (no '/')")
    return name


def _check_files(files) -> dict[str, bytes]:
    if not isinstance(files, Mapping):
        raise ValueError("spawn: files must be a mapping of name to bytes")
    checked = {}
    for name, content in files.items():
        if not isinstance(content, (bytes, bytearray)):
            raise ValueError(f"spawn: files[{name!r}] must be bytes, got {type(content).__name__}")
        checked[_check_name("files", name)] = bytes(content)
    return checked


def _check_ro_dirs(ro_dirs, files: dict[str, bytes]) -> dict[str, Path]:
    """ro_dirs keys are inside paths ``/m5/<name>``; values existing host directories."""
    if not isinstance(ro_dirs, Mapping):
        raise ValueError("spawn: ro_dirs must be a mapping of inside path to host directory")
    checked = {}
    for inside, host in ro_dirs.items():
        if not isinstance(inside, str) or not inside.startswith(INSIDE_FILES + "/"):
            raise ValueError(f"spawn: ro_dirs key {inside!r} must be a path {INSIDE_FILES}/<name>")
        name = _check_name("ro_dirs", inside[len(INSIDE_FILES) + 1:])
        if name in files:
            raise ValueError(f"spawn: ro_dirs key {inside!r} clashes with files[{name!r}]")
        if not isinstance(host, (str, os.PathLike)) or not Path(host).is_dir():
            raise ValueError(f"spawn: ro_dirs[{inside!r}] = {host!r} is not an existing directory")
        checked[inside] = Path(host).resolve()
    return checked


# ---------------------------------------------------------------- probing
def _find(name: str, candidates: tuple[str, ...]) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    return next((c for c in candidates if os.access(c, os.X_OK)), None)


def _bwrap_supports(bwrap: str, option: str) -> bool:
    try:
        out = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return option.encode() in out


def _probe_run(plan: _Plan) -> tuple[bool, int | None, str]:
    """Run a trivial interpreter exactly as spawn would with ``plan``:
    (worked, exit status, stderr tail)."""
    result = _run_with_plan(plan, [sys.executable, "-I", "-S", "-c", "print('ok')"], timeout=60.0)
    worked = result.returncode == 0 and result.stdout.strip() == b"ok"
    return worked, result.returncode, result.stderr_tail.strip()[-500:]


def _candidate_plans(common: dict, details: dict) -> list[_Plan]:
    """The plans to try, best first."""
    drop = SANDBOX_UID if os.geteuid() == 0 else None
    plans = []
    bwrap = _find("bwrap", BWRAP_CANDIDATES)
    details["bwrap"] = bwrap
    if bwrap is not None:
        plans.append(_Plan(level="bubblewrap", bwrap=bwrap, disable_userns=_bwrap_supports(bwrap, "--disable-userns"),
                           drop_to_uid=drop, **common))
    if drop is not None:
        # unshare(1) would run after the uid drop, without the rights it needs.
        plans.append(_Plan(level="fallback", isolate=True, drop_to_uid=drop, **common))
    else:
        unshare = _find("unshare", UNSHARE_CANDIDATES)
        details["unshare"] = unshare
        if unshare is not None:
            plans.append(_Plan(level="fallback", unshare=unshare, **common))
    plans.append(_Plan(level="fallback", drop_to_uid=drop, **common))
    return plans


def _build_plan() -> tuple[_Plan | None, dict, str | None]:
    """The first plan that runs code here, the probe's findings, and a fatal reason when
    no plan may be used."""
    details: dict = {"python": sys.executable, "euid": os.geteuid()}
    problems = unraisable_limits(Limits())
    if problems:
        return None, details, _limits_fatal(problems)
    hidden_pkgs = paths.project_package_dirs()
    hidden = paths.hidden_paths(hidden_pkgs, paths.python_roots())
    details["hidden"] = [str(h) for h in hidden]
    masked_files, extra_roots = paths.pth_masks_and_extra_roots(hidden)
    roots = paths.python_roots() + [r for r in extra_roots if not any(paths.is_within(r, h) for h in hidden)]
    site_dirs = paths.site_dirs()
    layout = cgroups.probe_layout(Limits())
    details["cgroups"] = {c: str(b) for c, (b, _) in layout.bases.items()}
    try:
        program = seccomp.seccomp_program()
    except seccomp.SeccompUnavailable as exc:
        program = None
        details["seccomp_error"] = str(exc)
    sfiles.sweep_stale_trees()
    common = dict(
        cgroups=layout, seccomp=program, roots=tuple(roots), hidden=tuple(hidden),
        masked_packages=tuple(d for d in hidden_pkgs if d.parent in site_dirs),
        masked_files=tuple(masked_files), secrets=tuple(hiding.secret_paths(hidden)),
    )
    failures = []
    for plan in _candidate_plans(common, details):
        worked, status, why = _probe_run(plan)
        if worked:
            if failures:
                details["probe_errors"] = failures
            if plan.level == "fallback":
                details.update(_fallback_facts(plan))
            return plan, details, None
        if status == LIMITS_FAILED:
            return None, details, _limits_fatal([why])
        variant = "+unshare" if plan.unshare else "+namespaces" if plan.isolate else ""
        failures.append(f"{plan.level}{variant}: {why or f'exit status {status}'}")
    details["probe_errors"] = failures
    who = "as an unprivileged uid (never as root)" if os.geteuid() == 0 else "here"
    return None, details, ("SANDBOX ERROR: no sandbox can run student code " + who + ": "
                           + "; ".join(failures) + ". Install bubblewrap (make sandbox-deps).")


def _fallback_facts(plan: _Plan) -> dict:
    """Measured as the worker: which secrets it can open, whether it gets an internet
    socket. Without a uid change everything the grader reads counts as readable."""
    targets = hiding.probe_targets(list(plan.secrets))
    if not plan.hides_by_permissions:
        return {"readable_secrets": targets, "worker_socket": None}
    result = _run_with_plan(plan, [sys.executable, "-I", "-S", "-c", hiding.READ_PROBE, json.dumps(targets)],
                            timeout=60.0)
    try:
        found = json.loads(result.stdout.decode().strip().splitlines()[-1])
        return {"readable_secrets": found["readable"], "worker_socket": found["socket"]}
    except (ValueError, IndexError, KeyError, TypeError):
        return {"readable_secrets": targets, "worker_socket": None, "read_probe": result.stderr_tail[-300:]}


def _limits_fatal(problems: list[str]) -> str:
    return ("SANDBOX ERROR: the grader runs under resource limits a worker cannot get ("
            + "; ".join(problems) + "). Every kernel would fail; raise the limits "
            "(e.g. ulimit -v unlimited) and start again.")


def _warning_for(plan: _Plan, details: dict) -> str | None:
    problems, russian = [], ""
    if plan.level == "fallback":
        reason = (details.get("probe_errors") or ["bwrap not found"])[0]
        facts = dict(root=plan.hides_by_permissions, readable=details.get("readable_secrets", []),
                     seccomp=plan.keeper_seccomp, socket=details.get("worker_socket") is not False,
                     namespaces=plan.unshare is not None or plan.isolate)
        problems.append(hiding.warning_text(**facts) + f" (why: {reason})")
        russian = " ПРЕДУПРЕЖДЕНИЕ ПЕСОЧНИЦЫ: " + hiding.warning_text(**facts, lang="ru") + "."
    bases = plan.cgroups.bases
    if "pids" not in bases and not plan.nproc_rlimit:
        problems.append("no pids cgroup is writable and RLIMIT_NPROC is ignored for root: "
                        "a fork bomb is NOT capped")
    if "cpu" not in bases:
        problems.append("no cpu cgroup: one submission's processes can take CPU time from "
                        "submissions graded at the same time (--jobs > 1)")
    if "memory" not in bases:
        problems.append("no memory cgroup: memory is capped per process (RLIMIT_AS) only")
    if plan.seccomp is None:
        problems.append(f"no seccomp filter ({details.get('seccomp_error', 'unavailable')})")
    elif plan.level == "fallback" and not plan.keeper_seccomp:
        problems.append("no seccomp filter (unshare(1) needs system calls the allow-list denies)")
    if not problems:
        return None
    return "SANDBOX WARNING: " + "; ".join(problems) + "." + russian


@functools.lru_cache(maxsize=1)
def _probe() -> tuple[_Plan | None, Isolation]:
    plan, details, fatal = _build_plan()
    if plan is None:
        return None, Isolation(level="none", warning=fatal, process_cap="none", details=details, fatal=fatal)
    if plan.cgroup_base is not None:
        cap = "cgroup"
    elif plan.nproc_rlimit:
        cap = "rlimit"
    else:
        cap = "none"
    return plan, Isolation(level=plan.level, warning=_warning_for(plan, details), process_cap=cap, details=details)


def isolation() -> Isolation:
    """Probe (once per process, cached) what isolation works here.

    Call ``isolation.cache_clear()`` to probe again (tests do, after faking a missing
    bwrap). The probe runs a trivial interpreter through the very sandbox spawn uses.
    """
    return _probe()[1]


isolation.cache_clear = _probe.cache_clear  # type: ignore[attr-defined]


# ---------------------------------------------------------------- command lines
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


def _launcher(limits: Limits, nproc: bool, ready_fd: int, argv: list[str]) -> list[str]:
    """The launcher command; it writes one byte to ``ready_fd`` once it runs, i.e.
    once bubblewrap's setup (parent-death signals included) is complete."""
    cap = limits.max_processes if nproc else -1
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(cap), str(ready_fd), *argv]


def _await_ready(read_fd: int, timeout: float) -> bool:
    """Wait for the launcher's byte; False on EOF (setup failed) or timeout."""
    try:
        ready, _, _ = select.select([read_fd], [], [], timeout)
        return bool(ready) and os.read(read_fd, 1) == b"1"
    except OSError:
        return False
    finally:
        os.close(read_fd)


def _bind(path: Path) -> list[str]:
    return ["--ro-bind", str(path), str(path)]


def _bwrap_argv(plan: _Plan, limits: Limits, hide: tuple, files: dict[str, bytes],
                ro_dirs: dict[str, Path], fds: list[int], as_pid_1: bool = False) -> list[str]:
    """The bwrap command line (up to and including ``--``); descriptors it must inherit
    are appended to ``fds``. ``as_pid_1``: the command is the sandbox's pid 1, with no
    bwrap reaper there (a recycled sandbox's zygote: a reaper would be a dumpable
    process of the student's uid that outlives every submission)."""
    args = [
        plan.bwrap, "--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
        "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "m5-sandbox",
    ]
    if as_pid_1:
        args.append("--as-pid-1")
    if plan.disable_userns:
        args.append("--disable-userns")
    if plan.seccomp is not None:
        args += ["--seccomp", str(sfiles.data_fd(plan.seccomp, fds))]
    # --dev builds /dev on a writable, RAM-backed tmpfs: make it read-only and give
    # /dev/shm (which multiprocessing and torch use) its own size-capped tmpfs.
    args += ["--proc", "/proc", "--dev", "/dev", "--size", str(limits.max_tmp_bytes), "--tmpfs", "/dev/shm",
             "--remount-ro", "/dev", "--size", str(limits.max_tmp_bytes), "--tmpfs", "/tmp"]
    for name in paths.SYSTEM_DIRS:
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            args += _bind(path)
    for name in paths.ETC_FILES:
        args += ["--ro-bind-try", name, name]
    roots = list(plan.roots)
    visible_roots = paths.minimal_roots(roots)
    for root in visible_roots:
        args += _bind(root)
    hidden = list(plan.hidden) + [Path(h).resolve() for h in hide if os.path.lexists(h)]
    # A hidden path outside every bound root is invisible already; mask the rest.
    exposed = [h for h in hidden if any(paths.is_within(h, r) for r in visible_roots)]
    for path in paths.minimal_roots(exposed):
        if path.is_dir():
            args += ["--tmpfs", str(path)]
            if path in plan.masked_packages:
                args += ["--ro-bind-data", str(sfiles.data_fd(_BLOCKED_INIT, fds)), str(path / "__init__.py")]
        else:
            args += ["--ro-bind-data", str(sfiles.data_fd(b"", fds)), str(path)]
        # Interpreter directories that live inside a hidden one come back read-only.
        for root in roots:
            if root != path and paths.is_within(root, path):
                args += _bind(root)
    for masked in plan.masked_files:
        args += ["--ro-bind-data", str(sfiles.data_fd(b"", fds)), str(masked)]
    for name, content in files.items():
        args += ["--ro-bind-data", str(sfiles.data_fd(content, fds)), f"{INSIDE_FILES}/{name}"]
    for inside, host in ro_dirs.items():
        args += ["--ro-bind", str(host), inside]
    # Scratch: a private tmpfs (nosuid, nodev, size-capped) that vanishes with the sandbox.
    args += ["--size", str(limits.max_scratch_bytes), "--tmpfs", INSIDE_SCRATCH, "--chdir", INSIDE_SCRATCH]
    # bwrap builds the new root on a writable tmpfs: make it read-only so the
    # size-capped tmpfs mounts are the only writable places.
    args += ["--remount-ro", "/", "--"]
    return args


def _relocate(value: str, tree: Path) -> str:
    """Fallback: map an inside path (/m5/..., /scratch/...) to the private tree."""
    for inside in (INSIDE_FILES, INSIDE_SCRATCH):
        if value == inside or value.startswith(inside + "/"):
            return str(tree / inside.lstrip("/")) + value[len(inside):]
    return value


# ---------------------------------------------------------------- public API
def spawn(
    argv: list[str],
    *,
    limits: Limits = Limits(),
    env: Mapping[str, str] | None = None,
    hide: tuple | list = (),
    files: Mapping[str, bytes] = {},  # noqa: B006 - read only
    ro_dirs: Mapping[str, Path] = {},  # noqa: B006 - read only
    wait: bool = True,
    recycle_env: str | None = None,
) -> subprocess.Popen:
    """Start ``argv`` inside the sandbox and return the Popen.

    argv:    e.g. ``[sys.executable, "-s", "-P", "/m5/main.py"]``; argv[0] must be an
             absolute path visible inside (this interpreter, or something under /usr).
    limits:  resource limits (:class:`Limits`).
    env:     extra variables layered over a minimal default environment (the grader's
             own environment is never passed on).
    hide:    extra host paths to make invisible inside, on top of the project packages
             and checkout, which are always hidden.
    files:   ``{name: bytes}`` placed read-only at ``/m5/<name>``.
    ro_dirs: ``{"/m5/<name>": host directory}`` bound read-only (its content must be
             readable by uid 65534 when the grader is root).
    wait:    return only once bubblewrap's setup is complete (see :func:`await_started`).
             False returns at once; call :func:`await_started` before using the process
             (a worker started ahead of time does its set-up while the grader works).
    recycle_env: under bubblewrap only, a pipe whose write end the command gets, its
             descriptor number in this environment variable; the read end is
             ``proc.sandbox_recycle_fd`` (closed by :func:`terminate`), else None. A
             recycling worker writes there when the sandbox is clean for the next
             submission (see ``recycle.zygote``). Without bubblewrap there is no pid
             namespace in which to kill "every process but mine", so no recycling.

    The working directory and HOME are ``/scratch``, a private size-capped tmpfs that
    vanishes with the sandbox. stdin and stdout are binary pipes; stderr is captured
    outside the sandbox's reach (read it with :func:`stderr_tail`). Always finish with
    :func:`terminate`. Raises ValueError for bad arguments, :class:`SandboxUnavailable`
    when ``isolation().fatal`` is set.
    """
    plan, request = _checked_request(argv, limits, env, hide, files, ro_dirs)
    if recycle_env is not None and not (isinstance(recycle_env, str) and recycle_env.isidentifier()):
        raise ValueError(f"spawn: recycle_env must be an environment variable name, got {recycle_env!r}")
    proc = _launch(plan, **request, recycle_env=recycle_env if plan.level == "bubblewrap" else None)
    if wait:
        await_started(proc)
    return proc


def await_started(proc: subprocess.Popen) -> bool:
    """Wait (once) until the sandbox's set-up is complete; True if it started.

    bwrap arms the parent-death kill of its inner processes only during set-up; were
    the grader killed before that, they would outlive it (a known bwrap race).
    Waiting for the launcher's byte keeps that window before the process is used.
    (A worker left over that way still exits: its stdin, the grader's pipe, closes.)
    """
    ready_read = getattr(proc, "sandbox_ready_fd", None)
    if ready_read is not None:
        proc.sandbox_ready_fd = None  # type: ignore[attr-defined]
        proc.sandbox_started = _await_ready(ready_read, _READY_TIMEOUT)  # type: ignore[attr-defined]
    return getattr(proc, "sandbox_started", True)


def _checked_request(argv, limits, env, hide, files, ro_dirs) -> tuple[_Plan, dict]:
    """The probe's plan and the checked arguments of spawn/run (as :func:`_launch`
    keywords). Raises ValueError for bad arguments, SandboxUnavailable when fatal."""
    checked_files = _check_files(files)
    request = dict(argv=_check_argv(argv), limits=limits, extra_env=_check_env(env), hide=tuple(hide),
                   files=checked_files, ro_dirs=_check_ro_dirs(ro_dirs, checked_files))
    if not isinstance(limits, Limits):
        raise ValueError(f"spawn: limits must be a Limits, got {type(limits).__name__}")
    plan, info = _probe()
    if plan is None:
        raise SandboxUnavailable(info.fatal)
    return plan, request


def _launch(plan: _Plan, argv: list[str], limits: Limits, extra_env: dict[str, str], hide: tuple,
            files: dict[str, bytes], ro_dirs: dict[str, Path], recycle_env: str | None = None) -> subprocess.Popen:
    """spawn, for a given plan (the probe uses it before a plan is chosen)."""
    fds: list[int] = []
    cgroup = tree = ready_read = stderr_fd = recycle_read = None
    try:
        if plan.cgroups.bases:
            try:
                cgroup = cgroups.WorkerCgroup(plan.cgroups, limits)
            except OSError:
                cgroup = None  # the probe said it works; failing now only loses the caps
        binds = list(plan.roots) + list(ro_dirs.values())
        if plan.level == "bubblewrap":
            command = _bwrap_argv(plan, limits, hide, files, ro_dirs, fds, as_pid_1=recycle_env is not None)
            ready_read, ready_write = os.pipe()
            fds.append(ready_write)
            command += _launcher(limits, plan.nproc_rlimit, ready_write, argv)
            cwd, home = "/", INSIDE_SCRATCH
            env = {**default_env(home), **extra_env}
            if recycle_env is not None:
                recycle_read, recycle_write = os.pipe()
                fds.append(recycle_write)
                env[recycle_env] = str(recycle_write)
        else:
            links = {inside[len(INSIDE_FILES) + 1:]: host for inside, host in ro_dirs.items()}
            tree = sfiles.private_tree(plan.drop_to_uid, files, links)
            if plan.hides_by_permissions:  # cheap when done: the way to ro_dirs stays open
                extra = [Path(h).resolve() for h in hide if os.path.lexists(h)]
                hiding.hide(list(plan.secrets) + extra, keep=[*binds, tree])
            command = [_relocate(a, tree) for a in argv]
            if plan.unshare is not None:
                command = [plan.unshare, *_UNSHARE_FLAGS, "--", *command]
            cwd = home = str(tree / "scratch")
            # The host's /tmp is shared: temporary files go to the private scratch instead.
            base_env = {**default_env(INSIDE_SCRATCH), "TMPDIR": INSIDE_SCRATCH}
            env = {k: _relocate(v, tree) for k, v in {**base_env, **extra_env}.items()}
            binds.append(tree)
        reveal = paths.reveal_plan(binds) if plan.drop_to_uid is not None else []
        cgroup_fds = cgroup.procs_fds() if cgroup is not None else []
        fds += cgroup_fds
        in_keeper = plan.keeper_seccomp
        keeper = keeper_argv(limits, cgroup_fds=cgroup_fds, pass_fds=fds, drop_to_uid=plan.drop_to_uid,
                             nproc=plan.nproc_rlimit and plan.level != "bubblewrap", reveal=reveal,
                             isolate=plan.isolate, seccomp_fd=sfiles.data_fd(plan.seccomp, fds) if in_keeper else None)
        stderr_fd = sfiles.stderr_sink()
        proc = subprocess.Popen(
            [*keeper, *command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr_fd,
            cwd=cwd, env=env, start_new_session=True, pass_fds=fds,
        )
    except BaseException:
        if cgroup is not None:
            cgroup.kill_all()
            cgroup.remove()
        if tree is not None:
            sfiles.remove_tree(tree)
        for fd in (ready_read, stderr_fd, recycle_read):
            if fd is not None:
                os.close(fd)
        raise
    finally:
        for fd in fds:
            os.close(fd)
    weakref.finalize(proc, os.close, stderr_fd)
    proc.sandbox_stderr_fd = stderr_fd  # type: ignore[attr-defined]
    proc.sandbox_cgroup = cgroup  # type: ignore[attr-defined]
    proc.sandbox_tree = tree  # type: ignore[attr-defined]
    proc.sandbox_level = plan.level  # type: ignore[attr-defined]
    proc.sandbox_ready_fd = ready_read  # type: ignore[attr-defined]  # see await_started
    proc.sandbox_recycle_fd = recycle_read  # type: ignore[attr-defined]  # see spawn(recycle_env=)
    proc.sandbox_file_bytes = sum(len(data) for data in files.values())  # type: ignore[attr-defined]  # /m5, in its tmpfs
    return proc


def stderr_tail(proc: subprocess.Popen, limit: int = 4096) -> str:
    """The last ``limit`` bytes the sandbox wrote to stderr (the keeper's own setup
    errors included), decoded leniently; works before and after :func:`terminate`."""
    return sfiles.read_fd_tail(getattr(proc, "sandbox_stderr_fd", None), limit)


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
    handed to the machine's init: SIGKILL everything below the keeper (found in the
    worker's cgroup and by walking /proc); the keeper reaps it all, orphans included,
    and exits by itself. Only if it does not is it killed. Last, stragglers still in
    the cgroup are killed, the cgroup removed and (fallback) the private tree deleted.
    """
    try:
        for name in ("sandbox_ready_fd", "sandbox_recycle_fd"):  # bytes no longer wanted
            fd = getattr(proc, name, None)
            if fd is not None:
                setattr(proc, name, None)
                os.close(fd)
        cgroup = getattr(proc, "sandbox_cgroup", None)
        if proc.returncode is None:
            inner = set(_descendants(proc.pid))
            if cgroup is not None:
                inner.update(cgroup.pids())
            inner.discard(proc.pid)
            for pid in inner:
                _kill_quietly(pid)
            try:
                proc.wait(timeout=5)
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
        tree = getattr(proc, "sandbox_tree", None)
        if tree is not None and sfiles.remove_tree(tree):
            proc.sandbox_tree = None  # type: ignore[attr-defined]
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
    except Exception:  # noqa: BLE001 - terminate is called from cleanup paths
        pass


def run(
    argv: list[str],
    *,
    input: bytes = b"",
    timeout: float = 60.0,
    limits: Limits = Limits(),
    env: Mapping[str, str] | None = None,
    hide: tuple | list = (),
    files: Mapping[str, bytes] = {},  # noqa: B006 - read only
    ro_dirs: Mapping[str, Path] = {},  # noqa: B006 - read only
    max_output_bytes: int = 16 << 20,
) -> SandboxResult:
    """Run ``argv`` in the sandbox to completion: feed ``input``, read at most
    ``max_output_bytes`` of stdout, stop at ``timeout`` wall seconds, then
    :func:`terminate` (always). Never hangs on a worker that floods or stalls.
    Arguments as for :func:`spawn`.
    """
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ValueError(f"run: timeout must be a positive number, got {timeout!r}")
    if not (isinstance(max_output_bytes, int) and max_output_bytes >= 0):
        raise ValueError(f"run: max_output_bytes must be a non-negative int, got {max_output_bytes!r}")
    plan, request = _checked_request(argv, limits, env, hide, files, ro_dirs)
    return _run_with_plan(plan, input=input, timeout=timeout, max_output_bytes=max_output_bytes, **request)


def _run_with_plan(plan: _Plan, argv: list[str], *, input: bytes = b"", timeout: float, limits: Limits = Limits(),
                   extra_env: dict | None = None, hide: tuple = (), files: dict | None = None,
                   ro_dirs: dict | None = None, max_output_bytes: int = 1 << 20) -> SandboxResult:
    """:func:`run` with checked arguments and a given plan."""
    start = time.monotonic()
    proc = _launch(plan, argv, limits, extra_env or {}, hide, files or {}, ro_dirs or {})
    await_started(proc)
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
        terminate(proc)
    return SandboxResult(
        returncode=returncode, stdout=b"".join(chunks), stdout_truncated=truncated,
        timed_out=timed_out, stderr_tail=stderr_tail(proc), wall_seconds=time.monotonic() - start,
    )
