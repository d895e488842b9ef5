"""Run a command as Docker's default profile would (a Gradescope-like container), as root.

What :func:`command` builds, in order:

1. the container's own pid and mount namespaces (made while it still may): its own
   ``/proc`` (the host's processes, e.g. other graders' workers of uid 65534, are not
   in a container), its own empty ``/tmp``, and host directories covered by an open
   tmpfs where only named paths come back read-only: the interpreter under a ``0700``
   ``/root`` becomes reachable (on Gradescope Python lives under ``/usr``), and the
   development checkouts under ``/work`` vanish (a real container holds only the
   project copy under test, which must therefore live outside ``/tmp``). The network
   namespace stays the host's (as ``--network=host``), so a listener on the host's
   loopback is a fair target. The container gets its own child of each v1 cgroup (pids,
   cpu, memory), so the grader inside makes and sweeps its worker cgroups there: a
   grader in another pid namespace must never take a host grader's live cgroups for
   leftovers of a dead one (the host's pids mean nothing inside);
2. Docker's seccomp rules on namespaces: ``unshare`` and ``setns`` fail with EPERM,
   ``clone3`` with ENOSYS (glibc then falls back to ``clone``), and ``clone`` with any
   ``CLONE_NEW*`` flag in its first argument with EPERM;
3. ``capsh``: the capabilities Docker does not grant (``CAP_SYS_ADMIN`` first of all)
   leave the bounding set, so the command runs as root without them;
4. exec of the command.

Inside, ``bwrap --ro-bind / / true`` fails (:func:`bwrap_works` checks it), so the
grader really takes its fallback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

CAPSH = shutil.which("capsh") or "/usr/sbin/capsh"
# Docker's default capability set; every other one is dropped.
DOCKER_CAPS = {
    "cap_chown",
    "cap_dac_override",
    "cap_fsetid",
    "cap_fowner",
    "cap_mknod",
    "cap_net_raw",
    "cap_setgid",
    "cap_setuid",
    "cap_setfcap",
    "cap_setpcap",
    "cap_net_bind_service",
    "cap_sys_chroot",
    "cap_kill",
    "cap_audit_write",
}
CLONE_NEW_FLAGS = (
    0x00020000,
    0x02000000,
    0x04000000,
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
    0x00000080,
)  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME

SETUP = r"""
import ctypes, errno, json, os, sys
import pyseccomp as sc
spec = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)

def check(result, what):
    if result != 0:
        sys.exit("docker_like: %s failed: %s" % (what, os.strerror(ctypes.get_errno())))

def wait_for(pid):
    # Reap everything (pid 1 of the container inherits orphans) until ``pid`` exits.
    while True:
        try:
            done, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        if done == pid:
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)

def own_cgroups():
    # The container's own v1 cgroups: a child of each of this process's cgroups, so the
    # grader inside makes (and sweeps) its worker cgroups there, never next to a host
    # grader's, whose pids mean nothing in the container's pid namespace.
    points = {}
    for line in open("/proc/self/mountinfo"):
        left, _, right = line.partition(" - ")
        if right.split()[:1] == ["cgroup"]:
            for option in right.split()[2].split(","):
                points.setdefault(option, left.split()[4])
    made = []
    for line in open("/proc/self/cgroup"):
        _, controllers, rel = line.rstrip("\n").split(":", 2)
        wanted = [c for c in controllers.split(",") if c in ("pids", "cpu", "memory") and c in points]
        if wanted:
            parent = points[wanted[0]] + rel.rstrip("/")
            child = parent + "/m5-docker-like-%d" % os.getpid()
            try:
                os.mkdir(child)
                with open(child + "/cgroup.procs", "w") as handle:
                    handle.write(str(os.getpid()))
                made.append((parent, child))
            except OSError:
                pass
    return made

def leave_cgroups(made):
    for parent, child in made:
        try:
            with open(parent + "/cgroup.procs", "w") as handle:
                handle.write(str(os.getpid()))
            os.rmdir(child)
        except OSError:
            pass

made = own_cgroups()
check(libc.unshare(0x00020000 | 0x20000000), "unshare(CLONE_NEWNS | CLONE_NEWPID)")
first = os.fork()
if first:
    while True:
        try:
            done, status = os.waitpid(first, 0)
            break
        except InterruptedError:
            continue
    leave_cgroups(made)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
# pid 1 of the container from here on
check(libc.mount(None, b"/", None, (1 << 14) | (1 << 18), None), "making mounts private")
check(libc.mount(b"proc", b"/proc", b"proc", 2 | 4 | 8, None), "mounting /proc")
for cover, keep, mode in spec["covers"]:
    held = {p: os.open(p, os.O_PATH) for p in keep if os.path.exists(p)}
    check(libc.mount(b"tmpfs", cover.encode(), b"tmpfs", 2 | 4, b"mode=" + mode.encode()), "tmpfs on " + cover)
    for path, fd in held.items():
        os.makedirs(path, exist_ok=True)
        source = ("/proc/self/fd/%d" % fd).encode()
        check(libc.mount(source, path.encode(), None, 4096 | (1 << 14), None), "bind of " + path)
        check(libc.mount(None, path.encode(), None, 4096 | 32 | 1 | 2 | 4, None), "read-only " + path)
        os.close(fd)
rules = sc.SyscallFilter(sc.ALLOW)
rules.set_attr(sc.Attr.CTL_NNP, 0)  # Docker does not set no_new_privs by default
for name in ("unshare", "setns"):
    rules.add_rule(sc.ERRNO(errno.EPERM), name)
rules.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
for flag in spec["clone_flags"]:
    rules.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
command = os.fork()
if command:
    wait_for(command)
rules.load()
os.execv(spec["capsh"], [spec["capsh"], "--drop=" + ",".join(spec["drop"]), "--", "-c", 'exec "$@"', "sh",
                         *sys.argv[2:]])
"""


def _caps_to_drop() -> list[str]:
    """Capabilities of the current bounding set that Docker's default profile lacks."""
    text = subprocess.run([CAPSH, "--print"], capture_output=True, text=True, check=True).stdout
    line = next(candidate for candidate in text.splitlines() if candidate.startswith("Bounding set"))
    present = line.split("=", 1)[1].split(",")
    return sorted(c for c in present if c and c not in DOCKER_CAPS)


def default_covers() -> list[tuple[str, list[str], str]]:
    """(directory, paths kept, tmpfs mode) to cover so that the container holds only the
    project copy under test: ``/tmp`` (the container's own), ``/root`` and ``/work``
    (development checkouts), and this checkout itself wherever it lives. Kept: the
    interpreter installation and the site-packages the project copy reads (numpy, torch,
    pyseccomp, ...), wherever they are."""
    base = Path(sys.base_prefix).resolve()
    kept = [str(base)] + shared_site_packages()
    covers = []
    for root, mode in (("/tmp", "1777"), ("/root", "0755"), ("/work", "0755")):
        if os.path.isdir(root):
            covers.append((root, [k for k in kept if _within(k, root)], mode))
    if not any(_within(str(PROJECT), root) for root, _, _ in covers):
        covers.append((str(PROJECT), [k for k in kept if _within(k, str(PROJECT))], "0755"))
    return covers


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def shared_site_packages() -> list[str]:
    """The site-packages this interpreter reads beyond its base installation (its own
    virtual environment's, and any another one's added by a .pth file): the project
    copy's own venv reads them through a .pth file."""
    base = str(Path(sys.base_prefix).resolve())
    found = []
    for entry in sys.path:
        path = Path(entry).resolve() if entry else None
        if (
            path is not None
            and path.name in ("site-packages", "dist-packages")
            and path.is_dir()
            and not _within(str(path), base)
            and str(path) not in found
        ):
            found.append(str(path))
    return found


def command(argv: list[str], covers: list[tuple[str, list[str]]] | None = None) -> list[str]:
    """``argv`` run as in a container with Docker's default profile (root, no
    CAP_SYS_ADMIN, no new namespaces)."""
    spec = {
        "covers": default_covers() if covers is None else covers,
        "clone_flags": list(CLONE_NEW_FLAGS),
        "capsh": CAPSH,
        "drop": _caps_to_drop(),
    }
    return [sys.executable, "-c", SETUP, json.dumps(spec), *argv]


def run(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    """subprocess.run of ``argv`` under the simulation (keywords as for subprocess.run)."""
    return subprocess.run(command(argv), **kwargs)


def bwrap_works() -> bool:
    """Whether ``bwrap --ro-bind / / true`` succeeds under the simulation (it must not)."""
    bwrap = shutil.which("bwrap") or "/usr/bin/bwrap"
    result = run([bwrap, "--ro-bind", "/", "/", "true"], capture_output=True, timeout=60)
    return result.returncode == 0


def can_simulate() -> str | None:
    """Why the simulation cannot run here (None when it can)."""
    if os.geteuid() != 0:
        return "needs root (it drops capabilities as Docker does)"
    if not os.access(CAPSH, os.X_OK):
        return "capsh is missing (apt-get install libcap2-bin)"
    try:
        import pyseccomp  # noqa: F401
    except (ImportError, RuntimeError, OSError) as exc:
        return f"pyseccomp is unavailable: {exc}"
    return None


# ---------------------------------------------------------------- a project copy
PROJECT = Path(__file__).resolve().parents[2]
COPY_SKIP = {".git", ".venv", ".hypothesis", ".pytest_cache", "__pycache__", "grades", ".ci"}


def make_project(parent: Path, canary: str | None = None) -> Path:
    """A copy of this project in ``parent/"project copy"`` (a space in the path), with its
    own ``.venv`` inside it, as a developer checkout would have it: the interpreter's
    site-packages holds a ``.pth`` to the checkout (an editable install) and one to the
    shared site-packages with numpy and the rest. ``canary``: see :func:`add_canaries`."""
    root = Path(parent) / "project copy"
    shutil.copytree(PROJECT, root, ignore=shutil.ignore_patterns(*COPY_SKIP), symlinks=True)
    if canary is not None:
        add_canaries(root, canary)
    make_venv(root / ".venv", [str(root)])
    return root


def add_canaries(root: Path, canary: str) -> None:
    """Put ``# canary`` atop every .py and .toml file of ``reference_impl`` and
    ``autograder/hidden`` under ``root``, so a leak is a plain search."""
    for folder in (root / "reference_impl", root / "autograder" / "hidden"):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix in (".py", ".toml"):
                path.write_text(f"# {canary}\n" + path.read_text(encoding="utf-8"), encoding="utf-8")


def make_venv(venv: Path, extra_paths: list[str]) -> Path:
    """A virtual environment of the base interpreter at ``venv`` whose site-packages adds
    ``extra_paths`` and the shared site-packages (.pth files); returns site-packages."""
    base = Path(sys.base_prefix) / "bin" / "python3"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    if extra_paths:
        (site / "aa_project.pth").write_text("".join(f"{p}\n" for p in extra_paths), encoding="utf-8")
    (site / "zz_shared.pth").write_text("".join(f"{p}\n" for p in shared_site_packages()), encoding="utf-8")
    return site


def copy_cache(python: Path, cwd: Path, dest: Path) -> None:
    """This checkout's corpus cache, renamed to the key ``python`` (run in ``cwd``)
    computes: canaries change the key, not the corpus, so nothing is built again."""
    from autograder.grade import cache

    key = subprocess.run(
        [str(python), "-c", "from autograder.grade import cache; print(cache.corpus_key(None))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
    ).stdout.strip()
    old = cache.corpus_key(None)
    dest.mkdir(mode=0o755, exist_ok=True)
    for path in cache.cache_dir().glob(f"corpus-{old}-*"):
        if not path.name.endswith(".lock"):
            shutil.copy(path, dest / path.name.replace(old, key))


if __name__ == "__main__":  # python tests/autograder/docker_like.py CMD ARGS...
    os.execv(sys.executable, command(sys.argv[1:]))
