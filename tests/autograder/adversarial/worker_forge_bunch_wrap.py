"""Attack: a bunch whose dims multiply to 2**64 (0 once wrapped in 64-bit integers).

iql_advantage_weights writes into every pipe it can reach a K_BUNCH message for one
outcome of shape (2**32, 2**32) with no values after it: a size check done in machine
integers would see 0 values and accept the empty payload as that outcome. The worker's
parent refuses the message (every dim above the array cap), so the kernel is lost for
breaking the protocol and nothing else changes.
"""

import os
import struct

_honest_iql = iql_advantage_weights  # noqa: F821 - defined by the correct code above
_F8 = 3  # index of "<f8" in the worker's sorted wire dtypes


def iql_advantage_weights(advantages, beta, max_weight=100.0):
    payload = struct.pack(">I", 1) + bytes([_F8, 2]) + struct.pack(">2Q", 1 << 32, 1 << 32)
    message = struct.pack(">BIQ", 6, 0, len(payload)) + payload
    for fd in os.listdir("/proc/self/fd"):
        try:
            if "pipe:" in os.readlink(f"/proc/self/fd/{fd}"):
                os.write(int(fd), message)
        except OSError:
            pass
    return _honest_iql(advantages, beta, max_weight)
