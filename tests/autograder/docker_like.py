"""Run a command as Docker's default profile would (a Gradescope-like container), as root.

What :func:`command` builds, in order:

1. a private mount namespace of the *simulation* (made while it still may), where some
   host directories are covered by an open tmpfs and only named paths come back
   read-only: the interpreter under a ``0700`` ``/root`` becomes reachable (on
   Gradescope Python lives under ``/usr``), and the development checkouts under
   ``/work`` vanish (a real container holds only the project copy under test);
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
DOCKER_CAPS = {"cap_chown", "cap_dac_override", "cap_fsetid", "cap_fowner", "cap_mknod", "cap_net_raw",
               "cap_setgid", "cap_setuid", "cap_setfcap", "cap_setpcap", "cap_net_bind_service",
               "cap_sys_chroot", "cap_kill", "cap_audit_write"}
CLONE_NEW_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000,
                   0x00000080)  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME

SETUP = r"""
import ctypes, errno, json, os, sys
import pyseccomp as sc
spec = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)

def check(result, what):
    if result != 0:
        sys.exit("docker_like: %s failed: %s" % (what, os.strerror(ctypes.get_errno())))

check(libc.unshare(0x00020000), "unshare(CLONE_NEWNS)")
check(libc.mount(None, b"/", None, (1 << 14) | (1 << 18), None), "making mounts private")
for cover, keep in spec["covers"]:
    held = {p: os.open(p, os.O_PATH) for p in keep if os.path.exists(p)}
    check(libc.mount(b"tmpfs", cover.encode(), b"tmpfs", 2 | 4, b"mode=0755"), "tmpfs on " + cover)
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
rules.load()
os.execv(spec["capsh"], [spec["capsh"], "--drop=" + ",".join(spec["drop"]), "--", "-c", 'exec "$@"', "sh",
                         *sys.argv[2:]])
"""


def _caps_to_drop() -> list[str]:
    """Capabilities of the current bounding set that Docker's default profile lacks."""
    text = subprocess.run([CAPSH, "--print"], capture_output=True, text=True, check=True).stdout
    line = next(l for l in text.splitlines() if l.startswith("Bounding set"))
    present = line.split("=", 1)[1].split(",")
    return sorted(c for c in present if c and c not in DOCKER_CAPS)


def default_covers() -> list[tuple[str, list[str]]]:
    """The directories this development machine must cover: ``/root`` (keep the
    interpreter installation), ``/work`` (keep the shared site-packages of the main
    virtual environment, which the test's project copy uses)."""
    base = Path(sys.base_prefix).resolve()
    covers = []
    if str(base).startswith("/root/"):
        covers.append(("/root", [str(base)]))
    shared = [str(p) for p in map(Path, sys.path) if str(p).startswith("/work/") and p.name == "site-packages"
              and ".venv" in p.parts and p.is_dir() and not str(p).startswith(sys.prefix)]
    covers.append(("/work", shared))
    return covers


def command(argv: list[str], covers: list[tuple[str, list[str]]] | None = None) -> list[str]:
    """``argv`` run as in a container with Docker's default profile (root, no
    CAP_SYS_ADMIN, no new namespaces)."""
    spec = {"covers": default_covers() if covers is None else covers, "clone_flags": list(CLONE_NEW_FLAGS),
            "capsh": CAPSH, "drop": _caps_to_drop()}
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
    own ``.venv`` inside it, as a Gradescope-like or developer checkout would have it:
    the interpreter's site-packages holds a ``.pth`` to the checkout (an editable
    install) and one to the shared site-packages with numpy and the rest.

    ``canary``: a line put at the top of every file of ``reference_impl`` and
    ``autograder/hidden`` (and the copied corpus cache), so a leak is a simple search.
    """
    root = Path(parent) / "project copy"
    shutil.copytree(PROJECT, root, ignore=shutil.ignore_patterns(*COPY_SKIP), symlinks=True)
    if canary is not None:
        for folder in (root / "reference_impl", root / "autograder" / "hidden"):
            for path in sorted(folder.rglob("*")):
                if path.is_file() and path.suffix in (".py", ".toml"):
                    path.write_text(f"# {canary}\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    base = Path(sys.base_prefix) / "bin" / "python3"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    site = next((root / ".venv" / "lib").glob("python3*/site-packages"))
    shared = [entry for _, keep in default_covers() for entry in keep if entry.endswith("site-packages")]
    (site / "aa_project.pth").write_text(f"{root}\n", encoding="utf-8")
    (site / "zz_shared.pth").write_text("".join(f"{entry}\n" for entry in shared), encoding="utf-8")
    return root


if __name__ == "__main__":  # python tests/autograder/docker_like.py CMD ARGS...
    os.execv(sys.executable, command(sys.argv[1:]))
