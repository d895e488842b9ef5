"""Attacks a hostile student could try, each run through the grading sandbox.

Every test runs a tiny script with ``sandbox.run``/``sandbox.spawn`` and checks that the
attack is contained: this process survives, nothing is left running, nothing is
written outside scratch, hidden things stay hidden. Limits are shrunk so that each
attack ends in well under a second or two.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_impl
from autograder.grade import sandbox
from autograder.grade.sandbox import cgroups, hiding, paths, probe

PROJECT_ROOT = Path(reference_impl.__file__).resolve().parent.parent
SMALL = sandbox.Limits(cpu_seconds=5, memory_bytes=1 << 30, max_processes=16, max_file_bytes=1 << 20)


# ---------------------------------------------------------------- helpers
@pytest.fixture(autouse=True)
def no_process_left_behind():
    """After every test: this process has no descendants and no sandbox cgroup."""
    yield
    deadline = time.monotonic() + 5
    while psutil.Process().children(recursive=True) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert psutil.Process().children(recursive=True) == []
    plan = sandbox.probe_isolation()[0]
    for base, _ in plan.cgroups.directories if plan is not None else []:
        assert list(base.glob(f"m5-sandbox-{os.getpid()}-*")) == []


@pytest.fixture
def bubblewrap():
    info = sandbox.isolation()
    if info.level != "bubblewrap":
        pytest.skip(f"bubblewrap unavailable here: {info.warning}")
    return info


def run_script(code: str, *, limits=SMALL, timeout=20.0, **kwargs) -> sandbox.SandboxResult:
    """Run ``code`` as /m5/attack.py in the sandbox."""
    return sandbox.run(
        [sys.executable, "-I", "/m5/attack.py"],
        files={"attack.py": textwrap.dedent(code).encode()},
        limits=limits,
        timeout=timeout,
        **kwargs,
    )


def spawn_script(code: str, *, limits=SMALL, **kwargs):
    """Start ``code`` as /m5/attack.py in the sandbox (finish with terminate)."""
    return sandbox.spawn(
        [sys.executable, "-I", "/m5/attack.py"], files={"attack.py": textwrap.dedent(code).encode()}, limits=limits, **kwargs
    )


def report(result: sandbox.SandboxResult) -> dict:
    """The attack scripts print one JSON line of findings as their last line."""
    lines = result.stdout.decode().strip().splitlines()
    assert lines, f"no output; stderr: {result.stderr_tail}"
    return json.loads(lines[-1])


def processes_with_marker(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if any(marker in part for part in (proc.info["cmdline"] or [])):
            found.append(proc)
    return found


def sandboxed_with_marker(marker: str) -> list[psutil.Process]:
    """The worker processes themselves (not bwrap, whose command line holds them)."""
    return [p for p in processes_with_marker(marker) if p.name() != "bwrap"]


# ---------------------------------------------------------------- normal work
def test_numpy_and_torch_work_inside_with_default_limits(bubblewrap):
    result = run_script(
        """
        import json, os, numpy, torch
        print(json.dumps({"sum": float(torch.ones(3).sum()) + float(numpy.ones(2).sum()),
                          "uid": os.getuid(), "cwd": os.getcwd()}))
        """,
        limits=sandbox.Limits(),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr_tail
    found = report(result)
    assert found == {"sum": 5.0, "uid": sandbox.SANDBOX_UID, "cwd": "/scratch"}


def test_exit_codes_pass_through(bubblewrap):
    assert run_script("import sys; sys.exit(3)").returncode == 3
    assert run_script("import os; os._exit(7)").returncode == 7
    assert run_script("raise SystemExit('bye')").returncode == 1


def test_grader_environment_does_not_leak(bubblewrap, monkeypatch):
    monkeypatch.setenv("M5_SECRET_TOKEN", "hunter2")
    result = run_script("import os, json; print(json.dumps(dict(os.environ)))", env={"EXTRA": "1"})
    env = report(result)
    assert "M5_SECRET_TOKEN" not in env
    assert env["EXTRA"] == "1" and env["HOME"] == "/scratch"


# ---------------------------------------------------------------- hidden things
def test_project_packages_cannot_be_imported_or_read(bubblewrap):
    targets = [
        PROJECT_ROOT / "reference_impl" / "kernels.py",
        PROJECT_ROOT / "autograder" / "__init__.py",
        PROJECT_ROOT / "pyproject.toml",
        Path(sandbox.__file__).resolve(),
    ]
    assert all(t.exists() for t in targets)
    result = run_script(
        f"""
        import importlib, json, os
        found = {{"imported": [], "read": [], "root_listing": None}}
        for name in ("reference_impl", "reference_impl.kernels", "autograder", "autograder.grade.sandbox"):
            try:
                importlib.import_module(name)
                found["imported"].append(name)
            except ImportError:
                pass
        for path in {[str(t) for t in targets]!r}:
            try:
                open(path, "rb").read(1)
                found["read"].append(path)
            except OSError:
                pass
        try:
            found["root_listing"] = sorted(os.listdir({str(PROJECT_ROOT)!r}))
        except OSError:
            pass
        print(json.dumps(found))
        """,
    )
    found = report(result)
    assert found["imported"] == []
    assert found["read"] == []
    # At most the interpreter's venv is visible under the project root, never its sources.
    assert set(found["root_listing"] or []) <= {".venv"}


def test_files_outside_scratch_are_invisible(bubblewrap, tmp_path):
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("hidden answer")
    result = run_script(
        f"""
        import json, os
        found = {{}}
        for path in ({str(secret)!r}, "/etc/shadow", "/etc/hostname", "/root/.bash_history"):
            try:
                found[path] = open(path).read()[:20]
            except OSError:
                pass
        print(json.dumps(found))
        """,
    )
    assert report(result) == {}


def test_hide_masks_an_extra_path(bubblewrap):
    import numpy

    target = Path(numpy.__file__).resolve().parent / "version.py"
    assert target.read_text()
    code = f"import json; print(json.dumps(open({str(target)!r}).read()))"
    assert report(run_script(code)) != ""
    assert report(run_script(code, hide=[target])) == ""


def test_installed_copy_of_the_project_is_masked(bubblewrap, tmp_path, monkeypatch):
    """A non-editable install puts ``reference_impl`` into site-packages: the sandbox
    must mask that directory so even ``import reference_impl`` fails."""
    fake_site = tmp_path / "site-packages"
    package = fake_site / "reference_impl"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("ANSWER = 42\n")
    (package / "kernels.py").write_text("SECRET = 'kernel'\n")
    plan, info = sandbox.probe_isolation()
    fake_plan = dataclasses.replace(
        plan,
        roots=plan.roots + (fake_site,),
        hidden=plan.hidden + (package,),
        masked_packages=plan.masked_packages + (package,),
    )
    monkeypatch.setattr(probe, "probe_isolation", lambda: (fake_plan, info))
    result = run_script(
        f"""
        import json, os, sys
        sys.path.insert(0, {str(fake_site)!r})
        found = {{"listing": os.listdir({str(package)!r})}}
        try:
            import reference_impl
            found["imported"] = getattr(reference_impl, "ANSWER", "empty package")
        except ImportError as exc:
            found["imported"] = None
        try:
            found["read"] = open({str(package / "kernels.py")!r}).read()
        except OSError:
            found["read"] = None
        print(json.dumps(found))
        """,
    )
    assert report(result) == {"listing": ["__init__.py"], "imported": None, "read": None}


# ---------------------------------------------------------------- writes
def test_nothing_is_written_outside_scratch(bubblewrap, tmp_path):
    name = f"m5-sandbox-probe-{uuid.uuid4().hex}"
    outside = tmp_path / "outside"
    outside.mkdir()
    venv_site = Path(paths.site_dirs()[0])
    targets = [
        outside / name,
        PROJECT_ROOT / name,
        venv_site / name,
        Path(sys.prefix) / name,
        Path("/usr") / name,
        Path("/") / name,
        Path("/work") / name,
        Path("/scratch") / name,
    ]
    try:
        result = run_script(
            f"""
            import json
            written = []
            for path in {[str(t) for t in targets]!r} + ["/tmp/private-" + {name!r}]:
                try:
                    with open(path, "w") as handle:
                        handle.write("x")
                    written.append(path)
                except OSError:
                    pass
            print(json.dumps(written))
            """,
        )
        # Only the sandbox's own private (size-capped) /scratch and /tmp accept writes,
        # and nothing written there reaches the host.
        written = report(result)
        # Inside, /tmp is the private tmpfs: a target under /tmp (a checkout cloned there,
        # whose venv is bound into it) may accept a write that never reaches the host.
        private_tmp = {str(t) for t in targets if str(t).startswith("/tmp/")}
        required = {str(Path("/scratch") / name), "/tmp/private-" + name}
        assert required <= set(written) <= required | private_tmp
        leaked = [str(t) for t in targets + [Path("/tmp/private-" + name)] if t.exists()]
        assert leaked == []
    finally:
        for target in targets + [Path("/tmp/private-" + name)]:
            if target.exists():
                target.unlink()


# ---------------------------------------------------------------- network
def test_network_is_unreachable(bubblewrap):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        result = run_script(
            f"""
            import json, socket
            found = {{}}
            for host, port in (("127.0.0.1", {port}), ("1.1.1.1", 53), ("8.8.8.8", 443)):
                try:
                    socket.create_connection((host, port), timeout=2).close()
                    found[host] = "connected"
                except OSError as exc:
                    found[host] = type(exc).__name__
            try:
                socket.getaddrinfo("example.com", 80)
                found["dns"] = "resolved"
            except OSError:
                found["dns"] = "failed"
            print(json.dumps(found))
            """,
        )
        found = report(result)
        assert "connected" not in found.values()
        assert found["dns"] == "failed"
    finally:
        server.close()


# ---------------------------------------------------------------- signals
def test_killing_the_parent_or_everyone_is_contained(bubblewrap):
    bystander = subprocess.Popen(["sleep", "30"])  # another process of this user
    try:
        result = run_script(
            f"""
            import json, os, signal
            found = {{"ppid": os.getppid()}}
            for label, target in (("parent", os.getppid()), ("grader", {os.getpid()}),
                                  ("bystander", {bystander.pid}), ("everyone", -1)):
                try:
                    os.kill(target, signal.SIGKILL)
                    found[label] = "sent"
                except OSError as exc:
                    found[label] = type(exc).__name__
            print(json.dumps(found), flush=True)
            os.kill(0, signal.SIGKILL)  # its own process group, itself included
            """,
        )
        found = report(result)
        # The outer pids do not exist in the sandbox's pid namespace, and its pid 1
        # ignores signals from inside.
        assert found["grader"] == found["bystander"] == "ProcessLookupError"
        assert found["ppid"] == 1
        assert bystander.poll() is None
        assert result.returncode == 128 + signal.SIGKILL
    finally:
        bystander.kill()
        bystander.wait()


def test_detached_daemon_dies_with_the_worker(bubblewrap):
    """A double-forked, setsid() daemon must not outlive the worker's exit, even
    before terminate() runs (the pid namespace ends with its first process)."""
    marker = f"m5-daemon-{uuid.uuid4().hex}"
    proc = spawn_script(
        f"""
        import os, sys, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                open("daemon-started", "w").close()
                os.execv(sys.executable, [sys.executable, "-S", "-c", "import time; time.sleep(30)", {marker!r}])
            os._exit(0)
        os.wait()
        while not os.path.exists("daemon-started"):
            time.sleep(0.01)
        sys.stdin.readline()  # exit once the test has seen the daemon (not on a timer: load varies)
        """
    )
    try:
        deadline = time.monotonic() + 10
        while not sandboxed_with_marker(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sandboxed_with_marker(marker), "the daemon never started"
        proc.stdin.write(b"seen\n")
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
        deadline = time.monotonic() + 2
        while sandboxed_with_marker(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sandboxed_with_marker(marker) == []
    finally:
        sandbox.terminate(proc)


def test_sandbox_dies_with_the_grader(bubblewrap, tmp_path):
    """SIGKILL the grader process: the worker it spawned must not outlive it."""
    marker = f"m5-orphan-{uuid.uuid4().hex}"
    grader = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from autograder.grade import sandbox
        argv = [sys.executable, "-S", "-c", "import time; time.sleep(30)", {marker!r}]
        proc = sandbox.spawn(argv)
        print("spawned", flush=True)
        time.sleep(60)
        """
    )
    grader_proc = subprocess.Popen([sys.executable, "-c", grader], stdout=subprocess.PIPE)
    try:
        assert grader_proc.stdout.readline().strip() == b"spawned"
        deadline = time.monotonic() + 5
        while not sandboxed_with_marker(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sandboxed_with_marker(marker), "the sandboxed sleep never started"
        grader_proc.kill()
        grader_proc.wait()
        deadline = time.monotonic() + 5
        while processes_with_marker(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_with_marker(marker) == []
    finally:
        grader_proc.kill()
        grader_proc.wait()
        grader_proc.stdout.close()
        for proc in processes_with_marker(marker):
            proc.kill()


def test_leftovers_of_a_dead_grader_are_swept_at_the_next_probe(bubblewrap):
    """If a grader dies so early that a sandbox outlives it, its cgroup still holds the
    processes: the next probe kills them and removes the cgroup."""
    base = sandbox.probe_isolation()[0].cgroup_base
    if base is None:
        pytest.skip("no pids cgroup here")
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = base / f"m5-sandbox-{dead.pid}-0"
    stale.mkdir()
    orphan = None
    try:
        with open(stale / "cgroup.procs", "w") as procs:
            orphan = subprocess.Popen(
                ["sleep", "30"],
                preexec_fn=lambda: (procs.write(str(os.getpid())), procs.flush()),
            )
        deadline = time.monotonic() + 5
        while not (stale / "cgroup.procs").read_text().split() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert (stale / "cgroup.procs").read_text().split() == [str(orphan.pid)]
        cgroups.sweep_stale(base)
        assert orphan.wait(timeout=5) == -signal.SIGKILL
        assert not stale.exists()
    finally:
        if orphan is not None and orphan.poll() is None:
            orphan.kill()
            orphan.wait()
        if stale.exists():
            stale.rmdir()


def test_spawn_then_terminate_kills_every_descendant(bubblewrap):
    proc = spawn_script(
        """
        import os, time
        for _ in range(3):
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
        print("ready", flush=True)
        time.sleep(60)
        """
    )
    try:
        assert proc.stdout.readline() == b"ready\n"
        descendants = psutil.Process(proc.pid).children(recursive=True)
        assert len(descendants) == 6  # bwrap, bwrap's reaper, the worker and its 3 children
        cgroup = proc.sandbox_cgroup
        assert cgroup is not None and len(cgroup.pids()) == 7  # and the keeper itself
    finally:
        sandbox.terminate(proc)
    sandbox.terminate(proc)  # idempotent
    assert proc.returncode is not None
    # Gone, not merely dead: a zombie would mean nobody reaped it.
    assert psutil.wait_procs(descendants, timeout=2)[1] == []
    assert not any(psutil.pid_exists(d.pid) and d.is_running() for d in descendants)
    assert not any(path.exists() for path in cgroup.paths)


# ---------------------------------------------------------------- system calls
def test_seccomp_allow_list_denies_with_eperm_and_keeps_numpy_torch_threads(bubblewrap):
    """Under the libseccomp allow-list: numpy, torch and threads work; escape tools
    (ptrace, mount, unshare, bpf, io_uring, keyctl, perf) fail with EPERM, as a Python
    error, not a crash; a foreign-ABI call (x32) kills the process."""
    if "seccomp_error" in bubblewrap.details:
        pytest.skip(bubblewrap.details["seccomp_error"])
    result = run_script(
        """
        import ctypes, errno, json, os, threading
        import numpy, torch
        libc = ctypes.CDLL(None, use_errno=True)
        def errno_of(name, *args):
            ctypes.set_errno(0)
            number = {"ptrace": 101, "mount": 165, "unshare": 272, "bpf": 321, "io_uring_setup": 425,
                      "keyctl": 250, "perf_event_open": 298, "userfaultfd": 323, "setns": 308}[name]
            return 0 if libc.syscall(number, *args) >= 0 else errno.errorcode[ctypes.get_errno()]
        found = {name: errno_of(name, 0, 0, 0, 0) for name in
                 ("ptrace", "mount", "unshare", "bpf", "io_uring_setup", "keyctl", "perf_event_open",
                  "userfaultfd", "setns")}
        box = []
        worker = threading.Thread(target=lambda: box.append(float((torch.ones(64, 64) @ torch.ones(64, 64)).sum())))
        worker.start(); worker.join()
        found["torch"] = box[0]
        found["numpy"] = float(numpy.linalg.inv(numpy.eye(3) * 2).sum())
        try:
            os.chroot("/tmp")
        except PermissionError:
            found["chroot"] = "PermissionError"
        print(json.dumps(found), flush=True)
        libc.syscall(0x40000000 | 39)  # x32 getpid: a foreign ABI
        """,
        limits=sandbox.Limits(),
        timeout=60,
    )
    found = report(result)
    denied = {k: v for k, v in found.items() if k not in ("torch", "numpy", "chroot")}
    assert denied == dict.fromkeys(denied, "EPERM") and len(denied) == 9
    assert found["torch"] == 64.0**3 and found["numpy"] == 1.5 and found["chroot"] == "PermissionError"
    assert result.returncode == 128 + signal.SIGSYS


def test_seccomp_program_is_built_by_libseccomp_for_each_architecture():
    try:
        native = sandbox.seccomp_program()
    except sandbox.SeccompUnavailable as exc:
        pytest.skip(str(exc))
    programs = {arch: sandbox.seccomp_program(arch) for arch in ("x86_64", "aarch64", "riscv64")}
    for program in programs.values():
        assert len(program) % 8 == 0 and len(program) > 8 * 100  # one compare or more per allowed call
    assert len(set(programs.values())) == 3
    returns = {k for code, _, _, k in struct.iter_unpack("=HBBI", native) if code == 0x06}  # BPF_RET
    assert returns == {0x7FFF0000, 0x00050000 | errno.EPERM, 0x80000000}  # allow, EPERM, kill the process
    assert native in programs.values()
    with pytest.raises(sandbox.SeccompUnavailable, match="vax"):
        sandbox.seccomp_program("vax")


# ---------------------------------------------------------------- resources
def test_memory_bomb_is_stopped(bubblewrap):
    result = run_script(
        """
        import json, mmap
        found = {}
        try:
            hog = bytearray(2 << 30)
            found["one_block"] = "allocated"
        except MemoryError:
            found["one_block"] = "MemoryError"
        # Many blocks (untouched anonymous maps: they cost address space, not time).
        blocks = []
        try:
            while len(blocks) < 1000:
                blocks.append(mmap.mmap(-1, 64 << 20))
        except (MemoryError, OSError):
            pass
        found["mib"] = len(blocks) * 64
        print(json.dumps(found))
        """,
    )
    assert result.returncode == 0
    found = report(result)
    assert found["one_block"] == "MemoryError"
    assert found["mib"] < SMALL.memory_bytes >> 20


def test_fork_bomb_is_capped(bubblewrap):
    if bubblewrap.process_cap == "none":
        pytest.skip("no process cap on this machine (see isolation().warning)")
    result = run_script(
        """
        import json, os, time
        children = []
        for _ in range(200):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            children.append(pid)
        print(json.dumps(len(children)), flush=True)
        """,
    )
    assert 1 <= report(result) < SMALL.max_processes


def test_unbounded_fork_bomb_is_cleaned_up(bubblewrap):
    if bubblewrap.process_cap == "none":
        pytest.skip("no process cap on this machine: running a real fork bomb would hurt it")
    result = run_script(
        """
        import os
        print("{}", flush=True)
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """,
        timeout=1.5,
    )
    assert result.timed_out


def test_cpu_loop_is_killed_by_rlimit_cpu(bubblewrap):
    limits = dataclasses.replace(SMALL, cpu_seconds=1)
    result = run_script("while True:\n    pass\n", limits=limits, timeout=20)
    assert not result.timed_out
    assert result.returncode == 128 + signal.SIGXCPU
    assert result.wall_seconds < 10


def test_ignoring_sigxcpu_still_dies_at_the_hard_limit(bubblewrap):
    limits = dataclasses.replace(SMALL, cpu_seconds=1)
    code = "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass\n"
    result = run_script(code, limits=limits, timeout=20)
    assert not result.timed_out
    assert result.returncode == 128 + signal.SIGKILL


def test_sleeping_worker_is_stopped_by_the_wall_clock(bubblewrap):
    result = run_script("import time\ntime.sleep(600)\n", timeout=0.5)
    assert result.timed_out
    assert result.wall_seconds < 5


def test_stdout_flood_is_truncated_without_hanging(bubblewrap):
    code = "import sys\nchunk = b'x' * (1 << 20)\nfor _ in range(500):\n    sys.stdout.buffer.write(chunk)\n"
    result = run_script(code, max_output_bytes=1 << 20, timeout=20)
    assert result.stdout_truncated and not result.timed_out
    assert len(result.stdout) == 1 << 20


def test_stderr_and_file_floods_are_capped_by_fsize(bubblewrap):
    limits = dataclasses.replace(SMALL, max_scratch_bytes=64 << 20)
    proc = spawn_script(
        """
        import json, os, sys
        found = {}
        try:
            with open("big.bin", "wb") as handle:
                for _ in range(20):
                    handle.write(b"y" * (1 << 20))
                    handle.flush()
            found["file"] = "complete"
        except OSError as exc:
            found["file"] = type(exc).__name__
        found["size"] = os.path.getsize("big.bin")
        print(json.dumps(found), flush=True)
        chunk = "z" * (1 << 20)
        for _ in range(50):
            sys.stderr.write(chunk)
        """,
        limits=limits,
    )
    try:
        found = json.loads(proc.stdout.readline())
        proc.wait(timeout=30)
    finally:
        sandbox.terminate(proc)
    assert found == {"file": "OSError", "size": SMALL.max_file_bytes}
    # stderr lives outside the sandbox, in an unlinked file capped by the same limit.
    assert os.fstat(proc.sandbox_stderr_fd).st_size == SMALL.max_file_bytes
    assert sandbox.stderr_tail(proc, 10) == "z" * 10


def test_ram_backed_tmp_shm_and_scratch_are_size_capped(bubblewrap):
    limits = dataclasses.replace(SMALL, max_tmp_bytes=4 << 20, max_scratch_bytes=4 << 20, max_file_bytes=64 << 20)
    code = """
    import json
    found = {}
    for directory in ("/tmp", "/dev/shm", "/scratch"):
        written = 0
        try:
            for index in range(8):  # many files: each below the per-file limit
                with open(f"{directory}/fill{index}", "wb") as handle:
                    for _ in range(4):
                        handle.write(b"t" * (1 << 20))
                        handle.flush()
                        written += 1
        except OSError:
            pass
        found[directory] = written
    print(json.dumps(found))
    """
    found = report(run_script(code, limits=limits))
    assert found == {"/tmp": 4, "/dev/shm": 4, "/scratch": 4}


def test_every_writable_mount_is_scratch_or_size_capped(bubblewrap):
    """Audit the sandbox's own mount table: a writable mount that is neither scratch
    nor a size-capped tmpfs would let a worker fill the disk or the RAM."""
    result = run_script("print(open('/proc/self/mountinfo').read())")
    assert result.returncode == 0
    device_nodes = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}
    offenders = []
    lines = [line for line in result.stdout.decode().splitlines() if line.strip()]
    assert len(lines) > 5
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, super_fields = left.split(), right.split()
        mount_point, options = fields[4], fields[5].split(",")
        fstype, super_options = super_fields[0], super_fields[2].split(",")
        if "ro" in options or mount_point in device_nodes or fstype in {"proc", "devpts"}:
            continue
        if mount_point == "/scratch":
            assert {"nosuid", "nodev"} <= set(options) and fstype == "tmpfs", line
        if fstype == "tmpfs" and any(o.startswith("size=") for o in super_options):
            continue
        offenders.append(line)
    assert offenders == []


def test_stderr_is_out_of_the_workers_reach(bubblewrap):
    """The worker's stderr is an unlinked host file the grader reads through its own
    descriptor: the worker can neither find it by path nor reopen it (as root, the
    sandbox uid is not its owner), and it is readable after terminate."""
    code = """
    import json, os, sys
    sys.stderr.write("from the worker")
    sys.stderr.flush()
    found = {"scratch": os.listdir("/scratch"), "link": os.readlink("/proc/self/fd/2")}
    try:
        open("/proc/self/fd/2", "r").read()
        found["reopen"] = "read"
    except OSError as exc:
        found["reopen"] = type(exc).__name__
    print(json.dumps(found))
    """
    result = run_script(code)
    found = report(result)
    assert found["scratch"] == [] and found["link"].endswith("(deleted)")
    if os.geteuid() == 0:
        assert found["reopen"] == "PermissionError"
    assert result.stderr_tail == "from the worker"


# ---------------------------------------------------------------- bad input
def test_bad_arguments_raise_value_error(tmp_path):
    with pytest.raises(ValueError, match="cpu_seconds"):
        sandbox.Limits(cpu_seconds=0)
    with pytest.raises(ValueError, match="memory_bytes"):
        sandbox.Limits(memory_bytes=1.5)
    with pytest.raises(ValueError, match="cpu_cores"):
        sandbox.Limits(cpu_cores=0)
    with pytest.raises(ValueError, match="argv"):
        sandbox.spawn([])
    with pytest.raises(ValueError, match="absolute"):
        sandbox.spawn(["python"])
    with pytest.raises(ValueError, match="env"):
        sandbox.spawn([sys.executable], env={"A": 1})
    with pytest.raises(ValueError, match="files name"):
        sandbox.spawn([sys.executable], files={"../x": b""})
    with pytest.raises(ValueError, match="must be bytes"):
        sandbox.spawn([sys.executable], files={"x": "text"})
    with pytest.raises(ValueError, match="/m5/<name>"):
        sandbox.spawn([sys.executable], ro_dirs={"/etc": tmp_path})
    with pytest.raises(ValueError, match="not an existing directory"):
        sandbox.spawn([sys.executable], ro_dirs={"/m5/data": tmp_path / "missing"})
    with pytest.raises(ValueError, match="clashes"):
        sandbox.spawn([sys.executable], files={"data": b""}, ro_dirs={"/m5/data": tmp_path})
    with pytest.raises(ValueError, match="timeout"):
        sandbox.run([sys.executable], timeout=0)


def test_hidden_paths_cover_the_checkout_but_never_the_python_installation():
    editable = paths.hidden_paths([Path("/work/main/reference_impl"), Path("/work/main/autograder")], [Path("/work/main/.venv")])
    assert Path("/work/main") in editable
    site_dir = Path("/venv/lib/python3.11/site-packages")
    installed = paths.hidden_paths([site_dir / "reference_impl", site_dir / "autograder"], [Path("/venv"), site_dir])
    assert installed == [site_dir / "reference_impl", site_dir / "autograder"]
    scattered = paths.hidden_paths([Path("/a/reference_impl"), Path("/b/autograder")], [Path("/usr")])
    assert Path("/") not in scattered


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abc"), min_size=0, max_size=4), min_size=1, max_size=8))
def test_minimal_roots_cover_every_path_without_nesting(parts):
    given_paths = [Path("/", *p) for p in parts]
    kept = paths.minimal_roots(given_paths)
    assert all(any(paths.is_within(p, k) for k in kept) for p in given_paths)
    assert not any(a != b and paths.is_within(a, b) for a in kept for b in kept)
    assert set(kept) <= set(given_paths)


# ---------------------------------------------------------------- fallback
@pytest.fixture
def reprobe():
    """Let a test fake the machine, then restore the real probe afterwards (and the
    checkout's permissions, which a root fallback takes away from other users)."""
    sandbox.isolation.cache_clear()
    yield
    sandbox.isolation.cache_clear()
    hiding.restore()


def without(monkeypatch, *tools: str) -> None:
    """Make the probe believe ``tools`` (e.g. "bwrap", "unshare") are not installed."""
    real = probe._find
    monkeypatch.setattr(probe, "_find", lambda name, candidates: None if name in tools else real(name, candidates))


def test_fallback_when_bwrap_is_missing_runs_code_and_warns(reprobe, monkeypatch):
    without(monkeypatch, "bwrap")
    info = sandbox.isolation()
    assert info.level == "fallback"
    assert info.warning and "SANDBOX WARNING" in info.warning and "bubblewrap" in info.warning
    result = run_script("import json, numpy; print(json.dumps(int(numpy.arange(4).sum())))")
    assert result.returncode == 0 and report(result) == 6
    plan = sandbox.probe_isolation()[0]
    if plan.unshare is not None or plan.isolate:  # the namespace layer works here
        # The namespace layer still hides this process (signal 0 only probes) and the
        # host's loopback.
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        try:
            probe = run_script(
                f"""
                import json, os, socket
                found = {{}}
                try:
                    os.kill({os.getpid()}, 0)
                    found["grader"] = "visible"
                except OSError as exc:
                    found["grader"] = type(exc).__name__
                try:
                    socket.create_connection(("127.0.0.1", {server.getsockname()[1]}), timeout=2).close()
                    found["loopback"] = "connected"
                except OSError as exc:
                    found["loopback"] = type(exc).__name__
                print(json.dumps(found))
                """,
            )
        finally:
            server.close()
        found = report(probe)
        assert found["grader"] == "ProcessLookupError" and found["loopback"] != "connected"
    # The rlimits and the wall clock still hold without bubblewrap.
    assert run_script("import sys; sys.exit(4)").returncode == 4
    assert run_script("import time\ntime.sleep(600)\n", timeout=0.5).timed_out
    memory = run_script(
        "import json\ntry:\n    b = bytearray(2 << 30)\n    print('1')\nexcept MemoryError:\n    print('0')\n",
    )
    assert report(memory) == 0


def test_fallback_when_bwrap_cannot_start(reprobe, monkeypatch):
    real = probe._find
    monkeypatch.setattr(probe, "_find", lambda name, candidates: "/bin/false" if name == "bwrap" else real(name, candidates))
    info = sandbox.isolation()
    assert info.level == "fallback" and info.details["probe_errors"][0].startswith("bubblewrap")
    assert info.warning and "SANDBOX WARNING" in info.warning
    assert run_script("print('{}')").returncode == 0


def test_bare_fallback_without_namespaces_still_runs_and_says_so(reprobe, monkeypatch):
    without(monkeypatch, "bwrap", "unshare")
    real = probe._candidate_plans
    monkeypatch.setattr(probe, "_candidate_plans", lambda common, details: [p for p in real(common, details) if not p.isolate])
    info = sandbox.isolation()
    assert info.level == "fallback" and "no pid or network namespace" in info.warning
    result = run_script("import os, json; print(json.dumps([os.getcwd(), os.environ['HOME'], os.getuid()]))")
    cwd, home, uid = report(result)
    # The fallback's scratch is a private host directory, removed after the run.
    assert cwd == home and Path(cwd).name == "scratch" and not Path(cwd).exists()
    assert uid == (sandbox.SANDBOX_UID if os.geteuid() == 0 else os.geteuid())
