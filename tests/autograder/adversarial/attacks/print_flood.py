"""Attack: print hundreds of megabytes at import, and a megabyte on every call.

Output goes nowhere (stdout) or into a size-capped log (stderr); the kernels are right.
"""

import os
import sys

_block = "x" * (1 << 20)
for _ in range(300):  # 300 MB on stdout
    sys.stdout.write(_block)
try:
    for _ in range(100):  # 100 MB on stderr: the file-size cap stops it with an error
        sys.stderr.write(_block)
        sys.stderr.flush()
except OSError:
    pass
try:
    os.write(1, b"y" * (64 << 20))
except OSError:
    pass

_honest_pessimistic = pessimistic_values  # noqa: F821 - defined by the correct code above


def pessimistic_values(empirical_means, counts, *, radius_scale=1.0):
    print(_block)
    return _honest_pessimistic(empirical_means, counts, radius_scale=radius_scale)
