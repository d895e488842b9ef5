"""A sandboxed process: launched from a plan, waited for, read, and killed whole.

:class:`SandboxProcess` is the ``Popen`` with what the sandbox keeps beside it (its
cgroup, its private tree, the descriptors of its stderr and its ready and recycle
pipes), so nothing is patched onto a plain ``Popen``.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
import weakref
from pathlib import Path

from autograder.grade.sandbox import cgroups, hiding, paths
from autograder.grade.sandbox import files as sfiles
from autograder.grade.sandbox.cmdline import UNSHARE_FLAGS, bwrap_argv, launcher, relocate
from autograder.grade.sandbox.limits import Limits, default_env, keeper_argv
from autograder.grade.sandbox.plan import INSIDE_FILES, INSIDE_SCRATCH, Plan, SandboxResult

READY_TIMEOUT = 30.0


class SandboxProcess(subprocess.Popen):
    """A worker in its sandbox (see :func:`launch_with_plan`)."""

    sandbox_stderr_fd: int | None = None  # the sink of its stderr, outside its reach
    sandbox_cgroup: cgroups.WorkerCgroup | None = None
    sandbox_tree: Path | None = None  # the fallback's private tree
    sandbox_level: str = "none"
    sandbox_ready_fd: int | None = None  # see await_started
    sandbox_recycle_fd: int | None = None  # see spawn(recycle_env=)
    sandbox_file_bytes: int = 0  # /m5, in its tmpfs
    sandbox_started: bool = True


def await_ready(read_fd: int, timeout: float) -> bool:
    """Wait for the launcher's byte; False on EOF (setup failed) or timeout."""
    try:
        ready, _, _ = select.select([read_fd], [], [], timeout)
        return bool(ready) and os.read(read_fd, 1) == b"1"
    except OSError:
        return False
    finally:
        os.close(read_fd)


def await_started(proc: SandboxProcess) -> bool:
    """Wait (once) until the sandbox's set-up is complete; True if it started.

    bwrap arms the parent-death kill of its inner processes only during set-up; were
    the grader killed before that, they would outlive it (a known bwrap race).
    Waiting for the launcher's byte keeps that window before the process is used.
    (A worker left over that way still exits: its stdin, the grader's pipe, closes.)
    """
    ready_read = getattr(proc, "sandbox_ready_fd", None)
    if ready_read is not None:
        proc.sandbox_ready_fd = None
        proc.sandbox_started = await_ready(ready_read, READY_TIMEOUT)
    return getattr(proc, "sandbox_started", True)


def launch_with_plan(
    plan: Plan,
    argv: list[str],
    limits: Limits,
    extra_env: dict[str, str],
    hide: tuple,
    files: dict[str, bytes],
    ro_dirs: dict[str, Path],
    recycle_env: str | None = None,
) -> SandboxProcess:
    """``launch.spawn``, for a given plan (the probe uses it before a plan is chosen)."""
    fds: list[int] = []
    cgroup = tree = ready_read = stderr_fd = recycle_read = None
    try:
        cgroup = _worker_cgroup(plan, limits)
        binds = list(plan.roots) + list(ro_dirs.values())
        if plan.level == "bubblewrap":
            command = bwrap_argv(plan, limits, hide, files, ro_dirs, fds, as_pid_1=recycle_env is not None)
            ready_read, ready_write = os.pipe()
            fds.append(ready_write)
            command += launcher(limits, plan.nproc_rlimit, ready_write, argv)
            cwd, home = "/", INSIDE_SCRATCH
            env = {**default_env(home), **extra_env}
            if recycle_env is not None:
                recycle_read, recycle_write = os.pipe()
                fds.append(recycle_write)
                env[recycle_env] = str(recycle_write)
        else:
            links = {inside[len(INSIDE_FILES) + 1 :]: host for inside, host in ro_dirs.items()}
            tree = sfiles.private_tree(plan.drop_to_uid, files, links)
            if plan.hides_by_permissions:  # cheap when done: the way to ro_dirs stays open
                extra = [Path(h).resolve() for h in hide if os.path.lexists(h)]
                hiding.hide(list(plan.secrets) + extra, keep=[*binds, tree])
            command = [relocate(a, tree) for a in argv]
            if plan.unshare is not None:
                command = [plan.unshare, *UNSHARE_FLAGS, "--", *command]
            cwd = home = str(tree / "scratch")
            # The host's /tmp is shared: temporary files go to the private scratch instead.
            base_env = {**default_env(INSIDE_SCRATCH), "TMPDIR": INSIDE_SCRATCH}
            env = {k: relocate(v, tree) for k, v in {**base_env, **extra_env}.items()}
            binds.append(tree)
        reveal = paths.reveal_plan(binds) if plan.drop_to_uid is not None else []
        cgroup_fds = cgroup.procs_fds() if cgroup is not None else []
        fds += cgroup_fds
        in_keeper = plan.keeper_seccomp
        keeper = keeper_argv(
            limits,
            cgroup_fds=cgroup_fds,
            pass_fds=fds,
            drop_to_uid=plan.drop_to_uid,
            nproc=plan.nproc_rlimit and plan.level != "bubblewrap",
            reveal=reveal,
            isolate=plan.isolate,
            seccomp_fd=sfiles.data_fd(plan.seccomp, fds) if in_keeper else None,
        )
        stderr_fd = sfiles.stderr_sink()
        proc = SandboxProcess(
            [*keeper, *command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr_fd,
            cwd=cwd,
            env=env,
            start_new_session=True,
            pass_fds=fds,
        )
    except BaseException:
        _undo_launch(cgroup, tree, (ready_read, stderr_fd, recycle_read))
        raise
    finally:
        for fd in fds:
            os.close(fd)
    weakref.finalize(proc, os.close, stderr_fd)
    proc.sandbox_stderr_fd = stderr_fd
    proc.sandbox_cgroup = cgroup
    proc.sandbox_tree = tree
    proc.sandbox_level = plan.level
    proc.sandbox_ready_fd = ready_read
    proc.sandbox_recycle_fd = recycle_read
    proc.sandbox_file_bytes = sum(len(data) for data in files.values())
    return proc


def _worker_cgroup(plan: Plan, limits: Limits) -> cgroups.WorkerCgroup | None:
    """The worker's own cgroup, or None where the plan has none or it cannot be made."""
    if not plan.cgroups.bases:
        return None
    try:
        return cgroups.WorkerCgroup(plan.cgroups, limits)
    except OSError:
        return None  # the probe said it works; failing now only loses the caps


def _undo_launch(cgroup: cgroups.WorkerCgroup | None, tree: Path | None, kept_fds: tuple) -> None:
    """Release what a launch that failed had made: its cgroup (emptied), its private tree,
    and the descriptors it would have kept (None where not made yet)."""
    if cgroup is not None:
        cgroup.kill_all()
        cgroup.remove()
    if tree is not None:
        sfiles.remove_tree(tree)
    for fd in kept_fds:
        if fd is not None:
            os.close(fd)


def stderr_tail(proc: SandboxProcess, limit: int = 4096) -> str:
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
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _kill_quietly(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def terminate(proc: SandboxProcess) -> None:
    """Kill the whole sandbox (every descendant) and reap it. Idempotent; never raises.

    Inside out, so that every process is reaped by its own parent and no zombie is
    handed to the machine's init: SIGKILL everything below the keeper (found in the
    worker's cgroup and by walking /proc); the keeper reaps it all, orphans included,
    and exits by itself. Only if it does not is it killed. Last, stragglers still in
    the cgroup are killed, the cgroup removed and (fallback) the private tree deleted.
    """
    try:
        _close_signal_pipes(proc)
        cgroup = getattr(proc, "sandbox_cgroup", None)
        if proc.returncode is None:
            _kill_below_keeper(proc, cgroup)
        if proc.returncode is None:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            _kill_quietly(proc.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        _remove_cgroup_and_tree(proc, cgroup)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
    except Exception:  # noqa: BLE001 - terminate is called from cleanup paths
        pass


def _close_signal_pipes(proc: SandboxProcess) -> None:
    """Close the ready and recycle pipes' read ends: their bytes are no longer wanted."""
    for name in ("sandbox_ready_fd", "sandbox_recycle_fd"):
        fd = getattr(proc, name, None)
        if fd is not None:
            setattr(proc, name, None)
            os.close(fd)


def _kill_below_keeper(proc: SandboxProcess, cgroup: cgroups.WorkerCgroup | None) -> None:
    """SIGKILL every process below the keeper (its /proc descendants and its cgroup's
    members), then give the keeper up to 5 s to reap them and exit by itself."""
    inner = set(_descendants(proc.pid))
    if cgroup is not None:
        inner.update(cgroup.pids())
    inner.discard(proc.pid)
    for pid in inner:
        _kill_quietly(pid)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def _remove_cgroup_and_tree(proc: SandboxProcess, cgroup: cgroups.WorkerCgroup | None) -> None:
    """Kill stragglers left in the cgroup and remove it, and delete the fallback's private
    tree; each is forgotten only once it is gone (a later call tries again)."""
    if cgroup is not None and cgroup.kill_all():
        cgroup.remove()
        proc.sandbox_cgroup = None
    tree = getattr(proc, "sandbox_tree", None)
    if tree is not None and sfiles.remove_tree(tree):
        proc.sandbox_tree = None


def run_with_plan(
    plan: Plan,
    argv: list[str],
    *,
    input: bytes = b"",
    timeout: float,
    limits: Limits = Limits(),
    extra_env: dict | None = None,
    hide: tuple = (),
    files: dict | None = None,
    ro_dirs: dict | None = None,
    max_output_bytes: int = 1 << 20,
) -> SandboxResult:
    """``launch.run`` with checked arguments and a given plan."""
    start = time.monotonic()
    proc = launch_with_plan(plan, argv, limits, extra_env or {}, hide, files or {}, ro_dirs or {})
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
        returncode=returncode,
        stdout=b"".join(chunks),
        stdout_truncated=truncated,
        timed_out=timed_out,
        stderr_tail=stderr_tail(proc),
        wall_seconds=time.monotonic() - start,
    )
