"""Attack (sandbox): at import, start 60 children, each in its own session, that spin
on the CPU forever, while every call of the submission itself stays within its limits.

Expected: the children share the CPU bandwidth of their own sandbox only (cgroup
cpu.max / CFS quota and weight): a neighbour graded at the same time still gets its CPU
share; all 60 die with the sandbox. ``M5_ATTACK_CHILDREN`` overrides the count.
"""

import os as _os

for _ in range(int(_os.environ.get("M5_ATTACK_CHILDREN", "60"))):
    try:
        if _os.fork() == 0:
            _os.setsid()
            while True:
                pass
    except OSError:
        break
