"""The grading worker: a trusted parent that runs a student's code in a forked child.

This file is placed read-only at /m5/worker.py inside the sandbox and run there as a script, so it
imports only the standard library and numpy (the packages ``autograder`` and
``reference_impl`` are not visible to it). The grader imports the same file for the
wire codec and the reply limits, so both ends share one definition.

Two processes inside the sandbox:

* the **parent** (trusted) talks to the grader, forks the executor after its own
  imports, and never runs student code. It times every call by the child's CPU clock
  (``/proc/<pid>/stat``) with a wall-clock backstop and kills the child past a limit;
  it places the inputs of watched calls in a shared buffer and, after the call,
  compares them with its private copy (the no-mutation check); it validates what the
  child hands back (kind, dtype, size within the call's cap) and encodes the replies.
  It is not dumpable (the child cannot read its memory or descriptors) and is the
  subreaper of everything the child starts, so no process outlives a batch.
* the **child** (untrusted) runs the cells and the calls, and hands back raw numbers.
  A child that dies, hangs or writes garbage costs only the batch (one kernel) it was
  running: the parent forks a fresh child and loads the cells again.

In a class run (``M5_RECYCLE_FD`` set) a third, the **zygote** (``recycle.zygote``), comes
first: after the imports and the preload it forks one parent per submission and cleans
the sandbox between them; it never runs student code either.

Grader <-> parent wire format, both directions: frames of ``u64 length`` + payload.
Grader -> parent payloads are pickles (fast for thousands of small arrays; only the
worker unpickles). Parent -> grader payloads are ``u32 header length`` + JSON header +
one binary blob; arrays inside the header are ``{"__nd__": [offset, nbytes, dtype,
shape]}`` references into the blob, so outcomes cross as plain numeric bytes (never
pickle); an outcomes reply carries its arrays as columns (:class:`OutcomeColumns`).
The grader decodes with ``trusted=False`` and caps every frame with :func:`reply_limits`.

Requests (grader -> worker)
  {"op": "load", "cells": [cell dicts], "kernels": [...], "cell_timeout": s,
   "budget": {...}, ...}      (the whole request reaches ``cellexec.load_cells(request=)``)
      -> {"op": "cell", "id"} before each cell (the child runs the cell only once the
         parent has passed this on; the child announces each statement of a .py file,
         the parent passes on the first), then
         {"op": "loaded", "cells": [{"id", "ok", "error", "line", "timed_out"[, "reason"]}],
          "found": {kernel: bool}, "time_cap": bool}
  {"op": "call", "kernel": name, "calls": [[args, kwargs], ...], "call_timeout": s,
   "watch": [indices of calls checked for writes into their inputs] (absent: all)}
      -> {"op": "outcomes", "outcomes": [outcome, ...]} | {"op": "lost", "reason": r}
      (the grader sends it as :func:`prepare_call_request` made it: the calls as one
      pickled blob, or ``"ref"``: the name of calls given ahead in the preload file)
  {"op": "values", "names": [...]}
      -> {"op": "values", "values": {name: array | None}}   (numerical answers)
  {"op": "exit"}
Outcome: {"s": "ok", "v": array, "mut": bool} | {"s": "raised", "exc": [type names
of the MRO], "msg": str} | {"s": "timeout"} | {"s": "bad_return", "msg": str} |
{"s": "unsent"} (finished before a later call of the batch hung, its outcome not yet
sent: the child writes outcomes in bunches)

The preload file (``PRELOAD_FILE`` beside this file, read-only, optional): a pickle
``{name: [[args, kwargs], ...]}`` of the corpus' calls, written by the grader when it
starts the worker. The parent unpickles it before anything else, so every child it
forks starts with the calls in its memory and a corpus batch request only names them;
with a spare worker this is done while the previous submission is graded. The calls
are the inputs every submission receives anyway (no expected value is in the sandbox).
"""
from __future__ import annotations

import bisect
import collections
import fcntl
import json
import math
import mmap
import os
import pickle
import random
import select
import signal
import struct
import sys
import time

import numpy as np
import numpy.random  # noqa: F401 - numpy imports it lazily; each child reseeds it (_reseed): import it once, before forking

# References taken before any student code runs: student code in the child may
# monkeypatch modules (json.dumps, os.write, ...); the child's own protocol code keeps
# working with these. (Nothing trusted depends on them: the checks run in the parent.)
_dumps = json.dumps
_loads = json.loads
_getpid = os.getpid
_exit_now = os._exit
_setitimer = signal.setitimer
_signal = signal.signal
_write = os.write
_read = os.read
_monotonic = time.monotonic

MAX_FRAME = 256 << 20          # no message may exceed this (grader side check)
PRELOAD_FILE = "preload.pkl"
ANSWER_TIMEOUT = 0.1           # seconds to read one numerical answer (the child's own timer)
MAX_ARRAY_ELEMENTS = 1 << 24
SAFE_KINDS = "biuf"
_LEN = struct.Struct(">Q")
_PROGRESS = struct.Struct("<Q")  # the progress word: index of the call the child is running
_HDR = struct.Struct(">I")
_PICKLED = b"\x80"              # a JSON-codec payload starts with its u32 header length, never 0x80
_DTYPES: dict = {}


def _load_sibling(name: str):
    """Import ``name``.py from this file's folder without putting that folder on sys.path
    (the worker runs with -P; student code must not import from scratch by accident)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_m5_{name}", os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


idle = _load_sibling("idle")  # the parent's watch on a child that does not run (idle.py)
recycle = _load_sibling("recycle")  # the zygote and the sandbox's clean-up (recycle.py)


# ------------------------------------------------------------------ codec
class WireError(Exception):
    """A malformed or oversized frame."""


def encode(obj) -> bytes:
    """Serialize JSON-like data holding numpy arrays into one framed payload."""
    chunks: list[bytes] = []
    offset = 0

    def walk(x):
        nonlocal offset
        if isinstance(x, RawArray):  # validated bytes from the child, passed on as they are
            pieces = x.data.pieces if type(x.data) is Pieces else (x.data,)
            ref = {"__nd__": [offset, len(x.data), x.dtype, list(x.shape)]}
            chunks.extend(pieces)
            offset += len(x.data)
            return ref
        if isinstance(x, np.generic):  # numpy scalars travel as plain Python numbers
            return x.item()
        if isinstance(x, np.ndarray):
            arr = x
            if arr.dtype.kind not in SAFE_KINDS:
                raise WireError(f"dtype {arr.dtype} cannot cross the wire")
            raw = arr.tobytes(order="C")  # any memory layout; keeps 0-d shapes
            ref = {"__nd__": [offset, len(raw), arr.dtype.str, list(arr.shape)]}
            chunks.append(raw)
            offset += len(raw)
            return ref
        if isinstance(x, dict):
            return {str(k): walk(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [walk(v) for v in x]
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        raise WireError(f"cannot encode {type(x).__name__}")

    if _is_outcomes_reply(obj, OutcomeColumns):  # gathered while the batch ran
        tree = obj["outcomes"].header(walk)
    elif _is_outcomes_reply(obj):
        tree = OutcomeColumns.of(obj["outcomes"]).header(walk)
    else:
        tree = walk(obj)
    header = _dumps(tree, allow_nan=True, separators=(",", ":")).encode()
    # One copy of the values into the frame (a reply can hold megabytes).
    return b"".join([_LEN.pack(_HDR.size + len(header) + offset), _HDR.pack(len(header)), header, *chunks])


class Pieces:
    """Buffers that go into a frame one after another, as if joined (without the copy)."""

    __slots__ = ("pieces", "size")

    def __init__(self, pieces: list):
        self.pieces, self.size = pieces, sum(len(p) for p in pieces)

    def __len__(self) -> int:
        return self.size


# Outcomes replies travel as columns: a batch has thousands of outcomes, nearly all a
# validated array and its write flag. Their values are concatenated at the start of the
# blob; four arrays say which outcome each is, its dtype (an index into WIRE_DTYPES), its
# rank and write flag, and one more holds every shape. Other outcomes (raised, timeout,
# ...) travel as JSON beside them: {"op": "outcomes", "n": N, "cols": {...}, "others":
# [[index, outcome], ...]}. decode() gives back the same list of outcome dicts.


class OutcomeColumns:
    """A batch's outcomes gathered as columns while the child sends them, so that the
    reply is ready the moment the last one arrives (the child waits for it)."""

    def __init__(self):
        self.n = 0
        self.cpu = 0.0  # CPU seconds the child used in the batch (as the parent saw it)
        self.index, self.code, self.ndim, self.mut, self.dims, self.data, self.others = [], [], [], [], [], [], []

    @classmethod
    def of(cls, outcomes: list) -> "OutcomeColumns":
        columns = cls()
        for outcome in outcomes:
            columns.add(outcome)
        return columns

    def add(self, outcome: dict) -> None:
        value = outcome.get("v") if type(outcome) is dict else None
        if type(value) is RawArray and outcome.keys() == {"s", "v", "mut"} and outcome["s"] == "ok" \
                and type(outcome["mut"]) is bool:
            self.add_array(value, outcome["mut"])
        else:
            self.others.append((self.n, outcome))
            self.n += 1

    def add_array(self, value: RawArray, mut: bool) -> None:
        """``add({"s": "ok", "v": value, "mut": mut})``, without making the dict."""
        self.index.append(self.n)
        self.code.append(_WIRE_CODE[value.dtype])
        self.ndim.append(len(value.shape))
        self.mut.append(mut)
        self.dims += value.shape
        self.data.append(value.data)
        self.n += 1

    def add_bunch(self, checked: tuple) -> None:
        """The outcomes of a :func:`check_bunch` result, as ``add_array`` would add each."""
        k, codes, ranks, dims, values = checked
        self.index.extend(range(self.n, self.n + k))
        self.code.extend(codes)
        self.ndim.extend(ranks.tolist())
        self.mut.extend([False] * k)
        self.dims.extend(dims.tolist())
        self.data.append(values)
        self.n += k

    def header(self, walk) -> dict:
        values = Pieces(self.data)
        cols = {"values": walk(RawArray("|u1", (len(values),), values)),
                "index": walk(np.asarray(self.index, dtype=np.int64)),
                "code": walk(np.asarray(self.code, dtype=np.uint8)), "ndim": walk(np.asarray(self.ndim, dtype=np.uint8)),
                "mut": walk(np.asarray(self.mut, dtype=np.uint8)), "dims": walk(np.asarray(self.dims, dtype=np.int64))}
        return {"op": "outcomes", "n": self.n, "cols": cols, "others": [[i, walk(o)] for i, o in self.others],
                "cpu": round(self.cpu, 3)}


def _outcomes_from_columns(header: dict, array, trusted: bool) -> list:
    """The outcome dicts of a columns reply, every field checked (the grader decodes
    untrusted frames: anything inconsistent is a WireError)."""
    n, cols, others = header.get("n"), header.get("cols"), header.get("others")
    if type(n) is not int or not 0 <= n <= MAX_ARRAY_ELEMENTS or type(cols) is not dict or type(others) is not list:
        raise WireError("bad outcomes columns")
    try:
        values, index, code, ndim, mut, dims = (array(cols[k]["__nd__"])
                                                for k in ("values", "index", "code", "ndim", "mut", "dims"))
    except (KeyError, TypeError) as exc:
        raise WireError(f"bad outcomes columns: {exc}") from None
    k = len(index)
    if (values.dtype != np.uint8 or values.ndim != 1 or index.dtype != np.int64 or dims.dtype != np.int64
            or any(c.dtype != np.uint8 or c.shape != (k,) for c in (code, ndim, mut)) or index.ndim != 1
            or dims.ndim != 1):
        raise WireError("bad outcomes columns")
    if k and (index.min() < 0 or index.max() >= n or (k > 1 and (np.diff(index) <= 0).any())
              or code.max() >= len(WIRE_DTYPES) or ndim.max() > MAX_NDIM or mut.max() > 1):
        raise WireError("bad outcomes columns")
    if int(ndim.sum()) != len(dims) or (len(dims) and (dims.min() < 0 or dims.max() > MAX_ARRAY_ELEMENTS)):
        raise WireError("bad outcome shapes")
    if n != k + len(others):  # every outcome is a column row or a JSON entry: n is what the frame holds
        raise WireError("outcome count does not match the frame")
    out: list = [None] * n
    dtypes = [_NATIVE_DTYPES[c] for c in WIRE_DTYPES]
    flat, offset, at = dims.tolist(), 0, 0
    for i, c, d, m in zip(index.tolist(), code.tolist(), ndim.tolist(), mut.tolist()):
        shape = tuple(flat[at:at + d])
        at += d
        count = math.prod(shape)
        dt = dtypes[c]
        nbytes = count * dt.itemsize
        if count > MAX_ARRAY_ELEMENTS or offset + nbytes > len(values):
            raise WireError("outcome values outside the blob")
        arr = np.frombuffer(values, dt, count, offset).reshape(shape)  # positional: keywords cost 1 us
        out[i] = {"s": "ok", "v": arr.copy() if trusted else arr, "mut": m == 1}
        offset += nbytes
    if offset != len(values):
        raise WireError("outcome values do not fill their part of the blob")
    for entry in others:
        if type(entry) is not list or len(entry) != 2 or type(entry[0]) is not int or not 0 <= entry[0] < n \
                or out[entry[0]] is not None or type(entry[1]) is not dict:
            raise WireError("bad outcome entry")
        out[entry[0]] = entry[1]
    if any(o is None for o in out):
        raise WireError("an outcome is missing")
    return out


def _is_outcomes_reply(obj, kind: type = list) -> bool:
    return type(obj) is dict and obj.keys() == {"op", "outcomes"} and obj["op"] == "outcomes" \
        and type(obj["outcomes"]) is kind


def encode_request(obj) -> bytes:
    """Grader -> worker frames: pickle, which is fast for thousands of small arrays.

    Only the worker ever unpickles, and it trusts the grader; the grader never
    unpickles anything (``decode(..., trusted=False)`` refuses pickle frames).
    """
    payload = _PICKLED + pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _LEN.pack(len(payload)) + payload


def decode(payload: bytes, *, trusted: bool = True):
    """Inverse of :func:`encode` / :func:`encode_request` (without the length prefix)."""
    if payload[:1] == _PICKLED:
        if not trusted:
            raise WireError("refused a pickle frame from an untrusted sender")
        return pickle.loads(payload[1:])
    if len(payload) < _HDR.size:
        raise WireError("truncated frame")
    (hlen,) = _HDR.unpack_from(payload)
    if hlen > len(payload) - _HDR.size:
        raise WireError("header longer than frame")
    try:
        header = _loads(payload[_HDR.size:_HDR.size + hlen])
    except ValueError as exc:
        raise WireError(f"bad header: {exc}") from None
    blob = memoryview(payload)[_HDR.size + hlen:]

    def walk(x):
        if _is_outcomes_reply(x):
            # Thousands of outcomes: only their values can hold arrays (anything else a
            # forged reply hides in other fields stays plain JSON, never an array).
            for outcome in x["outcomes"]:
                value = outcome.get("v") if type(outcome) is dict else None
                if type(value) is dict:
                    ref = value.get("__nd__")
                    outcome["v"] = _array(ref) if len(value) == 1 and type(ref) is list else walk(value)
            return x
        if isinstance(x, dict):
            if "__nd__" in x and len(x) == 1:
                return _array(x["__nd__"])
            return {k: walk(v) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    def _array(ref):
        try:
            offset, nbytes, dtype, shape = ref
            dt = _DTYPES.get(dtype) or _DTYPES.setdefault(dtype, np.dtype(dtype))
            shape = tuple(map(int, shape))
        except (TypeError, ValueError) as exc:
            raise WireError(f"bad array reference: {exc}") from None
        count = math.prod(shape)
        if not trusted:
            if dt.kind not in SAFE_KINDS or dt.hasobject or dt.itemsize > 16:
                raise WireError(f"refused dtype {dt}")
            if any(s < 0 for s in shape) or count > MAX_ARRAY_ELEMENTS:
                raise WireError(f"refused shape {shape}")
        if not (0 <= offset and offset + nbytes <= len(blob)) or nbytes != dt.itemsize * count:
            raise WireError("array reference outside the blob")
        arr = np.frombuffer(blob, dt, count, offset).reshape(shape)
        # The worker hands arrays to student code, which may write into them: give it copies.
        # The grader only reads: read-only views suffice.
        return arr.copy() if trusted else arr

    if type(header) is dict and header.get("op") == "outcomes" and "cols" in header:
        others = header.get("others")
        if type(others) is list:  # as in the list form below: only an outcome's value may be an array
            walk({"op": "outcomes", "outcomes": [e[1] for e in others if type(e) is list and len(e) == 2]})
        return {"op": "outcomes", "outcomes": _outcomes_from_columns(header, _array, trusted), "cpu": header.get("cpu")}

    return walk(header)


def read_frame(stream):
    """Blocking read of one frame from a binary stream (worker side)."""
    head = stream.read(_LEN.size)
    if len(head) < _LEN.size:
        return None
    (n,) = _LEN.unpack(head)
    return stream.read(n)


# ------------------------------------------------------------------ reply limits
# What a call may legitimately hand back: every graded kernel returns at most as many
# values as its inputs hold (a scalar at least). The cap is a small multiple of that, so
# no correct kernel ever meets it, and both ends use it: the parent refuses a bigger
# return (a bad_return for that call), the grader refuses a bigger frame (a lost kernel).
OUTPUT_FACTOR = 4
OUTPUT_SLACK = 64
MAX_ITEMSIZE = 16                 # the widest numeric dtype that crosses (complex is refused)
MAX_EXC_NAMES = 12                # exception type names kept per raised outcome
MAX_NAME_CHARS = 80
MAX_MESSAGE_CHARS = 300
OUTCOME_HEADER_BYTES = 4096       # the JSON of one outcome, its message escaped at worst
FRAME_OVERHEAD = 64 << 10
MAX_ANSWER_ELEMENTS = 4096        # a numerical answer is a number or a short list
_COUNT_DEPTH = 8


def count_values(x, depth: int = 0) -> int:
    """How many numbers an argument holds (arrays, nested lists/tuples, scalars as 1)."""
    if isinstance(x, np.ndarray):
        return int(x.size)
    if isinstance(x, (list, tuple)) and depth < _COUNT_DEPTH:
        return sum(count_values(v, depth + 1) for v in x)
    return 1


def output_cap(args, kwargs) -> int:
    """Most values one call may return (see the comment above)."""
    held = sum(count_values(a) for a in args) + sum(count_values(v) for v in kwargs.values())
    return OUTPUT_FACTOR * max(held, 1) + OUTPUT_SLACK


def reply_limits(calls) -> tuple[int, int]:
    """(header bytes, blob bytes) a reply to these ``[[args, kwargs], ...]`` may use."""
    return limits_for_caps([output_cap(args, kwargs) for args, kwargs in calls])


def limits_for_caps(caps) -> tuple[int, int]:
    return len(caps) * OUTCOME_HEADER_BYTES + FRAME_OVERHEAD, sum(caps) * MAX_ITEMSIZE + len(caps) * COLUMN_BYTES


def prepare_call_request(request: dict, *, ref: str | None = None) -> dict:
    """The grader's form of a call request for this worker: the calls pickled once as
    one blob (the parent copies it to the child unread), each call's output cap, and
    the watched calls apart (the parent's private copies for the no-mutation check).
    With ``ref``, the calls are not carried: ``ref`` names the same calls preloaded
    into the worker (see "preload" above)."""
    calls = request["calls"]
    watch = request.get("watch")
    watched = range(len(calls)) if watch is None else sorted({i for i in watch if 0 <= i < len(calls)})
    form = {"op": "call", "kernel": request["kernel"], "call_timeout": request.get("call_timeout", 2.0),
            "n": len(calls), "caps": [output_cap(args, kwargs) for args, kwargs in calls],
            "watched": {i: calls[i] for i in watched}}
    if ref is None:
        form["calls_blob"] = pickle.dumps(calls, protocol=pickle.HIGHEST_PROTOCOL)
    else:
        form["ref"] = ref
    return form


# ------------------------------------------------------------------ child -> parent messages
# u8 kind, u32 index (call or answer number), u64 payload length, payload. The parent
# reads the 13-byte head, checks the length against the cap for that kind and index,
# and only then reads the payload.
#
# K_BUNCH carries the plain array outcomes of consecutive unwatched calls, from call
# ``index`` on, as columns (a batch has thousands of outcomes, and one message each cost
# the child and the parent more than many kernels do): u32 count k, k dtype codes (u8,
# indices into WIRE_DTYPES), k ranks (u8), every shape's dims (u64 each, in order), then
# every outcome's values (C order, native byte order), one after another.
K_OK, K_RAISED, K_BAD, K_CELL, K_LOADED, K_BUNCH = 1, 2, 3, 4, 5, 6
_MSG = struct.Struct(">BIQ")
_ARR = struct.Struct(">BB")        # dtype string length, ndim
_DIM = struct.Struct(">Q")
MAX_NDIM = 32
TEXT_CAP = 16 << 10                # a raised / bad_return / cell message
# Numeric dtypes in this machine's byte order: the only ones a child may hand back.
_NATIVE_DTYPES = {d.str: d for d in map(np.dtype, (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.longdouble)) if d.itemsize <= MAX_ITEMSIZE}
# Outcome columns (see OutcomeColumns): dtype codes, and the blob bytes per outcome.
WIRE_DTYPES = sorted(_NATIVE_DTYPES)
_WIRE_CODE = {code: i for i, code in enumerate(WIRE_DTYPES)}
_CODE_OF_DTYPE = {_NATIVE_DTYPES[code]: i for i, code in enumerate(WIRE_DTYPES)}  # a dict lookup, not dtype.str
_ITEMSIZES = np.array([_NATIVE_DTYPES[code].itemsize for code in WIRE_DTYPES], dtype=np.int64)
COLUMN_BYTES = 11 + 8 * MAX_NDIM   # the most blob bytes the columns take per outcome
_COUNT = struct.Struct(">I")
BUNCH_ROW_BYTES = 2 + 8 * MAX_NDIM  # a bunch's bytes per outcome besides its values, at most


class ProtocolError(Exception):
    """The child broke the protocol (malformed, oversized or out-of-order message)."""


# A pipe's capacity, largest first: the corpus' largest reply is under 4 MiB; an
# unprivileged process gets at most /proc/sys/fs/pipe-max-size (1 MiB by default).
PIPE_BYTES = (4 << 20, 1 << 20)


def widen_pipe(fd: int) -> None:
    """Give a pipe room for whole replies (grader side) or many bunches of outcomes (the
    worker's parent, for its child), so the writer does not wait for the reader."""
    for size in PIPE_BYTES:
        try:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, size)
            return
        except OSError:
            pass  # above what this user may have: the default size works, only slower


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[_write(fd, view):]


def _send_message(fd: int, kind: int, index: int, payload: bytes) -> None:
    _write_all(fd, _MSG.pack(kind, index, len(payload)) + payload)


def _send_text(fd: int, kind: int, index: int, obj) -> None:
    _send_message(fd, kind, index, _dumps(obj, ensure_ascii=True).encode())


def pack_array(arr: np.ndarray) -> bytes:
    """Child side: dtype, shape and raw bytes of a plain numeric array (native order)."""
    dtype, ndim = arr.dtype, arr.ndim
    head = _PACK_HEADS.get((dtype, ndim))  # (dtype.str alone costs a microsecond)
    if head is None:
        code = dtype.str
        if code in _NATIVE_DTYPES:  # a few (dtype, ndim) pairs occur: their heads are made once
            head = _PACK_HEADS[(dtype, ndim)] = _pack_head(code, ndim)
        else:
            arr = arr.astype(dtype.newbyteorder("="))
            head = _pack_head(arr.dtype.str, ndim)
    return head[0] + head[1].pack(*arr.shape) + arr.tobytes()  # C order


def _pack_head(code: str, ndim: int) -> tuple[bytes, struct.Struct]:
    return _ARR.pack(len(code), ndim) + code.encode(), struct.Struct(f">{ndim}Q")


_PACK_HEADS: dict = {}


class RawArray:
    """A plain numeric array as the child handed it over: dtype string, shape, bytes."""

    __slots__ = ("dtype", "shape", "data")

    def __init__(self, dtype: str, shape: tuple, data):
        self.dtype, self.shape, self.data = dtype, shape, data


def check_array(payload: bytes, cap: int) -> RawArray:
    """Parent side: the inverse of :func:`pack_array`, refusing anything but a plain
    numeric array of at most ``cap`` values that fills the payload exactly."""
    if len(payload) < _ARR.size:
        raise ProtocolError("truncated array")
    code_len, ndim = _ARR.unpack_from(payload)
    if ndim > MAX_NDIM:
        raise ProtocolError("too many dimensions")
    start = _ARR.size + code_len
    code = payload[_ARR.size:start].decode("ascii", "replace")
    dtype = _NATIVE_DTYPES.get(code)
    if dtype is None:
        raise ProtocolError("refused dtype")
    end = start + ndim * _DIM.size
    if end > len(payload):
        raise ProtocolError("truncated shape")
    shape = _SHAPES[ndim].unpack_from(payload, start)
    count = math.prod(shape)
    if count > cap or len(payload) - end != count * dtype.itemsize:
        raise ProtocolError("array size does not match")
    return RawArray(code, shape, memoryview(payload)[end:])


_SHAPES = [struct.Struct(f">{ndim}Q") for ndim in range(MAX_NDIM + 1)]


class Bunch:
    """Child side: plain array outcomes of consecutive calls, gathered as the columns of
    one K_BUNCH message (see above)."""

    __slots__ = ("first", "codes", "ranks", "dims", "values")

    def __init__(self, first: int):
        self.first = first
        self.codes, self.ranks, self.dims, self.values = bytearray(), bytearray(), [], bytearray()

    def add(self, arr: np.ndarray) -> bool:
        """Gather ``arr``; False (nothing gathered) if its dtype is not a wire dtype as it
        is (another byte order: :func:`pack_array` converts it in a message of its own)."""
        code = _CODE_OF_DTYPE.get(arr.dtype)
        if code is None:
            return False
        self.codes.append(code)
        self.ranks.append(arr.ndim)
        self.dims += arr.shape
        self.values += arr.tobytes()  # C order
        return True

    def message(self) -> bytes:
        k, dims = len(self.codes), self.dims
        payload = b"".join([_COUNT.pack(k), self.codes, self.ranks, struct.pack(f">{len(dims)}Q", *dims), self.values])
        return _MSG.pack(K_BUNCH, self.first, len(payload)) + payload


def bunch_caps(caps) -> list[int]:
    """Parent side: the largest K_BUNCH payload that may start at each call of a batch
    (every later call's outcome in it, each at its cap), so a head is checked before its
    payload is read, as for any message."""
    rows = BUNCH_ROW_BYTES + np.asarray(caps, dtype=np.int64) * MAX_ITEMSIZE
    return (np.cumsum(rows[::-1])[::-1] + _COUNT.size).tolist()


def check_bunch(payload: bytes, first: int, caps: np.ndarray, watched: list[int]) -> tuple:
    """Parent side: the inverse of :meth:`Bunch.message` for calls ``first``, ``first +
    1``, ...: (count, dtype codes, ranks, dims, values), every outcome checked as
    :func:`check_array` checks one (a wire dtype, at most MAX_NDIM dims, at most its
    call's cap of values in ``caps``), and the values filling the rest of the payload
    exactly. No watched call (``watched``, sorted) may be among them: a watched call's
    outcome comes alone, once its inputs have been compared. Raises ProtocolError."""
    if len(payload) < _COUNT.size:
        raise ProtocolError("truncated bunch")
    (k,) = _COUNT.unpack_from(payload)
    if not 1 <= k <= len(caps) - first:
        raise ProtocolError("bunch count out of range")
    at = bisect.bisect_left(watched, first)
    if at < len(watched) and watched[at] < first + k:
        raise ProtocolError("a watched call's outcome in a bunch")
    shapes_at = _COUNT.size + 2 * k
    if len(payload) < shapes_at:
        raise ProtocolError("truncated bunch")
    codes = np.frombuffer(payload, np.uint8, k, _COUNT.size)
    ranks = np.frombuffer(payload, np.uint8, k, _COUNT.size + k)
    if int(codes.max()) >= len(WIRE_DTYPES):
        raise ProtocolError("refused dtype")
    width = int(ranks.max())
    if width > MAX_NDIM:
        raise ProtocolError("too many dimensions")
    n_dims = int(ranks.sum())
    values_at = shapes_at + 8 * n_dims
    if len(payload) < values_at:
        raise ProtocolError("truncated shape")
    dims = np.frombuffer(payload, ">u8", n_dims, shapes_at)
    if n_dims and int(dims.max()) > MAX_ARRAY_ELEMENTS:
        raise ProtocolError("array size does not match")
    # Values per outcome: the product of its dims (1 for a 0-d array), in float64 so that
    # it cannot wrap around (exact up to 2**53, and beyond that far over any cap).
    grid = np.ones((k, width))
    grid[np.arange(width) < ranks[:, None]] = dims
    counts = grid.prod(axis=1)
    if (counts > caps[first:first + k]).any():
        raise ProtocolError("array size does not match")
    if int((counts.astype(np.int64) * _ITEMSIZES[codes]).sum()) != len(payload) - values_at:
        raise ProtocolError("array size does not match")
    return k, payload[_COUNT.size:_COUNT.size + k], ranks, dims, memoryview(payload)[values_at:]


def unpack_array(payload: bytes, cap: int) -> np.ndarray:
    """:func:`check_array` as a (read-only) numpy array."""
    raw = check_array(payload, cap)
    return np.frombuffer(raw.data, dtype=_NATIVE_DTYPES[raw.dtype]).reshape(raw.shape)


def _text(payload: bytes) -> dict:
    try:
        obj = _loads(payload)
    except (ValueError, RecursionError):
        raise ProtocolError("bad text message") from None
    if not isinstance(obj, dict):
        raise ProtocolError("bad text message")
    return obj


def _clean_str(value, limit: int) -> str:
    return _short(value, limit) if isinstance(value, str) else ""


def parse_outcome(kind: int, payload: bytes, cap: int) -> dict:
    """Parent side: one call's outcome from a child message, validated and bounded."""
    if kind == K_OK:
        return {"s": "ok", "v": check_array(payload, cap), "mut": False}
    body = _text(payload)
    if kind == K_RAISED:
        names = body.get("exc")
        names = [_clean_str(n, MAX_NAME_CHARS) for n in names[:MAX_EXC_NAMES]] if isinstance(names, list) else []
        return {"s": "raised", "exc": names, "msg": _clean_str(body.get("msg"), MAX_MESSAGE_CHARS)}
    if kind == K_BAD:
        return {"s": "bad_return", "msg": _clean_str(body.get("msg"), MAX_MESSAGE_CHARS)}
    raise ProtocolError(f"unexpected message kind {kind}")


def payload_cap(kind: int, value_cap: int) -> int:
    """Largest payload the parent reads for a message of ``kind``."""
    if kind == K_OK:
        return _ARR.size + 16 + MAX_NDIM * _DIM.size + value_cap * MAX_ITEMSIZE
    return TEXT_CAP


# ------------------------------------------------------------------ the child (student code)
class CallTimeout(BaseException):
    """Raised inside student code when a cell or an answer exceeds its own timer."""


def _on_alarm(signum, frame):
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


def _short(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(exc: BaseException) -> str:
    """``Type: message``; a student exception whose ``str`` fails still gets its type."""
    try:
        return _short(f"{type(exc).__name__}: {exc}")
    except BaseException:
        return _short(type(exc).__name__)


def _timed(seconds: float):
    _signal(signal.SIGALRM, _on_alarm)  # student code may have replaced or ignored it
    _setitimer(signal.ITIMER_REAL, max(seconds, 0.001))


def _untimed():
    _setitimer(signal.ITIMER_REAL, 0)


_FORKED = [False]  # set in the child when student code forks through Python (os.register_at_fork)


def _note_fork() -> None:
    _FORKED[0] = True


_reap_children = recycle.reap_children  # children student code forked that have exited


def _reseed() -> None:
    """Same global random state before every batch: a submission that draws from
    ``random`` or ``np.random`` gets the same outcomes on every grading."""
    random.seed(0)
    np.random.seed(0)


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = _read(fd, n - got)
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _read_order(fd: int):
    """Child side: the next order from the parent (a pickle; the parent is trusted)."""
    head = _read_exact(fd, _LEN.size)
    if head is None:
        return None
    body = _read_exact(fd, _LEN.unpack(head)[0])
    return None if body is None else pickle.loads(body)


def run_call(fn, args, kwargs, me: int) -> tuple[int, object]:
    """One call of student code: (K_OK, array) | (K_RAISED, body) | (K_BAD, body)."""
    try:
        try:
            result = fn(*args, **kwargs)
        finally:
            if _getpid() != me:  # a process the student forked: it must never reach the pipe
                _exit_now(0)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: student code
        return K_RAISED, {"exc": _exception_names(exc), "msg": _describe(exc)}
    finally:
        if _FORKED[0]:  # reaped after the call that forked (and after every batch, see _child_batch)
            _FORKED[0] = False
            _reap_children()
    try:
        return K_OK, _as_plain_array(result)
    except BaseException as exc:
        return K_BAD, {"msg": _short(f"could not read the returned value as numbers: {_describe(exc)}")}


def _within_cap(kind: int, body, cap: int | None, call: tuple) -> tuple[int, object]:
    """(kind, body), a returned array over its call's cap turned into a bad return.
    ``cap``: the most values allowed; None: computed from ``call``, the call's (args,
    kwargs), and only for a return longer than OUTPUT_SLACK (a closure per call would
    cost more)."""
    if kind == K_OK and body.size > OUTPUT_SLACK and body.size > (output_cap(*call) if cap is None else cap):
        return K_BAD, {"msg": f"returned {body.size} values, far more than the inputs allow"}
    return kind, body


def outcome_message(index: int, kind: int, body) -> bytes:
    """One outcome (already within its cap: :func:`_within_cap`) as a child -> parent
    message of its own."""
    payload = pack_array(body) if kind == K_OK else _dumps(body, ensure_ascii=True).encode()
    return _MSG.pack(kind, index, len(payload)) + payload


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

    def starting(self, index: int) -> None:
        _PROGRESS.pack_into(self.progress, 0, index)

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
            _write_all(self.fd, self.pending)
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


def _child_batch(namespace: dict, name: str, calls: list, watched: set, orders: int, out: int, inputs,
                 progress) -> None:
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
                order = _read_order(orders)  # ("go", {index: layout}): the parent placed their inputs
                if order is None:
                    _exit_now(0)
                layouts.update(order[1])
            args, kwargs = shared_arguments(args, kwargs, layouts.pop(index), inputs)
        if not callable(fn):  # still in the loop: the watched calls' orders must be read
            outbox.add(outcome_message(index, K_RAISED, {"exc": ["NameError"], "msg": f"{name} is not defined"}))
            continue
        kind, body = run_call(fn, args, kwargs, me)  # the call unpacks them into new ones
        kind, body = _within_cap(kind, body, None, (args, kwargs))
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
        except BaseException:
            value = None
        if value is None:
            _send_text(out, K_BAD, index, {"msg": "missing"})
        else:
            _write_all(out, outcome_message(index, *_within_cap(K_OK, value, MAX_ANSWER_ELEMENTS, ())))


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
        order = _read_order(orders)  # ("load", request size): nothing of the student's runs before it
        if order is None or order[0] != "load":
            return
        load_request = pickle.loads(inbox[:order[1]])
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
            _send_text(out, K_CELL, 0, {"id": cell_id, "line": message.get("line")})
            if cell_id != announced[0]:
                announced[0] = cell_id
                if _read_order(orders) is None:
                    _exit_now(0)

        loaded = cellexec.load_cells(load_request["cells"], load_request["kernels"], load_request["cell_timeout"],
                                     announce, timed=_timed, untimed=_untimed, timeout_exc=CallTimeout,
                                     request=load_request)
        namespace = loaded.pop("namespace")
        _send_text(out, K_LOADED, 0, {"cells": loaded["cells"], "found": loaded["found"]})
        while True:
            order = _read_order(orders)
            if order is None or order[0] == "exit":
                break
            if order[0] in ("batch", "preloaded"):  # (kind, blob size | name, kernel, watched call indices)
                calls = pickle.loads(inbox[:order[1]]) if order[0] == "batch" else preloaded[order[1]]
                _child_batch(namespace, order[2], calls, set(order[3]), orders, out, inputs, progress)
            elif order[0] == "values":
                _child_values(namespace, order[1], out)
    finally:
        _exit_now(0)


# ------------------------------------------------------------------ the parent (trusted)
POLL = 0.05                  # how often the parent looks at the child's clocks (s)
GATHER = 0.001               # while the child streams results, the parent reads them in bunches (s)
GATHER_AHEAD = 64            # ... unless a watched call (which waits for the parent) is this close
FLUSH_BYTES = 32 << 10       # the child writes its outcomes in bunches of this size ...
FLUSH_SECONDS = 0.002        # ... or at least this often while calls complete
CELL_GRACE = 2.0             # outside deadline of a cell = its own timer + this
ANSWER_WALL = 2.0            # outside deadline of one numerical answer
MIN_BATCH_CPU = 10.0         # CPU budget of a batch = max(this, calls x kernel_cpu_per_call)
BATCH_IDLE = 5               # a batch's calls together may be idle this many times idle_wall
INBOX_BYTES = 64 << 20       # a batch request (the corpus' largest is under 1 MB)
INPUT_BYTES = 16 << 20       # the inputs of one watched call
_ALIGN = 64
_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
DEFAULT_BUDGET = {"call_wall": 20.0, "kernel_cpu_per_call": 0.1, "kernel_timeout": 30.0, "wall_factor": 3.0,
                  "load_timeout": 60.0, "idle_wall": 2.0}
FATAL_CELL = "this cell stopped the grading process"
FATAL_STATEMENT = "this statement stopped the grading process"
UNSTARTED_RETRIES = 2       # a child lost before its first cell is forked again this many times
MAX_STATEMENTS_LEFT_OUT = 16  # .py statements left out of one load (each costs a reload; a
                              # notebook's cells are bounded by their number, as ever)


# Why the parent stopped a cell or statement: the entry's "reason" (the feedback says
# it in the submission's language, extract.LEFT_OUT).
LEFT_OUT_REASONS = ("stopped", "timed_out", "protocol", "load_cap", "left_out_cap", "idle")


def _left_out_entry(cell_id: str, line: int | None, reason: tuple[str, str]) -> dict:
    """A load report entry for a cell or statement the parent stopped or left out;
    ``reason`` is (one of LEFT_OUT_REASONS, an English message)."""
    what, message = reason
    return {"id": cell_id, "ok": False, "error": message, "line": line, "timed_out": what == "timed_out",
            "reason": what}


class ChildGone(Exception):
    """The child exited or was killed."""


def _harden_parent() -> None:
    """Not dumpable: a child cannot read the parent's memory or descriptors through
    /proc. Subreaper: orphans of the child are re-parented here, so they can be killed."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)    # PR_SET_DUMPABLE, 0
        libc.prctl(36, 1, 0, 0, 0)   # PR_SET_CHILD_SUBREAPER, 1
    except (OSError, AttributeError, ImportError):
        pass


def _stat_fields(pid: int) -> list[bytes] | None:
    """The fields of /proc/<pid>/stat after the command name (which may hold spaces and
    parentheses): state, ppid, ..., utime at [11], stime at [12]. None: no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2:].split()


def _proc_children(pid: int) -> list[int] | None:
    """Direct children of ``pid`` from /proc/<pid>/task/*/children (None: not available)."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as handle:
                found += [int(p) for p in handle.read().split()]
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            continue
    return found


def _scan_children(pid: int) -> list[int]:
    """Direct children of ``pid`` from a scan of every /proc/<n>/stat."""
    found = []
    for entry in os.listdir("/proc"):
        fields = _stat_fields(int(entry)) if entry.isdigit() else None
        if fields and len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(entry))
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (zombies included)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        children = _proc_children(current)
        if children is None:
            children = _scan_children(current)
        found += children
        todo += children
    return found


def kill_descendants(keep: int | None = None, rounds: int = 200) -> None:
    """SIGKILL every process below this one except ``keep``, until none is left (a fork
    bomb refills the tree while it is being killed; the pids cgroup bounds it)."""
    me = _getpid()
    for _ in range(rounds):
        alive = [p for p in descendants(me) if p != keep and _state(p) not in (b"Z", None)]
        if not alive:
            break
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap_children()
    _reap_children()


def _state(pid: int) -> bytes | None:
    fields = _stat_fields(pid)
    return fields[0] if fields else None


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (all its threads), from /proc/<pid>/stat."""
    fields = _stat_fields(pid)
    if not fields or len(fields) < 13:
        return None
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


class Child:
    """The parent's handle on one executor process."""

    def __init__(self, pid: int, orders: int, replies: int):
        self.pid = pid
        self.orders = orders          # parent -> child pipe (write end, non-blocking)
        self.replies = replies        # child -> parent pipe (read end, non-blocking)
        self.buffer = bytearray()
        try:
            self.pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self.pidfd = None

    def order(self, obj) -> None:
        """Send an order; a child that stopped reading its orders has broken the protocol."""
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            _write_all(self.orders, _LEN.pack(len(data)) + data)
        except BlockingIOError:
            raise ProtocolError("the child stopped reading its orders") from None
        except OSError:
            raise ChildGone() from None

    def exited(self) -> bool:
        if self.pidfd is not None:
            return bool(select.select([self.pidfd], [], [], 0)[0])
        return _state(self.pid) in (b"Z", None)

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
        while len(buffer) - offset >= _MSG.size:
            kind, index, length = _MSG.unpack_from(buffer, offset)
            if length > cap_for(kind, index):
                raise ProtocolError("oversized message")
            end = offset + _MSG.size + length
            if len(buffer) < end:
                break
            out.append((kind, index, bytes(buffer[offset + _MSG.size:end])))
            offset = end
        if offset:
            del buffer[:offset]
        return out

    def cpu(self) -> float:
        value = cpu_seconds(self.pid)
        return 0.0 if value is None else value

    def kill(self) -> None:
        """Kill the child, its group and everything below the parent; reap; close."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        kill_descendants()
        for fd in (self.orders, self.replies, self.pidfd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass


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
        self.out_of_time = False            # loading hit its wall-clock cap: no more children
        self.preloaded: dict[str, list] = {}  # name -> calls, given by the grader ahead of the batches
        self.blank: Child | None = None       # a child forked ahead of time, waiting for its cells
        self.keeper = os.getppid()            # the zygote (or bwrap's pid 1): its death ends the sandbox

    # ------------------------------------------------------------ grader side
    def reply(self, obj) -> None:
        """Write a reply, unless the sandbox is being killed (see :meth:`_sandbox_dying`)."""
        if self._sandbox_dying():
            self.stop_child()
            self.stop_blank()
            _exit_now(1)
        _write_all(self.reply_fd, encode(obj))

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
        self.inbox[:len(request)] = request  # fits: a submission is read only up to 16 MiB (grade/files.py)
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
            self.load_request = request
            self.budget = {**DEFAULT_BUDGET, **(request.get("budget") or {})}
            self.fatal = {}
            self.out_of_time = False
        self.stop_child()
        cells = [c for c in self.load_request["cells"] if isinstance(c, dict)]
        ids = {c.get("id") for c in cells}
        files = {c.get("id") for c in cells if self.cellexec.cell_kind(c) == "python"}
        cell_timeout = float(self.load_request["cell_timeout"])
        ce = self.cellexec  # per cell: its listed failures, each with a message and the ignored magics
        per_entry = MAX_MESSAGE_CHARS * 6 + 1024 + ce.MAX_IGNORED * (ce.MAX_MAGIC_NAME * 6 + 4)
        report_cap = (FRAME_OVERHEAD + len(cells) * (ce.MAX_LISTED_FAILURES + 1) * per_entry
                      + len(self.load_request["kernels"]) * 256)
        deadline = time.monotonic() + float(self.budget["load_timeout"])
        unstarted = 0  # children lost before their first cell (not the student's doing)
        while True:
            child = self.fork_child(self._cells_to_run(cells))
            current, cell_deadline, loaded, idled = None, math.inf, None, False
            watch = idle.IdleWatch(child.pid, float(self.budget["idle_wall"]))
            try:
                while loaded is None:
                    now = time.monotonic()
                    if now >= min(deadline, cell_deadline):
                        break
                    for kind, _, payload in child.messages(min(deadline, cell_deadline, now + POLL) - now,
                                                          lambda kind, _: report_cap if kind == K_LOADED else TEXT_CAP):
                        if kind == K_CELL:
                            announced = self._announced(_text(payload), ids, files)
                            new_cell = current is None or announced[0] != current[0]
                            current = announced
                            watch.reset()
                            # Each cell, and each statement of a .py file, has its own deadline.
                            cell_deadline = time.monotonic() + cell_timeout + CELL_GRACE
                            if new_cell:  # a cell's first announcement waits for the go-ahead
                                if forward:
                                    self.reply({"op": "cell", "id": current[0]})
                                child.order(("cell",))  # passed on: the child may run it
                        elif kind == K_LOADED:
                            loaded = self._loaded(_text(payload), ids)
                        else:
                            raise ProtocolError("unexpected message while loading")
                    if loaded is None and watch.sample(time.monotonic(), child.cpu(), idle.unread_bytes(child.replies) > 0):
                        idled = True
                        break
            except ChildGone:
                reason = ("stopped", FATAL_CELL if current is None or current[1] is None else FATAL_STATEMENT)
            except ProtocolError:
                reason = ("protocol", "this cell disturbed the grading process's communication")
            else:
                if loaded is not None:
                    self.child = child
                    return {**loaded, "cpu": round(child.cpu(), 3)}  # the cells' CPU (of this last load)
                what = "cell" if current is None or current[1] is None else "statement"
                reason = (("idle", f"the {what} slept or waited more than {self.budget['idle_wall']:g} s without running")
                          if idled else ("timed_out", f"the {what} ran longer than {cell_timeout:g} s"))
            child.kill()
            if time.monotonic() >= deadline:  # the cap on all cells: no more attempts
                self.out_of_time = True
                return self._unloaded(current, ("load_cap", f"the cells ran longer than {self.budget['load_timeout']:g} s in all"))
            if current is None:  # the child died before its first cell: none of the student's code ran
                unstarted += 1
                if unstarted > UNSTARTED_RETRIES:
                    return {**self._unloaded(None, reason), "unstarted": True}
                continue
            if current[1] is not None and sum(line is not None for _, line in self.fatal) >= MAX_STATEMENTS_LEFT_OUT:
                # a file built to be reloaded once per statement
                return self._unloaded(current, ("left_out_cap", f"more than {MAX_STATEMENTS_LEFT_OUT} statements were left out"))
            self.fatal[current] = reason

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
                cells.append({"id": cell["id"], "ok": cell.get("ok") is True,
                              "error": None if cell.get("ok") is True else _clean_str(cell.get("error"), MAX_MESSAGE_CHARS),
                              "line": cell.get("line") if type(cell.get("line")) is int else None,
                              "ignored": [_clean_str(x, ce.MAX_MAGIC_NAME) for x in (cell.get("ignored") or [])[:ce.MAX_IGNORED]
                                          if isinstance(x, str)],
                              "timed_out": cell.get("timed_out") is True})
        cells += self._left_out()
        found = body.get("found") if isinstance(body.get("found"), dict) else {}
        return {"op": "loaded", "cells": cells, "time_cap": False,
                "found": {k: found.get(k) is True for k in self.load_request["kernels"]}}

    def _unloaded(self, current, reason: tuple[str, str]) -> dict:
        cells = self._left_out()
        if current is not None and current not in self.fatal:
            cells.append(_left_out_entry(current[0], current[1], reason))
        return {"op": "loaded", "cells": cells, "time_cap": self.out_of_time,
                "found": {k: False for k in self.load_request["kernels"]}}

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
            self.inbox[:len(blob)] = blob
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
            self.inputs[at:at + len(raw)] = raw
        return layout, placed, offset

    def _mutated(self, placed) -> bool:
        return any(self.inputs[offset:offset + len(raw)] != raw for offset, raw in placed)

    def _run(self, child: Child, request: dict, source: tuple) -> OutcomeColumns:
        """Stream the batch through the child: one message per call; the watched calls'
        inputs placed in the shared buffer ahead, each in its own region, and compared
        when their outcome is read; the clocks looked at every POLL."""
        n, caps, watched_calls = request["n"], request["caps"], request["watched"]
        call_cpu = float(request["call_timeout"])
        batch_cpu = max(MIN_BATCH_CPU, n * float(self.budget["kernel_cpu_per_call"]))
        batch_wall = float(self.budget["kernel_timeout"]) + float(self.budget["wall_factor"]) * batch_cpu
        call_wall = float(self.budget["call_wall"])
        watched = sorted(watched_calls)
        watched_set = set(watched)
        pending = collections.deque(watched)  # watched calls not yet placed
        armed: dict[int, list] = {}  # watched call -> its inputs as placed in the shared buffer

        def arm_next_watched():
            """Once every armed call has been read: place as many of the next watched calls
            as fit, each in its own region, and let the child run them all (one order)."""
            layouts, offset = {}, 0
            while pending:
                args, kwargs = watched_calls[pending[0]]
                placed = self._place(args, kwargs, offset, first=not layouts)
                if placed is None:
                    break
                layouts[pending[0]], armed[pending.popleft()], offset = placed
            if layouts:
                child.order(("go", layouts))

        _PROGRESS.pack_into(self.progress, 0, 0)
        child.order((*source, request["kernel"], watched))
        arm_next_watched()
        outcomes = OutcomeColumns()
        start = time.monotonic()
        call_start, batch_cpu0 = start, child.cpu()
        timed_call, call_cpu0, last_check = 0, batch_cpu0, start
        watch = idle.IdleWatch(child.pid, float(self.budget["idle_wall"]))

        bunch_bounds: list[int] = []  # made at the first bunch (a batch may send none)
        caps_array = np.asarray(caps, dtype=np.float64)

        def cap_for(kind, index):
            if index >= n:
                return 0
            if kind == K_BUNCH:
                if not bunch_bounds:
                    bunch_bounds.extend(bunch_caps(caps))
                return bunch_bounds[index]
            return payload_cap(kind, caps[index]) if kind in (K_OK, K_RAISED, K_BAD) else 0

        while outcomes.n < n:
            for kind, index, payload in child.messages(POLL, cap_for):
                if index != outcomes.n:
                    raise ProtocolError("out of order")
                if kind == K_BUNCH:  # nearly every outcome
                    outcomes.add_bunch(check_bunch(payload, index, caps_array, watched))
                    continue
                if kind == K_OK and index not in watched_set:
                    outcomes.add_array(check_array(payload, caps[index]), False)
                    continue
                outcome = parse_outcome(kind, payload, caps[index])
                if index in watched_set:
                    placed = armed.pop(index, None)
                    if placed is None:  # the child cannot have run it: its inputs were never placed
                        raise ProtocolError("a watched call answered before its inputs were placed")
                    if outcome["s"] == "ok":
                        outcome["mut"] = self._mutated(placed)
                    if not armed:
                        arm_next_watched()
                outcomes.add(outcome)
            now = time.monotonic()
            if outcomes.n >= n or now - last_check < POLL:
                if outcomes.n < n and (not pending or pending[0] - outcomes.n > GATHER_AHEAD):
                    time.sleep(GATHER)  # fewer wake-ups: the child keeps writing meanwhile
                continue
            last_check = now
            cpu = child.cpu()
            running = self._running(outcomes.n, n)
            if timed_call != running:  # the call's clocks start at its first look
                timed_call, call_cpu0, call_start = running, cpu, now
                watch.reset()
            # The child waits for the parent while its outcomes lie unread in the pipe or
            # while the call it reached is a watched one whose inputs are not placed yet.
            waiting = idle.unread_bytes(child.replies) > 0 or bool(pending and pending[0] <= outcomes.n)
            idled = watch.sample(now, cpu, waiting) or watch.total > BATCH_IDLE * watch.limit
            outcomes.cpu = max(outcomes.cpu, cpu - batch_cpu0)
            if (idled or cpu - call_cpu0 > call_cpu or cpu - batch_cpu0 > batch_cpu
                    or now - call_start > call_wall or now - start > batch_wall):
                self.stop_child()
                self._cut(outcomes, n, "idle" if idled else "timeout")
        if self.child is child:
            outcomes.cpu = max(outcomes.cpu, child.cpu() - batch_cpu0)
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
        return min(max(_PROGRESS.unpack_from(self.progress)[0], received), n - 1)

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


def _read_preload(path: str) -> dict:
    """Unpickle the calls the grader will name in batch requests, before any child is
    forked, so every child inherits them (see the preload file above)."""
    import gc

    try:
        with open(path, "rb") as handle:
            preloaded = dict(pickle.load(handle))
    except FileNotFoundError:
        return {}
    gc.freeze()  # a child's collections skip them, and leave their pages shared
    return preloaded


def _answer_cap(kind: int, index: int) -> int:
    return payload_cap(K_OK, MAX_ANSWER_ELEMENTS) if kind == K_OK else TEXT_CAP


# The same as in recycle.py (the zygote's module, loaded by path inside the sandbox);
# the grader reads them here.
RECYCLE_FD_ENV = "M5_RECYCLE_FD"   # set by the grader: this worker is a recycling zygote
RECYCLED = b"R"                     # zygote -> grader, on the recycle pipe: clean, next parent forked


LAZY_NUMPY = ("numpy.ma",)  # what numpy imports on first use in common kernels (np.isin of an empty array)


def import_lazy_numpy() -> None:
    """Import LAZY_NUMPY now, before any fork: a fresh child importing numpy.ma spent
    about 20 ms of CPU on it (and on copying the pages the import touched) in every
    submission."""
    for name in LAZY_NUMPY:
        __import__(name)


def main() -> int:
    import_lazy_numpy()
    cellexec = _load_sibling("cellexec")
    _harden_parent()
    # The protocol gets private copies of stdin/stdout; the standard streams go nowhere.
    proto_in, proto_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    sys.stdin = open(os.devnull)
    sys.stdout = open(os.devnull, "w")
    signal.signal(signal.SIGALRM, _on_alarm)
    preloaded = _read_preload(os.path.join(os.path.dirname(os.path.abspath(__file__)), PRELOAD_FILE))
    recycle_fd = os.environ.get(RECYCLE_FD_ENV)
    if recycle_fd is None:
        return serve_parent(cellexec, proto_in, proto_out, preloaded)
    return recycle.zygote(lambda: serve_parent(cellexec, proto_in, proto_out, preloaded), proto_in,
                          int(recycle_fd), _load_sibling("files"))


def serve_parent(cellexec, proto_in: int, proto_out: int, preloaded: dict) -> int:
    """Be the trusted parent of one submission until the grader says exit."""
    reader = os.fdopen(proto_in, "rb", buffering=1 << 16, closefd=False)
    parent = Parent(cellexec, proto_out, (proto_in, proto_out))
    parent.preloaded = preloaded
    parent.blank = parent.fork_blank()

    def frames():
        while True:
            frame = read_frame(reader)
            if frame is None:
                return
            yield frame

    return parent.serve(frames())


if __name__ == "__main__":
    sys.exit(main())
