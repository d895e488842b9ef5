"""Attack (sandbox): at import, build a 1000-deep directory chain in the working
directory (with a file at the bottom and the directories made unreadable), the
shape that made a recursive cleanup raise RecursionError and leave the tree behind.

Expected: every kernel keeps 10/10; nothing of the chain survives the run (the
sandbox's scratch is a private tmpfs; the fallback's private tree is removed without
recursion).
"""

import os as _os

_base = _os.open(".", _os.O_RDONLY)
_depth = 0
try:
    _here = _os.open(".", _os.O_RDONLY)
    for _depth in range(1000):
        _os.mkdir("d", dir_fd=_here)
        _next = _os.open("d", _os.O_RDONLY, dir_fd=_here)
        _os.close(_here)
        _here = _next
    with open(_os.open("bottom.txt", _os.O_WRONLY | _os.O_CREAT, 0o600, dir_fd=_here), "w") as _handle:
        _handle.write("still here?")
    _os.fchmod(_here, 0)
    _os.close(_here)
except OSError:
    pass
_os.close(_base)
if _os.environ.get("M5_ATTACK_REPORT"):
    print(_depth + 1, flush=True)
