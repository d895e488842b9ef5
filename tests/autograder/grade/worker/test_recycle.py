"""Recycled sandboxes: a class run hands a cleaned sandbox from one submission to the next.

The zygote inside (``recycle.zygote``) never runs student code. Between two submissions
it kills every other process of the sandbox, empties /scratch, /tmp and /dev/shm and
drains the grader's pipe; only then does it say "clean" on a pipe no submission holds.
These tests grade a submission that leaves everything it can behind, then one that
looks for any trace of it and loses every point if it finds one.
"""

from __future__ import annotations

import dataclasses
import os

import pytest

from autograder.demo import CORRECT
from autograder.grade import sandbox
from autograder.grade.pipeline import KERNELS, grade_many
from autograder.grade.sandbox import files as sfiles

pytestmark = pytest.mark.skipif(sandbox.isolation().level != "bubblewrap", reason="recycling needs bubblewrap's pid namespace")

# Leaves files in every writable place, a 2,000-deep directory chain, a link to /etc,
# a FIFO, and a detached process that outlives its parent: it is started while the
# grader reads the numerical answers (after the last batch's clean-up) and keeps
# writing into /tmp.
DIRTY = (
    CORRECT.read_text()
    + """

import os as _os

for _place in ("/scratch", "/tmp", "/dev/shm"):
    with open(_place + "/left_behind.txt", "w") as _fh:
        _fh.write("from the previous submission")
_fd = _os.open("/tmp", _os.O_RDONLY)
for _ in range(2000):
    _os.mkdir("d", dir_fd=_fd)
    _next = _os.open("d", _os.O_RDONLY, dir_fd=_fd)
    _os.close(_fd)
    _fd = _next
_os.close(_fd)
_os.symlink("/etc", "/scratch/etc_link")
_os.mkfifo("/dev/shm/fifo")


class _Daemon:
    def __array__(self, dtype=None, copy=None):
        import time
        if _os.fork() == 0:
            _os.setsid()
            if _os.fork() == 0:
                while True:
                    with open("/tmp/still_here_%d" % _os.getpid(), "w"):
                        pass
                    time.sleep(0.01)
            _os._exit(0)
        import numpy
        return numpy.asarray(1.0)


ex09_active_mean_nll = _Daemon()
"""
)

# Full marks only in a clean sandbox: its first statement looks for any file in the
# writable places and any process that is not its own ancestor.
INSPECTOR = (
    """
import os as _os

def _ancestors():
    pid, seen = _os.getpid(), set()
    while pid > 0 and pid not in seen:
        seen.add(pid)
        with open("/proc/%d/stat" % pid, "rb") as _fh:
            stat = _fh.read()
        pid = int(stat[stat.rfind(b")") + 2:].split()[1])
    return seen

# The sandbox's own mounts (an interpreter bound under /tmp) and the directories leading
# to them are there in a fresh sandbox too: not traces.
def _unescape(field):  # mountinfo writes a space, tab, newline and backslash as octal escapes
    for code in ("\\\\040", "\\\\011", "\\\\012", "\\\\134"):
        field = field.replace(code, chr(int(code[1:], 8)))
    return field


with open("/proc/self/mountinfo") as _fh:
    _SETUP = [_unescape(_line.split()[4]) for _line in _fh]


def _traces(path):
    found = []
    for _n in _os.listdir(path):
        _full = path + "/" + _n
        if _full in _SETUP:
            continue  # a mount of the sandbox's own (what is bound inside it is its own too)
        if any(m.startswith(_full + "/") for m in _SETUP):
            found += _traces(_full)  # on the way to a mount: look inside
        else:
            found.append(_full)
    return found


_TRACES = [t for p in ("/scratch", "/tmp", "/dev/shm") for t in _traces(p)]
_TRACES += ["pid %s" % p for p in _os.listdir("/proc") if p.isdigit() and int(p) not in _ancestors()]
"""
    + CORRECT.read_text()
    + """

if _TRACES:
    for _name in %r:
        del globals()[_name]
"""
    % (list(KERNELS),)
)


def _files(tmp_path, *sources):
    paths = []
    for i, source in enumerate(sources):
        path = tmp_path / f"s{i}" / "kernels.py"
        path.parent.mkdir()
        path.write_text(source)
        paths.append(path)
    return paths


def test_a_recycled_sandbox_keeps_no_trace_of_the_previous_submission(tmp_path, corpus, recycles):
    # A class run takes two sandboxes in turn: submission i + 2 gets the sandbox of i.
    paths = _files(tmp_path, DIRTY, DIRTY, INSPECTOR, INSPECTOR)
    results = grade_many(paths, corpus, jobs=1, shrink=False, answers=True)
    assert recycles == [True, True]  # both inspectors got a dirty submission's sandbox, recycled
    for result in results:
        kernel_points = sum(t.score for t in result.tests if t.group in KERNELS)
        assert kernel_points == 100, [t.key for t in result.tests if not t.passed]


def test_a_recycled_sandbox_grades_exactly_like_a_fresh_one(tmp_path, corpus, recycles):
    path = _files(tmp_path, CORRECT.read_text().replace("def expectile_loss", "def _unused"))[0]
    fresh = grade_many([path], corpus, jobs=1, shrink=False)[0]
    twice = grade_many([path] * 4, corpus, jobs=1, shrink=False)
    assert recycles == [True, True]
    for again in twice:
        assert [repr(t) for t in again.tests] == [repr(t) for t in fresh.tests]  # scores, failures, counterexamples


STOP_OR_KILL_THE_ZYGOTE = (
    CORRECT.read_text()
    + """

import os as _os, signal as _signal
with open("/proc/{}/stat".format(_os.getppid()), "rb") as _fh:
    _stat = _fh.read()
_os.kill(int(_stat[_stat.rfind(b")") + 2:].split()[1]), _signal.SIGNAL)  # the parent's parent: the zygote
"""
)


@pytest.mark.parametrize("sig", ["SIGSTOP", "SIGKILL", "SIGALRM", "SIGINT"])
def test_a_submission_that_signals_the_zygote_costs_the_next_one_nothing(tmp_path, corpus, recycles, sig):
    # The victim comes two places after the attacker: it is the one offered the attacked sandbox.
    paths = _files(tmp_path, STOP_OR_KILL_THE_ZYGOTE.replace("SIGNAL", sig), INSPECTOR, INSPECTOR)
    results = grade_many(paths, corpus, jobs=1, shrink=False)
    attacker, _, victim = (sum(t.score for t in r.tests) for r in results)
    # The zygote is the sandbox's pid 1 and ignores every signal it could get from
    # inside (SIGSTOP and SIGKILL never reach pid 1 from inside; SIGALRM and SIGINT,
    # which have Python handlers in the worker, are ignored while it is the zygote):
    # nothing happens, the attacker keeps full marks and the sandbox is recycled.
    assert victim == 100
    assert recycles == [True] and attacker == 100


@pytest.fixture
def interpreter_under_tmp(tmp_path, monkeypatch):
    """The sandbox plan with one more read-only root under /tmp (tmp_path is there), as
    when the grader's venv lives in /tmp: its mount lies inside the sandbox's /tmp."""
    from autograder.grade.sandbox import probe

    plan, info = probe.probe_isolation()
    root = tmp_path / "venv_like" / "lib"
    root.mkdir(parents=True)
    (root / "site.txt").write_text("read only")
    assert str(root).startswith("/tmp/")
    monkeypatch.setattr(probe, "probe_isolation", lambda: (dataclasses.replace(plan, roots=plan.roots + (root,)), info))
    return root


def test_a_sandbox_with_an_interpreter_under_tmp_is_recycled_clean(tmp_path, corpus, recycles, interpreter_under_tmp):
    # Before: emptying /tmp met the bound root, could not remove it, and ended the sandbox.
    escape = (
        DIRTY
        + f"""
_os.makedirs({str(interpreter_under_tmp.parent)!r} + "/planted", exist_ok=True)  # beside the bound root
"""
    )
    paths = _files(tmp_path, escape, escape, INSPECTOR, INSPECTOR)
    results = grade_many(paths, corpus, jobs=1, shrink=False, answers=True)
    assert recycles == [True, True]
    for result in results:
        assert sum(t.score for t in result.tests if t.group in KERNELS) == 100, [t.key for t in result.tests if not t.passed]
    assert (interpreter_under_tmp / "site.txt").read_text() == "read only"  # on the host, untouched


def test_setup_mounts_reads_mountinfo_outermost_first_with_escapes(tmp_path):
    from autograder.grade.worker import recycle

    (tmp_path / "a b").mkdir()
    (tmp_path / "a b" / "inner").mkdir()
    line = "36 35 98:0 / {} ro,nosuid - tmpfs tmpfs ro\n"
    escaped = str(tmp_path / "a b").replace(" ", "\\040")
    info = tmp_path / "mountinfo"
    info.write_text("".join(line.format(p) for p in ["/", "/tmp", "/usr", escaped, escaped + "/inner"]))
    kept = recycle.setup_mounts(str(info))
    st = os.stat(tmp_path / "a b")
    assert kept == [(str(tmp_path / "a b"), st.st_dev, st.st_ino)]  # /tmp itself and the nested mount are not kept
    assert recycle.setup_mounts(str(tmp_path / "missing")) == []


def test_empty_tree_keeps_the_named_paths_and_empties_the_way_to_them(tmp_path):
    top = tmp_path / "top"
    kept = top / "a" / "b" / "mount"
    kept.mkdir(parents=True)
    (kept / "inside.txt").write_text("the mount's own content")
    (top / "a" / "left.txt").write_text("x")
    (top / "a" / "b" / "sub").mkdir()
    (top / "other").mkdir()
    assert sfiles.empty_tree(str(top), (str(kept),)) is True
    assert sorted(p.relative_to(top).as_posix() for p in top.rglob("*")) == ["a", "a/b", "a/b/mount", "a/b/mount/inside.txt"]
    # A way to a kept path replaced by a link is refused, its target untouched.
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "f").write_text("x")
    os.rename(top / "a", tmp_path / "moved")
    os.symlink(tmp_path / "elsewhere", top / "a")
    assert sfiles.empty_tree(str(top), (str(kept),)) is False
    assert (tmp_path / "elsewhere" / "f").exists()
    with pytest.raises(ValueError, match="not inside"):
        sfiles.empty_tree(str(top), ("/etc/passwd",))


def test_recycling_can_be_turned_off(tmp_path, corpus, recycles):
    paths = _files(tmp_path, INSPECTOR, INSPECTOR)
    results = grade_many(paths, corpus, jobs=1, shrink=False, recycle=False)
    assert recycles == []
    assert [sum(t.score for t in r.tests) for r in results] == [100, 100]


def test_empty_tree_removes_deep_chains_links_and_fifos_without_following_links(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the zygote's to remove")
    top = tmp_path / "top"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    for depth in range(3000):
        os.mkdir("d", dir_fd=fd)
        deeper = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = deeper
        if depth % 500 == 0:
            os.symlink(outside, "link", dir_fd=fd)
            os.mkfifo("fifo", dir_fd=fd)
    os.close(fd)
    for i in range(20000):  # a wide directory too: one pass per listing, not one per file
        (top / f"f{i}").touch()
    assert sfiles.empty_tree(str(top)) is True
    assert os.listdir(top) == []
    assert (outside / "keep.txt").exists()


def test_empty_tree_refuses_a_link_in_place_of_the_directory(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "keep.txt").write_text("x")
    os.symlink(tmp_path / "real", tmp_path / "link")
    assert sfiles.empty_tree(str(tmp_path / "link")) is False
    assert (tmp_path / "real" / "keep.txt").exists()
    assert sfiles.empty_tree(str(tmp_path / "missing")) is True


def test_spawn_refuses_a_bad_recycle_variable_name():
    with pytest.raises(ValueError, match="recycle_env must be an environment variable name"):
        sandbox.spawn(["/bin/true"], recycle_env="M5 BAD")
    proc = sandbox.spawn(["/bin/true"])
    try:
        assert proc.sandbox_recycle_fd is None  # only asked-for pipes exist
    finally:
        sandbox.terminate(proc)


def test_each_process_of_a_jobs_2_pool_recycles_its_own_sandbox_clean(tmp_path, corpus):
    paths = _files(tmp_path, *[DIRTY, INSPECTOR] * 3)
    results = grade_many(paths, corpus, jobs=2, shrink=False, answers=True)
    for result in results:
        assert sum(t.score for t in result.tests if t.group in KERNELS) == 100, result.error
