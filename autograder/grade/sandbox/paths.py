"""What the sandbox must show and hide: the Python installation, the project's own
packages, site-packages hooks, and which host directories an unprivileged uid can reach.
"""

from __future__ import annotations

import os
import site
import stat
import sys
from pathlib import Path

PROJECT_PACKAGES = ("reference_impl", "autograder")
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Only the /etc entries the dynamic loader and the C library need; the rest of /etc
# (shadow, keys, host configuration) stays out of sight.
ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/alternatives",
)


def cache_dir() -> Path:
    """Where the grader caches its corpus (expected outputs included: a secret the sandbox
    hides); ``M5_CACHE_DIR`` moves it."""
    return Path(os.environ.get("M5_CACHE_DIR") or Path.home() / ".cache" / "m5")


def is_within(path: Path, root: Path) -> bool:
    """True when ``path`` is ``root`` or lies below it (purely lexical)."""
    return path == root or root in path.parents


def minimal_roots(paths: list[Path]) -> list[Path]:
    """Drop paths that lie inside another path of the list."""
    result: list[Path] = []
    for path in sorted(set(paths), key=lambda p: (len(p.parts), str(p))):
        if not any(is_within(path, kept) for kept in result):
            result.append(path)
    return result


def project_package_dirs() -> list[Path]:
    """Directories of this project's own packages, wherever they are installed."""
    dirs = []
    for name in PROJECT_PACKAGES:
        try:
            module = __import__(name)
        except ImportError:
            continue
        for entry in getattr(module, "__path__", []):
            dirs.append(Path(entry).resolve())
    return dirs


def hidden_paths(package_dirs: list[Path], python_roots: list[Path]) -> list[Path]:
    """What to hide: the project's package directories, plus the checkout they live in.

    The checkout is the common parent of the packages, unless that parent is part of
    the Python installation (a non-editable install puts the packages straight into
    site-packages, which must stay visible) or the file-system root.
    """
    hidden = list(package_dirs)
    if package_dirs:
        parent = Path(os.path.commonpath([str(d.parent) for d in package_dirs]))
        if parent != Path("/") and not any(is_within(parent, r) for r in python_roots):
            hidden.append(parent)
    return hidden


def site_dirs() -> list[Path]:
    """The interpreter's existing site-packages directories, resolved."""
    return [Path(entry).resolve() for entry in site.getsitepackages() if Path(entry).is_dir()]


def python_roots() -> list[Path]:
    """Directories the interpreter needs: its prefixes, site-packages and the real
    location of the executable; resolved, plus the unresolved spelling when it differs."""
    candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    candidates.update(str(p) for p in site_dirs())
    candidates.add(str(Path(sys.executable).resolve().parent.parent))
    roots = set()
    for entry in candidates:
        path = Path(entry)
        if path.exists():
            roots.add(path.resolve())
            if path.absolute() != path.resolve():
                roots.add(path.absolute())
    return sorted(roots)


def pth_masks_and_extra_roots(hidden: list[Path]) -> tuple[list[Path], list[Path]]:
    """Split site-packages hooks into ones to mask (editable finders of this project,
    .pth files pointing into hidden places) and extra directories .pth files add."""
    masks: list[Path] = []
    extra: list[Path] = []
    hidden_strings = [str(h) for h in hidden]
    for site_dir in site_dirs():
        for item in sorted(site_dir.iterdir()):
            name = item.name
            if name.startswith("__editable__") or name.endswith(".egg-link"):
                if item.is_file():
                    masks.append(item)
                continue
            if not name.endswith(".pth") or not item.is_file():
                continue
            try:
                text = item.read_text(errors="replace")
            except OSError:
                continue
            if any(h in text for h in hidden_strings):
                masks.append(item)
                continue
            for line in text.splitlines():
                line = line.strip()
                if line and not line.startswith(("#", "import")) and os.path.isabs(line) and os.path.isdir(line):
                    extra.append(Path(line).resolve())
    return masks, extra


def closed_ancestor(path: Path) -> Path | None:
    """The topmost directory above ``path`` that other users cannot search (no o+x),
    or None when an unprivileged uid can walk all the way down to ``path``."""
    current = Path("/")
    for part in path.parts[1:-1] if len(path.parts) > 1 else ():
        current = current / part
        try:
            mode = os.stat(current).st_mode
        except OSError:
            return None
        if not mode & stat.S_IXOTH:
            return current
    return None


def reveal_plan(paths: list[Path]) -> list[tuple[str, list[str]]]:
    """For an unprivileged uid: which closed directories to cover with an open tmpfs,
    and which of ``paths`` to bind back inside each, as ``[(cover, [path, ...])]``."""
    groups: dict[Path, list[str]] = {}
    for path in minimal_roots(paths):
        cover = closed_ancestor(path)
        if cover is not None:
            groups.setdefault(cover, []).append(str(path))
    covers = minimal_roots(list(groups))
    plan: dict[Path, list[str]] = {c: [] for c in covers}
    for cover, members in groups.items():
        top = next(c for c in covers if is_within(cover, c))
        plan[top].extend(members)
    return [(str(cover), sorted(members)) for cover, members in sorted(plan.items())]
