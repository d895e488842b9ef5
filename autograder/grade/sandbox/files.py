"""Bytes in and out of the sandbox without a host path the sandbox could reach.

* Files the grader provides go in as memory file descriptors (``bwrap --ro-bind-data``),
  never as host files the worker could swap for a symlink.
* The worker's stderr goes to an unlinked temporary file: the grader reads its tail
  through its own descriptor; nothing is left on disk, even after a SIGKILL.
* The fallback (no bubblewrap) needs a host directory: :func:`private_tree` builds one,
  :func:`remove_tree` removes whatever the worker did to it without recursion and
  without following links, and :func:`sweep_stale_trees` removes trees of dead graders.
  :func:`empty_tree`, the same without removing the top, also empties a recycled
  sandbox's writable directories (this file is then loaded inside it, stdlib only).
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

TREE_PREFIX = "m5-sandbox"


def data_fd(content: bytes, fds: list[int]) -> int:
    """A memory file holding ``content``, positioned at its start (appended to ``fds``,
    the list of descriptors the sandbox inherits). Any size; nothing on disk."""
    fd = os.memfd_create("m5-sandbox-data", os.MFD_CLOEXEC)
    try:
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    fds.append(fd)
    return fd


def stderr_sink() -> int:
    """A fresh, already unlinked file for the worker's stderr (append-only for it)."""
    with tempfile.TemporaryFile(prefix="m5-sandbox-stderr-") as handle:
        return os.dup(handle.fileno())


def read_fd_tail(fd: int | None, limit: int = 4096) -> str:
    """Up to ``limit`` trailing bytes of a descriptor's file, decoded leniently; ""
    for None, a non-regular file or any error (the writer is hostile)."""
    if fd is None:
        return ""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return ""
        start = max(0, info.st_size - limit)
        return os.pread(fd, limit, start).decode(errors="replace")
    except OSError:
        return ""


def private_tree(owner_uid: int | None, files: dict[str, bytes], links: dict[str, Path]) -> Path:
    """The fallback's stand-in for the sandbox's private file system: a fresh directory
    ``<tmp>/m5-sandbox-<grader pid>-<random>`` holding ``m5/`` (the provided files, read
    only, and symlinks ``links`` to provided directories) and ``scratch/`` (writable only
    by ``owner_uid``, the uid the worker runs as)."""
    root = Path(tempfile.mkdtemp(prefix=f"{TREE_PREFIX}-{os.getpid()}-"))
    try:
        os.chmod(root, 0o755)
        (root / "m5").mkdir(mode=0o755)
        for name, content in files.items():
            path = root / "m5" / name
            path.write_bytes(content)
            os.chmod(path, 0o444)
        for name, target in links.items():
            os.symlink(target, root / "m5" / name)
        os.chmod(root / "m5", 0o555)
        (root / "scratch").mkdir(mode=0o700)
        if owner_uid is not None and owner_uid != os.geteuid():
            os.chown(root / "scratch", owner_uid, owner_uid)
    except BaseException:
        remove_tree(root)
        raise
    return root


def remove_tree(root: Path) -> bool:
    """Delete ``root`` and everything below it; True when it is gone.

    The content is hostile: links are never followed, and depth costs nothing (see
    :func:`_empty`); at most two descriptors are open at any time.
    """
    try:
        top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return True
    except OSError:
        return _unlink_entry(root)
    try:
        os.fchmod(top, 0o700)
        _empty(top)
    except OSError:
        return False
    finally:
        os.close(top)
    try:
        os.rmdir(root)
    except OSError:
        return False
    return True


def empty_tree(path: str | Path, keep: tuple = ()) -> bool:
    """Delete everything inside the directory ``path`` and keep it (with its mode: it
    may be a mount point such as /tmp); True when only what ``keep`` names is left.
    Used inside the sandbox too, between two submissions (``recycle.zygote``), so stdlib
    only.

    ``keep``: absolute paths inside ``path`` that stay as they are (the sandbox's own
    mounts, e.g. an interpreter bound under /tmp), with the directories leading to
    them, which are emptied of everything else. The leading directories are opened
    without following links: one renamed, replaced or made unreadable gives False."""
    try:
        top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return not keep
    except OSError:
        return False
    try:
        kept = _keep_tree(str(path), keep)
        _empty(top, kept)
        return sorted(os.listdir(top)) == sorted(kept)
    except OSError:
        return False
    finally:
        os.close(top)


def _keep_tree(path: str, keep: tuple) -> dict:
    """``keep`` as nested names below ``path``: {name: {...}} for a directory leading to
    a kept path, {name: None} for a kept path itself."""
    tree: dict = {}
    base = path.rstrip("/") + "/"
    for kept in keep:
        if not str(kept).startswith(base):
            raise ValueError(f"empty_tree: keep path {kept!r} is not inside {path!r}")
        parts = [p for p in str(kept)[len(base) :].split("/") if p]
        node = tree
        for part in parts[:-1]:
            if node.get(part, {}) is None:
                break  # inside a kept path already
            node = node.setdefault(part, {})
        else:
            node[parts[-1]] = None
    return tree


def _empty(top: int, keep: dict | None = None) -> None:
    """Empty the directory ``top`` without recursing: every subdirectory found is first
    moved up into ``top`` itself (a rename, so a 1000-deep chain becomes 1000 siblings),
    then emptied and removed. Names in ``keep`` (see :func:`_keep_tree`) stay: a kept
    path untouched, a directory leading to one emptied the same way. Raises OSError for
    an entry it cannot remove."""
    keep = keep or {}
    while True:
        names = [name for name in os.listdir(top) if name not in keep]
        if not names:
            break
        for name in names:
            _flatten_or_remove(top, name)
    for name, inner in keep.items():
        if inner is None:
            continue
        lead = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
        try:
            _empty(lead, inner)
        finally:
            os.close(lead)


def _unlink_entry(path: Path) -> bool:
    try:
        os.unlink(path)
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _flatten_or_remove(top: int, name: str) -> None:
    """Remove entry ``name`` of the directory ``top``: a non-directory is unlinked; a
    directory has its own subdirectories moved up into ``top`` and its other entries
    unlinked, and is then removed."""
    try:
        os.rmdir(name, dir_fd=top)
        return
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            os.unlink(name, dir_fd=top)
            return
        if exc.errno != errno.ENOTEMPTY:
            raise
    inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
    try:
        os.fchmod(inner, 0o700)  # the worker may have made it unreadable to its owner
        for entry in os.listdir(inner):
            info = os.stat(entry, dir_fd=inner, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                os.rename(entry, f".m5-{os.getpid()}-{inner}-{info.st_ino}", src_dir_fd=inner, dst_dir_fd=top)
            else:
                os.unlink(entry, dir_fd=inner)
    finally:
        os.close(inner)
    os.rmdir(name, dir_fd=top)


def sweep_stale_trees(directory: Path | None = None) -> None:
    """Remove fallback trees left by graders that died (their pid is gone)."""
    base = Path(directory or tempfile.gettempdir())
    for child in base.glob(f"{TREE_PREFIX}-*-*"):
        try:
            owner = int(child.name.split("-")[2])
        except (IndexError, ValueError):
            continue
        if owner != os.getpid() and not Path(f"/proc/{owner}").exists() and child.is_dir():
            remove_tree(child)
