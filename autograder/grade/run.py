"""Run a submission's code in a sandboxed worker and collect outcomes.

:class:`WorkerSession` owns one worker at a time. It loads the submission's cells,
then sends each kernel's whole batch of calls as one request and reads the reply
under a wall-clock deadline. A worker that dies, hangs or answers garbage costs
only the kernel it was working on: the session restarts a fresh worker (loading
the cells again, minus any cell that killed the worker while loading) before the
next kernel.
"""
from __future__ import annotations

import os
import selectors
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grade import sandbox
from autograder.grade import worker as wire
from autograder.grade.extract import Cell

WORKER_SOURCE = Path(wire.__file__)
# Files the worker needs beside it, placed read-only at /m5/<name> inside the sandbox
# (it loads them by path, not by import).
WORKER_FILES = (WORKER_SOURCE, WORKER_SOURCE.with_name("cellexec.py"))


class WorkerLost(Exception):
    """The worker died, hung past its deadline, or broke the protocol."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason  # "timeout" | "crashed" | "protocol"


@dataclass
class LoadReport:
    cells: list[dict] = field(default_factory=list)     # {"id", "ok", "error"}
    found: dict[str, bool] = field(default_factory=dict)
    fatal_cells: list[str] = field(default_factory=list)  # cells that killed the worker


@dataclass(frozen=True)
class Budget:
    call_timeout: float = 2.0        # one call (enforced inside the worker)
    kernel_timeout: float = 30.0     # one kernel's whole batch (enforced here)
    load_timeout: float = 60.0       # loading all cells (imports of torch included)
    cell_timeout: float = 20.0


class WorkerSession:
    def __init__(self, cells: list[Cell], kernels: list[str], *, budget: Budget = Budget(),
                 limits: sandbox.Limits = sandbox.Limits()):
        self.cells = list(cells)
        self.kernels = list(kernels)
        self.budget = budget
        self.limits = limits
        self.proc = None
        self.scratch: Path | None = None
        self.report = LoadReport()
        self._buffer = bytearray()

    # ------------------------------------------------------------ lifecycle
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self) -> LoadReport:
        """Start a worker and load the cells; retry without cells that kill it."""
        for _ in range(len(self.cells) + 1):
            self._spawn()
            current = None
            try:
                self._send({"op": "load", "kernels": self.kernels, "cell_timeout": self.budget.cell_timeout,
                            "cells": [{"id": c.id, "source": c.source} for c in self.cells
                                      if c.id not in self.report.fatal_cells]})
                deadline = time.monotonic() + self.budget.load_timeout
                while True:
                    reply = self._receive(deadline)
                    if reply.get("op") == "cell":
                        current = reply.get("id")
                        continue
                    if reply.get("op") != "loaded":
                        raise WorkerLost("protocol")
                    self.report.cells = [c for c in reply.get("cells", []) if isinstance(c, dict)]
                    self.report.cells += [{"id": cid, "ok": False, "error": "this cell stopped the grading process"}
                                          for cid in self.report.fatal_cells]
                    found = reply.get("found", {})
                    self.report.found = {k: bool(found.get(k)) for k in self.kernels}
                    return self.report
            except WorkerLost:
                self._stop()
                if current is None or current in self.report.fatal_cells:
                    break
                self.report.fatal_cells.append(current)
        self.report.found = {k: False for k in self.kernels}
        return self.report

    def close(self) -> None:
        if self.proc is not None:
            try:
                self._send({"op": "exit"})
            except (WorkerLost, OSError):
                pass
        self._stop()

    def _spawn(self) -> None:
        self._stop()
        # -s -P as in -I, but not -E: the sandbox's environment is entirely ours, and a
        # fixed PYTHONHASHSEED makes str hashing (set order, hash()) the same in every
        # worker, so a submission that depends on it is graded the same every time.
        self.proc = sandbox.spawn([sys.executable, "-s", "-P", f"{sandbox.INSIDE_FILES}/{WORKER_SOURCE.name}"],
                                  files={source.name: source.read_bytes() for source in WORKER_FILES},
                                  limits=self.limits, env={"PYTHONHASHSEED": "0"})
        os.set_blocking(self.proc.stdout.fileno(), False)
        self._buffer.clear()

    def _stop(self) -> None:
        # The worker's scratch is a tmpfs private to its sandbox: terminate ends both.
        if self.proc is not None:
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            sandbox.terminate(self.proc)
            self.proc = None

    def restart(self) -> None:
        """A fresh worker with the same cells (after a lost kernel)."""
        fatal = list(self.report.fatal_cells)
        self.report = LoadReport(fatal_cells=fatal)
        self.start()

    # ------------------------------------------------------------ requests
    def call_batch(self, request: bytes, n_calls: int) -> list[dict]:
        """Send a pre-encoded call request; return one outcome dict per call."""
        if self.proc is None:
            raise WorkerLost("crashed")
        try:
            self._write(request)
            reply = self._receive(time.monotonic() + self.budget.kernel_timeout)
        except WorkerLost:
            self._stop()
            raise
        outcomes = reply.get("outcomes") if reply.get("op") == "outcomes" else None
        if not isinstance(outcomes, list) or len(outcomes) != n_calls or not all(isinstance(o, dict) for o in outcomes):
            self._stop()
            raise WorkerLost("protocol")
        return outcomes

    def values(self, names: list[str]) -> dict:
        if self.proc is None:
            raise WorkerLost("crashed")
        self._send({"op": "values", "names": names})
        reply = self._receive(time.monotonic() + self.budget.call_timeout * 2)
        values = reply.get("values")
        if reply.get("op") != "values" or not isinstance(values, dict):
            raise WorkerLost("protocol")
        return values

    # ------------------------------------------------------------ transport
    def _send(self, obj) -> None:
        self._write(wire.encode_request(obj))

    def _write(self, data: bytes, timeout: float = 30.0) -> None:
        """Write under a deadline: a worker that stops reading cannot block the grader."""
        fd = self.proc.stdin.fileno()
        os.set_blocking(fd, False)
        view = memoryview(data)
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_WRITE)
            while view:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise WorkerLost("timeout")
                if not sel.select(timeout=remaining):
                    continue
                try:
                    written = os.write(fd, view)
                except BlockingIOError:
                    continue
                except (BrokenPipeError, OSError):
                    raise WorkerLost("crashed") from None
                view = view[written:]

    def _receive(self, deadline: float) -> dict:
        fd = self.proc.stdout.fileno()
        need = None
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                if need is None and len(self._buffer) >= 8:
                    need = 8 + int.from_bytes(self._buffer[:8], "big")
                    if need - 8 > wire.MAX_FRAME:
                        raise WorkerLost("protocol")
                if need is not None and len(self._buffer) >= need:
                    payload = bytes(self._buffer[8:need])
                    del self._buffer[:need]
                    try:
                        reply = wire.decode(payload, trusted=False)
                    except (wire.WireError, ValueError, RecursionError):
                        raise WorkerLost("protocol") from None
                    if not isinstance(reply, dict):
                        raise WorkerLost("protocol")
                    return reply
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise WorkerLost("timeout")
                if not sel.select(timeout=remaining):
                    continue
                try:
                    chunk = os.read(fd, 1 << 20)
                except BlockingIOError:
                    continue
                except OSError:
                    raise WorkerLost("crashed") from None
                if not chunk:
                    raise WorkerLost("crashed")
                self._buffer += chunk
