"""Child -> parent messages inside the sandbox, and the parent's orders to the child.

The child (untrusted) packs each outcome as a message; the parent (trusted) checks
every head against a cap before it reads the payload, and every payload against its
call's output cap, then hands the validated bytes on to the grader unchanged.
"""

from __future__ import annotations

import bisect
import json
import math
import os
import pickle
import struct

import numpy as np

from .wire import (
    LENGTH,
    MAX_ARRAY_ELEMENTS,
    MAX_EXC_NAMES,
    MAX_ITEMSIZE,
    MAX_MESSAGE_CHARS,
    MAX_NAME_CHARS,
    MAX_NDIM,
    NATIVE_DTYPES,
    WIRE_DTYPES,
    RawArray,
)

# Taken before any student code runs: student code in the child may monkeypatch modules
# (json.dumps, os.write, ...); the child's protocol code keeps working with these.
# (Nothing trusted depends on them: the checks run in the parent.)
_dumps = json.dumps
_loads = json.loads
_write = os.write
_read = os.read

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
MESSAGE_HEADER = struct.Struct(">BIQ")
_ARR = struct.Struct(">BB")  # dtype string length, ndim
_DIM = struct.Struct(">Q")
TEXT_CAP = 16 << 10  # a raised / bad_return / cell message
_CODE_OF_DTYPE = {NATIVE_DTYPES[code]: i for i, code in enumerate(WIRE_DTYPES)}  # a dict lookup, not dtype.str
_ITEMSIZES = np.array([NATIVE_DTYPES[code].itemsize for code in WIRE_DTYPES], dtype=np.int64)
_COUNT = struct.Struct(">I")
BUNCH_ROW_BYTES = 2 + 8 * MAX_NDIM  # a bunch's bytes per outcome besides its values, at most


PROGRESS_WORD = struct.Struct("<Q")  # the progress word: index of the call the child is running


class ProtocolError(Exception):
    """The child broke the protocol (malformed, oversized or out-of-order message)."""


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[_write(fd, view) :]


def _send_message(fd: int, kind: int, index: int, payload: bytes) -> None:
    write_all(fd, MESSAGE_HEADER.pack(kind, index, len(payload)) + payload)


def send_text(fd: int, kind: int, index: int, obj) -> None:
    _send_message(fd, kind, index, _dumps(obj, ensure_ascii=True).encode())


def pack_array(arr: np.ndarray) -> bytes:
    """Child side: dtype, shape and raw bytes of a plain numeric array (native order)."""
    dtype, ndim = arr.dtype, arr.ndim
    head = _PACK_HEADS.get((dtype, ndim))  # (dtype.str alone costs a microsecond)
    if head is None:
        code = dtype.str
        if code in NATIVE_DTYPES:  # a few (dtype, ndim) pairs occur: their heads are made once
            head = _PACK_HEADS[(dtype, ndim)] = _pack_head(code, ndim)
        else:
            arr = arr.astype(dtype.newbyteorder("="))
            head = _pack_head(arr.dtype.str, ndim)
    return head[0] + head[1].pack(*arr.shape) + arr.tobytes()  # C order


def _pack_head(code: str, ndim: int) -> tuple[bytes, struct.Struct]:
    return _ARR.pack(len(code), ndim) + code.encode(), struct.Struct(f">{ndim}Q")


_PACK_HEADS: dict = {}


def check_array(payload: bytes, cap: int) -> RawArray:
    """Parent side: the inverse of :func:`pack_array`, refusing anything but a plain
    numeric array of at most ``cap`` values that fills the payload exactly."""
    if len(payload) < _ARR.size:
        raise ProtocolError("truncated array")
    code_len, ndim = _ARR.unpack_from(payload)
    if ndim > MAX_NDIM:
        raise ProtocolError("too many dimensions")
    start = _ARR.size + code_len
    code = payload[_ARR.size : start].decode("ascii", "replace")
    dtype = NATIVE_DTYPES.get(code)
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
        return MESSAGE_HEADER.pack(K_BUNCH, self.first, len(payload)) + payload


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
    if (counts > caps[first : first + k]).any():
        raise ProtocolError("array size does not match")
    if int((counts.astype(np.int64) * _ITEMSIZES[codes]).sum()) != len(payload) - values_at:
        raise ProtocolError("array size does not match")
    return k, payload[_COUNT.size : _COUNT.size + k], ranks, dims, memoryview(payload)[values_at:]


def unpack_array(payload: bytes, cap: int) -> np.ndarray:
    """:func:`check_array` as a (read-only) numpy array."""
    raw = check_array(payload, cap)
    return np.frombuffer(raw.data, dtype=NATIVE_DTYPES[raw.dtype]).reshape(raw.shape)


def decode_text(payload: bytes) -> dict:
    try:
        obj = _loads(payload)
    except (ValueError, RecursionError):
        raise ProtocolError("bad text message") from None
    if not isinstance(obj, dict):
        raise ProtocolError("bad text message")
    return obj


def clean_str(value, limit: int) -> str:
    return shortened(value, limit) if isinstance(value, str) else ""


def parse_outcome(kind: int, payload: bytes, cap: int) -> dict:
    """Parent side: one call's outcome from a child message, validated and bounded."""
    if kind == K_OK:
        return {"s": "ok", "v": check_array(payload, cap), "mut": False}
    body = decode_text(payload)
    if kind == K_RAISED:
        names = body.get("exc")
        names = [clean_str(n, MAX_NAME_CHARS) for n in names[:MAX_EXC_NAMES]] if isinstance(names, list) else []
        return {"s": "raised", "exc": names, "msg": clean_str(body.get("msg"), MAX_MESSAGE_CHARS)}
    if kind == K_BAD:
        return {"s": "bad_return", "msg": clean_str(body.get("msg"), MAX_MESSAGE_CHARS)}
    raise ProtocolError(f"unexpected message kind {kind}")


def payload_cap(kind: int, value_cap: int) -> int:
    """Largest payload the parent reads for a message of ``kind``."""
    if kind == K_OK:
        return _ARR.size + 16 + MAX_NDIM * _DIM.size + value_cap * MAX_ITEMSIZE
    return TEXT_CAP


def shortened(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = _read(fd, n - got)
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_order(fd: int):
    """Child side: the next order from the parent (a pickle; the parent is trusted)."""
    head = _read_exact(fd, LENGTH.size)
    if head is None:
        return None
    body = _read_exact(fd, LENGTH.unpack(head)[0])
    return None if body is None else pickle.loads(body)
