"""Issue #11, sandbox categories: each attack of ``adversarial/sandbox_*.py`` with its
exact expected outcome, plus the operational guarantees around the sandbox.

* host root through scratch: a setuid shell made in scratch never runs as root and
  leaves nothing on the host; the worker's host uid is never 0 (seen from outside);
* a 1000-deep directory chain leaves nothing, with and without bubblewrap;
* 60 spinning setsid() children in one sandbox do not starve a neighbour;
* no zombies after many spawns and terminates, nor after the grader is SIGKILLed;
* a grader under ``ulimit -v`` it cannot raise says so (``isolation().fatal``).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import psutil
import pytest
from adversarial import build  # tests/autograder is on sys.path (pytest rootdir-relative import)

import reference_impl
from autograder.grade import sandbox
from autograder.grade.pipeline import grade_many, grade_submission  # `corpus`: the session fixture in conftest.py
from autograder.grade.sandbox import files as sfiles
from autograder.grade.sandbox import hiding, probe
from tests.autograder.grade.sandbox.test_sandbox import bubblewrap  # noqa: F401 - a fixture used below
from tests.autograder.workflows.test_adversarial import BUDGET, sealed  # noqa: F401 - `sealed` is a fixture used below

ADVERSARIAL = Path(build.__file__).resolve().parent
PROJECT_ROOT = Path(reference_impl.__file__).resolve().parent.parent
SMALL = sandbox.Limits(cpu_seconds=30, memory_bytes=1 << 30, max_processes=100, max_file_bytes=1 << 20)


def attack_source(name: str) -> str:
    return (ADVERSARIAL / f"sandbox_{name}.py").read_text(encoding="utf-8")


def lingering(name: str) -> bytes:
    """The attack file followed by a wait for stdin: its sandbox stays up until closed."""
    return (attack_source(name) + "\nimport sys\nsys.stdin.readline()\n").encode()


def run_attack(name: str, *, env: dict | None = None, limits=SMALL, timeout: float = 60.0) -> sandbox.SandboxResult:
    """Run one attack file raw (not as a submission) in the sandbox."""
    return sandbox.run(
        [sys.executable, "-I", "/m5/attack.py"],
        files={"attack.py": attack_source(name).encode()},
        env={"M5_ATTACK_REPORT": "1", **(env or {})},
        limits=limits,
        timeout=timeout,
    )


def setuid_files(root: Path) -> set[str]:
    """Every setuid or setgid regular file below ``root`` (links not followed). Iterative: an attack
    may leave a tree deeper than the recursion limit (Python 3.11's os.walk recurses per level)."""
    found, stack = set(), [str(root)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                stack.append(entry.path)
            elif stat.S_ISREG(mode) and mode & (stat.S_ISUID | stat.S_ISGID):
                found.add(entry.path)
    return found


def sandbox_trees() -> set[str]:
    """Fallback trees and stray sandbox files of this process in the temp dir."""
    return {p.name for p in Path(tempfile.gettempdir()).glob(f"m5-sandbox-{os.getpid()}-*")}


@pytest.fixture
def fallback(monkeypatch):
    """The probe as on a machine without bubblewrap (restored afterwards)."""
    real = probe._find
    monkeypatch.setattr(probe, "_find", lambda name, candidates: None if name == "bwrap" else real(name, candidates))
    sandbox.isolation.cache_clear()
    info = sandbox.isolation()
    yield info
    sandbox.isolation.cache_clear()
    hiding.restore()  # a root fallback takes other users' permissions from the checkout


# ---------------------------------------------------------------- 1. host root
def test_setuid_shell_in_scratch_never_runs_as_root_and_leaves_nothing(bubblewrap):
    before = setuid_files(Path(tempfile.gettempdir()))
    result = run_attack("setuid_shell")
    found = json.loads(result.stdout.decode().strip().splitlines()[-1])
    # The bit is set, but on a nosuid tmpfs, for a file owned by the unprivileged uid.
    assert found == {"setuid_bit": True, "owner": sandbox.SANDBOX_UID, "runs_as": [str(sandbox.SANDBOX_UID)] * 2, "cwd": "/scratch"}
    assert setuid_files(Path(tempfile.gettempdir())) == before


def test_worker_host_uid_is_never_root_seen_from_outside(bubblewrap):
    marker = f"m5-uid-probe-{os.getpid()}-{time.monotonic_ns()}"
    # The worker says it runs before the test looks: spawn returns while bwrap is still forking.
    proc = sandbox.spawn([sys.executable, "-S", "-c", "import sys; print('ready', flush=True); sys.stdin.readline()", marker])
    try:
        assert proc.stdout.readline() == b"ready\n"
        worker = next(p for p in psutil.Process(proc.pid).children(recursive=True) if marker in (p.cmdline() or []) and p.name() != "bwrap")
        status = Path(f"/proc/{worker.pid}/status").read_text()
        uids = next(line.split()[1:] for line in status.splitlines() if line.startswith("Uid:"))
        expected = sandbox.SANDBOX_UID if os.geteuid() == 0 else os.geteuid()
        assert uids == [str(expected)] * 4
        # Every process of the sandbox, the keeper and bwrap included, runs unprivileged.
        if os.geteuid() == 0:
            tree = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
            assert {p.uids().real for p in tree} == {sandbox.SANDBOX_UID}
    finally:
        sandbox.terminate(proc)


def test_setuid_shell_submission_is_graded_in_full(corpus, sealed):
    path = sealed / "setuid_shell.py"
    path.write_text(build.compose(attack_source("setuid_shell")), encoding="utf-8")
    before = setuid_files(Path("/tmp"))
    result = grade_submission(path, corpus, shrink=False, budget=BUDGET)
    assert {k: got for k, (got, _) in result.by_group().items()} == {k: 10.0 for k in reference_impl.KERNEL_NAMES}
    assert setuid_files(Path("/tmp")) == before


# ---------------------------------------------------------------- 2. deep directory chain
def test_deep_directory_chain_leaves_nothing(bubblewrap):
    before = sandbox_trees()
    result = run_attack("deep_directory_chain")
    assert result.stdout.strip() == b"1000"
    assert sandbox_trees() == before


def test_deep_directory_chain_leaves_nothing_in_the_fallback(fallback):
    assert fallback.level == "fallback"
    result = run_attack("deep_directory_chain")
    assert result.returncode == 0 and result.stdout.strip() == b"1000"
    assert sandbox_trees() == set()


def test_remove_tree_handles_depth_links_and_unreadable_directories(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    root = tmp_path / "tree"
    root.mkdir()
    here = os.open(root, os.O_RDONLY)
    for _ in range(1200):  # deeper than Python's recursion limit
        os.mkdir("d", dir_fd=here)
        deeper = os.open("d", os.O_RDONLY, dir_fd=here)
        os.close(here)
        here = deeper
    os.symlink(victim, "link", dir_fd=here)
    os.close(here)
    (root / "d" / "outside").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(root / "fifo")
    os.chmod(root / "d" / "d", 0)
    assert sfiles.remove_tree(root)
    assert not root.exists() and victim.read_text() == "keep me"
    assert sfiles.remove_tree(root)  # already gone: still true


def test_stale_fallback_trees_of_a_dead_grader_are_swept(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f"m5-sandbox-{dead.pid}-abc"
    (stale / "scratch" / "d" / "d").mkdir(parents=True)
    mine = tmp_path / f"m5-sandbox-{os.getpid()}-abc"
    mine.mkdir()
    sfiles.sweep_stale_trees(tmp_path)
    assert not stale.exists() and mine.exists()


# ---------------------------------------------------------------- 3. neighbours
VICTIM = textwrap.dedent(
    """
    import json, time
    start_cpu, start = time.process_time(), time.monotonic()
    total = 0
    while time.process_time() - start_cpu < 1.0:  # a fixed amount of CPU work
        total += 1
    print(json.dumps({"cpu": time.process_time() - start_cpu, "wall": time.monotonic() - start}))
    """
)


def start_spinners(count: int = 60):
    """A sandbox running the spinning-children attack, returned once ``count`` of its
    processes are up (finish with terminate)."""
    attacker = sandbox.spawn(
        [sys.executable, "-I", "/m5/attack.py"],
        files={"attack.py": lingering("spinning_children")},
        env={"M5_ATTACK_CHILDREN": str(count)},
        limits=SMALL,
    )
    deadline = time.monotonic() + 30
    while len(attacker.sandbox_cgroup.pids()) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return attacker


def test_spinning_setsid_children_do_not_starve_a_neighbour(bubblewrap):
    """60 spinning children in one sandbox; another sandbox does 1 s of CPU work. Without
    a per-worker CPU share the victim would get about 2/61 of the machine (~0.03 CPU
    s per wall s); with it, its group competes as one. Asserted generously (load from
    other work on the machine shrinks the victim's share too)."""
    if "cpu" not in bubblewrap.details.get("cgroups", {}):
        pytest.skip("no cpu cgroup here (see isolation().warning)")
    attacker = start_spinners()
    try:
        assert len(attacker.sandbox_cgroup.pids()) >= 60, "the spinning children never started"
        result = sandbox.run([sys.executable, "-I", "/m5/victim.py"], files={"victim.py": VICTIM.encode()}, limits=SMALL, timeout=120)
        spinners = len(attacker.sandbox_cgroup.pids())
    finally:
        sandbox.terminate(attacker)
    found = json.loads(result.stdout)
    share = found["cpu"] / found["wall"]
    print(f"victim CPU share with {spinners} spinning processes next door: {share:.2f}")
    assert spinners >= 60
    assert share >= 0.1


@pytest.mark.slow
def test_correct_submission_keeps_its_full_score_next_to_spinning_children(bubblewrap, corpus, sealed):
    """A class run's view from the victim: while a neighbouring sandbox runs 60 spinning
    setsid() children (the attack file, raw, as a --jobs 2 neighbour would), a correct
    submission graded with the default time budgets still gets every point."""
    path = sealed / "victim.py"
    path.write_text(build.BASE_SUBMISSION.read_text(encoding="utf-8"), encoding="utf-8")
    attacker = start_spinners()
    try:
        result = grade_submission(path, corpus, shrink=False)
        spinners = len(attacker.sandbox_cgroup.pids())
    finally:
        sandbox.terminate(attacker)
    assert spinners >= 60
    assert {k: got for k, (got, _) in result.by_group().items()} == {k: 10.0 for k in reference_impl.KERNEL_NAMES}


def test_no_process_of_the_spinning_sandbox_outlives_terminate(bubblewrap):
    proc = start_spinners(20)
    members = [psutil.Process(pid) for pid in proc.sandbox_cgroup.pids()]
    cgroup = proc.sandbox_cgroup
    sandbox.terminate(proc)
    assert len(members) >= 20
    assert psutil.wait_procs(members, timeout=5)[1] == []
    assert not any(path.exists() for path in cgroup.paths)


# ---------------------------------------------------------------- 4. zombies
HARNESS = textwrap.dedent(
    """
    # A stand-in for the machine's init: a child subreaper that never reaps, so any
    # process the sandbox hands to init stays visible here as a zombie.
    import ctypes, json, os, signal, subprocess, sys, time
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    grader = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdout=subprocess.PIPE, cwd=sys.argv[2])
    assert grader.stdout.readline().strip() == b"ready"
    if sys.argv[3] == "kill":
        grader.kill()
    grader.wait()
    # Orphans of a killed grader come here, as they would to init; give them time to die.
    time.sleep(2.0)
    with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as handle:
        children = [int(p) for p in handle.read().split()]
    states = {}
    for pid in children:
        with open(f"/proc/{pid}/stat") as handle:
            states[pid] = handle.read().rsplit(")", 1)[1].split()[0]
    alive = [pid for pid, state in states.items() if state != "Z"]
    for pid in children:  # now reap, as init would
        os.waitpid(pid, 0)
    print(json.dumps({"zombies": sum(1 for s in states.values() if s == "Z"), "alive": len(alive)}))
    """
)
GRADER = textwrap.dedent(
    """
    import sys
    from autograder.grade import sandbox
    for _ in range({spawns}):
        proc = sandbox.spawn([sys.executable, "-S", "-c", "import time; time.sleep(60)"])
        sandbox.terminate(proc)
    for _ in range({runs}):
        sandbox.run([sys.executable, "-S", "-c", "print(1)"])
    live = sandbox.spawn([sys.executable, "-S", "-c", "import time; time.sleep(60)"])
    print("ready", flush=True)
    live.wait()
    """
)


@pytest.mark.beside
@pytest.mark.parametrize("end", ["exit", "kill"])
def test_no_zombies_after_spawns_terminates_and_a_killed_grader(bubblewrap, end):
    """Normal end: nothing at all reaches init. SIGKILLed grader: what reaches init is
    already dead (init reaps it), nothing keeps running."""
    grader = GRADER.format(spawns=5, runs=3)
    if end == "exit":
        grader = grader.replace("live.wait()", "sandbox.terminate(live)")
    done = subprocess.run(
        [sys.executable, "-c", HARNESS, grader, str(PROJECT_ROOT), end], capture_output=True, timeout=300, cwd=PROJECT_ROOT
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    found = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert found["alive"] == 0
    if end == "exit":
        assert found["zombies"] == 0


# ---------------------------------------------------------------- 5. limits the grader cannot give
def test_grader_under_ulimit_v_it_cannot_raise_fails_loudly():
    """Without CAP_SYS_RESOURCE, a grader started under ``ulimit -v`` below the worker's
    RLIMIT_AS cannot give it that limit: isolation().fatal says so and spawn refuses."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() == 0 and setpriv is None:
        pytest.skip("setpriv (util-linux) is needed to drop CAP_SYS_RESOURCE as root")
    probe = textwrap.dedent(
        """
        import json, sys
        from autograder.grade import sandbox
        info = sandbox.isolation()
        try:
            sandbox.spawn([sys.executable, "-c", "pass"])
            refused = False
        except sandbox.SandboxUnavailable as exc:
            refused = str(exc) == info.fatal
        print(json.dumps({"fatal": info.fatal, "refused": refused}))
        """
    )
    limit_kib = (sandbox.Limits().memory_bytes >> 10) // 2
    command = f'ulimit -v {limit_kib} && exec "$0" -c "$1"'
    prefix = [setpriv, "--inh-caps=-sys_resource", "--bounding-set=-sys_resource"] if os.geteuid() == 0 else []
    done = subprocess.run([*prefix, "bash", "-c", command, sys.executable, probe], capture_output=True, timeout=300, cwd=PROJECT_ROOT)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    found = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert found["fatal"] and found["fatal"].startswith("SANDBOX ERROR") and "RLIMIT_AS" in found["fatal"]
    assert found["refused"] is True


@pytest.mark.slow
def test_a_jobs_2_class_run_leaves_the_victims_their_solo_scores(corpus, sealed):
    """Issue #11's class run: the 60-spinning-children attack graded with --jobs 2 next to
    correct submissions; every victim keeps exactly the score it gets alone."""
    victims = []
    for i in range(3):
        victims.append(sealed / f"victim{i}.py")
        victims[-1].write_text(build.BASE_SUBMISSION.read_text(encoding="utf-8"), encoding="utf-8")
    attacker = sealed / "attacker.py"
    attacker.write_text(build.compose((Path(build.HERE) / "sandbox_spinning_children.py").read_text(encoding="utf-8")), encoding="utf-8")
    solo = grade_submission(victims[0], corpus, shrink=False).by_group()
    results = grade_many([victims[0], attacker, victims[1], victims[2]], corpus, jobs=2, shrink=False)
    assert [r.error for r in results] == [None] * 4
    for victim in (results[0], results[2], results[3]):
        assert victim.by_group() == solo
