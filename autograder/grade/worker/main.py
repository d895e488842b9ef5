"""The worker's entry point inside the sandbox: ``python -s -P /m5/main.py``.

It makes its folder a package (so the modules import one another as they do in the
grader, and nothing is added to ``sys.path``), imports everything before any fork,
hardens itself, reads the preload file, and serves the grader as the parent of one
submission, or, in a class run, as the zygote that forks one parent per submission.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import sys

if not __package__:  # run as a script: make this folder the package m5worker (PEP 366)
    import importlib.util

    _here = os.path.dirname(os.path.abspath(__file__))
    _spec = importlib.util.spec_from_file_location("m5worker", os.path.join(_here, "__init__.py"), submodule_search_locations=[_here])
    sys.modules["m5worker"] = _package = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_package)
    __package__ = "m5worker"

from . import recycle
from .child import on_alarm
from .parent import Parent, harden_parent
from .wire import PRELOAD_FILE, RECYCLE_FD_ENV, read_frame

LAZY_NUMPY = ("numpy.ma",)  # what numpy imports on first use in common kernels (np.isin of an empty array)


def import_lazy_numpy() -> None:
    """Import LAZY_NUMPY now, before any fork: a fresh child importing numpy.ma spent
    about 20 ms of CPU on it (and on copying the pages the import touched) in every
    submission."""
    for name in LAZY_NUMPY:
        __import__(name)


def main() -> int:
    import_lazy_numpy()
    from . import cellexec  # its imports after numpy's

    harden_parent()
    # The protocol gets private copies of stdin/stdout; the standard streams go nowhere.
    proto_in, proto_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - open for the process's life, as the standard streams are
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the same
    signal.signal(signal.SIGALRM, on_alarm)
    preloaded = _read_preload(os.path.join(os.path.dirname(os.path.abspath(__file__)), PRELOAD_FILE))
    recycle_fd = os.environ.get(RECYCLE_FD_ENV)
    if recycle_fd is None:
        return serve_parent(cellexec, proto_in, proto_out, preloaded)
    return recycle.zygote(lambda: serve_parent(cellexec, proto_in, proto_out, preloaded), proto_in, int(recycle_fd), _sandbox_files())


def serve_parent(cellexec, proto_in: int, proto_out: int, preloaded: dict) -> int:
    """Be the trusted parent of one submission until the grader says exit."""
    reader = os.fdopen(proto_in, "rb", buffering=1 << 16, closefd=False)
    parent = Parent(cellexec, proto_out, (proto_in, proto_out))
    parent.preloaded = preloaded
    parent.blank = parent.fork_blank()

    def frames():
        while True:
            frame = read_frame(reader)
            if frame is None:
                return
            yield frame

    return parent.serve(frames())


def _read_preload(path: str) -> dict:
    """Unpickle the calls the grader will name in batch requests, before any child is
    forked, so every child inherits them (the preload file: see ``__init__.py``)."""
    try:
        with open(path, "rb") as handle:
            preloaded = dict(pickle.load(handle))
    except FileNotFoundError:
        return {}
    gc.freeze()  # a child's collections skip them, and leave their pages shared
    return preloaded


def _sandbox_files():
    """The grader's tree remover (``grade/sandbox/files.py``), placed beside this file;
    the zygote empties the sandbox's writable trees with it."""
    from . import files  # beside main.py only inside the sandbox

    return files


if __name__ == "__main__":
    sys.exit(main())
