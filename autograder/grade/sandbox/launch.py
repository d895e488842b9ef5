"""The sandbox's public API: start a worker in it (:func:`spawn`), wait for its set-up
(:func:`await_started`), run one to completion (:func:`run`), stop it (``terminate``),
with every argument checked and the probe's plan (``probe.py``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from autograder.grade.sandbox import probe
from autograder.grade.sandbox.limits import Limits
from autograder.grade.sandbox.plan import INSIDE_FILES, Plan, SandboxResult, SandboxUnavailable
from autograder.grade.sandbox.probe import isolation  # noqa: F401 - the public probe, here too
from autograder.grade.sandbox.process import (
    SandboxProcess,
    await_started,
    launch_with_plan,
    run_with_plan,
    stderr_tail,  # noqa: F401 - the public API, here too
    terminate,  # noqa: F401 - the public API, here too
)


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
        name = _check_name("ro_dirs", inside[len(INSIDE_FILES) + 1 :])
        if name in files:
            raise ValueError(f"spawn: ro_dirs key {inside!r} clashes with files[{name!r}]")
        if not isinstance(host, (str, os.PathLike)) or not Path(host).is_dir():
            raise ValueError(f"spawn: ro_dirs[{inside!r}] = {host!r} is not an existing directory")
        checked[inside] = Path(host).resolve()
    return checked


def spawn(
    argv: list[str],
    *,
    limits: Limits = Limits(),
    env: Mapping[str, str] | None = None,
    hide: tuple | list = (),
    files: Mapping[str, bytes] = {},
    ro_dirs: Mapping[str, Path] = {},
    wait: bool = True,
    recycle_env: str | None = None,
) -> SandboxProcess:
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
    proc = launch_with_plan(plan, **request, recycle_env=recycle_env if plan.level == "bubblewrap" else None)
    if wait:
        await_started(proc)
    return proc


def _checked_request(argv, limits, env, hide, files, ro_dirs) -> tuple[Plan, dict]:
    """The probe's plan and the checked arguments of spawn/run (as :func:`_launch`
    keywords). Raises ValueError for bad arguments, SandboxUnavailable when fatal."""
    checked_files = _check_files(files)
    request = dict(
        argv=_check_argv(argv),
        limits=limits,
        extra_env=_check_env(env),
        hide=tuple(hide),
        files=checked_files,
        ro_dirs=_check_ro_dirs(ro_dirs, checked_files),
    )
    if not isinstance(limits, Limits):
        raise ValueError(f"spawn: limits must be a Limits, got {type(limits).__name__}")
    plan, info = probe.probe_isolation()  # looked up here: tests replace the probe's plan
    if plan is None:
        raise SandboxUnavailable(info.fatal)
    return plan, request


def run(
    argv: list[str],
    *,
    input: bytes = b"",
    timeout: float = 60.0,
    limits: Limits = Limits(),
    env: Mapping[str, str] | None = None,
    hide: tuple | list = (),
    files: Mapping[str, bytes] = {},
    ro_dirs: Mapping[str, Path] = {},
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
    return run_with_plan(plan, input=input, timeout=timeout, max_output_bytes=max_output_bytes, **request)
