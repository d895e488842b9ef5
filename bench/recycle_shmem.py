"""Host shared memory (Shmem in /proc/meminfo) before and after a class run whose
attackers fill /scratch, /tmp, /dev/shm and 1.25 GB of memfds and try to keep them
alive in a garbage cycle of unix sockets (``SPACE_ATTACKS`` of
tests/autograder/grade/worker/test_recycle_attacks.py), each followed by a correct submission.

Under the allow-list no socket can be made, so the files die with the processes that
hold them and Shmem is back at its level once ``grade_many`` returns. ``--old-rules``
builds the allow-list as it was before (sockets, prlimit64 on any pid): the cycle then
keeps its memory charged on the host until the kernel's unix garbage collector runs.
Other jobs on the machine move Shmem too: read the figures as a difference of GBs,
not MBs.

    .venv/bin/python bench/recycle_shmem.py [--old-rules]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.demo import CORRECT  # noqa: E402
from autograder.grade.corpus_cache import load_corpus  # noqa: E402
from autograder.grade.pipeline import grade_many  # noqa: E402
from autograder.grade.sandbox import launch, seccomp  # noqa: E402


def shmem_mb() -> float:
    """Shmem of /proc/meminfo in MB."""
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("Shmem:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no Shmem line in /proc/meminfo")


def attacks():
    """The attack fragments of the test module."""
    path = ROOT / "tests" / "autograder" / "test_recycle_attacks.py"
    spec = importlib.util.spec_from_file_location("_recycle_attacks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def use_old_rules() -> None:
    """Build the sandbox plan with the allow-list as it was before."""
    seccomp.ALLOWED_SYSCALLS += ("prlimit64", "setpriority", "sched_setaffinity") + seccomp.DENIED_SOCKET_SYSCALLS
    seccomp.CONDITIONAL_SYSCALLS = {}
    seccomp.seccomp_program.cache_clear()
    plan, info = launch._probe()
    program = seccomp.seccomp_program()
    launch._probe = lambda: (dataclasses.replace(plan, seccomp=program), info)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-rules", action="store_true", help="the allow-list before: sockets, prlimit64 on any pid")
    args = parser.parse_args()
    if args.old_rules:
        use_old_rules()
    module = attacks()
    attacker = CORRECT.read_text() + module.SPACE_ATTACKS
    corpus = load_corpus()
    before = shmem_mb()
    peak, done = [before], threading.Event()

    def sample():
        while not done.wait(0.05):
            peak.append(shmem_mb())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, source in enumerate([attacker, attacker, CORRECT.read_text(), CORRECT.read_text()]):
            path = Path(tmp) / f"s{i}" / "kernels.py"
            path.parent.mkdir()
            path.write_text(source)
            paths.append(path)
        results = grade_many(paths, corpus, jobs=1, shrink=False, answers=True)
    after = shmem_mb()
    done.set()
    sampler.join()
    time.sleep(2.0)
    later = shmem_mb()
    print(f"rules: {'old' if args.old_rules else 'present'}")
    print(f"scores: {[sum(t.score for t in r.tests) for r in results]}")
    print(
        f"Shmem before: {before:.0f} MB, highest during the run: {max(peak):.0f} MB, "
        f"after grade_many: {after:.0f} MB ({after - before:+.0f}), "
        f"2 s later: {later:.0f} MB ({later - before:+.0f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
