"""The fallback in a container like Gradescope's: Docker's default profile, no bubblewrap.

``docker_like`` runs ``m5 grade`` as root without CAP_SYS_ADMIN and with Docker's
seccomp rules on namespaces, on a copy of the project (a space in its path, its own
``.venv``, canary lines at the top of every file of ``reference_impl`` and
``autograder/hidden``). The grader must take the fallback, and then:

* no output (results.json, grades.csv, the grader's stdout and stderr) holds a canary;
* a hostile file that reads every place the grader's files may be, and reports what it
  finds through stdout, stderr and its feedback, finds nothing (full marks);
* nothing connects to a listener on the host's loopback: the allow-list the keeper
  loads denies every socket call, and the probe, run as the worker, finds none;
* the correct demo submission keeps full marks.

Before the fallback hid anything, the canaries were in results.json and grades.csv
(the test fails on the code before this change).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

import docker_like
import pytest
from adversarial import build
from fixture_paths import FIXTURES  # tests/autograder is on sys.path (tests/conftest.py)

HERE = FIXTURES
CANARY = "M5CANARY" + secrets.token_hex(8)
FULL = 120.0

pytestmark = pytest.mark.skipif(docker_like.can_simulate() is not None, reason=f"no Docker-like simulation: {docker_like.can_simulate()}")

CONNECT_HOME = """
import socket

_REACHED = []
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    _REACHED.append({port})
except OSError:
    pass
if _REACHED:
    def dqn_targets(*args, **kwargs):
        raise ValueError("connected")
"""


class Listener:
    """A TCP listener on the host's loopback that counts the connections it accepts."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.server.close()


@pytest.fixture(scope="module")
def container():
    """A temporary folder (0755, a space in its name) with the project copy and its cache."""
    tmp = Path(tempfile.mkdtemp(prefix="m5 fallback-", dir="/var/tmp"))  # the container has its own /tmp
    os.chmod(tmp, 0o755)
    try:
        root = docker_like.make_project(tmp, canary=CANARY)
        docker_like.copy_cache(root / ".venv" / "bin" / "python", root, tmp / "cache")
        yield tmp, root
    finally:
        subprocess.run(["chmod", "-R", "u+rwX", str(tmp)], check=False)
        shutil.rmtree(tmp, ignore_errors=True)


def grade(container, submissions: dict[str, str], name: str) -> dict:
    """``m5 grade`` of ``submissions`` ({file name: source}) under the simulation: its
    outputs as {"stdout", "stderr", "files": {relative path: text}, "scores": {stem: score}}."""
    tmp, root = container
    subs = tmp / f"subs-{name}"
    subs.mkdir(mode=0o700)
    for file_name, source in submissions.items():
        (subs / file_name).write_text(source, encoding="utf-8")
    out = tmp / f"out-{name}"
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "M5_CACHE_DIR": str(tmp / "cache"),
        "M5_PROGRESS": "0",
    }
    argv = [str(root / ".venv" / "bin" / "python"), "-m", "autograder.cli", "grade", str(subs), "--out", str(out), "--no-shrink"]
    result = docker_like.run(argv, capture_output=True, text=True, cwd=root, env=env, timeout=1500)
    files = {str(p.relative_to(out)): p.read_text(encoding="utf-8", errors="replace") for p in sorted(out.rglob("*")) if p.is_file()}
    scores = {}
    for rel, text in files.items():
        if rel.endswith("results.json"):
            data = json.loads(text)
            scores[Path(Path(rel).parent.name).stem] = data
    return {"stdout": result.stdout, "stderr": result.stderr, "returncode": result.returncode, "files": files, "results": scores}


def probe(container) -> dict:
    """isolation() as the copy's grader sees it under the simulation."""
    tmp, root = container
    code = (
        "import json; from autograder.grade import sandbox; i = sandbox.isolation(); "
        "print(json.dumps({'level': i.level, 'warning': i.warning, 'details': i.details}))"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": "/root", "M5_CACHE_DIR": str(tmp / "cache")}
    result = docker_like.run(
        [str(root / ".venv" / "bin" / "python"), "-c", code], capture_output=True, text=True, cwd=root, env=env, timeout=300
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def kernel_scores(results: dict) -> dict[str, float]:
    """{kernel: score} from one results.json (Gradescope's tests list)."""
    return {t.get("name", ""): t.get("score") for t in results.get("tests", [])}


def assert_no_leak(graded: dict) -> None:
    for where, text in [("stdout", graded["stdout"]), ("stderr", graded["stderr"]), *graded["files"].items()]:
        assert CANARY not in text, f"a secret leaked into {where}"


def test_docker_like_simulation_takes_the_fallback_and_hides_the_secrets(container):
    assert not docker_like.bwrap_works()
    info = probe(container)
    assert info["level"] == "fallback"
    assert "bubblewrap is unavailable" in info["warning"]
    assert info["details"]["readable_secrets"] == []
    assert "seccomp allow-list, loaded by the keeper" in info["warning"]
    assert "hidden from uid 65534 by file permissions" in info["warning"]


def test_peek_exfiltrate_and_network_attacks_get_nothing_and_correct_keeps_full_marks(container):
    listener = Listener()
    try:
        submissions = {
            "correct.py": build.BASE_SUBMISSION.read_text(encoding="utf-8"),
            "peek_at_reference.py": build.compose((build.ATTACKS / "peek_at_reference.py").read_text()),
            "network_access.py": build.compose((build.ATTACKS / "network_access.py").read_text()),
            "exfiltrate.py": build.compose((HERE / "adversarial" / "fallback_exfiltrate.py").read_text()),
            "connect_home.py": build.compose(CONNECT_HOME.format(port=listener.port)),
        }
        graded = grade(container, submissions, "fast")
    finally:
        listener.close()
    assert graded["returncode"] == 0, graded["stderr"][-2000:]
    assert "SANDBOX WARNING" in graded["stdout"] + graded["stderr"]
    assert_no_leak(graded)
    results = graded["results"]
    assert "correct" in results, (list(graded["files"]), graded["stderr"][-2000:])
    assert results["correct"]["score"] == FULL, json.dumps(results["correct"], ensure_ascii=False)[:6000]
    assert results["exfiltrate"]["score"] == FULL, json.dumps(results["exfiltrate"])[:3000]
    # masked_token_nll delegates to reference_impl, which cannot be imported: 0 of 10.
    assert results["peek_at_reference"]["score"] == FULL - 10
    assert probe(container)["details"]["worker_socket"] is False  # measured as the worker
    assert listener.accepted == 0
    assert results["connect_home"]["score"] == FULL
    assert results["network_access"]["score"] == FULL


@pytest.mark.slow
def test_whole_hostile_corpus_reads_no_secret_and_connects_nowhere(container):
    listener = Listener()
    try:
        submissions = {
            f"{name}.py": build.compose((build.ATTACKS / f"{name}.py").read_text(encoding="utf-8")) for name in build.attack_names()
        }
        submissions["exfiltrate.py"] = build.compose((HERE / "adversarial" / "fallback_exfiltrate.py").read_text())
        submissions["connect_home.py"] = build.compose(CONNECT_HOME.format(port=listener.port))
        submissions["correct.py"] = build.BASE_SUBMISSION.read_text(encoding="utf-8")
        graded = grade(container, submissions, "corpus")
    finally:
        listener.close()
    assert graded["returncode"] == 0, graded["stderr"][-2000:]
    assert_no_leak(graded)
    results = graded["results"]
    assert set(results) == {Path(name).stem for name in submissions}
    assert results["correct"]["score"] == FULL
    assert results["exfiltrate"]["score"] == FULL
    assert results["peek_at_reference"]["score"] == FULL - 10
    assert probe(container)["details"]["worker_socket"] is False
    assert listener.accepted == 0
    assert results["connect_home"]["score"] == FULL


# ---------------------------------------------------------------- the keeper's seccomp loader
@pytest.fixture
def bare_fallback(monkeypatch):
    """The probe as without bubblewrap and without namespaces (restored afterwards)."""
    from autograder.grade import sandbox
    from autograder.grade.sandbox import hiding, probe

    real_find, real_plans = probe._find, probe._candidate_plans
    monkeypatch.setattr(probe, "_find", lambda name, candidates: None if name in ("bwrap", "unshare") else real_find(name, candidates))
    monkeypatch.setattr(probe, "_candidate_plans", lambda common, details: [p for p in real_plans(common, details) if not p.isolate])
    sandbox.isolation.cache_clear()
    yield probe.probe_isolation()[0]
    sandbox.isolation.cache_clear()
    hiding.restore()


def _program_without_sockets() -> bytes:
    """The allow-list minus socket and socketpair, built here with libseccomp (the rules
    themselves are not this test's business: it checks that the keeper loads a program)."""
    import errno as errnos
    import tempfile as tempfiles

    import pyseccomp

    from autograder.grade.sandbox import seccomp

    rules = pyseccomp.SyscallFilter(pyseccomp.ERRNO(errnos.EPERM))
    for name in seccomp.ALLOWED_SYSCALLS:
        if name not in ("socket", "socketpair") and pyseccomp.resolve_syscall(pyseccomp.system_arch(), name) >= 0:
            rules.add_rule(pyseccomp.ALLOW, name)
    with tempfiles.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()


def test_the_keeper_loads_the_program_it_is_given_before_the_command_runs(bare_fallback):
    import dataclasses
    import sys

    from autograder.grade.sandbox import process

    plan = dataclasses.replace(bare_fallback, seccomp=_program_without_sockets())
    assert plan.level == "fallback" and plan.keeper_seccomp and plan.unshare is None and not plan.isolate
    listener = Listener()
    try:
        code = (
            "import json, socket\n"
            "status = dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {listener.port}), timeout=2).close()\n"
            "    net = 'connected'\n"
            "except OSError as exc:\n"
            "    net = type(exc).__name__\n"
            "print(json.dumps([status['Seccomp'].strip(), status['NoNewPrivs'].strip(), net]))\n"
        )
        result = process.run_with_plan(plan, [sys.executable, "-S", "-c", code], timeout=60)
    finally:
        listener.close()
    assert json.loads(result.stdout.decode().strip().splitlines()[-1]) == ["2", "1", "PermissionError"]
    assert listener.accepted == 0
