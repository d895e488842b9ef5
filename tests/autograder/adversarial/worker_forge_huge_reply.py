"""Attack: flood the grading pipes with a forged 256 MB reply.

iql_advantage_weights writes, into every pipe it can reach, a message head claiming a
256 MB payload, a grader frame head claiming as much, and then a megabyte of it
(blocking writes: the parent must read the head to get past it). The worker's parent refuses
the oversized head unread, so the kernel is lost for breaking the protocol and nothing
else changes; the grader never sees more than a capped reply.
"""

import os
import struct

_honest_iql = iql_advantage_weights  # noqa: F821 - defined by the correct code above
_HUGE = 256 << 20


def _flood(fd):
    head = struct.pack(">Q", _HUGE) + struct.pack(">I", _HUGE - 4)  # a grader frame head
    message = struct.pack(">BIQ", 1, 0, _HUGE)  # a child message head
    for chunk in (message, head, b"\xff" * (1 << 20)):
        try:
            os.write(fd, chunk)
        except OSError:
            return


def iql_advantage_weights(advantages, beta, max_weight=100.0):
    for fd in os.listdir("/proc/self/fd"):
        try:
            if "pipe:" in os.readlink(f"/proc/self/fd/{fd}"):
                _flood(int(fd))
        except OSError:
            pass
    return _honest_iql(advantages, beta, max_weight)
