"""The child: the one process that runs a student's code (untrusted).

Forked by the parent after every import; it runs the cells, then the calls of each
batch, and writes their outcomes to the parent as messages (``messages.py``). Whatever
it does, it can lose only the batch it is running: the parent checks everything it
hands back and forks a fresh child when it dies or hangs.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import random
import signal
import sys
import time

import numpy as np
import numpy.random

from . import recycle
from .messages import (
    K_BAD,
    K_CELL,
    K_LOADED,
    K_OK,
    K_RAISED,
    MESSAGE_HEADER,
    PROGRESS_WORD,
    Bunch,
    pack_array,
    read_order,
    send_text,
    shortened,
    write_all,
)
from .wire import MAX_ANSWER_ELEMENTS, MAX_ARRAY_ELEMENTS, MAX_EXC_NAMES, OUTPUT_SLACK, SAFE_KINDS, output_cap

# Taken before any student code runs (see messages.py).
_dumps = json.dumps
_getpid = os.getpid
_exit_now = os._exit
_setitimer = signal.setitimer
_signal = signal.signal
_monotonic = time.monotonic

ANSWER_TIMEOUT = 0.1  # seconds to read one numerical answer (the child's own timer)
FLUSH_BYTES = 32 << 10  # the child writes its outcomes in bunches of this size ...
FLUSH_SECONDS = 0.002  # ... or at least this often while calls complete


class CallTimeout(BaseException):
    """Raised inside student code when a cell or an answer exceeds its own timer."""


def on_alarm(signum, frame):
    raise CallTimeout()


def _as_plain_array(value):
    if type(value) is np.ndarray:  # nearly every return: skip the conversions below
        arr = value
    else:
        if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
            value = value.detach().cpu().numpy()
        arr = np.asarray(value)
        if type(arr) is not np.ndarray:
            arr = np.array(arr, copy=True)
    if arr.dtype.kind not in SAFE_KINDS or arr.dtype.hasobject:
        raise TypeError(f"returned values of dtype {arr.dtype}, not numbers")
    if arr.size > MAX_ARRAY_ELEMENTS:
        raise TypeError(f"returned {arr.size} values, far more than the inputs allow")
    return arr


def _exception_names(exc: BaseException) -> list[str]:
    return [cls.__name__ for cls in type(exc).__mro__ if cls not in (object,)][:MAX_EXC_NAMES]


def _describe(exc: BaseException) -> str:
    """``Type: message``; a student exception whose ``str`` fails still gets its type."""
    try:
        return shortened(f"{type(exc).__name__}: {exc}")
    except BaseException:  # noqa: BLE001 - a student's __str__ may raise anything
        return shortened(type(exc).__name__)


def _timed(seconds: float):
    _signal(signal.SIGALRM, on_alarm)  # student code may have replaced or ignored it
    _setitimer(signal.ITIMER_REAL, max(seconds, 0.001))


def _untimed():
    _setitimer(signal.ITIMER_REAL, 0)


_NATIVE_WORD = sys.byteorder == "little" and PROGRESS_WORD.format in ("<Q", b"<Q")
_FORKED = [False]  # set in the child when student code forks through Python (os.register_at_fork)


def _note_fork() -> None:
    _FORKED[0] = True


_reap_children = recycle.reap_children  # children student code forked that have exited


def _reseed() -> None:
    """Same global random state before every batch: a submission that draws from
    ``random`` or ``np.random`` gets the same outcomes on every grading."""
    random.seed(0)
    np.random.seed(0)


def run_call(fn, args, kwargs, me: int) -> tuple[int, object]:
    """One call of student code: (K_OK, array) | (K_RAISED, body) | (K_BAD, body)."""
    try:
        try:
            result = fn(*args, **kwargs)
        finally:
            if _getpid() != me:  # a process the student forked: it must never reach the pipe
                _exit_now(0)
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too: student code
        return K_RAISED, {"exc": _exception_names(exc), "msg": _describe(exc)}
    finally:
        if _FORKED[0]:  # reaped after the call that forked (and after every batch, see _child_batch)
            _FORKED[0] = False
            _reap_children()
    try:
        return K_OK, _as_plain_array(result)
    except BaseException as exc:  # noqa: BLE001 - a student's return value may raise anything when read
        return K_BAD, {"msg": shortened(f"could not read the returned value as numbers: {_describe(exc)}")}


def within_cap(kind: int, body, cap: int | None, call: tuple) -> tuple[int, object]:
    """(kind, body), a returned array over its call's cap turned into a bad return.
    ``cap``: the most values allowed; None: computed from ``call``, the call's (args,
    kwargs), and only for a return longer than OUTPUT_SLACK (a closure per call would
    cost more)."""
    if kind == K_OK and body.size > OUTPUT_SLACK and body.size > (output_cap(*call) if cap is None else cap):
        return K_BAD, {"msg": f"returned {body.size} values, far more than the inputs allow"}
    return kind, body


def outcome_message(index: int, kind: int, body) -> bytes:
    """One outcome (already within its cap: :func:`within_cap`) as a child -> parent
    message of its own."""
    payload = pack_array(body) if kind == K_OK else _dumps(body, ensure_ascii=True).encode()
    return MESSAGE_HEADER.pack(kind, index, len(payload)) + payload


class Outbox:
    """The child's outcomes on their way to the parent, written in bunches (a write per
    call would cost more than many kernels do), at least every FLUSH_SECONDS while calls
    complete; consecutive plain arrays travel as one K_BUNCH message. Before each call
    the child notes its index in the shared progress word, so the parent blames a hung
    call exactly even when earlier outcomes were unsent."""

    def __init__(self, fd: int, progress):
        self.fd, self.progress = fd, progress
        self.pending = bytearray()
        self.bunch: Bunch | None = None
        self.since = _monotonic()
        # The progress word as a native u64 (an item store costs a fifth of pack_into, once
        # per call): the word is little-endian, as this machine's own order must then be.
        self.word = memoryview(progress).cast("B")[: PROGRESS_WORD.size].cast("Q") if _NATIVE_WORD else None

    def starting(self, index: int) -> None:
        if self.word is not None:
            self.word[0] = index
        else:
            PROGRESS_WORD.pack_into(self.progress, 0, index)

    def add_array(self, index: int, arr: np.ndarray) -> None:
        """A plain array outcome (within its cap) of an unwatched call."""
        bunch = self.bunch
        if bunch is None:
            bunch = self.bunch = Bunch(index)
        if not bunch.add(arr):
            self.add(outcome_message(index, K_OK, arr))
            return
        self._flush_if_due(len(bunch.values))

    def add(self, message: bytes) -> None:
        """A message of its own (after the open bunch: messages keep the calls' order)."""
        self._close_bunch()
        self.pending += message
        self._flush_if_due(0)

    def _flush_if_due(self, open_bytes: int) -> None:
        """Flush at FLUSH_BYTES (``open_bytes``: those of the open bunch) or FLUSH_SECONDS."""
        if len(self.pending) + open_bytes >= FLUSH_BYTES or _monotonic() - self.since >= FLUSH_SECONDS:
            self.flush()

    def _close_bunch(self) -> None:
        if self.bunch is not None:
            if self.bunch.codes:
                self.pending += self.bunch.message()
            self.bunch = None

    def flush(self) -> None:
        self._close_bunch()
        if self.pending:
            write_all(self.fd, self.pending)
            self.pending.clear()
        self.since = _monotonic()


def shared_arguments(args, kwargs, layout, buffer) -> tuple[list, dict]:
    """Replace the watched array arguments by views of the shared input buffer."""
    args, kwargs = list(args), dict(kwargs)
    for where, offset, dtype, shape in layout:
        view = np.frombuffer(buffer, dtype=np.dtype(dtype), count=math.prod(shape), offset=offset).reshape(shape)
        if isinstance(where, int):
            args[where] = view
        else:
            kwargs[where] = view
    return args, kwargs


def _child_batch(namespace: dict, name: str, calls: list, watched: set, orders: int, out: int, inputs, progress) -> None:
    _reseed()
    fn = namespace.get(name)
    me = _getpid()
    outbox = Outbox(out, progress)
    layouts: dict = {}  # watched call -> where the parent placed its inputs
    for index, (args, kwargs) in enumerate(calls):
        outbox.starting(index)
        if index in watched:
            if index not in layouts:
                outbox.flush()  # the parent arms the next watched calls once it has read the earlier ones
            while index not in layouts:
                order = read_order(orders)  # ("go", {index: layout}): the parent placed their inputs
                if order is None:
                    _exit_now(0)
                layouts.update(order[1])
            args, kwargs = shared_arguments(args, kwargs, layouts.pop(index), inputs)
        if not callable(fn):  # still in the loop: the watched calls' orders must be read
            outbox.add(outcome_message(index, K_RAISED, {"exc": ["NameError"], "msg": f"{name} is not defined"}))
            continue
        kind, body = run_call(fn, args, kwargs, me)  # the call unpacks them into new ones
        if kind == K_OK and body.size > OUTPUT_SLACK:  # (within_cap's own first test: most returns pass it)
            kind, body = within_cap(kind, body, None, (args, kwargs))
        if kind == K_OK and index not in watched:
            outbox.add_array(index, body)
        else:
            outbox.add(outcome_message(index, kind, body))
    outbox.flush()
    _reap_children()  # whatever student code started without Python's fork (ctypes, subprocess)


def _child_values(namespace: dict, names: list, out: int) -> None:
    for index, name in enumerate(names):
        try:  # a number converts at once; a stalling __array__ costs only its own answer
            _timed(ANSWER_TIMEOUT)
            try:
                value = _as_plain_array(namespace[name]) if name in namespace else None
            finally:
                _untimed()
        except BaseException:  # noqa: BLE001 - an answer that cannot be read, however, is missing
            value = None
        if value is None:
            send_text(out, K_BAD, index, {"msg": "missing"})
        else:
            write_all(out, outcome_message(index, *within_cap(K_OK, value, MAX_ANSWER_ELEMENTS, ())))


def touch_preloaded(preloaded: dict) -> None:
    """Make this child's own copy, now, of the memory pages that running the preloaded
    calls writes to: passing an argument changes its reference count, and the first
    write to a page shared with the parent copies the page. A blank child does this
    while it waits for its submission (about 2,600 pages, 15 ms of CPU on the bench
    corpus), so the submission's first batches do not pay for it."""
    for calls in preloaded.values():
        for args, kwargs in calls:
            for _ in args:
                pass
            for _ in kwargs.values():
                pass


def child_main(cellexec, orders: int, out: int, inbox, inputs, preloaded: dict, progress) -> None:
    """The executor: wait for the load order, load the cells, then serve batches until
    told to exit. Never returns.

    The load request (the cells) and a batch's calls come from the inbox (pickled blobs
    the parent wrote) or, for calls, from ``preloaded`` (the parent's, inherited through
    fork: a fresh child gets them untouched)."""
    try:
        os.setpgid(0, 0)  # its own group: killpg(0) from student code reaches only the child
        os.register_at_fork(after_in_parent=_note_fork)
        touch_preloaded(preloaded)
        order = read_order(orders)  # ("load", request size): nothing of the student's runs before it
        if order is None or order[0] != "load":
            return
        load_request = pickle.loads(inbox[: order[1]])
        _reseed()

        announced = [None]

        def announce(message):
            """cellexec announces each cell before running it. The cell runs only once the
            parent has passed the announcement on: a cell that kills the parent is then
            the one blamed, every time, never the cell before it. The next statements
            of a .py file (same cell) do not wait: the announcement is in the pipe
            before the statement runs, so the parent still reads which one killed the
            child, and the parent blames the file as a whole anyway."""
            cell_id = message.get("id")
            send_text(out, K_CELL, 0, {"id": cell_id, "line": message.get("line")})
            if cell_id != announced[0]:
                announced[0] = cell_id
                if read_order(orders) is None:
                    _exit_now(0)

        loaded = cellexec.load_cells(
            load_request["cells"],
            load_request["kernels"],
            load_request["cell_timeout"],
            announce,
            timed=_timed,
            untimed=_untimed,
            timeout_exc=CallTimeout,
            request=load_request,
        )
        namespace = loaded.pop("namespace")
        send_text(out, K_LOADED, 0, {"cells": loaded["cells"], "found": loaded["found"]})
        while True:
            order = read_order(orders)
            if order is None or order[0] == "exit":
                break
            if order[0] in ("batch", "preloaded"):  # (kind, blob size | name, kernel, watched call indices)
                calls = pickle.loads(inbox[: order[1]]) if order[0] == "batch" else preloaded[order[1]]
                _child_batch(namespace, order[2], calls, set(order[3]), orders, out, inputs, progress)
            elif order[0] == "values":
                _child_values(namespace, order[1], out)
    finally:
        _exit_now(0)
