"""The grader <-> worker wire: frames, the codec, reply limits, and what both ends agree on.

The grader imports this module (``autograder.grade.worker.wire``); inside the sandbox the
worker's parent loads the same file as part of its own package, so both ends share one
definition. It imports only the standard library and numpy.

Frames, both directions: ``u64 length`` + payload. Grader -> worker payloads are
pickles (fast for thousands of small arrays; only the worker unpickles). Worker ->
grader payloads are ``u32 header length`` + JSON header + one binary blob; arrays
inside the header are ``{"__nd__": [offset, nbytes, dtype, shape]}`` references into
the blob, so outcomes cross as plain numeric bytes (never pickle); an outcomes reply
carries its arrays as columns (:class:`OutcomeColumns`). The grader decodes with
``trusted=False`` and caps every frame with :func:`reply_limits`.
"""

from __future__ import annotations

import fcntl
import json
import math
import pickle
import struct

import numpy as np

_dumps = json.dumps  # taken before any student code runs (it may monkeypatch json)
_loads = json.loads

MAX_FRAME = 256 << 20  # no message may exceed this (grader side check)
PRELOAD_FILE = "preload.pkl"
MAX_ARRAY_ELEMENTS = 1 << 24
SAFE_KINDS = "biuf"
LENGTH = struct.Struct(">Q")
_HDR = struct.Struct(">I")
_PICKLED = b"\x80"  # a JSON-codec payload starts with its u32 header length, never 0x80
_DTYPES: dict = {}


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
    return b"".join([LENGTH.pack(_HDR.size + len(header) + offset), _HDR.pack(len(header)), header, *chunks])


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
        if type(value) is RawArray and outcome.keys() == {"s", "v", "mut"} and outcome["s"] == "ok" and type(outcome["mut"]) is bool:
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
        cols = {
            "values": walk(RawArray("|u1", (len(values),), values)),
            "index": walk(np.asarray(self.index, dtype=np.int64)),
            "code": walk(np.asarray(self.code, dtype=np.uint8)),
            "ndim": walk(np.asarray(self.ndim, dtype=np.uint8)),
            "mut": walk(np.asarray(self.mut, dtype=np.uint8)),
            "dims": walk(np.asarray(self.dims, dtype=np.int64)),
        }
        return {"op": "outcomes", "n": self.n, "cols": cols, "others": [[i, walk(o)] for i, o in self.others], "cpu": round(self.cpu, 3)}


def _outcomes_from_columns(header: dict, array, trusted: bool) -> list:
    """The outcome dicts of a columns reply, every field checked (the grader decodes
    untrusted frames: anything inconsistent is a WireError)."""
    n, cols, others = header.get("n"), header.get("cols"), header.get("others")
    if type(n) is not int or not 0 <= n <= MAX_ARRAY_ELEMENTS or type(cols) is not dict or type(others) is not list:
        raise WireError("bad outcomes columns")
    try:
        values, index, code, ndim, mut, dims = (array(cols[k]["__nd__"]) for k in ("values", "index", "code", "ndim", "mut", "dims"))
    except (KeyError, TypeError) as exc:
        raise WireError(f"bad outcomes columns: {exc}") from None
    _check_columns(n, values, index, code, ndim, mut, dims)
    if n != len(index) + len(others):  # every outcome is a column row or a JSON entry: n is what the frame holds
        raise WireError("outcome count does not match the frame")
    out: list = [None] * n
    _column_outcomes(out, values, index, code, ndim, mut, dims, trusted)
    _other_outcomes(out, others)
    return out


def _check_columns(n: int, values, index, code, ndim, mut, dims) -> None:
    """The columns' dtypes, shapes and ranges (their rows point inside the ``n`` outcomes,
    in order, with wire dtype codes, at most MAX_NDIM dims each, and dims that add up)."""
    k = len(index)
    if (
        values.dtype != np.uint8
        or values.ndim != 1
        or index.dtype != np.int64
        or dims.dtype != np.int64
        or any(c.dtype != np.uint8 or c.shape != (k,) for c in (code, ndim, mut))
        or index.ndim != 1
        or dims.ndim != 1
    ):
        raise WireError("bad outcomes columns")
    if k and (
        index.min() < 0
        or index.max() >= n
        or (k > 1 and (np.diff(index) <= 0).any())
        or code.max() >= len(WIRE_DTYPES)
        or ndim.max() > MAX_NDIM
        or mut.max() > 1
    ):
        raise WireError("bad outcomes columns")
    if int(ndim.sum()) != len(dims) or (len(dims) and (dims.min() < 0 or dims.max() > MAX_ARRAY_ELEMENTS)):
        raise WireError("bad outcome shapes")


def _column_outcomes(out: list, values, index, code, ndim, mut, dims, trusted: bool) -> None:
    """Fill ``out`` with the columns' outcomes, each value a view of (or, ``trusted``, a
    copy from) its part of ``values``, which they must fill exactly."""
    dtypes = [NATIVE_DTYPES[c] for c in WIRE_DTYPES]
    flat, offset, at = dims.tolist(), 0, 0
    for i, c, d, m in zip(index.tolist(), code.tolist(), ndim.tolist(), mut.tolist()):
        shape = tuple(flat[at : at + d])
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


def _other_outcomes(out: list, others: list) -> None:
    """Fill the rest of ``out`` with the JSON outcomes: each exactly one free place."""
    for entry in others:
        if (
            type(entry) is not list
            or len(entry) != 2
            or type(entry[0]) is not int
            or not 0 <= entry[0] < len(out)
            or out[entry[0]] is not None
            or type(entry[1]) is not dict
        ):
            raise WireError("bad outcome entry")
        out[entry[0]] = entry[1]
    if any(o is None for o in out):
        raise WireError("an outcome is missing")


def _is_outcomes_reply(obj, kind: type = list) -> bool:
    return type(obj) is dict and obj.keys() == {"op", "outcomes"} and obj["op"] == "outcomes" and type(obj["outcomes"]) is kind


def encode_request(obj) -> bytes:
    """Grader -> worker frames: pickle, which is fast for thousands of small arrays.

    Only the worker ever unpickles, and it trusts the grader; the grader never
    unpickles anything (``decode(..., trusted=False)`` refuses pickle frames).
    """
    payload = _PICKLED + pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return LENGTH.pack(len(payload)) + payload


def decode(payload: bytes, *, trusted: bool = True):
    """Inverse of :func:`encode` / :func:`encode_request` (without the length prefix)."""
    if payload[:1] == _PICKLED:
        if not trusted:
            raise WireError("refused a pickle frame from an untrusted sender")
        return pickle.loads(payload[1:])
    header, blob = _split_frame(payload)
    arrays = _ArrayRefs(blob, trusted)
    if type(header) is dict and header.get("op") == "outcomes" and "cols" in header:
        others = header.get("others")
        if type(others) is list:  # as in the list form below: only an outcome's value may be an array
            arrays.walk({"op": "outcomes", "outcomes": [e[1] for e in others if type(e) is list and len(e) == 2]})
        return {"op": "outcomes", "outcomes": _outcomes_from_columns(header, arrays.array, trusted), "cpu": header.get("cpu")}
    return arrays.walk(header)


def _split_frame(payload: bytes):
    """(the JSON header, a view of the blob) of an :func:`encode` payload."""
    if len(payload) < _HDR.size:
        raise WireError("truncated frame")
    (hlen,) = _HDR.unpack_from(payload)
    if hlen > len(payload) - _HDR.size:
        raise WireError("header longer than frame")
    try:
        header = _loads(payload[_HDR.size : _HDR.size + hlen])
    except ValueError as exc:
        raise WireError(f"bad header: {exc}") from None
    return header, memoryview(payload)[_HDR.size + hlen :]


class _ArrayRefs:
    """The arrays a decoded header refers to in its frame's blob (``{"__nd__": [offset,
    nbytes, dtype, shape]}``), each checked against the blob (and, untrusted, against
    the dtypes and sizes that may cross)."""

    def __init__(self, blob: memoryview, trusted: bool):
        self.blob, self.trusted = blob, trusted

    def walk(self, x):
        if _is_outcomes_reply(x):
            # Thousands of outcomes: only their values can hold arrays (anything else a
            # forged reply hides in other fields stays plain JSON, never an array).
            for outcome in x["outcomes"]:
                value = outcome.get("v") if type(outcome) is dict else None
                if type(value) is dict:
                    ref = value.get("__nd__")
                    outcome["v"] = self.array(ref) if len(value) == 1 and type(ref) is list else self.walk(value)
            return x
        if isinstance(x, dict):
            if "__nd__" in x and len(x) == 1:
                return self.array(x["__nd__"])
            return {k: self.walk(v) for k, v in x.items()}
        if isinstance(x, list):
            return [self.walk(v) for v in x]
        return x

    def array(self, ref):
        try:
            offset, nbytes, dtype, shape = ref
            dt = _DTYPES.get(dtype) or _DTYPES.setdefault(dtype, np.dtype(dtype))
            shape = tuple(map(int, shape))
        except (TypeError, ValueError) as exc:
            raise WireError(f"bad array reference: {exc}") from None
        count = math.prod(shape)
        if not self.trusted:
            if dt.kind not in SAFE_KINDS or dt.hasobject or dt.itemsize > 16:
                raise WireError(f"refused dtype {dt}")
            if any(s < 0 for s in shape) or count > MAX_ARRAY_ELEMENTS:
                raise WireError(f"refused shape {shape}")
        if not (offset >= 0 and offset + nbytes <= len(self.blob)) or nbytes != dt.itemsize * count:
            raise WireError("array reference outside the blob")
        arr = np.frombuffer(self.blob, dt, count, offset).reshape(shape)
        # The worker hands arrays to student code, which may write into them: give it copies.
        # The grader only reads: read-only views suffice.
        return arr.copy() if self.trusted else arr


def read_frame(stream):
    """Blocking read of one frame from a binary stream (worker side)."""
    head = stream.read(LENGTH.size)
    if len(head) < LENGTH.size:
        return None
    (n,) = LENGTH.unpack(head)
    return stream.read(n)


# ------------------------------------------------------------------ reply limits
# What a call may legitimately hand back: every graded kernel returns at most as many
# values as its inputs hold (a scalar at least). The cap is a small multiple of that, so
# no correct kernel ever meets it, and both ends use it: the parent refuses a bigger
# return (a bad_return for that call), the grader refuses a bigger frame (a lost kernel).
OUTPUT_FACTOR = 4
OUTPUT_SLACK = 64
MAX_ITEMSIZE = 16  # the widest numeric dtype that crosses (complex is refused)
MAX_EXC_NAMES = 12  # exception type names kept per raised outcome
MAX_NAME_CHARS = 80
MAX_MESSAGE_CHARS = 300
OUTCOME_HEADER_BYTES = 4096  # the JSON of one outcome, its message escaped at worst
FRAME_OVERHEAD = 64 << 10
MAX_ANSWER_ELEMENTS = 4096  # a numerical answer is a number or a short list
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
    form = {
        "op": "call",
        "kernel": request["kernel"],
        "call_timeout": request.get("call_timeout", 2.0),
        "n": len(calls),
        "caps": [output_cap(args, kwargs) for args, kwargs in calls],
        "watched": {i: calls[i] for i in watched},
    }
    if ref is None:
        form["calls_blob"] = pickle.dumps(calls, protocol=pickle.HIGHEST_PROTOCOL)
    else:
        form["ref"] = ref
    return form


# ------------------------------------------------------------------ wire dtypes
MAX_NDIM = 32
# Numeric dtypes in this machine's byte order: the only ones a child may hand back.
NATIVE_DTYPES = {
    d.str: d
    for d in map(
        np.dtype,
        (
            np.bool_,
            np.int8,
            np.int16,
            np.int32,
            np.int64,
            np.uint8,
            np.uint16,
            np.uint32,
            np.uint64,
            np.float16,
            np.float32,
            np.float64,
            np.longdouble,
        ),
    )
    if d.itemsize <= MAX_ITEMSIZE
}
# Outcome columns (see OutcomeColumns): dtype codes, and the blob bytes per outcome.
WIRE_DTYPES = sorted(NATIVE_DTYPES)
_WIRE_CODE = {code: i for i, code in enumerate(WIRE_DTYPES)}
COLUMN_BYTES = 11 + 8 * MAX_NDIM  # the most blob bytes the columns take per outcome


class RawArray:
    """A plain numeric array as the child handed it over: dtype string, shape, bytes."""

    __slots__ = ("dtype", "shape", "data")

    def __init__(self, dtype: str, shape: tuple, data):
        self.dtype, self.shape, self.data = dtype, shape, data


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


# ------------------------------------------------------------------ what the grader and the parent agree on
ANSWER_WALL = 2.0  # outside deadline of one numerical answer
MIN_BATCH_CPU = 10.0  # CPU budget of a batch = max(this, calls x kernel_cpu_per_call)
BATCH_IDLE = 5  # a batch's calls together may be idle this many times idle_wall
DEFAULT_BUDGET = {
    "call_wall": 20.0,
    "kernel_cpu_per_call": 0.1,
    "kernel_timeout": 30.0,
    "wall_factor": 3.0,
    "load_timeout": 60.0,
    "idle_wall": 2.0,
}
FATAL_CELL = "this cell stopped the grading process"
FATAL_STATEMENT = "this statement stopped the grading process"
# The same as in recycle.py (the zygote's module, which imports nothing of the package);
# the grader reads them here.
RECYCLE_FD_ENV = "M5_RECYCLE_FD"  # set by the grader: this worker is a recycling zygote
RECYCLED = b"R"  # zygote -> grader, on the recycle pipe: clean, next parent forked
