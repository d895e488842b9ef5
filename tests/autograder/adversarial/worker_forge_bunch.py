"""Attack: forge a well-formed bunch of outcomes ahead of the child's own.

iql_advantage_weights counts its calls and, on each one, writes into every pipe it can
reach a K_BUNCH message (the column format the child uses for plain array outcomes)
claiming an all-ones answer for this call and the 63 after it, before returning the
honest answer. The worker's parent takes messages in call order only: whatever it makes
of the forgery, the child's own outcome for a call it already holds breaks the
exchange, so the kernel is lost for breaking the protocol and nothing else changes.
"""

import os
import struct

import numpy as np

_honest_iql = iql_advantage_weights  # noqa: F821 - defined by the correct code above
_F8 = 3  # index of "<f8" in the worker's sorted wire dtypes
_calls = [0]


def _forged_bunch(first, shapes):
    k = len(shapes)
    dims = [d for shape in shapes for d in shape]
    values = b"".join(np.ones(shape).tobytes() for shape in shapes)
    payload = struct.pack(">I", k) + bytes([_F8] * k) + bytes(len(s) for s in shapes) + struct.pack(f">{len(dims)}Q", *dims) + values
    return struct.pack(">BIQ", 6, first, len(payload)) + payload


def iql_advantage_weights(advantages, beta, max_weight=100.0):
    shape = np.shape(advantages)
    message = _forged_bunch(_calls[0], [shape] * 64)
    _calls[0] += 1
    for fd in os.listdir("/proc/self/fd"):
        try:
            if "pipe:" in os.readlink(f"/proc/self/fd/{fd}"):
                os.write(int(fd), message)
        except OSError:
            pass
    return _honest_iql(advantages, beta, max_weight)
