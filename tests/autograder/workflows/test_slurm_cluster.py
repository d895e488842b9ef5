"""docs/sharding/slurm-array.sbatch and slurm-merge.sbatch run on a real SLURM: a one-node
cluster (munged, slurmctld, slurmd) started under a temporary folder of this machine, the
array and the merge submitted as docs/sharding.md shows them, and the merged gradebook
compared with an unsharded run of the same class.

Slow (``make test-slow``, which installs slurm-wlm and munge first: ``make slurm-deps``; the
test runs that target itself when they are missing). Skipped, saying why, where they cannot
be installed (not root, no apt) or where slurmd cannot start jobs (not root). Every daemon
and every process of a job is stopped at the end, whatever happened."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from fixture_paths import REPO  # tests/autograder is on sys.path (tests/conftest.py)

from tests.autograder.grade.test_shards import _class  # the class of test_shards.py (tests/autograder is on sys.path)

pytestmark = pytest.mark.slow

ROOT = REPO
ARRAY_FILE = ROOT / "docs" / "sharding" / "slurm-array.sbatch"
MERGE_FILE = ROOT / "docs" / "sharding" / "slurm-merge.sbatch"
M5 = ROOT / ".venv" / "bin" / "m5"
SBIN_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", "/usr/local/sbin"])
TOOLS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo", "slurmctld", "slurmd", "munged")
MARKER = "M5_SLURM_TEST_CLUSTER"  # in the environment of every daemon and job: the teardown's sweep
IDLE_WAIT = 60  # seconds for the node to show idle
JOBS_WAIT = 900  # seconds for the array and the merge (about 30 s on 2 cores)
# What differs between two runs of one class: timings (the sheets never hold them).
TIMING_KEYS = {"execution_time", "seconds", "slowest"}
WAITING = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING")


def _which(name: str) -> str | None:
    return shutil.which(name, path=SBIN_PATH)


def _slurm_tools() -> dict[str, str]:
    """{tool: path}, after `make slurm-deps` if any is missing; skips (saying why) when they
    cannot be had or cannot run a job here."""
    if os.geteuid() != 0:
        pytest.skip("slurmd starts jobs as their user and must run as root; run make test-slow as root")
    if any(_which(t) is None for t in TOOLS):
        if shutil.which("make") is None:
            pytest.skip(f"slurm-wlm or munge missing ({', '.join(t for t in TOOLS if _which(t) is None)}) and no make to install them")
        done = subprocess.run(["make", "-s", "slurm-deps"], cwd=ROOT, capture_output=True, text=True, timeout=900)
        missing = [t for t in TOOLS if _which(t) is None]
        if missing:
            said = (done.stdout + done.stderr).strip()
            pytest.skip(f"slurm-wlm and munge could not be installed (still missing: {', '.join(missing)}): {said}")
    if not M5.exists():
        pytest.skip(f"{M5} is missing: the job files run the checkout's .venv (make test makes it)")
    return {t: _which(t) for t in TOOLS}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"({exc})"


class Cluster:
    """One node (this machine) under ``folder``: its own munge key and socket, its own
    slurm.conf, state, spool, logs and pid files, its own ports."""

    def __init__(self, folder: Path, tools: dict[str, str]):
        self.folder, self.tools = folder, tools
        self.conf = folder / "slurm.conf"
        self.socket = folder / "munge" / "munge.socket"
        self.logs = [folder / "munge" / "munged.log", folder / "log" / "slurmctld.log", folder / "log" / "slurmd.log"]
        self.pid_files = [folder / "run" / "slurmd.pid", folder / "run" / "slurmctld.pid", folder / "munge" / "munged.pid"]
        self.env = {**os.environ, "SLURM_CONF": str(self.conf), MARKER: str(folder), "PATH": SBIN_PATH}
        self.jobs: list[str] = []
        self.node: dict[str, str] = {}

    def run(self, *command: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
        kwargs.setdefault("env", self.env)
        done = subprocess.run([self.tools.get(command[0], command[0]), *command[1:]], capture_output=True, text=True, timeout=60, **kwargs)
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(command)}: exit {done.returncode}\n{done.stdout}{done.stderr}\n{self.diagnosis()}")
        return done

    def diagnosis(self) -> str:
        return "\n".join(f"--- {log}:\n{_tail(log)}" for log in self.logs)

    def start(self) -> None:
        for sub in ("munge", "state", "spool", "log", "run"):
            (self.folder / sub).mkdir(mode=0o755)
        self.folder.chmod(0o755)  # munged wants its socket's folders open to all (execute)
        key = self.folder / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        munge = self.folder / "munge"
        self.run(
            "munged",
            f"--key-file={key}",
            f"--socket={self.socket}",
            f"--pid-file={munge / 'munged.pid'}",
            f"--log-file={munge / 'munged.log'}",
            f"--seed-file={munge / 'munged.seed'}",
        )
        # The node as slurmd finds it (its name, CPUs, sockets, memory): a node declared with
        # more than it has would be drained.
        found = self.run("slurmd", "-C").stdout.splitlines()[0]
        self.node = dict(field.split("=", 1) for field in found.split())
        self.conf.write_text(
            "\n".join(
                [
                    "ClusterName=m5test",
                    f"SlurmctldHost={self.node['NodeName']}(127.0.0.1)",
                    f"SlurmctldPort={_free_port()}",
                    f"SlurmdPort={_free_port()}",
                    "SlurmUser=root",
                    "SlurmdUser=root",
                    "AuthType=auth/munge",
                    "CredType=cred/munge",
                    f"AuthInfo=socket={self.socket}",
                    f"StateSaveLocation={self.folder / 'state'}",
                    f"SlurmdSpoolDir={self.folder / 'spool'}",
                    f"SlurmctldPidFile={self.folder / 'run' / 'slurmctld.pid'}",
                    f"SlurmdPidFile={self.folder / 'run' / 'slurmd.pid'}",
                    f"SlurmctldLogFile={self.folder / 'log' / 'slurmctld.log'}",
                    f"SlurmdLogFile={self.folder / 'log' / 'slurmd.log'}",
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_Core",
                    "SchedulerType=sched/backfill",
                    "JobCompType=jobcomp/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "AccountingStorageType=accounting_storage/none",
                    "MpiDefault=none",
                    "SwitchType=switch/none",
                    "ReturnToService=2",
                    "MinJobAge=3600",  # finished jobs stay in scontrol's view until the checks
                    f"{found} NodeAddr=127.0.0.1 State=UNKNOWN",
                    "PartitionName=m5 Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
                    "",
                ]
            )
        )
        self.run("slurmctld", "-f", str(self.conf))
        self.run("slurmd", "-f", str(self.conf))
        deadline = time.monotonic() + IDLE_WAIT
        state = ""
        while time.monotonic() < deadline:
            state = self.run("sinfo", "-h", "-N", "-o", "%N %T", check=False).stdout.strip()
            if state.endswith(" idle"):
                return
            time.sleep(1)
        raise AssertionError(f"the node is not idle after {IDLE_WAIT} s (sinfo: {state!r})\n{self.diagnosis()}")

    def submit(self, *command: str, cwd: Path, env: dict) -> str:
        """sbatch --parsable ...: the job's id."""
        job = self.run("sbatch", "--parsable", *command, cwd=cwd, env={**self.env, **env}).stdout.strip().split(";")[0]
        self.jobs.append(job)
        return job

    def states(self, job: str) -> list[dict[str, str]]:
        """scontrol's record of ``job`` (one per task of an array)."""
        lines = self.run("scontrol", "-o", "show", "job", job).stdout.splitlines()
        return [dict(re.findall(r"(\w+)=(\S*)", line)) for line in lines if line.strip()]

    def stop(self) -> None:
        """Cancel our jobs, stop the daemons (pid files), then end any process still carrying
        this cluster's marker in its environment (a job's slurmstepd or grader)."""
        if self.jobs and self.conf.exists():
            self.run("scancel", *self.jobs, check=False)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and self.run("squeue", "-h", "-t", "R,CG", check=False).stdout.strip():
                time.sleep(1)
        for pid_file in self.pid_files:
            try:
                pid = int(pid_file.read_text().split()[0])
                process = psutil.Process(pid)
                if not any(name in process.name() for name in ("slurmd", "slurmctld", "munged")):
                    continue  # the pid was reused: not ours
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(15)
                except psutil.TimeoutExpired:
                    process.kill()
                    process.wait(5)
            except (OSError, ValueError, IndexError, psutil.Error):
                continue
        for _ in range(3):
            left = _marked(str(self.folder))
            for process in left:
                with contextlib.suppress(psutil.Error):
                    process.kill()
            psutil.wait_procs(left, timeout=5)
        assert not _marked(str(self.folder)), "processes of the test cluster are still running"


def _marked(folder: str) -> list[psutil.Process]:
    """Processes whose environment says they belong to the cluster under ``folder``."""
    found = []
    for process in psutil.process_iter():
        if process.pid == os.getpid():
            continue
        try:
            if process.environ().get(MARKER) == folder:
                found.append(process)
        except psutil.Error:
            continue
    return found


@pytest.fixture
def cluster():
    tools = _slurm_tools()
    base = Path(tempfile.gettempdir())
    if " " in str(base) or len(str(base)) > 40:
        base = Path("/tmp")  # slurm.conf paths have no quoting, and the munge socket's path is short
    folder = Path(tempfile.mkdtemp(prefix="m5-slurm-", dir=base))
    running = Cluster(folder, tools)
    try:
        running.start()
        yield running
    finally:
        try:
            running.stop()
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _requested(path: Path, option: str) -> str:
    return re.search(rf"^#SBATCH --{option}=(\S+)$", path.read_text(), re.M)[1]


def _megabytes(text: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([KMGT]?)", text).groups()
    return int(number) * {"K": 1 / 1024, "": 1, "M": 1, "G": 1024, "T": 1024 * 1024}[unit]


def _without_timings(value):
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def _files(out: Path) -> set[str]:
    return {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}


def test_the_documented_job_array_and_merge_give_the_unsharded_gradebook(cluster, tmp_path, correct_source):
    submitted = _class(tmp_path / "class", correct_source)
    (submitted / "erin").mkdir()
    (submitted / "erin" / "homework.ipynb").write_text("{ not json")  # a shard that exits 1: graded, one row says why
    grades, work = tmp_path / "grades", tmp_path / "work"
    grades.mkdir()
    work.mkdir()
    env = {"M5_CHECKOUT": str(ROOT), "M5_SUBMITTED": str(submitted), "M5_GRADES": str(grades)}
    # The #SBATCH lines as written, unless this node is smaller than they ask (then sbatch's own
    # options override them, as docs/sharding.md says a cluster user may).
    overrides = []
    if int(cluster.node["CPUs"]) < int(_requested(ARRAY_FILE, "cpus-per-task")):
        overrides.append(f"--cpus-per-task={cluster.node['CPUs']}")
    if int(cluster.node["RealMemory"]) < _megabytes(_requested(ARRAY_FILE, "mem")):
        overrides.append(f"--mem={cluster.node['RealMemory']}M")
    n = int(re.fullmatch(r"1-(\d+)", _requested(ARRAY_FILE, "array"))[1])

    started = time.monotonic()
    array = cluster.submit(*overrides, str(ARRAY_FILE), cwd=work, env=env)
    merge = cluster.submit(f"--dependency=afterok:{array}", str(MERGE_FILE), cwd=work, env=env)
    deadline = started + JOBS_WAIT
    while time.monotonic() < deadline:
        state = cluster.states(merge)[0]
        if state["JobState"] not in WAITING or state.get("Reason") == "DependencyNeverSatisfied":  # a task failed
            break
        time.sleep(2)
    took = time.monotonic() - started
    logs = "\n".join(f"--- {p.name}:\n{_tail(p)}" for p in sorted(work.glob("*.log")))
    tasks, merged_job = cluster.states(array), cluster.states(merge)[0]
    summary = [(t.get("ArrayTaskId"), t["JobState"], t["ExitCode"], t.get("Reason")) for t in tasks]
    failed = f"merge {merged_job['JobState']} ({merged_job.get('Reason')}) after {took:.0f} s; tasks {summary}\n{logs}"
    assert merged_job["JobState"] == "COMPLETED", failed
    assert sorted(int(t["ArrayTaskId"]) for t in tasks) == list(range(1, n + 1))
    assert all(t["JobState"] == "COMPLETED" and t["ExitCode"] == "0:0" for t in tasks), summary
    assert merged_job["ExitCode"] == "0:0"
    print(f"\nthe array of {n} shards and the merge took {took:.0f} s on the test cluster")

    task_logs = [(work / f"m5-grade-{array}_{k}.log").read_text() for k in range(1, n + 1)]
    assert sum("could not be graded" in log for log in task_logs) == 1  # erin's shard exited 1 and still counts as done
    assert not any("SANDBOX WARNING" in log for log in task_logs), "a shard graded in the fallback sandbox"
    assert f"merged {n} shards, 6 submissions" in (work / f"m5-merge-{merge}.log").read_text()

    whole = tmp_path / "whole"
    done = subprocess.run(
        [str(M5), "grade", str(submitted), "--jobs", "2", "--out", str(whole), "--csv-format", "moodle"],
        capture_output=True,
        text=True,
        timeout=600,
        env={k: v for k, v in os.environ.items() if not k.startswith("SLURM")},
    )
    assert done.returncode == 1, done.stdout + done.stderr  # erin's notebook is not one
    class_out = grades / "class"
    assert _files(class_out) == _files(whole)
    for name in sorted(_files(whole)):
        ours, theirs = (whole / name).read_bytes(), (class_out / name).read_bytes()
        if name.endswith(".json") and ours != theirs:  # results.json, grades.json, class_report.json: timings differ
            assert _without_timings(json.loads(ours)) == _without_timings(json.loads(theirs)), name
        elif name != "class_report.html":  # the page of class_report.json, timings included
            assert ours == theirs, name
    for sheet in ("grades.csv", "grades_moodle.csv", "grades_final.csv"):
        assert (class_out / sheet).read_bytes() == (whole / sheet).read_bytes(), sheet
