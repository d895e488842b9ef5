"""Hiding the grader's secrets by file permissions, where no mount namespace can.

Without bubblewrap (a container such as Gradescope's, Docker's default profile: no
CAP_SYS_ADMIN, no user namespaces) nothing can be unmounted or covered. A root grader
still runs student code as uid 65534, so, as PrairieLearn's grader does, it takes the
"other" permissions away from what that uid must not read:

* the project's packages (``reference_impl``, ``autograder`` with its hidden suite),
  wherever they are, site-packages copies included;
* the checkout that holds them: every entry becomes unreadable, except the way to what
  the worker needs inside it (a ``.venv``, the student library): directories on that
  way keep only ``o+x`` (enter by name, no listing);
* the grader's corpus cache (expected outputs).

Only "other" bits are removed (the owner and group keep theirs), symbolic links are
never followed, and what the worker needs (the interpreter, site-packages, the files
the grader hands it) stays as it is. Every change is recorded in :data:`CHANGED` so
tests can put a checkout back (:func:`restore`); the grader itself leaves them.

:func:`readable_by_worker` checks the result the only reliable way: a probe run as the
worker's uid tries to open each secret (see ``launch``).
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from autograder.grade.sandbox import paths

OTHER = stat.S_IRWXO
CHANGED: dict[Path, int] = {}  # path -> mode before the first change (see restore)

# Run as the worker by the probe: which secrets it can open, and whether it may make
# an internet socket at all.
READ_PROBE = (
    "import json,os,socket,sys\n"
    "found=[]\n"
    "for p in json.loads(sys.argv[1]):\n"
    "    try:\n"
    "        if os.path.isdir(p): os.listdir(p)\n"
    "        else: os.close(os.open(p, os.O_RDONLY))\n"
    "        found.append(p)\n"
    "    except OSError:\n"
    "        pass\n"
    "try:\n"
    "    socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()\n"
    "    net=True\n"
    "except OSError:\n"
    "    net=False\n"
    "print(json.dumps({'readable': found, 'socket': net}))\n"
)


def cache_dir() -> Path | None:
    """The grader's corpus cache (it holds expected outputs), if it exists."""
    path = paths.cache_dir()
    return path.resolve() if path.exists() else None


def installed_copies() -> list[Path]:
    """Copies of the project's packages in site-packages (a non-editable install, as on
    Gradescope, next to the checkout the grader runs from)."""
    found = []
    for site_dir in paths.site_dirs():
        for name in paths.PROJECT_PACKAGES:
            if (site_dir / name).is_dir():
                found.append((site_dir / name).resolve())
    return found


def secret_paths(hidden: list[Path]) -> list[Path]:
    """Everything uid 65534 must not read: ``hidden`` (the probe's packages and checkout),
    the installed copies and the corpus cache."""
    secrets = list(hidden) + installed_copies()
    cache = cache_dir()
    if cache is not None:
        secrets.append(cache)
    return paths.minimal_roots([Path(p) for p in secrets if os.path.lexists(p)])


def _set_other(path: Path, other: int) -> None:
    """Set the "other" bits of ``path`` (never through a link), recording the old mode."""
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode) or mode & OTHER == other:
        return
    CHANGED.setdefault(path, stat.S_IMODE(mode))
    os.chmod(path, (stat.S_IMODE(mode) & ~OTHER) | other, follow_symlinks=False)


def _hide(path: Path, keep: list[Path]) -> None:
    """Close ``path`` to others, except the way to the ``keep`` paths inside it."""
    inside = [k for k in keep if paths.is_within(k, path)]
    if path in inside:
        return  # needed by the worker as it is
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        return
    if not inside or not stat.S_ISDIR(info.st_mode):
        _set_other(path, 0)
        return
    _set_other(path, stat.S_IXOTH)  # enter by name only, no listing
    for name in sorted(os.listdir(path)):
        _hide(path / name, inside)


def hide(secrets: list[Path], keep: list[Path]) -> None:
    """Make ``secrets`` unreadable to other users, keeping every ``keep`` path (and the
    way to it) as it is. Root only; idempotent and cheap when already done."""
    keep = [Path(k) for k in keep]
    for secret in paths.minimal_roots([Path(s) for s in secrets]):
        if os.path.lexists(secret):
            _hide(secret, keep)


def restore() -> None:
    """Put back every mode :func:`hide` changed in this process (tests: the checkout
    must not stay altered)."""
    for path, mode in sorted(CHANGED.items(), key=lambda item: len(item[0].parts), reverse=True):
        with contextlib.suppress(OSError):
            os.chmod(path, mode, follow_symlinks=False)
    CHANGED.clear()


def probe_targets(secrets: list[Path]) -> list[str]:
    """What the read probe tries: each secret, and for a directory kept enterable also
    its well-known contents (the probe must not need to guess names)."""
    targets = []
    for secret in secrets:
        targets.append(str(secret))
        for sub in ("reference_impl/kernels.py", "autograder/hidden/kernels.py", "hidden/kernels.py", "kernels.py", "pyproject.toml"):
            if (secret / sub).exists():
                targets.append(str(secret / sub))
    return targets


WORDS = {
    "en": {
        "uid": "student code runs as uid 65534",
        "rlimits": "rlimits and the wall clock",
        "scratch": "a private scratch folder",
        "seccomp": "the seccomp allow-list, loaded by the keeper",
        "namespaces": "new pid and network namespaces",
        "files": "file-system isolation (the scratch folder is a host directory, not size-capped)",
        "no_ns": "there is no pid or network namespace: kill(-1) reaches other processes of the same uid",
        "net_open": "the NETWORK IS OPEN",
        "net_closed": "internet sockets are denied by seccomp",
        "not_root": (
            "student code runs as the grader's own user and CAN READ the hidden tests, "
            "reference_impl and the corpus cache (a root grader hides them from uid 65534)"
        ),
        "readable": "uid 65534 CAN STILL READ {paths} (take the read permission of other users away)",
        "hidden": ("the hidden tests, reference_impl and the corpus cache are hidden from uid 65534 by file permissions (checked)"),
        "text": "bubblewrap is unavailable; kept: {kept}; lost: {lost}; {hidden}",
    },
    "ru": {
        "uid": "код студента работает от uid 65534",
        "rlimits": "ограничения ресурсов (rlimits) и времени",
        "scratch": "отдельная рабочая папка",
        "seccomp": "список разрешённых системных вызовов seccomp (его загружает keeper)",
        "namespaces": "свои пространства имён pid и сети",
        "files": "изоляция файловой системы (рабочая папка — каталог хоста, её размер не ограничен)",
        "no_ns": "нет своих пространств имён pid и сети: kill(-1) достаёт другие процессы того же uid",
        "net_open": "СЕТЬ ОТКРЫТА",
        "net_closed": "интернет-сокеты запрещены seccomp",
        "not_root": (
            "код студента работает от имени пользователя проверяющей программы и МОЖЕТ ЧИТАТЬ "
            "скрытые тесты, reference_impl и кэш корпуса (запущенная от root проверка скрывает их от uid 65534)"
        ),
        "readable": "uid 65534 ВСЁ ЕЩЁ МОЖЕТ ЧИТАТЬ {paths} (снимите право чтения для других пользователей)",
        "hidden": ("скрытые тесты, reference_impl и кэш корпуса скрыты от uid 65534 правами доступа к файлам (проверено)"),
        "text": "bubblewrap недоступен; сохранено: {kept}; потеряно: {lost}; {hidden}",
    },
}


def warning_text(*, root: bool, readable: list[str], seccomp: bool, socket: bool, namespaces: bool, lang: str = "en") -> str:
    """The fallback's part of ``isolation().warning`` in ``lang`` ("en" or "ru"): what
    protection remains and what is lost. ``readable``: secrets the worker could open;
    ``socket``: whether it could make an internet socket (both measured by the probe)."""
    w = WORDS[lang]
    kept = ([w["uid"]] if root else []) + [w["rlimits"], w["scratch"]]
    kept += ([w["seccomp"]] if seccomp else []) + ([w["namespaces"]] if namespaces else [])
    lost = [w["files"]]
    if not namespaces:
        lost.append(w["no_ns"] + "; " + (w["net_open"] if socket else w["net_closed"]))
    if not root:
        hidden = w["not_root"]
    elif readable:
        hidden = w["readable"].format(paths=", ".join(readable[:4]))
    else:
        hidden = w["hidden"]
    return w["text"].format(kept=", ".join(kept), lost="; ".join(lost), hidden=hidden)
