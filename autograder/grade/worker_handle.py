"""Grader side: the handle on one worker process running in its sandbox, and the framed
pipes the grader talks to it through. (The code that runs inside the sandbox is the
package ``worker``; this module starts it there, checks it on hand-over, stops it and frames its pipes.)

A :class:`WorkerProcess` is what a :class:`worker_session.WorkerSession` drives and what a
:class:`worker_session.SpareWorker` hands from one session to the next: the sandboxed process,
what it was started with (:class:`WorkerSpec`), the bytes read from it but not yet
taken, and the names of the calls preloaded into it. Writes and reads run under
deadlines and caps, so a worker that stops reading or writes too much costs the
grader a :class:`WorkerLost`, never a hang or its memory.
"""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.grade import sandbox
from autograder.grade.call_forms import preload_file, prepared
from autograder.grade.worker import wire

WORKER_PACKAGE = Path(wire.__file__).parent
WORKER_ENTRY = "main.py"
# Files placed read-only at /m5/<name> inside the sandbox: the worker package (it makes
# its folder a package of its own there, see worker/main.py) and the grader's tree
# remover, with which the zygote empties the sandbox between submissions.
WORKER_FILES = (*sorted(WORKER_PACKAGE.glob("*.py")), WORKER_PACKAGE.parent / "sandbox" / "files.py")
WRITE_WAIT = 30.0  # seconds a request may take to go into the worker's pipe
RECYCLE_WAIT = 5.0  # seconds a recycled sandbox may take to report itself clean
RECYCLE_SHMEM_SLACK = 32 << 20  # shared memory a clean sandbox may hold beyond its /m5 files


class WorkerLost(Exception):
    """The worker is gone or broke the protocol: ``reason`` is one of LOST_REASONS."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


LOST_REASONS = ("timeout", "crashed", "protocol")


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker is started with; a spare worker serves a session only if they match."""

    limits: sandbox.Limits = sandbox.Limits()
    import_dirs: tuple[Path, ...] = ()  # read-only folders put first on the student's sys.path
    preload: tuple[bytes, ...] = ()  # encoded call requests whose calls the worker gets at start

    def import_dirs_inside(self) -> dict[str, Path]:
        """``import_dirs`` by the path the worker sees them at, read-only (the only
        place that maps them): ``/m5/lib0``, ``/m5/lib1``, ..."""
        return {f"{sandbox.INSIDE_FILES}/lib{i}": d for i, d in enumerate(self.import_dirs)}

    def files(self) -> dict[str, bytes]:
        """The files placed at /m5: the worker package, and the preload file if any."""
        files = {source.name: source.read_bytes() for source in WORKER_FILES}
        if self.preload:
            files[wire.PRELOAD_FILE] = preload_file(self.preload)
        return files


class WorkerProcess:
    """A running worker: its process, its unread output, the calls preloaded into it."""

    def __init__(self, proc, spec: WorkerSpec = WorkerSpec()):
        self.proc = proc
        self.spec = spec
        self.buffer = bytearray()  # read from the worker, not yet a whole frame
        self.preloaded = frozenset(prepared(request, keep=True).name for request in spec.preload)
        os.set_blocking(proc.stdout.fileno(), False)

    @classmethod
    def start(cls, spec: WorkerSpec, *, recycle: bool = False, wait: bool = True) -> "WorkerProcess":
        """A worker in a new sandbox. ``recycle``: a zygote that can serve the next
        submission (``worker/recycle.py``). ``wait`` False: return before it has started
        (:meth:`started_now` says when it has)."""
        # -s -P as in -I, but not -E: the sandbox's environment is entirely ours, and a
        # fixed PYTHONHASHSEED makes str hashing (set order, hash()) the same in every
        # worker, so a submission that depends on it is graded the same every time.
        proc = sandbox.spawn(
            [sys.executable, "-s", "-P", f"{sandbox.INSIDE_FILES}/{WORKER_ENTRY}"],
            files=spec.files(),
            ro_dirs=spec.import_dirs_inside(),
            limits=spec.limits,
            env={"PYTHONHASHSEED": "0"},
            wait=wait,
            recycle_env=wire.RECYCLE_FD_ENV if recycle else None,
        )
        worker = cls(proc, spec)
        wire.widen_pipe(proc.stdout.fileno())  # room for whole replies: the worker never waits for the grader
        return worker

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def recycles(self) -> bool:
        """Started as a recycling worker (see :class:`worker_session.SpareWorker`)."""
        return getattr(self.proc, "sandbox_recycle_fd", None) is not None

    def stop(self) -> None:
        """End the worker. Its scratch is a tmpfs private to its sandbox: both end here."""
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        sandbox.terminate(self.proc)

    # ------------------------------------------------------------ hand-over
    def started_now(self, recycled: bool) -> bool:
        """Without waiting: the worker can be handed over at once. A ``recycled``
        sandbox has said it is clean (the byte stays unread for :meth:`came_back_clean`);
        a new one has started."""
        fd = self.proc.sandbox_recycle_fd if recycled else getattr(self.proc, "sandbox_ready_fd", None)
        if fd is None:
            return True
        try:
            return bool(select.select([fd], [], [], 0)[0])
        except (OSError, ValueError):
            return False

    def running(self) -> bool:
        """The sandbox has started (waiting for it if need be) and its worker still runs."""
        return sandbox.await_started(self.proc) and self.proc.poll() is None

    def came_back_clean(self) -> bool:
        """Wait for a recycled sandbox's "clean" byte; then drop whatever the last parent
        wrote to the grader and nobody read (it is dead: nothing more can follow)."""
        fd = self.proc.sandbox_recycle_fd
        ready, _, _ = select.select([fd], [], [], RECYCLE_WAIT)
        try:
            if not ready or os.read(fd, 1) != wire.RECYCLED:
                return False
        except OSError:
            return False
        if not shared_memory_back(self.proc):
            return False
        self.buffer.clear()
        out = self.proc.stdout.fileno()
        for _ in range(1 << 12):  # at most 4 GiB of leftovers, read 1 MiB at a time
            try:
                if not os.read(out, 1 << 20):
                    return False
            except BlockingIOError:
                return True
            except OSError:
                return False
        return False

    # ------------------------------------------------------------ transport
    def send(self, obj) -> None:
        self.write(wire.encode_request(obj))

    def write(self, data: bytes, timeout: float = WRITE_WAIT) -> None:
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

    def receive(self, deadline: float, limits: tuple[int, int], wait: bool = True) -> dict | None:
        """One reply frame, refused unread if it claims more than ``limits`` (header
        bytes, blob bytes) allow: the grader never holds more than that per reply.
        ``wait`` False: None unless a whole frame is there after one read that never blocks."""
        fd = self.proc.stdout.fileno()
        polled = False
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                reply = self._take_frame(limits)
                if reply is not None:
                    return reply
                if not wait:
                    if polled:
                        return None
                    polled = True
                else:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise WorkerLost("timeout")
                    if not sel.select(timeout=remaining):
                        continue
                try:
                    chunk = os.read(fd, 1 << 20)
                except BlockingIOError:
                    if not wait:
                        return None
                    continue
                except OSError:
                    raise WorkerLost("crashed") from None
                if not chunk:
                    raise WorkerLost("crashed")
                self.buffer += chunk

    def _take_frame(self, limits: tuple[int, int]) -> dict | None:
        """The first whole frame of the buffer, decoded as untrusted, or None if it is
        not all there yet. A header that claims more than ``limits`` is refused before
        its body is read."""
        if len(self.buffer) < 12:
            return None
        header_cap, blob_cap = limits
        need = 8 + int.from_bytes(self.buffer[:8], "big")
        header = int.from_bytes(self.buffer[8:12], "big")
        if header > header_cap or need - 12 - header > blob_cap or need < 12 + header:
            raise WorkerLost("protocol")
        if len(self.buffer) < need:
            return None
        payload = bytes(self.buffer[8:need])
        del self.buffer[:need]
        try:
            reply = wire.decode(payload, trusted=False)
        except (wire.WireError, ValueError, RecursionError):
            raise WorkerLost("protocol") from None
        if not isinstance(reply, dict):
            raise WorkerLost("protocol")
        return reply


def shared_memory_back(proc) -> bool:
    """The shared memory charged to a recycled sandbox's cgroup is back near what a
    fresh one holds (its /m5 files in bwrap's tmpfs): a memfd or a tmpfs file that
    outlived the last submission's processes shows here. True when unreadable."""
    cgroup = getattr(proc, "sandbox_cgroup", None)
    held = cgroup.shmem_bytes() if cgroup is not None else None
    return held is None or held <= getattr(proc, "sandbox_file_bytes", 0) + RECYCLE_SHMEM_SLACK
