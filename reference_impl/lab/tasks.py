"""The lab's work as tasks, run in this process or in worker processes (``m5 lab --jobs N``).

A task is one section at one seed offset (``RUNNERS[section](profile, offset, cache)``).
Tasks that share the runners' ``cache`` form one *group* and run in order in one
process: at an offset, online DQN leaves its replay history for the offline section,
whose run serves the FQE section too (:data:`SHARED_CACHE`); every other task is a group
of its own. Every runner seeds itself, so a task's result is the same whichever process
runs it and whatever ran there before (a test compares ``--jobs 2`` with ``--jobs 1``).

Workers are started with the ``spawn`` method (the lab runs on Windows and macOS too)
and ignore Ctrl-C: the parent alone stops, terminating them, and writes nothing.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from reference_impl.common import progress
from reference_impl.lab.profiles import LabProfile
from reference_impl.lab.runners import RUNNERS, UNSEEDED

__all__ = ["SHARED_CACHE", "WorkerSetup", "TaskGroup", "GroupResult", "task_groups", "run_group", "run_tasks"]

#: Sections that share one cache at an offset (in lab order): they run as one group.
SHARED_CACHE = ("dqn", "offline", "fqe")
#: Sections run first when there are workers: the longest (Decision Transformer, then
#: the shared DQN/offline/FQE group) first, so the short ones fill the gaps at the end.
LONGEST_FIRST = ("dt", "offline", "fqe", "dqn")


@dataclass(frozen=True)
class TaskGroup:
    """Tasks (section, offset) run in order in one process with one cache."""

    offset: int
    sections: tuple[str, ...]
    need_fqe: bool


@dataclass(frozen=True)
class GroupResult:
    """What a group's run gives back: each section's result and seconds (the FQE stage of a
    shared offline run counted under ``fqe``)."""

    offset: int
    results: dict[str, dict]
    seconds: dict[str, float]


def task_groups(sections: Sequence[str], offsets: Sequence[int]) -> list[TaskGroup]:
    """Every (section, offset) task of a run once, grouped by shared cache, longest first.

    ``sections`` are in lab order; an unseeded section runs at the first offset only.
    """
    need_fqe = "fqe" in sections
    shared = tuple(s for s in sections if s in SHARED_CACHE)
    groups = []
    for offset in offsets:
        if shared:
            groups.append(TaskGroup(offset, shared, need_fqe))
        alone = (s for s in sections if s not in SHARED_CACHE and (s not in UNSEEDED or offset == offsets[0]))
        groups += [TaskGroup(offset, (s,), need_fqe) for s in alone]
    return sorted(groups, key=_longest_first)  # stable: offsets stay in order within a rank


def _longest_first(group: TaskGroup) -> int:
    ranks = [LONGEST_FIRST.index(s) for s in group.sections if s in LONGEST_FIRST]
    return min(ranks, default=len(LONGEST_FIRST))


def run_group(profile: LabProfile, group: TaskGroup) -> GroupResult:
    """Run a group's tasks in order with a fresh cache (a worker's entry point)."""
    cache: dict = {"need_fqe": group.need_fqe}
    results, seconds = {}, {}
    for section in group.sections:
        started = time.perf_counter()
        results[section] = RUNNERS[section](profile, group.offset, cache)
        seconds[section] = time.perf_counter() - started
    if "offline" in seconds and "fqe" in seconds:
        # One offline_experiment serves both sections and ran under "offline":
        # move its FQE stage to the fqe row.
        moved = cache[("offline", group.offset)]["seconds"].get("fqe", 0.0)
        seconds["offline"] -= moved
        seconds["fqe"] += moved
    return GroupResult(group.offset, results, seconds)


WorkerSetup = Callable[[], None]


def _start_worker(setup: WorkerSetup | None) -> None:
    """Worker initializer: Ctrl-C reaches the whole process group, but the parent alone
    handles it; then the caller's own set-up, if any."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if setup is not None:
        setup()


def _finished_groups(profile: LabProfile, groups: list[TaskGroup], jobs: int, setup: WorkerSetup | None) -> Iterator[GroupResult]:
    """Each group's result as it finishes: here (``jobs`` 1) or in ``jobs`` spawned workers."""
    if jobs == 1:
        yield from (run_group(profile, group) for group in groups)
        return
    import multiprocessing  # why: only a parallel run starts workers

    context = multiprocessing.get_context("spawn")  # no fork: Windows and macOS run the lab too
    # Leaving the block (finished, an error, Ctrl-C) terminates and joins every worker.
    with context.Pool(min(jobs, len(groups)), initializer=_start_worker, initargs=(setup,)) as pool:
        yield from pool.imap_unordered(_run_group_of, [(profile, group) for group in groups])


def _run_group_of(job: tuple[LabProfile, TaskGroup]) -> GroupResult:
    return run_group(*job)


def run_tasks(
    profile: LabProfile, sections: Sequence[str], offsets: Sequence[int], jobs: int = 1, *, worker_setup: WorkerSetup | None = None
) -> tuple[dict[str, list[dict]], dict[str, float]]:
    """Every task of a run: ``({section: [result per offset, in offset order]}, {section: seconds})``.

    A section's seconds are the sum of its tasks' times (with workers, more than the wall
    time it took). The progress bar counts tasks, advancing when a group finishes.
    ``worker_setup`` (a module-level function: workers import it) runs first in every
    worker, e.g. to repeat there what a test patched in this process.
    """
    groups = task_groups(sections, offsets)
    finished: list[GroupResult] = []
    bar = progress(None, desc="m5 lab", total=sum(len(g.sections) for g in groups))
    for done in _finished_groups(profile, groups, jobs, worker_setup):
        finished.append(done)
        if bar is not None:
            bar.update(len(done.results))
    if bar is not None:
        bar.close()
    finished.sort(key=lambda done: done.offset)
    results = {s: [done.results[s] for done in finished if s in done.results] for s in sections}
    seconds = {s: sum(done.seconds.get(s, 0.0) for done in finished) for s in sections}
    return results, seconds
