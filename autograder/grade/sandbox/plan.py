"""What the sandbox is on this machine: the probe's plan, and what callers are told.

:class:`Plan` is everything a launch needs, chosen once by the probe (``probe.py``);
:class:`Isolation` is what the probe tells the grader; :class:`SandboxResult` is the
outcome of ``run``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grade.sandbox import cgroups

BWRAP_CANDIDATES = ("/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap")
UNSHARE_CANDIDATES = ("/usr/bin/unshare", "/bin/unshare")
INSIDE_FILES = "/m5"  # provided files and directories, read-only
INSIDE_SCRATCH = "/scratch"  # private size-capped tmpfs; cwd and HOME


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
class Plan:
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
