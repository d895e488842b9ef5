"""The grading worker: runs a student's code, and nothing else, inside the sandbox.

This file is copied alone into the sandbox's scratch folder and run there as a
script, so it imports only the standard library and numpy (the packages
``autograder`` and ``reference_impl`` are not visible to it). The grader imports the
same file for the wire codec, so both ends speak one format.

Wire format, both directions: frames of ``u64 length`` + payload, where payload is
``u32 header length`` + JSON header + one binary blob. Arrays inside the header are
``{"__nd__": [offset, nbytes, dtype, shape]}`` references into the blob, so outcomes
cross as plain numeric bytes (never pickle). The grader decodes with
``trusted=False``: only numeric and bool dtypes, bounded sizes.

Requests (grader -> worker)
  {"op": "load", "cells": [{"id", "source"}], "kernels": [...], "cell_timeout": s}
      -> {"op": "cell", "id"} before each cell, then
         {"op": "loaded", "cells": [{"id", "ok", "error"}], "found": {kernel: bool}}
  {"op": "call", "kernel": name, "calls": [[args, kwargs], ...], "call_timeout": s,
   "watch": [indices of calls checked for writes into their inputs] (absent: all)}
      -> {"op": "outcomes", "outcomes": [outcome, ...]}
  {"op": "values", "names": [...]}
      -> {"op": "values", "values": {name: array | None}}   (numerical answers)
  {"op": "exit"}
Outcome: {"s": "ok", "v": array, "mut": bool} | {"s": "raised", "exc": [type names
of the MRO], "msg": str} | {"s": "timeout"} | {"s": "bad_return", "msg": str}
"""
from __future__ import annotations

import json
import math
import os
import pickle
import random
import signal
import struct
import sys

import numpy as np

# Student code shares this process and may monkeypatch modules (json.dumps,
# np.array_equal, ...). The worker's own checks use references taken here, before any
# student code runs, and compare raw bytes (ndarray.tobytes cannot be patched).
_dumps = json.dumps
_loads = json.loads
_getpid = os.getpid
_exit_now = os._exit
_setitimer = signal.setitimer
_signal = signal.signal

MAX_FRAME = 256 << 20          # no message may exceed this (grader side check)
ANSWER_TIMEOUT = 0.1           # seconds to read one numerical answer (the grader waits 2 x call_timeout for all)
MAX_ARRAY_ELEMENTS = 1 << 24
SAFE_KINDS = "biuf"
_LEN = struct.Struct(">Q")
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


# ------------------------------------------------------------------ codec
class WireError(Exception):
    """A malformed or oversized frame."""


def encode(obj) -> bytes:
    """Serialize JSON-like data holding numpy arrays into one framed payload."""
    chunks: list[bytes] = []
    offset = 0

    def walk(x):
        nonlocal offset
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

    header = _dumps(walk(obj), allow_nan=True, separators=(",", ":")).encode()
    blob = b"".join(chunks)
    payload = _HDR.pack(len(header)) + header + blob
    return _LEN.pack(len(payload)) + payload


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
        arr = np.frombuffer(blob, dtype=dt, count=count, offset=offset).reshape(shape)
        # The worker hands arrays to student code, which may write into them: give it copies.
        # The grader only reads: read-only views suffice.
        return arr.copy() if trusted else arr

    return walk(header)


def read_frame(stream):
    """Blocking read of one frame from a binary stream (worker side)."""
    head = stream.read(_LEN.size)
    if len(head) < _LEN.size:
        return None
    (n,) = _LEN.unpack(head)
    return stream.read(n)


# ------------------------------------------------------------------ worker
class CallTimeout(BaseException):
    """Raised inside student code when one call exceeds its time budget."""


def _on_alarm(signum, frame):
    raise CallTimeout()


def _as_plain_array(value):
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
    return [cls.__name__ for cls in type(exc).__mro__ if cls not in (object,)]


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _timed(seconds: float):
    _signal(signal.SIGALRM, _on_alarm)  # student code may have replaced or ignored it
    _setitimer(signal.ITIMER_REAL, max(seconds, 0.001))


def _untimed():
    _setitimer(signal.ITIMER_REAL, 0)


def _snapshot(arr: np.ndarray) -> tuple:
    return arr.shape, arr.dtype.str, arr.tobytes()


def _reap_children() -> None:
    """Collect children that student code forked and that have exited (no zombies)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        except OSError:
            return
        if pid == 0:
            return


def _reseed() -> None:
    """Same global random state before every batch: a submission that draws from
    ``random`` or ``np.random`` gets the same outcomes on every grading."""
    random.seed(0)
    np.random.seed(0)


def run_call(fn, args, kwargs, timeout: float, watch_inputs: bool = True) -> dict:
    """One call of student code. ``watch_inputs`` snapshots the array arguments to
    report whether the call wrote into them (only the no-mutation property asks)."""
    inputs = [a for a in args if isinstance(a, np.ndarray)] if watch_inputs else []
    before = [_snapshot(a) for a in inputs]
    me = _getpid()
    try:
        _timed(timeout)
        try:
            result = fn(*args, **kwargs)
        finally:
            if _getpid() != me:  # a process the student forked: it must never reach the pipe
                _exit_now(0)
            _untimed()
    except CallTimeout:
        return {"s": "timeout"}
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: student code
        return {"s": "raised", "exc": _exception_names(exc), "msg": _short(f"{type(exc).__name__}: {exc}")}
    finally:
        _reap_children()
    try:
        _timed(timeout)
        try:
            value = _as_plain_array(result)
        finally:
            _untimed()
    except CallTimeout:
        return {"s": "timeout"}
    except BaseException as exc:
        return {"s": "bad_return", "msg": _short(f"could not read the returned value as numbers: {exc}")}
    mutated = any(_snapshot(a) != b for a, b in zip(inputs, before))
    return {"s": "ok", "v": value, "mut": mutated}


def main() -> int:
    cellexec = _load_sibling("cellexec")
    # The protocol gets private copies of stdin/stdout; the student's prints go nowhere.
    proto_in = os.fdopen(os.dup(0), "rb", buffering=1 << 16)
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    sys.stdin = open(os.devnull)
    sys.stdout = open(os.devnull, "w")
    signal.signal(signal.SIGALRM, _on_alarm)

    def send(obj):
        proto_out.write(encode(obj))

    namespace: dict = {}
    while True:
        frame = read_frame(proto_in)
        if frame is None:
            return 0
        request = decode(frame)
        op = request.get("op")
        if op == "load":
            _reseed()
            loaded = cellexec.load_cells(request["cells"], request["kernels"], request.get("cell_timeout", 10.0), send,
                                         timed=_timed, untimed=_untimed, timeout_exc=CallTimeout)
            namespace = loaded.pop("namespace")
            send(loaded)
        elif op == "call":
            _reseed()
            fn = namespace.get(request["kernel"])
            timeout = float(request.get("call_timeout", 5.0))
            watched = request.get("watch")  # indices of calls whose inputs are watched; None = all
            watched = None if watched is None else set(watched)
            outcomes = []
            timed_out = False
            for args, kwargs in request["calls"]:
                if timed_out:  # one hung call already fails the kernel; spare the rest
                    outcomes.append({"s": "timeout"})
                    continue
                if not callable(fn):
                    outcomes.append({"s": "raised", "exc": ["NameError"], "msg": f"{request['kernel']} is not defined"})
                    continue
                watch = watched is None or len(outcomes) in watched
                outcomes.append(run_call(fn, tuple(args), dict(kwargs), timeout, watch))
                timed_out = outcomes[-1]["s"] == "timeout"
            send({"op": "outcomes", "outcomes": outcomes})
        elif op == "values":
            values = {}
            for name in request["names"]:
                try:  # a number converts at once; a stalling __array__ costs only its own answer
                    _timed(ANSWER_TIMEOUT)
                    try:
                        values[name] = _as_plain_array(namespace[name]) if name in namespace else None
                    finally:
                        _untimed()
                except BaseException:
                    values[name] = None
            send({"op": "values", "values": values})
        elif op == "exit":
            return 0


if __name__ == "__main__":
    sys.exit(main())
