"""Grader side: run a submission's code in a sandboxed worker and collect outcomes.

:class:`WorkerSession` runs in the grader's process and drives one worker at a time
(a :class:`WorkerProcess` of ``worker_handle``: the sandboxed process and its framed
pipes; inside the sandbox runs the package ``worker``: a trusted parent that forks the
process running student code). It loads the submission's cells,
then sends each kernel's whole batch of calls as one request and reads the reply under
a wall-clock deadline, refusing any reply larger than the request can legitimately
produce (:func:`wire.reply_limits`). Inside the worker, a lost batch (the student's
process died, hung or broke the protocol) costs only that kernel: the worker forks a
fresh process and loads the cells again. Only when the worker itself is gone does the
session start a new one (loading the cells again, minus any cell that killed it).

Kernels are pipelined: :meth:`WorkerSession.plan` lists the batches the grader will
ask for, and each is sent as soon as the previous reply is read, so the worker runs
kernel k+1 while the grader judges kernel k.

The corpus' calls are the same for every submission: a session given them
(``preload``) places them in each worker it starts (a read-only file beside the
worker); the worker unpickles them before it forks the student's process, and a
batch request then only names them (``call_forms.py``). With a :class:`SpareWorker`,
that work is done while the previous submission is graded: it holds the next
submission's :class:`WorkerProcess`, new or recycled, and hands it to that session.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from autograder.grade import sandbox
from autograder.grade.call_forms import prepared
from autograder.grade.extract import Cell
from autograder.grade.worker import wire
from autograder.grade.worker_handle import LOST_REASONS, WorkerLost, WorkerProcess, WorkerSpec

GRACE = 10.0  # the grader's deadlines exceed the worker's own by this (s)
AHEAD = 2  # planned batches kept in flight (the worker never waits for the grader)
WORKER_START_RETRIES = 2  # a worker lost before its first cell is started again this many times


class GradingUnavailable(RuntimeError):
    """The sandbox failed before any of the submission's code ran: no grade can be given
    (the submission gets an error result, to be graded again)."""


@dataclass
class LoadReport:
    cells: list[dict] = field(default_factory=list)  # {"id", "ok", "error"}
    found: dict[str, bool] = field(default_factory=dict)
    fatal_cells: list[str] = field(default_factory=list)  # cells that killed the worker
    time_cap: bool = False  # loading hit load_timeout


@dataclass(frozen=True)
class Budget:
    """Time budgets of one submission (docs/grading.md explains the numbers).

    CPU limits count the student process's own CPU time, so a busy neighbor cannot
    make a correct submission fail; each has a wall-clock backstop for code that sleeps
    or blocks. All are enforced from outside the student's process.
    """

    call_timeout: float = 2.0  # CPU seconds one call may use
    call_wall: float = 20.0  # wall-clock backstop of one call
    kernel_cpu_per_call: float = 0.1  # a batch's CPU budget: max(10 s, calls x this)
    kernel_timeout: float = 30.0  # a batch's wall backstop: this + wall_factor x its CPU budget
    wall_factor: float = 3.0
    load_timeout: float = 60.0  # all cells, wall clock (one cell: cell_timeout)
    cell_timeout: float = 20.0
    submission_wall: float = 120.0  # the whole submission, wall clock, beyond wall_factor x the CPU its code used
    submission_timeout: float = 1500.0  # the whole submission, wall clock, however much CPU it used (backstop)
    idle_wall: float = 2.0  # a call, cell or statement not running this long (wall, beyond its CPU) is stopped

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"Budget.{item.name} must be a positive number of seconds, got {value!r}")

    def batch_cpu(self, n_calls: int) -> float:
        return max(wire.MIN_BATCH_CPU, n_calls * self.kernel_cpu_per_call)

    def batch_wall(self, n_calls: int) -> float:
        """The worker's wall-clock backstop for a batch of ``n_calls``."""
        return self.kernel_timeout + self.wall_factor * self.batch_cpu(n_calls)

    def for_worker(self) -> dict:
        """The budgets the worker enforces itself (sent with the load request)."""
        return {name: getattr(self, name) for name in wire.DEFAULT_BUDGET}


def call_request(kernel: str, calls, budget: Budget) -> bytes:
    """An encoded request for one-off calls of ``kernel`` (``Call`` objects), outside the
    corpus: a counterexample search's probe, or an instructor's property run by the pytest
    plugin. Sent inline (never preloaded), with the budget's per-call time limit."""
    return wire.encode_request(
        {"op": "call", "kernel": kernel, "call_timeout": budget.call_timeout, "calls": [[list(c.args), c.kwargs] for c in calls]}
    )


@dataclass
class InFlight:
    """A batch request sent to the worker whose reply is not read yet."""

    request: bytes  # the encoded request (its identity names the batch)
    deadline: float  # when the grader stops waiting (set when it reaches the head)
    limits: tuple[int, int]  # the reply's header and blob byte limits
    n_calls: int
    planned: bool  # from the plan: re-queued for the next worker when this one is lost

    def restart_clock(self, seconds: float) -> None:
        """The batch now runs (it reached the head of the queue): its wait starts now."""
        self.deadline = time.monotonic() + seconds


class WorkerSession:
    def __init__(
        self,
        cells: list[Cell],
        kernels: list[str],
        *,
        budget: Budget = Budget(),
        limits: sandbox.Limits = sandbox.Limits(),
        import_dirs: Sequence[Path] = (),
        spare: "SpareWorker | None" = None,
        preload: Sequence[bytes] = (),
        lang: str = "en",
    ):
        """``import_dirs``: read-only directories put at the front of the student
        process's ``sys.path`` (support libraries such as ``m5_student``). ``spare``:
        take a worker started ahead of time, and start the next one once loaded.
        ``preload``: encoded call requests (the corpus') whose calls every worker of
        this session gets when it starts; batches of them then travel by name.
        ``lang``: the submission's language, which the support library reports to it."""
        self.spec = WorkerSpec(limits, tuple(Path(d) for d in import_dirs), tuple(preload))
        self.cells = list(cells)
        self.kernels = list(kernels)
        self.budget = budget
        self.spare = spare
        self.recycle = bool(spare and spare.recycle)  # start workers that can be recycled
        self.lang = lang
        self.deadline = time.monotonic() + budget.submission_timeout
        self.started = time.monotonic()  # the honest cap (time_limit) counts from here
        self.cpu_used = 0.0  # CPU seconds of the student's code, as its worker reported them
        self.worker: WorkerProcess | None = None
        self.report = LoadReport()
        self._planned: list[tuple[bytes, int]] = []  # batches the grader will ask for, in order
        self._inflight: list[InFlight] = []  # sent, reply unread, in the order sent
        self._replies: list[tuple[bytes, object]] = []  # read ahead of their caller: (request, reply | WorkerLost)
        self._loading = False  # the load request is out, its final reply unread
        self._loaded = False  # the cells are loaded (self.report says how)
        self._current_cell = None  # the cell the worker announced last while loading
        self._plan_given = False
        self.when_idle = None  # called whenever the worker has no batch left to run

    # ------------------------------------------------------------ lifecycle
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def out_of_time(self) -> bool:
        """The submission's wall-clock cap (or the cells' cap) has been reached. A batch
        already running is not cut by it (its own budgets bound it): the cap is met
        between kernels, so CPU a correct batch used always counts before it is."""
        now = time.monotonic()
        return self.report.time_cap or now >= self.deadline or now >= self.started + self.time_limit

    @property
    def time_limit(self) -> float:
        """The submission's wall-clock cap now: ``submission_wall`` plus ``wall_factor``
        times the CPU its code has used, at most ``submission_timeout``. Code that
        computes earns time (a neighbor may leave it a third of a core); code that
        sleeps or waits does not."""
        b = self.budget
        return min(b.submission_timeout, b.submission_wall + b.wall_factor * self.cpu_used)

    def _charge(self, cpu) -> None:
        """Add the CPU seconds a worker reply reports (checked: the reply is untrusted)."""
        if type(cpu) in (int, float) and 0 <= cpu <= self.budget.submission_timeout:
            self.cpu_used += cpu

    def _load_request(self) -> dict:
        return {
            "op": "load",
            "kernels": self.kernels,
            "cell_timeout": self.budget.cell_timeout,
            "budget": self.budget.for_worker(),
            "import_dirs": list(self.spec.import_dirs_inside()),
            "lang": self.lang,
            "cells": [dataclasses.asdict(c) for c in self.cells if c.id not in self.report.fatal_cells],
        }

    def start(self) -> LoadReport:
        """Start a worker and load the cells (or finish a load :meth:`begin` started);
        retry without cells that kill it. A worker lost before it announced any cell lost
        nothing of the student's: it is started again, and if that keeps happening the
        grading fails with :class:`GradingUnavailable` rather than a grade of zero."""
        unstarted = 0
        for _ in range(len(self.cells) + 1 + WORKER_START_RETRIES):
            if self._loaded:
                return self.report
            if self.out_of_time:
                break
            try:
                if not self._loading:
                    self._inflight.clear()
                    if not (self.spare and self.spare.hand_over(self)):
                        self.spawn()
                    self._send_load()
                deadline = time.monotonic() + self.budget.load_timeout + GRACE
                while not self._take_load_reply(self._receive(deadline, self._load_limits())):
                    pass
                return self.report
            except WorkerLost as lost:
                self._loading = False
                self._stop()
                current = self._current_cell
                if current is None and not self.out_of_time:
                    unstarted += 1
                    if unstarted > WORKER_START_RETRIES:
                        raise GradingUnavailable(
                            f"the sandbox was lost {unstarted} times before the first cell ran ({lost.reason})"
                        ) from None
                    continue
                if current is None or current in self.report.fatal_cells:
                    break
                self.report.fatal_cells.append(current)
        self.report.found = {k: False for k in self.kernels}
        return self.report

    def begin(self) -> bool:
        """Send the load request now if the spare's worker can be had without waiting
        (a class run loads the next submission while the current one is graded); True
        if it went out. :meth:`start` finishes the load."""
        if self._loading or self._loaded or self.worker is not None or not (self.spare and self.spare.ready()):
            return False
        if not self.spare.hand_over(self):
            return False
        try:
            self._send_load()
        except WorkerLost:
            self._loading = False
            self._stop()
            return False
        return True

    def poll_loaded(self) -> bool:
        """Without waiting: True once the load :meth:`begin` started has finished. A worker
        lost meanwhile is dropped (:meth:`start` then loads the cells afresh)."""
        try:
            while self._loading:
                reply = self._receive(self.deadline, self._load_limits(), wait=False)
                if reply is None:
                    return False
                self._take_load_reply(reply)
        except WorkerLost:
            self._loading = False
            self._stop()
        return self._loaded

    def resume(self) -> None:
        """A session made ready ahead of time starts its own clocks now, when its
        submission's grading begins (its head batch may have waited for the grader)."""
        self.started = time.monotonic()
        self.deadline = self.started + self.budget.submission_timeout
        if self._inflight:
            self._inflight[0].restart_clock(self._batch_deadline(self._inflight[0].n_calls))

    @property
    def idle(self) -> bool:
        """The worker has no batch left to run (none planned, none in flight)."""
        return not self._planned and not self._inflight

    @property
    def planned(self) -> bool:
        """Batches were planned (:meth:`plan`)."""
        return self._plan_given

    def _send_load(self) -> None:
        self._current_cell = None
        self._send(self._load_request())
        self._loading = True

    def _take_load_reply(self, reply: dict) -> bool:
        """One reply to the load request; True once it is the final one."""
        if reply.get("op") == "cell":
            self._current_cell = reply.get("id")
            return False
        if reply.get("op") != "loaded":
            raise WorkerLost("protocol")
        if reply.get("unstarted") is True:  # its children kept dying before the first cell
            self._current_cell = None
            raise WorkerLost("crashed")
        self.report.cells = [c for c in reply.get("cells", []) if isinstance(c, dict)]
        self.report.cells += [{"id": cid, "ok": False, "error": wire.FATAL_CELL, "reason": "stopped"} for cid in self.report.fatal_cells]
        found = reply.get("found", {})
        self.report.found = {k: bool(found.get(k)) for k in self.kernels}
        self._charge(reply.get("cpu"))
        self.report.time_cap = reply.get("time_cap") is True
        self._loading, self._loaded = False, True
        return True

    def close(self) -> None:
        if self.worker is not None:
            try:
                self._send({"op": "exit"})
            except (WorkerLost, OSError):
                self._stop()
        if self.worker is not None and self.spare is not None and self.recyclable:
            self.spare.take_back(self)
        self._stop()

    @property
    def recycles(self) -> bool:
        """The running worker was started as a recycling one (see :class:`SpareWorker`)."""
        return self.worker is not None and self.worker.recycles

    @property
    def recyclable(self) -> bool:
        """The worker may serve the next submission once its sandbox reports itself
        clean: it recycles and no batch of it is unanswered."""
        return self.recycles and not self._inflight and not self.out_of_time

    def spawn(self) -> None:
        """Start a worker in a new sandbox (the one running, if any, is stopped first)."""
        self._stop()
        self.worker = WorkerProcess.start(self.spec, recycle=self.recycle)

    def _stop(self) -> None:
        if self.worker is not None:
            self.worker.stop()
            self.worker = None

    def take_worker(self, worker: WorkerProcess) -> None:
        """Run on ``worker`` from now on (its sandbox, and the corpus preloaded in it);
        this session's own, if any, is stopped."""
        self._stop()
        worker.buffer.clear()
        self.worker = worker

    def give_worker(self) -> WorkerProcess | None:
        """The running worker, which this session no longer holds (None if none)."""
        worker, self.worker = self.worker, None
        return worker

    def restart(self) -> None:
        """After a lost kernel: a worker that is still running has already replaced the
        process it lost; a worker that is gone is started afresh (cells loaded again)."""
        if self.worker is None and not self.out_of_time:
            fatal = list(self.report.fatal_cells)
            self.report = LoadReport(fatal_cells=fatal)
            self._loading = self._loaded = False
            self.start()

    # ------------------------------------------------------------ requests
    def plan(self, requests: Sequence[tuple[bytes, int]]) -> None:
        """The call batches (encoded request, number of calls) the caller will ask for
        next, in order: the first is sent now, each next one as soon as the previous
        one's reply is read. Then the next submission's spare worker (if any) is
        started, so its start-up overlaps the first batch instead of delaying it."""
        self._planned = list(requests)
        self._plan_given = True
        self._send_ahead()
        if self.spare:
            self.spare.refill(self)

    def call_batch(self, request: bytes, n_calls: int) -> list[dict]:
        """Send a pre-encoded call request (unless sent ahead); return one outcome per call."""
        if self.out_of_time:
            raise WorkerLost("timeout")
        if self.worker is None:  # lost earlier (e.g. while shrinking): that loss was charged already
            self.restart()
            if self.worker is None:
                raise WorkerLost("timeout" if self.out_of_time else "crashed")
        planned = any(r is request for r, _ in self._planned)
        self._planned = [(r, n) for r, n in self._planned if r is not request]
        if not any(entry.request is request for entry in self._inflight) and not any(r is request for r, _ in self._replies):
            self._submit(request, n_calls, keep=planned)
        reply = self._collect(request)
        self._send_ahead()  # the next planned batch, if none is in flight
        if self.when_idle is not None and self.idle:
            self.when_idle()
        if isinstance(reply, WorkerLost):
            raise reply
        if reply.get("op") == "lost":
            reason = reply.get("reason")
            raise WorkerLost(reason if reason in LOST_REASONS else "protocol")
        outcomes = reply.get("outcomes") if reply.get("op") == "outcomes" else None
        if not isinstance(outcomes, list) or len(outcomes) != n_calls or not all(isinstance(o, dict) for o in outcomes):
            self._stop()
            raise WorkerLost("protocol")
        self._charge(reply.get("cpu"))
        return outcomes

    def values(self, names: list[str]) -> dict:
        self._discard_inflight()  # batches sent ahead and never asked for (the time cap)
        if self.worker is None or self.out_of_time:
            raise WorkerLost("timeout" if self.out_of_time else "crashed")
        self._send({"op": "values", "names": names})
        deadline = time.monotonic() + self.budget.load_timeout + len(names) * wire.ANSWER_WALL + GRACE
        header = len(names) * wire.OUTCOME_HEADER_BYTES + wire.FRAME_OVERHEAD
        reply = self._receive(deadline, (header, len(names) * wire.MAX_ANSWER_ELEMENTS * wire.MAX_ITEMSIZE))
        values = reply.get("values")
        if reply.get("op") != "values" or not isinstance(values, dict):
            raise WorkerLost("protocol")
        return values

    def _submit(self, request: bytes, n_calls: int, keep: bool) -> None:
        forms = prepared(request, keep=keep)
        self._write(forms.by_name if forms.by_name and forms.name in self.worker.preloaded else forms.inline)
        # A batch queued behind others starts its clock when it reaches the head (_collect).
        self._inflight.append(InFlight(request, time.monotonic() + self._batch_deadline(n_calls), forms.limits, n_calls, keep))

    def _batch_deadline(self, n_calls: int) -> float:
        """Seconds the grader waits for a batch: the worker's own backstop, plus a
        reload of the cells (after a loss in an earlier batch), plus grace."""
        return self.budget.batch_wall(n_calls) + self.budget.load_timeout + GRACE

    def _send_ahead(self) -> None:
        """Keep up to AHEAD planned batches in flight: the worker starts the next one
        the moment it finishes one, while the grader decodes and judges."""
        while self._planned and len(self._inflight) < AHEAD and self.worker is not None and not self.out_of_time:
            request, n_calls = self._planned.pop(0)
            try:
                self._submit(request, n_calls, keep=True)
            except WorkerLost as lost:
                self._lose_worker(lost, unsent=(request, n_calls))
                return

    def _lose_worker(self, lost: WorkerLost, unsent: tuple | None = None) -> None:
        """The worker is gone. The batch it was running (the first in flight) gets
        ``lost``; planned batches queued behind it never started and go back to the plan,
        for the next worker: a loss costs only the kernel that caused it."""
        self._stop()
        entries, self._inflight = self._inflight, []
        if entries:
            self._replies.append((entries[0].request, lost))
        requeue = [(entry.request, entry.n_calls) for entry in entries[1:] if entry.planned]
        self._replies += [(entry.request, lost) for entry in entries[1:] if not entry.planned]  # one-off requests
        self._planned[:0] = requeue + ([unsent] if unsent is not None else [])

    def _collect(self, request: bytes):
        """The reply to ``request``: replies arrive in the order sent; those of other
        requests read on the way are kept for their callers. A loss of the worker is
        the reply of the batch it was running (see :meth:`_lose_worker`)."""
        while True:
            for i, (sent, reply) in enumerate(self._replies):
                if sent is request:
                    del self._replies[i]
                    return reply
            if not self._inflight:
                return WorkerLost("crashed")
            head = self._inflight[0]
            try:
                reply = self._receive(min(head.deadline, self.deadline), head.limits)
            except WorkerLost as lost:
                self._lose_worker(lost)
                continue
            self._inflight.pop(0)
            if self._inflight:  # the next batch starts running now: its clock starts now
                self._inflight[0].restart_clock(self._batch_deadline(self._inflight[0].n_calls))
            self._replies.append((head.request, reply))

    def _discard_inflight(self) -> None:
        for entry in list(self._inflight):
            self._collect(entry.request)
        self._replies.clear()

    def _load_limits(self) -> tuple[int, int]:
        header = wire.FRAME_OVERHEAD + len(self.cells) * (wire.OUTCOME_HEADER_BYTES + 1024) + len(self.kernels) * 256
        return header, 0

    # ------------------------------------------------------------ transport
    def _send(self, obj) -> None:
        self.worker.send(obj)

    def _write(self, data: bytes) -> None:
        self.worker.write(data)

    def _receive(self, deadline: float, limits: tuple[int, int], wait: bool = True) -> dict | None:
        """One reply frame (:meth:`WorkerProcess.receive`), by ``deadline`` and the
        submission's own deadline, whichever comes first."""
        return self.worker.receive(min(deadline, self.deadline), limits, wait)


class SpareWorker:
    """The worker for the next submission of a class run, made ready ahead of time.

    Starting a worker (the sandbox, the interpreter, numpy, the preload) costs more CPU
    than grading a fast submission. With ``recycle`` (the default) a session that ends
    cleanly gives its sandbox back (:meth:`take_back`): the worker there is a zygote
    that never runs student code; it kills every process of the last submission,
    empties the writable directories and forks a fresh parent (``recycle.zygote``).
    The sandbox is handed on only once it reports itself clean on a pipe no submission
    can reach; otherwise, and whenever recycling is off or impossible, a new sandbox is
    started while the current submission is graded (docs/sandbox.md, "Recycling").
    ``remaining`` says how many more submissions will want one (none: no refill).
    Always :meth:`close` it: an unused spare is stopped there.
    """

    def __init__(
        self,
        limits: sandbox.Limits = sandbox.Limits(),
        import_dirs: Sequence[Path] = (),
        preload: Sequence[bytes] = (),
        recycle: bool = True,
    ):
        self.spec = WorkerSpec(limits, tuple(Path(d) for d in import_dirs), tuple(preload))
        self.recycle = recycle
        self.remaining = 0
        self._holder: WorkerProcess | None = None
        self._returned = False  # the holder's sandbox is a recycled one, not yet seen clean
        self._expect_back = False  # the current session's sandbox is promised to the next one

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def refill(self, session: WorkerSession | None = None) -> None:
        """Called once the current ``session`` is busy: plan the next one's worker."""
        if self._holder is not None or self.remaining <= 0:
            return
        self.remaining -= 1
        if session is not None and session.recycles:
            self._expect_back = True
            return
        # Its set-up overlaps this submission's grading.
        self._holder = WorkerProcess.start(self.spec, recycle=self.recycle, wait=False)
        self._returned = False

    def ready(self) -> bool:
        """The spare's worker can be handed over at once (:meth:`WorkerProcess.started_now`)."""
        return self._holder is not None and self._holder.started_now(self._returned)

    def take_back(self, session: WorkerSession) -> None:
        """Keep ``session``'s worker (already told to exit) for the next submission, if
        one was promised; :meth:`hand_over` checks that the sandbox came back clean."""
        if not self._expect_back or self._holder is not None:
            return
        self._expect_back = False
        self._holder, self._returned = session.give_worker(), True

    def hand_over(self, session: WorkerSession) -> bool:
        """Give the spare's running worker to ``session`` if it fits; True if given."""
        holder, self._holder = self._holder, None
        if holder is None:  # (a promised sandbox, if any, may still come back: see take_back)
            return False
        fits = holder.spec == session.spec and holder.running()
        if fits and self._returned:
            fits = holder.came_back_clean()
        if not fits:
            holder.stop()
            return False
        session.take_worker(holder)
        return True

    def close(self) -> None:
        holder, self._holder = self._holder, None
        if holder is not None:
            holder.stop()
