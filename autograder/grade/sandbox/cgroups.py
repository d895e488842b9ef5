"""One cgroup per worker: a pids cap, a CPU bandwidth share and a total memory cap.

Works with cgroup v2 (one directory, controllers enabled in the parent's
``cgroup.subtree_control``) and with v1 (one directory per hierarchy that carries a
controller). Whatever cannot be set up here is simply not in :attr:`CgroupLayout.bases`;
the probe turns that into a warning.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

CONTROLLERS = ("pids", "cpu", "memory")
PREFIX = "m5-sandbox"
CPU_PERIOD_US = 100_000
_counter = itertools.count()


def _mounts() -> tuple[dict[str, str], str | None]:
    """v1 hierarchies by controller (mount points) and the v2 mount point."""
    v1: dict[str, str] = {}
    v2 = None
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return v1, v2
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) < 5 or len(rfields) < 3:
            continue
        mount_point, fstype, options = fields[4], rfields[0], rfields[2]
        if fstype == "cgroup2" and v2 is None:
            v2 = mount_point
        elif fstype == "cgroup":
            for option in options.split(","):
                v1.setdefault(option, mount_point)
    return v1, v2


def candidate_bases() -> dict[str, list[tuple[Path, int]]]:
    """For each controller, the directories (with cgroup version) of this process's own
    cgroup where a child for it could be made: v1 first, then v2."""
    v1, v2 = _mounts()
    try:
        membership = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return {}
    found: dict[str, list[tuple[Path, int]]] = {c: [] for c in CONTROLLERS}
    for line in membership:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, rel = parts
        rel = rel.lstrip("/")
        for controller in CONTROLLERS:
            if controller in controllers.split(",") and controller in v1:
                found[controller].append((Path(v1[controller]) / rel, 1))
        if controllers == "" and v2 is not None:
            for controller in CONTROLLERS:
                found[controller].append((Path(v2) / rel, 2))
    return found


def _v2_enable(base: Path, controller: str) -> bool:
    """Make ``controller`` available to children of a v2 ``base`` (may fail: the
    "no internal processes" rule forbids it where processes live in ``base``)."""
    try:
        if controller in (base / "cgroup.subtree_control").read_text().split():
            return True
        (base / "cgroup.subtree_control").write_text(f"+{controller}")
        return True
    except OSError:
        return False


@dataclass(frozen=True)
class CgroupLayout:
    """Where per-worker cgroups are made: controller -> (base directory, version)."""

    bases: dict[str, tuple[Path, int]] = field(default_factory=dict)

    @property
    def directories(self) -> list[tuple[Path, int]]:
        """Distinct base directories (a v2 base or a v1 hierarchy may carry several)."""
        seen: dict[Path, int] = {}
        for base, version in self.bases.values():
            seen.setdefault(base, version)
        return list(seen.items())


def _settings(controller: str, version: int, limits) -> dict[str, str]:
    """Files to write in a worker's cgroup for ``controller``."""
    quota = max(1000, int(limits.cpu_cores * CPU_PERIOD_US))
    if controller == "pids":
        return {"pids.max": str(limits.max_processes + KEEPER_OVERHEAD)}
    if controller == "cpu":
        if version == 2:
            return {"cpu.max": f"{quota} {CPU_PERIOD_US}"}
        return {"cpu.cfs_period_us": str(CPU_PERIOD_US), "cpu.cfs_quota_us": str(quota)}
    if version == 2:
        return {"memory.max": str(limits.total_memory_bytes), "memory.swap.max": "0"}
    return {"memory.limit_in_bytes": str(limits.total_memory_bytes)}


# The keeper, bwrap's outer process and bwrap's pid-1 reaper sit in the cgroup too.
KEEPER_OVERHEAD = 3
# Settings whose absence only loses a refinement (no swap accounting, say), not the cap.
_OPTIONAL = {"memory.swap.max"}


def probe_layout(limits) -> CgroupLayout:
    """Find, for each controller, the first base where a child with working settings can
    be made (tried for real with ``limits``); sweep leftovers of dead graders there."""
    bases: dict[str, tuple[Path, int]] = {}
    for controller, candidates in candidate_bases().items():
        for base, version in candidates:
            if version == 2 and not _v2_enable(base, controller):
                continue
            try:
                trial = WorkerCgroup(CgroupLayout({controller: (base, version)}), limits)
            except OSError:
                continue
            trial.remove()
            bases[controller] = (base, version)
            break
    layout = CgroupLayout(bases)
    for directory, _ in layout.directories:
        sweep_stale(directory)
    return layout


class WorkerCgroup:
    """The cgroups of one worker (one directory per base); removed by :meth:`remove`."""

    def __init__(self, layout: CgroupLayout, limits):
        self.name = f"{PREFIX}-{os.getpid()}-{next(_counter)}"
        self.paths: list[Path] = []
        try:
            for base, _ in layout.directories:
                path = base / self.name
                path.mkdir()
                self.paths.append(path)
                for controller, (c_base, c_version) in layout.bases.items():
                    if c_base == base:
                        for key, value in _settings(controller, c_version, limits).items():
                            try:
                                (path / key).write_text(value)
                            except OSError:
                                if key not in _OPTIONAL:
                                    raise
        except OSError:
            self.remove()
            raise

    def procs_fds(self) -> list[int]:
        """Open write ends of every ``cgroup.procs`` (for the keeper to join)."""
        fds: list[int] = []
        try:
            for path in self.paths:
                fds.append(os.open(path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC))
        except OSError:
            for fd in fds:
                os.close(fd)
            raise
        return fds

    def shmem_bytes(self) -> int | None:
        """Shared memory (tmpfs files, memfds, SysV segments) charged to the worker's
        memory cgroup, from ``memory.stat`` (v1 and v2 both name it ``shmem``); None
        without a readable memory cgroup."""
        for path in self.paths:
            try:
                lines = (path / "memory.stat").read_text().splitlines()
            except OSError:
                continue
            for line in lines:
                key, _, value = line.partition(" ")
                if key == "shmem" and value.strip().isdigit():
                    return int(value)
        return None

    def pids(self) -> set[int]:
        found: set[int] = set()
        for path in self.paths:
            with contextlib.suppress(OSError):
                found.update(int(x) for x in (path / "cgroup.procs").read_text().split())
        return found

    def kill_all(self, timeout: float = 5.0) -> bool:
        """SIGKILL every member until the cgroups are empty; True when they are."""
        deadline = time.monotonic() + timeout
        while True:
            pids = self.pids()
            if not pids:
                return True
            if time.monotonic() > deadline:
                return False
            for path in self.paths:  # v2 (5.14+): kill the whole cgroup at once
                with contextlib.suppress(OSError):
                    (path / "cgroup.kill").write_text("1")
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        for path in self.paths:
            with contextlib.suppress(OSError):
                path.rmdir()


def sweep_stale(base: Path) -> None:
    """Kill what is left in worker cgroups of graders that died (their pid is gone), e.g.
    a sandbox orphaned because its grader was SIGKILLed mid-spawn, and remove them."""
    for child in base.glob(f"{PREFIX}-*-*"):
        try:
            owner = int(child.name.split("-")[2])
        except (IndexError, ValueError):
            continue
        if owner != os.getpid() and not Path(f"/proc/{owner}").exists():
            stale = WorkerCgroup.__new__(WorkerCgroup)
            stale.paths = [child]
            if stale.kill_all(timeout=2.0):
                stale.remove()
