"""The parent: the trusted process that talks to the grader and owns the child.

It forks the child after its own imports and never runs student code. It times every
call by the child's CPU clock (``/proc/<pid>/stat``) with a wall-clock backstop and
kills the child past a limit; it places the inputs of watched calls in a shared buffer
and, after the call, compares them with its private copy (the no-mutation check); it
validates what the child hands back (kind, dtype, size within the call's cap) and
encodes the replies. It is not dumpable (the child cannot read its memory or
descriptors) and is the subreaper of everything the child starts, so no process
outlives a batch.
"""

from __future__ import annotations

import collections
import contextlib
import math
import mmap
import os
import pickle
import select
import signal
import time

import numpy as np

from . import idle
from .child import child_main
from .messages import (
    K_BAD,
    K_BUNCH,
    K_CELL,
    K_LOADED,
    K_OK,
    K_RAISED,
    MESSAGE_HEADER,
    PROGRESS_WORD,
    TEXT_CAP,
    ProtocolError,
    bunch_caps,
    check_array,
    check_bunch,
    clean_str,
    decode_text,
    parse_outcome,
    payload_cap,
    write_all,
)
from .proctree import cpu_seconds, kill_descendants, process_state
from .wire import (
    ANSWER_WALL,
    BATCH_IDLE,
    DEFAULT_BUDGET,
    FATAL_CELL,
    FATAL_STATEMENT,
    FRAME_OVERHEAD,
    LENGTH,
    MAX_ANSWER_ELEMENTS,
    MAX_MESSAGE_CHARS,
    MIN_BATCH_CPU,
    OutcomeColumns,
    decode,
    encode,
    widen_pipe,
)

POLL = 0.05  # how often the parent looks at the child's clocks (s)
GATHER = 0.001  # while the child streams results, the parent reads them in bunches (s)
GATHER_AHEAD = 64  # ... unless a watched call (which waits for the parent) is this close
CELL_GRACE = 2.0  # outside deadline of a cell = its own timer + this
INBOX_BYTES = 64 << 20  # a batch request (the corpus' largest is under 1 MB)
INPUT_BYTES = 16 << 20  # the inputs of one watched call
_ALIGN = 64
CHILD_FORK_RETRIES = 2  # a child lost before its first cell is forked again this many times
MAX_STATEMENTS_LEFT_OUT = 16  # .py statements left out of one load (each costs a reload; a
# notebook's cells are bounded by their number, as ever)


# Why the parent stopped a cell or statement: the entry's "reason" (the feedback says
# it in the submission's language, extract.LEFT_OUT).
LEFT_OUT_REASONS = ("stopped", "timed_out", "protocol", "load_cap", "left_out_cap", "idle")


def _left_out_entry(cell_id: str, line: int | None, reason: tuple[str, str]) -> dict:
    """A load report entry for a cell or statement the parent stopped or left out;
    ``reason`` is (one of LEFT_OUT_REASONS, an English message)."""
    what, message = reason
    return {"id": cell_id, "ok": False, "error": message, "line": line, "timed_out": what == "timed_out", "reason": what}


class ChildGone(Exception):
    """The child exited or was killed."""


def harden_parent() -> None:
    """Not dumpable: a child cannot read the parent's memory or descriptors through
    /proc. Subreaper: orphans of the child are re-parented here, so they can be killed."""
    try:
        import ctypes  # ctypes may be missing: the parent then runs without prctl

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER, 1
    except (OSError, AttributeError, ImportError):
        pass


class Child:
    """The parent's handle on one executor process."""

    def __init__(self, pid: int, orders: int, replies: int):
        self.pid = pid
        self.orders = orders  # parent -> child pipe (write end, non-blocking)
        self.replies = replies  # child -> parent pipe (read end, non-blocking)
        self.buffer = bytearray()
        try:
            self.pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self.pidfd = None

    def order(self, obj) -> None:
        """Send an order; a child that stopped reading its orders has broken the protocol."""
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            write_all(self.orders, LENGTH.pack(len(data)) + data)
        except BlockingIOError:
            raise ProtocolError("the child stopped reading its orders") from None
        except OSError:
            raise ChildGone() from None

    def exited(self) -> bool:
        if self.pidfd is not None:
            return bool(select.select([self.pidfd], [], [], 0)[0])
        return process_state(self.pid) in (b"Z", None)

    def messages(self, timeout: float, cap_for) -> list[tuple[int, int, bytes]]:
        """Complete messages within ``timeout`` seconds ([] if none). ``cap_for(kind,
        index)`` bounds each payload before it is read. Raises ChildGone, ProtocolError."""
        out = self._parse(cap_for)
        if out:
            return out
        watched = [self.replies] + ([self.pidfd] if self.pidfd is not None else [])
        ready = select.select(watched, [], [], max(timeout, 0))[0]
        if self.replies in ready:
            self._drain()
            out = self._parse(cap_for)
            if out:
                return out
        if (self.pidfd in ready) if self.pidfd is not None else self.exited():
            self._drain()  # what it wrote before it died still counts
            out = self._parse(cap_for)
            if not out:
                raise ChildGone()
        return out

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.replies, 1 << 20)
            except BlockingIOError:
                return
            except OSError:
                raise ChildGone() from None
            if not chunk:
                return
            self.buffer += chunk
            if len(self.buffer) > (64 << 20):  # far beyond any capped message: stop reading
                raise ProtocolError("flood")

    def _parse(self, cap_for) -> list[tuple[int, int, bytes]]:
        out, offset, buffer = [], 0, self.buffer
        while len(buffer) - offset >= MESSAGE_HEADER.size:
            kind, index, length = MESSAGE_HEADER.unpack_from(buffer, offset)
            if length > cap_for(kind, index):
                raise ProtocolError("oversized message")
            end = offset + MESSAGE_HEADER.size + length
            if len(buffer) < end:
                break
            out.append((kind, index, bytes(buffer[offset + MESSAGE_HEADER.size : end])))
            offset = end
        if offset:
            del buffer[:offset]
        return out

    def cpu(self) -> float:
        value = cpu_seconds(self.pid)
        return 0.0 if value is None else value

    def kill(self) -> None:
        """Kill the child, its group and everything below the parent; reap; close."""
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        kill_descendants()
        for fd in (self.orders, self.replies, self.pidfd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)


class _LoadPlan:
    """What every attempt of one load shares: the cells, their ids, the .py files among
    them, the cap on the load report and the deadline of all cells."""

    def __init__(self, load_request: dict, cellexec, budget: dict, forward: bool):
        self.forward = forward  # the grader asked: announcements are passed on to it
        self.cells = [c for c in load_request["cells"] if isinstance(c, dict)]
        self.ids = {c.get("id") for c in self.cells}
        self.files = {c.get("id") for c in self.cells if cellexec.cell_kind(c) == "python"}
        self.cell_timeout = float(load_request["cell_timeout"])
        self.idle_wall = float(budget["idle_wall"])
        ce = cellexec  # per cell: its listed failures, each with a message and the ignored magics
        per_entry = MAX_MESSAGE_CHARS * 6 + 1024 + ce.MAX_IGNORED * (ce.MAX_MAGIC_NAME * 6 + 4)
        self.report_cap = FRAME_OVERHEAD + len(self.cells) * (ce.MAX_LISTED_FAILURES + 1) * per_entry + len(load_request["kernels"]) * 256
        self.deadline = time.monotonic() + float(budget["load_timeout"])


class _LoadAttempt:
    """One child loading the cells: the cell (or statement) it announced last, that
    one's own deadline, its idle watch, and the load report once it comes."""

    def __init__(self, child: "Child", plan: _LoadPlan):
        self.child, self.plan = child, plan
        self.current: tuple[str, int | None] | None = None
        self.cell_deadline = math.inf
        self.loaded: dict | None = None
        self.watch = idle.IdleWatch(child.pid, plan.idle_wall)

    def until(self, also: float = math.inf) -> float:
        return min(self.plan.deadline, self.cell_deadline, also)

    def cap_for(self, kind: int, _index: int) -> int:
        return self.plan.report_cap if kind == K_LOADED else TEXT_CAP

    def announce(self, announced: tuple[str, int | None]) -> None:
        """Each cell, and each statement of a .py file, has its own deadline."""
        self.current = announced
        self.watch.reset()
        self.cell_deadline = time.monotonic() + self.plan.cell_timeout + CELL_GRACE

    def idled(self) -> bool:
        return self.watch.sample(time.monotonic(), self.child.cpu(), idle.unread_bytes(self.child.replies) > 0)

    def whole_cell(self) -> bool:
        """The child was running a notebook cell (or nothing yet), not a .py statement."""
        return self.current is None or self.current[1] is None

    def stopped(self, why: str) -> tuple[str, str]:
        """The reason entry of a cell or statement stopped for ``why`` ("idle", "timed_out")."""
        what = "cell" if self.whole_cell() else "statement"
        if why == "idle":
            return ("idle", f"the {what} slept or waited more than {self.plan.idle_wall:g} s without running")
        return ("timed_out", f"the {what} ran longer than {self.plan.cell_timeout:g} s")


class _BatchRun:
    """One batch streaming through the child: its calls' caps, the watched calls not yet
    placed and those placed (armed), the outcomes read so far, and the clocks."""

    def __init__(self, parent: "Parent", child: "Child", request: dict):
        self.parent, self.child = parent, child
        budget = parent.budget
        self.n, self.caps, self.watched_calls = request["n"], request["caps"], request["watched"]
        self.call_cpu = float(request["call_timeout"])
        self.batch_cpu = max(MIN_BATCH_CPU, self.n * float(budget["kernel_cpu_per_call"]))
        self.batch_wall = float(budget["kernel_timeout"]) + float(budget["wall_factor"]) * self.batch_cpu
        self.call_wall = float(budget["call_wall"])
        self.watched = sorted(self.watched_calls)
        self.watched_set = set(self.watched)
        self.pending = collections.deque(self.watched)  # watched calls not yet placed
        self.armed: dict[int, list] = {}  # watched call -> its inputs as placed in the shared buffer
        self.outcomes = OutcomeColumns()
        self.bunch_bounds: list[int] = []  # made at the first bunch (a batch may send none)
        self.caps_array = np.asarray(self.caps, dtype=np.float64)
        self.start = time.monotonic()
        self.call_start, self.batch_cpu0 = self.start, child.cpu()
        self.timed_call, self.call_cpu0 = 0, self.batch_cpu0
        self.watch = idle.IdleWatch(child.pid, float(budget["idle_wall"]))

    def arm_next_watched(self) -> None:
        """Once every armed call has been read: place as many of the next watched calls
        as fit, each in its own region, and let the child run them all (one order)."""
        layouts, offset = {}, 0
        while self.pending:
            args, kwargs = self.watched_calls[self.pending[0]]
            placed = self.parent._place(args, kwargs, offset, first=not layouts)
            if placed is None:
                break
            layouts[self.pending[0]], self.armed[self.pending.popleft()], offset = placed
        if layouts:
            self.child.order(("go", layouts))

    def cap_for(self, kind: int, index: int) -> int:
        if index >= self.n:
            return 0
        if kind == K_BUNCH:
            if not self.bunch_bounds:
                self.bunch_bounds.extend(bunch_caps(self.caps))
            return self.bunch_bounds[index]
        return payload_cap(kind, self.caps[index]) if kind in (K_OK, K_RAISED, K_BAD) else 0

    def take(self, kind: int, index: int, payload: bytes) -> None:
        """One message of the child, checked, into the outcomes (in the calls' order)."""
        outcomes = self.outcomes
        if index != outcomes.n:
            raise ProtocolError("out of order")
        if kind == K_BUNCH:  # nearly every outcome
            outcomes.add_bunch(check_bunch(payload, index, self.caps_array, self.watched))
            return
        if kind == K_OK and index not in self.watched_set:
            outcomes.add_array(check_array(payload, self.caps[index]), False)
            return
        outcome = parse_outcome(kind, payload, self.caps[index])
        if index in self.watched_set:
            placed = self.armed.pop(index, None)
            if placed is None:  # the child cannot have run it: its inputs were never placed
                raise ProtocolError("a watched call answered before its inputs were placed")
            if outcome["s"] == "ok":
                outcome["mut"] = self.parent._mutated(placed)
            if not self.armed:
                self.arm_next_watched()
        outcomes.add(outcome)

    def may_gather(self) -> bool:
        """No watched call (which waits for the parent) is close: reads may wait a little."""
        return not self.pending or self.pending[0] - self.outcomes.n > GATHER_AHEAD

    def over_limit(self, now: float) -> str | None:
        """Look at the clocks: "idle" or "timeout" if the call the child runs (or the batch)
        is past a limit, else None."""
        cpu = self.child.cpu()
        running = self.parent._running(self.outcomes.n, self.n)
        if self.timed_call != running:  # the call's clocks start at its first look
            self.timed_call, self.call_cpu0, self.call_start = running, cpu, now
            self.watch.reset()
        # The child waits for the parent while its outcomes lie unread in the pipe or
        # while the call it reached is a watched one whose inputs are not placed yet.
        waiting = idle.unread_bytes(self.child.replies) > 0 or bool(self.pending and self.pending[0] <= self.outcomes.n)
        idled = self.watch.sample(now, cpu, waiting) or self.watch.total > BATCH_IDLE * self.watch.limit
        self.outcomes.cpu = max(self.outcomes.cpu, cpu - self.batch_cpu0)
        if idled:
            return "idle"
        over = (
            cpu - self.call_cpu0 > self.call_cpu
            or cpu - self.batch_cpu0 > self.batch_cpu
            or now - self.call_start > self.call_wall
            or now - self.start > self.batch_wall
        )
        return "timeout" if over else None


class Parent:
    """The trusted side: owns the child, the shared buffers and the grader's pipe."""

    def __init__(self, cellexec, reply_fd: int, protocol_fds: tuple[int, ...]):
        self.cellexec = cellexec
        self.reply_fd = reply_fd
        self.protocol_fds = protocol_fds
        self.inbox = mmap.mmap(-1, INBOX_BYTES, flags=mmap.MAP_SHARED)
        self.inputs = mmap.mmap(-1, INPUT_BYTES, flags=mmap.MAP_SHARED)
        self.progress = mmap.mmap(-1, mmap.PAGESIZE, flags=mmap.MAP_SHARED)  # the child's current call
        self.load_request: dict | None = None
        self.budget = dict(DEFAULT_BUDGET)
        # (cell id, first line of a .py statement or None for the whole cell) -> (what
        # happened, one of LEFT_OUT_REASONS, and a message): left out when the cells are
        # loaded again.
        self.fatal: dict[tuple[str, int | None], tuple[str, str]] = {}
        self.child: Child | None = None
        self.out_of_time = False  # loading hit its wall-clock cap: no more children
        self.preloaded: dict[str, list] = {}  # name -> calls, given by the grader ahead of the batches
        self.blank: Child | None = None  # a child forked ahead of time, waiting for its cells
        self.keeper = os.getppid()  # the zygote (or bwrap's pid 1): its death ends the sandbox

    # ------------------------------------------------------------ grader side
    def reply(self, obj) -> None:
        """Write a reply, unless the sandbox is being killed (see :meth:`_sandbox_dying`)."""
        if self._sandbox_dying():
            self.stop_child()
            self.stop_blank()
            os._exit(1)
        write_all(self.reply_fd, encode(obj))

    def _sandbox_dying(self) -> bool:
        """The process this parent was forked from (the zygote) was killed: the sandbox
        dies as soon as the kernel acts on it, and whether a reply written now reached
        the grader first would depend on timing. Student code can kill the zygote only
        through the child, synchronously (the SIGKILL is pending before its kill()
        returns), so a reply to the step in which that happened is never written: the
        grader always sees that step lost (a load: the cell announced last; a batch:
        its kernel)."""
        return os.getppid() != self.keeper or idle.dying(self.keeper)

    def serve(self, frames) -> int:
        for frame in frames:
            request = decode(frame)
            op = request.get("op")
            if op == "load":
                self.reply(self.load(request))
            elif op == "call":
                # Written before the next batch is even read: starting it first saves the
                # child a few ms, but a batch that kills this parent would then take the
                # previous kernel's reply with it (the kill_parent attack caught that).
                self.reply(self.batch(request))
            elif op == "values":
                self.reply({"op": "values", "values": self.values(list(request["names"]))})
            elif op == "exit":
                break
        self.stop_child()
        self.stop_blank()
        return 0

    # ------------------------------------------------------------ the child
    def fork_child(self, cells: list) -> Child:
        """A child loading ``cells``: the one forked ahead of time if there is one."""
        request = pickle.dumps({**self.load_request, "cells": cells}, protocol=pickle.HIGHEST_PROTOCOL)
        self.inbox[: len(request)] = request  # fits: a submission is read only up to 16 MiB (grade/student_files.py)
        child, self.blank = self.blank, None
        if child is not None:
            try:
                child.order(("load", len(request)))
                return child
            except (ChildGone, ProtocolError):  # it died waiting (nothing of the student's ran in it)
                child.kill()
        child = self.fork_blank()
        child.order(("load", len(request)))  # a fresh pipe holds this short order
        return child

    def fork_blank(self) -> Child:
        """Fork a child that waits for its load order (through the inbox). A parent forks
        one as soon as it starts, so the fork and its page copies are paid while the
        grader is still busy, not when the submission's cells arrive."""
        orders_r, orders_w = os.pipe()
        replies_r, replies_w = os.pipe()
        widen_pipe(replies_w)  # the child writes on while the parent reads what it sent before
        pid = os.fork()
        if pid == 0:
            for fd in (*self.protocol_fds, orders_w, replies_r):
                os.close(fd)
            child_main(self.cellexec, orders_r, replies_w, self.inbox, self.inputs, self.preloaded, self.progress)
        os.close(orders_r)
        os.close(replies_w)
        os.set_blocking(orders_w, False)
        os.set_blocking(replies_r, False)
        return Child(pid, orders_w, replies_r)

    def stop_child(self) -> None:
        if self.child is not None:
            self.child.kill()
            self.child = None

    def stop_blank(self) -> None:
        if self.blank is not None:
            self.blank.kill()
            self.blank = None

    def ensure_child(self) -> bool:
        """A loaded child, forking and loading a fresh one after a loss."""
        if self.child is None and not self.out_of_time and self.load_request is not None:
            self.load(None)
        return self.child is not None

    def load(self, request: dict | None) -> dict:
        """Load the cells in a fresh child; a cell (or a statement of a .py file) that kills
        the child or outlives its deadline is left out and the rest loaded again, within
        ``load_timeout`` in all. ``request`` None reloads after a lost batch (nothing is
        reported to the grader)."""
        forward = request is not None
        if forward:
            self._new_load(request)
        self.stop_child()
        load = _LoadPlan(self.load_request, self.cellexec, self.budget, forward)
        unstarted = 0  # children lost before their first cell (not the student's doing)
        while True:
            child = self.fork_child(self._cells_to_run(load.cells))
            attempt = _LoadAttempt(child, load)
            reason = self._watch_load(attempt)
            if reason is None:
                self.child = child
                return {**attempt.loaded, "cpu": round(child.cpu(), 3)}  # the cells' CPU (of this last load)
            child.kill()
            current = attempt.current
            if time.monotonic() >= load.deadline:  # the cap on all cells: no more attempts
                self.out_of_time = True
                return self._unloaded(current, ("load_cap", f"the cells ran longer than {self.budget['load_timeout']:g} s in all"))
            if current is None:  # the child died before its first cell: none of the student's code ran
                unstarted += 1
                if unstarted > CHILD_FORK_RETRIES:
                    return {**self._unloaded(None, reason), "unstarted": True}
                continue
            if current[1] is not None and sum(line is not None for _, line in self.fatal) >= MAX_STATEMENTS_LEFT_OUT:
                # a file built to be reloaded once per statement
                return self._unloaded(current, ("left_out_cap", f"more than {MAX_STATEMENTS_LEFT_OUT} statements were left out"))
            self.fatal[current] = reason

    def _new_load(self, request: dict) -> None:
        """A load request from the grader: a new submission's cells and budgets."""
        self.load_request = request
        self.budget = {**DEFAULT_BUDGET, **(request.get("budget") or {})}
        self.fatal = {}
        self.out_of_time = False

    def _watch_load(self, attempt: "_LoadAttempt") -> tuple[str, str] | None:
        """Run one load attempt to its end: None once the child reported its cells loaded
        (``attempt.loaded``), else why the cell or statement it ran was stopped (one of
        LEFT_OUT_REASONS, an English message)."""
        try:
            while attempt.loaded is None:
                now = time.monotonic()
                if now >= attempt.until():
                    break
                for kind, _, payload in attempt.child.messages(attempt.until(now + POLL) - now, attempt.cap_for):
                    self._load_message(attempt, kind, payload)
                if attempt.loaded is None and attempt.idled():
                    return attempt.stopped("idle")
        except ChildGone:
            return ("stopped", FATAL_CELL if attempt.whole_cell() else FATAL_STATEMENT)
        except ProtocolError:
            return ("protocol", "this cell disturbed the grading process's communication")
        return None if attempt.loaded is not None else attempt.stopped("timed_out")

    def _load_message(self, attempt: "_LoadAttempt", kind: int, payload: bytes) -> None:
        """One message of a loading child: a cell's (or statement's) announcement, which a
        new cell's run waits on until passed on, or the load report."""
        if kind == K_CELL:
            announced = self._announced(decode_text(payload), attempt.plan.ids, attempt.plan.files)
            new_cell = attempt.current is None or announced[0] != attempt.current[0]
            attempt.announce(announced)
            if new_cell:  # a cell's first announcement waits for the go-ahead
                if attempt.plan.forward:
                    self.reply({"op": "cell", "id": announced[0]})
                attempt.child.order(("cell",))  # passed on: the child may run it
        elif kind == K_LOADED:
            attempt.loaded = self._loaded(decode_text(payload), attempt.plan.ids)
        else:
            raise ProtocolError("unexpected message while loading")

    def _cells_to_run(self, cells: list[dict]) -> list[dict]:
        """``cells`` without those left out; a .py file keeps its other statements."""
        kept = []
        for cell in cells:
            if (cell.get("id"), None) in self.fatal:
                continue
            lines = sorted(line for cid, line in self.fatal if cid == cell.get("id") and line is not None)
            kept.append({**cell, "skip_lines": lines} if lines else cell)
        return kept

    @staticmethod
    def _announced(body: dict, ids: set, files: set) -> tuple[str, int | None]:
        """(cell id, first line of the statement or None) of an announcement, checked: a
        line is taken only from a .py file's cell, and only a plausible one."""
        cid, line = body.get("id"), body.get("line")
        if cid not in ids:
            raise ProtocolError("unknown cell")
        if cid in files and type(line) is int and 0 < line < 1 << 31:
            return cid, line
        return cid, None

    def _left_out(self) -> list[dict]:
        """Report entries of the cells and statements left out."""
        return [_left_out_entry(cid, line, reason) for (cid, line), reason in self.fatal.items()]

    def _loaded(self, body: dict, ids: set) -> dict:
        """The child's load report, checked field by field, plus the cells left out."""
        cells = []
        for cell in body.get("cells") if isinstance(body.get("cells"), list) else []:
            if isinstance(cell, dict) and cell.get("id") in ids:
                ce = self.cellexec
                cells.append(
                    {
                        "id": cell["id"],
                        "ok": cell.get("ok") is True,
                        "error": None if cell.get("ok") is True else clean_str(cell.get("error"), MAX_MESSAGE_CHARS),
                        "line": cell.get("line") if type(cell.get("line")) is int else None,
                        "ignored": [
                            clean_str(x, ce.MAX_MAGIC_NAME) for x in (cell.get("ignored") or [])[: ce.MAX_IGNORED] if isinstance(x, str)
                        ],
                        "timed_out": cell.get("timed_out") is True,
                    }
                )
        cells += self._left_out()
        found = body.get("found") if isinstance(body.get("found"), dict) else {}
        return {"op": "loaded", "cells": cells, "time_cap": False, "found": {k: found.get(k) is True for k in self.load_request["kernels"]}}

    def _unloaded(self, current, reason: tuple[str, str]) -> dict:
        cells = self._left_out()
        if current is not None and current not in self.fatal:
            cells.append(_left_out_entry(current[0], current[1], reason))
        return {"op": "loaded", "cells": cells, "time_cap": self.out_of_time, "found": {k: False for k in self.load_request["kernels"]}}

    # ------------------------------------------------------------ one kernel's batch
    def batch(self, request: dict) -> dict:
        """One kernel's batch (a :func:`prepare_call_request` dict) through the child."""
        ref = request.get("ref")
        if ref is not None:
            if ref not in self.preloaded:
                return {"op": "lost", "reason": "protocol"}
            source = ("preloaded", ref)
        else:
            blob = request["calls_blob"]
            if len(blob) > INBOX_BYTES:
                return {"op": "lost", "reason": "protocol"}
            source = ("batch", len(blob))
        if not self.ensure_child():
            return {"op": "lost", "reason": "timeout" if self.out_of_time else "crashed"}
        if ref is None:
            self.inbox[: len(blob)] = blob
        try:
            outcomes = self._run(self.child, request, source)
        except ChildGone:
            self.stop_child()
            return {"op": "lost", "reason": "crashed"}
        except ProtocolError:
            self.stop_child()
            return {"op": "lost", "reason": "protocol"}
        if self.child is not None:
            kill_descendants(keep=self.child.pid)  # nothing the batch started outlives it
        return {"op": "outcomes", "outcomes": outcomes}

    def _place(self, args, kwargs, offset: int, first: bool) -> tuple[list, list, int] | None:
        """Copy a watched call's array inputs into the shared buffer from ``offset``:
        (layout, placed, next offset). None if they do not fit beside the calls placed
        before (``first`` False); the first call of a group places what fits."""
        layout, placed = [], []
        for where, value in [*enumerate(args), *kwargs.items()]:
            if not isinstance(value, np.ndarray):
                continue
            raw = value.tobytes(order="C")
            if offset + len(raw) > INPUT_BYTES:
                if not first:
                    return None
                break  # larger than the buffer: the rest stay private copies (never in the corpus)
            layout.append((where, offset, value.dtype.str, value.shape))
            placed.append((offset, raw))
            offset += -(-len(raw) // _ALIGN) * _ALIGN if raw else 0
        for at, raw in placed:
            self.inputs[at : at + len(raw)] = raw
        return layout, placed, offset

    def _mutated(self, placed) -> bool:
        return any(self.inputs[offset : offset + len(raw)] != raw for offset, raw in placed)

    def _run(self, child: Child, request: dict, source: tuple) -> OutcomeColumns:
        """Stream the batch through the child: one message per call; the watched calls'
        inputs placed in the shared buffer ahead, each in its own region, and compared
        when their outcome is read; the clocks looked at every POLL."""
        run = _BatchRun(self, child, request)
        PROGRESS_WORD.pack_into(self.progress, 0, 0)
        child.order((*source, request["kernel"], run.watched))
        run.arm_next_watched()
        outcomes, n = run.outcomes, run.n
        last_check = time.monotonic()
        while outcomes.n < n:
            for kind, index, payload in child.messages(POLL, run.cap_for):
                run.take(kind, index, payload)
            now = time.monotonic()
            if outcomes.n >= n or now - last_check < POLL:
                if outcomes.n < n and run.may_gather():
                    time.sleep(GATHER)  # fewer wake-ups: the child keeps writing meanwhile
                continue
            last_check = now
            why = run.over_limit(now)
            if why is not None:
                self.stop_child()
                self._cut(outcomes, n, why)
        if self.child is child:
            outcomes.cpu = max(outcomes.cpu, child.cpu() - run.batch_cpu0)
        return outcomes

    def _cut(self, outcomes: OutcomeColumns, n: int, why: str) -> None:
        """The child was stopped: calls it finished but had not sent yet are unknown, the
        one it was running gets ``why`` ("timeout" or "idle": it did not run), and the
        rest never ran (the kernel fails: nothing more of its batch is waited for)."""
        running = self._running(outcomes.n, n)
        while outcomes.n < running:
            outcomes.add({"s": "unsent"})
        outcomes.add({"s": why})
        while outcomes.n < n:
            outcomes.add({"s": "timeout"})

    def _running(self, received: int, n: int) -> int:
        """The call the child is running, from its progress word; kept within the calls
        not yet received (the word is the child's: it only blames its own calls)."""
        return min(max(PROGRESS_WORD.unpack_from(self.progress)[0], received), n - 1)

    # ------------------------------------------------------------ numerical answers
    def values(self, names: list) -> dict:
        """Each answer converted by the child under its own timer and an outside deadline;
        an answer that stalls or kills the child costs only itself."""
        values = {name: None for name in names}
        position = 0
        while position < len(names) and self.ensure_child():
            child, base = self.child, position
            try:
                child.order(("values", names[base:]))
                last = time.monotonic()
                while position < len(names):
                    messages = child.messages(POLL, _answer_cap)
                    for kind, index, payload in messages:
                        if index != position - base or kind not in (K_OK, K_BAD):
                            raise ProtocolError("out of order")
                        if kind == K_OK:
                            values[names[position]] = check_array(payload, MAX_ANSWER_ELEMENTS)
                        position += 1
                        last = time.monotonic()
                    if not messages and time.monotonic() - last > ANSWER_WALL:
                        raise ChildGone()
            except (ChildGone, ProtocolError):
                self.stop_child()
                position += 1  # the answer being read is lost; a fresh child goes on
        return values


def _answer_cap(kind: int, index: int) -> int:
    return payload_cap(K_OK, MAX_ANSWER_ELEMENTS) if kind == K_OK else TEXT_CAP
