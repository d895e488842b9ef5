"""The sandbox that untrusted student code runs in during grading.

One call to :func:`spawn` starts one worker process under these layers:

* **the keeper** (:mod:`.limits`): joins the worker's cgroups, sets rlimits, drops root
  to uid 65534 before anything else starts, and reaps every process of the sandbox;
* **bubblewrap** (:mod:`.cmdline`, chosen by :mod:`.probe`), when it works here: new user, pid, network, ipc, uts
  and cgroup namespaces; an allow-list file system (system directories and the Python
  installation read-only; provided files at ``/m5``; a private, size-capped
  ``nosuid,nodev`` tmpfs at ``/scratch``, the working directory, and at ``/tmp`` and
  ``/dev/shm``; nothing else writable); the project's own packages masked; no
  capabilities; a new session; killed when the grader dies;
* **a seccomp allow-list** (:mod:`.seccomp`) built with libseccomp: other system
  calls fail with EPERM;
* **cgroups** (:mod:`.cgroups`, v1 or v2): a pids cap, a CPU bandwidth share and a
  total memory cap per worker;
* **rlimits** (:mod:`.limits`): CPU seconds, address space, file size, no core files;
* **wall clock**: :func:`run` (or the caller) enforces a timeout, then :func:`terminate`
  kills every process of the worker and reaps them.

If bubblewrap is missing or cannot start (e.g. Docker's default profile),
:func:`isolation` reports ``level="fallback"`` with a loud ``warning``: the keeper then
loads the seccomp allow-list itself, and a root grader hides its files from uid 65534
by file permissions (:mod:`.hiding`). If no sandbox can run student code
without root, or the grader runs under limits a worker cannot get, ``isolation().fatal``
says why and :func:`spawn` raises :class:`SandboxUnavailable`.
"""

from autograder.grade.sandbox.launch import await_started, run, spawn, stderr_tail, terminate
from autograder.grade.sandbox.limits import SANDBOX_UID, Limits
from autograder.grade.sandbox.plan import INSIDE_FILES, INSIDE_SCRATCH, Isolation, SandboxResult, SandboxUnavailable
from autograder.grade.sandbox.probe import (
    isolation,
    probe_isolation,  # noqa: F401 - tests inspect the plan
)
from autograder.grade.sandbox.seccomp import SeccompUnavailable, seccomp_program

__all__ = [
    "Limits",
    "Isolation",
    "SandboxResult",
    "SandboxUnavailable",
    "SeccompUnavailable",
    "isolation",
    "spawn",
    "await_started",
    "terminate",
    "run",
    "stderr_tail",
    "seccomp_program",
    "SANDBOX_UID",
    "INSIDE_FILES",
    "INSIDE_SCRATCH",
]
