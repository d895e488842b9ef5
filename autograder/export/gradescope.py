"""Gradescope front door: `m5 gradescope-bundle --out autograder.zip`.

The zip holds the project's installable source (``reference_impl``, ``autograder``,
``pyproject.toml``, ``requirements.lock``) and the two scripts Gradescope runs:

* ``setup.sh`` (once, when the image is built): installs bubblewrap, a Python the lock
  supports and the pinned environment, then builds the grading corpus so submissions do
  not pay for it;
* ``run_autograder`` (per submission): ``python -m autograder.export.gradescope ROOT``,
  which grades what the student uploaded to ``$ROOT/submission`` and writes
  ``$ROOT/results/results.json``;
* ``m5_gradescope.json``: the bundle's settings (the ``visibility`` of the test entries),
  read by ``run_autograder``.

**Base image: Gradescope's default, Ubuntu 22.04 (the "Base" variant).** Its ``python3`` is
3.10, older than the lock's floor (``requires-python >= 3.11.5``), so ``setup.sh`` installs
``python3.11`` from the deadsnakes PPA there; an image whose ``python3.11`` or ``python3``
is already new enough uses it; any other image is refused in one line (``setup.sh`` is
tested with stand-ins for ``apt-get`` and ``python3``, not on Gradescope's image).

**Visibility** (``m5 gradescope-bundle --visibility``, default ``after_due_date``): when
students see each test's entry, with its failing input; Gradescope's top-level field gets
the same value. A first entry, always visible, says the total and how many tests failed
(no input) and which file was graded, so a student can fix a wrong upload before the due
date without mining the hidden tests' inputs by resubmitting. Instructors see everything.

Gradescope's container (Docker's default profile) may refuse bubblewrap its
namespaces. Student code then runs in the sandbox's fallback as uid 65534, so, as root,
:func:`protect` first takes other users' permissions away from ``$ROOT/source``, the
corpus cache and the project's copies in site-packages, except the way to the
interpreter and the public student library; ``$ROOT/results`` is root's (0755). The
grader's fallback does the same for whatever it finds (``sandbox/hiding.py``).

What a student may upload: the assignment notebook(s), in English or Russian or both,
anywhere in nested folders, possibly next to the lab notebooks; a ``.py`` file; or a
``.zip`` of any of these (unpacked safely: no absolute or ``..`` paths, no links, size
and count caps). Lab and unrelated notebooks are skipped by their metadata. Every
remaining candidate is graded in the sandbox; one that earns no point has no
implemented content (an untouched release notebook). When several have content the
higher score is kept and the feedback says so. The written answers of the graded notebook
and of an uploaded lab notebook are listed in the top-level output for the person who
marks them (Gradescope questions marked by hand, not part of this score).

**Assignment total to enter in Gradescope: 120 points** (10 kernels x 10 points and
20 numerical answers x 1 point; ``autograder.grade.score.assignment_total()``), the same
for a notebook and a ``.py`` file.

``ROOT`` is ``/autograder`` on Gradescope; ``M5_GS_ROOT`` overrides it and
``M5_PYTHON`` the interpreter (tests use a temporary folder laid out the same way).
"""

from __future__ import annotations

import io
import json
import os
import stat
import sys
import tempfile
import zipfile
from dataclasses import replace
from pathlib import Path, PurePosixPath

PROJECT = Path(__file__).resolve().parents[2]
# The public student library rides along (no secrets): the grader puts it on the student
# process's path so notebooks that import m5_student work (extract.library_dirs).
INCLUDE = ("pyproject.toml", "requirements.lock", "README.md", "reference_impl", "autograder", "release/module05_en/m5_student")
SKIP_PARTS = {"__pycache__", ".pytest_cache", ".hypothesis"}

# Gradescope's test visibilities (grade.report.VISIBILITIES, spelled out: building the bundle
# loads no grader module) and the bundle's default: the failing inputs wait for the due date.
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")
DEFAULT_VISIBILITY = "after_due_date"
CONFIG_NAME = "m5_gradescope.json"  # at the zip's root: $ROOT/source/m5_gradescope.json
BASE_IMAGE = "Ubuntu 22.04"  # Gradescope's default base image, "Base" variant
PYTHON_FLOOR = "3.11.5"  # pyproject.toml's requires-python (the lock's floor)

SETUP_SH = """#!/usr/bin/env bash
# Gradescope image setup: sandbox, a Python the lock supports, pinned environment, prebuilt corpus.
# Target: Gradescope's default base image, Ubuntu 22.04 ("Base" variant). Its python3 is 3.10,
# older than the lock's floor (requires-python >= 3.11.5): python3.11 comes from the deadsnakes
# PPA there. An image whose python3.11 or python3 is new enough uses it; any other is refused.
set -euo pipefail
ROOT="${M5_GS_ROOT:-/autograder}"
SRC="$ROOT/source"
FLOOR=3.11.5
refuse() { echo "setup.sh: $*" >&2; exit 1; }
version_of() { "$1" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null; }
at_least() {  # at_least 3.11.7 3.11.5: the first version is not older
  local IFS=. i
  local -a a=($1) b=($2)
  for i in 0 1 2; do
    if (( ${a[i]:-0} > ${b[i]:-0} )); then return 0; fi
    if (( ${a[i]:-0} < ${b[i]:-0} )); then return 1; fi
  done
  return 0
}
pick_python() {  # the first of python3.11, python3 that is at least $FLOOR
  local py version
  for py in python3.11 python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    version=$(version_of "$py") || continue
    if at_least "$version" "$FLOOR"; then command -v "$py"; return 0; fi
  done
  return 1
}
command -v apt-get >/dev/null 2>&1 || refuse "no apt-get on this image: the bundle targets Gradescope's Ubuntu 22.04 base image"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq bubblewrap libseccomp2 ca-certificates python3 python3-venv >/dev/null
if ! PY=$(pick_python); then
  OS_RELEASE="${M5_OS_RELEASE:-/etc/os-release}"
  if [ -r "$OS_RELEASE" ]; then . "$OS_RELEASE"; fi
  if [ "${ID:-}" = ubuntu ] && [ "${VERSION_ID:-}" = 22.04 ]; then
    { apt-get install -y -qq software-properties-common >/dev/null \\
      && add-apt-repository -y ppa:deadsnakes/ppa >/dev/null \\
      && apt-get update -qq \\
      && apt-get install -y -qq python3.11 python3.11-venv >/dev/null; } \\
      || refuse "could not install python3.11 from the deadsnakes PPA on Ubuntu 22.04 (no network?)"
  fi
  PY=$(pick_python) || refuse "no Python >= $FLOOR on ${PRETTY_NAME:-this image} (python3 is $(version_of python3 || echo missing)) and no known way to install one: choose Gradescope's Ubuntu 22.04 base image"
fi
echo "setup.sh: Python $(version_of "$PY") ($PY)"
"$PY" -m venv "$ROOT/venv"
"$ROOT/venv/bin/pip" install -q --upgrade pip
"$ROOT/venv/bin/pip" install -q -r "$SRC/requirements.lock"
"$ROOT/venv/bin/pip" install -q --no-deps "$SRC"
M5_CACHE_DIR="$ROOT/cache" "$ROOT/venv/bin/python" -c "from autograder.grade.pipeline import load_corpus; load_corpus()"
"""  # noqa: E501  (one refusal, one line)

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Grade what the student uploaded to $ROOT/submission; write $ROOT/results/results.json.
set -uo pipefail
ROOT="${M5_GS_ROOT:-/autograder}"
export M5_CACHE_DIR="${M5_CACHE_DIR:-$ROOT/cache}"
PYTHON="${M5_PYTHON:-$ROOT/venv/bin/python}"
mkdir -p "$ROOT/results"
cd "$ROOT/source" && "$PYTHON" -m autograder.export.gradescope "$ROOT"
if [ ! -s "$ROOT/results/results.json" ]; then  # the grader itself failed: still valid JSON
  cat > "$ROOT/results/results.json" <<'JSON'
{"score": 0, "output": "The autograder failed; please tell your instructor. / Сбой автопроверки; сообщите преподавателю.", "tests": [], "visibility": "visible"}
JSON
fi
"""  # noqa: E501  (the script's fallback results.json is one JSON line)

# Caps on what an uploaded zip may unpack to (checked before and while reading).
MAX_ZIP_BYTES = 64 << 20
MAX_ZIP_MEMBERS = 200
MAX_UNPACKED_BYTES = 64 << 20
MAX_CANDIDATES = 6  # notebooks/.py graded per upload; more are listed, not graded

TEXT = {
    "written": {
        "en": "Written answers (marked by hand in Gradescope, not part of this score):",
        "ru": "Письменные ответы (оцениваются вручную в Gradescope, в этот балл не входят):",
    },
    "lab_written": {
        "en": "Written answers of the lab notebook {name} (marked by hand in Gradescope, not part of this score):",
        "ru": "Письменные ответы лабораторного ноутбука {name} (оцениваются вручную в Gradescope, в этот балл не входят):",
    },
    "blank": {"en": "(blank)", "ru": "(пусто)"},
    "none": {
        "en": "No assignment notebook (.ipynb) or .py file was found in the upload.",
        "ru": "В загруженных файлах не найден ноутбук задания (.ipynb) или файл .py.",
    },
    "graded": {"en": "Graded: {name}.", "ru": "Проверен файл: {name}."},
    "kept": {
        "en": "{count} uploaded files have implemented content; each was graded and the higher score kept: {scores}.",
        "ru": "В {count} загруженных файлах есть решение; проверен каждый, засчитан лучший балл: {scores}.",
    },
    "empty": {
        "en": "Also uploaded, without implemented content (0 points): {names}.",
        "ru": "Также загружены, без решения (0 баллов): {names}.",
    },
    "skipped": {"en": "Not graded: {name}: {reason}", "ru": "Не проверен: {name}: {reason}"},
    "too_many": {"en": "Only the first {n} notebooks/.py files were graded.", "ru": "Проверены только первые {n} ноутбуков/файлов .py."},
    "zip": {"en": "The zip {name} could not be unpacked: {reason}", "ru": "Архив {name} не удалось распаковать: {reason}"},
}


# ---------------------------------------------------------------- zip uploads
class UnsafeZip(Exception):
    """An uploaded zip that is refused: one line that says why."""


def _safe_member_path(name: str) -> PurePosixPath:
    """The member's path inside the unpack folder; refuses absolute and ``..`` paths."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise UnsafeZip(f"unsafe member path {name!r}")
    return path


def unpack_zip(path: Path, into: Path) -> list[Path]:
    """Unpack the .ipynb and .py members of the zip at ``path`` into ``into``.

    The zip is read through files.read_bytes (no links, size cap); members that are
    links, absolute or ``..`` paths are refused; member count and unpacked bytes are
    capped, counting what is actually decompressed, not what the headers claim.
    """
    from autograder.grade.discover import SUFFIXES  # in Gradescope's container only: building the bundle loads no grader module
    from autograder.grade.student_files import MAX_NOTEBOOK_BYTES, read_bytes  # (the same)

    try:
        archive = zipfile.ZipFile(io.BytesIO(read_bytes(path, MAX_ZIP_BYTES)))
    except zipfile.BadZipFile as exc:
        raise UnsafeZip(f"not a zip file ({exc})") from None
    members = archive.infolist()
    if len(members) > MAX_ZIP_MEMBERS:
        raise UnsafeZip(f"{len(members)} members, more than the {MAX_ZIP_MEMBERS} allowed")
    written, total = [], 0
    for member in members:
        target = _safe_member_path(member.filename)
        if stat.S_ISLNK(member.external_attr >> 16):
            raise UnsafeZip(f"member {member.filename!r} is a symbolic link")
        if member.is_dir() or not target.name.endswith(SUFFIXES) or target.name.startswith("."):
            continue
        with archive.open(member) as fh:
            data = fh.read(MAX_NOTEBOOK_BYTES + 1)
        if len(data) > MAX_NOTEBOOK_BYTES:
            raise UnsafeZip(f"member {member.filename!r} is larger than {MAX_NOTEBOOK_BYTES} bytes")
        total += len(data)
        if total > MAX_UNPACKED_BYTES:
            raise UnsafeZip(f"unpacks to more than {MAX_UNPACKED_BYTES} bytes")
        out = into.joinpath(*target.parts)
        out.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        written.append(out)
    return written


def _zips(folder: Path) -> list[Path]:
    """Uploaded .zip files under ``folder``: regular files only, links never followed."""
    found = []
    for parent, dirs, files in os.walk(folder, followlinks=False):
        dirs.sort()
        found += [
            Path(parent) / f for f in sorted(files) if f.lower().endswith(".zip") and stat.S_ISREG(os.lstat(Path(parent) / f).st_mode)
        ]
    return found


# ---------------------------------------------------------------- grading an upload
def _candidates(submission: Path, unpacked: Path, notes: list[dict], skipped: list | None = None) -> list:
    """Assignment notebooks and .py files of the upload (zips unpacked), in order;
    skipped notebooks and refused zips become notes (results_json escapes them), and the
    skipped ones are appended to ``skipped`` (the lab's written answers are read from them)."""
    from autograder.grade import discover, pipeline  # (the same)

    for number, archive in enumerate(_zips(submission)):
        try:
            unpack_zip(archive, unpacked / f"{number}-{archive.stem}")
        except (UnsafeZip, OSError) as exc:
            name = str(archive.relative_to(submission))
            notes.append({lang: t.format(name=name, reason=exc) for lang, t in TEXT["zip"].items()})
        except Exception as exc:  # noqa: BLE001 - zipfile raises many kinds on a malformed archive
            name = str(archive.relative_to(submission))
            notes.append({lang: t.format(name=name, reason=f"{type(exc).__name__}: {exc}") for lang, t in TEXT["zip"].items()})
    found, kernels = [], set(pipeline.KERNELS)
    for folder in (submission, unpacked):
        discovery = discover.discover([folder], kernels)
        found += discovery.submissions
        if skipped is not None:
            skipped += discovery.skipped
        for item in discovery.skipped:
            name = item.relative
            notes.append(
                {
                    "en": TEXT["skipped"]["en"].format(name=name, reason=item.skip),
                    "ru": TEXT["skipped"]["ru"].format(name=name, reason=item.skip_ru),
                }
            )
    return found


def choose(results: list) -> tuple[object, list[dict]]:
    """The result to report among the graded candidates, and the lines explaining it.

    A candidate has implemented content when it earns a point; of those the highest
    score wins (the first on ties). With no content anywhere, the first readable one.
    """
    with_content = [r for r in results if r.error is None and r.score > 0]
    readable = [r for r in results if r.error is None]
    best = max(with_content, key=lambda r: r.score) if with_content else (readable or results)[0]
    notes = [{lang: t.format(name=best.label) for lang, t in TEXT["graded"].items()}]
    if len(with_content) > 1:
        scores = ", ".join(f"{r.label} {r.score:g}/{r.max_score:g}" for r in with_content)
        notes.append({lang: t.format(count=len(with_content), scores=scores) for lang, t in TEXT["kept"].items()})
    empty = [r for r in readable if r.score == 0 and r is not best]
    if empty:
        names = ", ".join(r.label for r in empty)
        notes.append({lang: t.format(names=names) for lang, t in TEXT["empty"].items()})
    return best, notes


def grade_upload(root: Path, visibility: str | None = None) -> dict:
    """results.json (a dict) for the upload in ``root/submission``; ``visibility``: the test
    entries' (default: the bundle's setting, :func:`read_visibility`)."""
    from autograder.grade import report, sandbox  # (the same)
    from autograder.grade.classrun import grade_found  # (the same)
    from autograder.grade.score import SubmissionResult  # (the same)

    visibility = read_visibility(root) if visibility is None else visibility
    warning = sandbox.isolation().warning
    notes: list[dict] = []
    skipped: list = []
    with tempfile.TemporaryDirectory(prefix="m5-gs-") as tmp:
        found = _candidates(root / "submission", Path(tmp), notes, skipped)
        if len(found) > MAX_CANDIDATES:
            notes.append({lang: t.format(n=MAX_CANDIDATES) for lang, t in TEXT["too_many"].items()})
            found = found[:MAX_CANDIDATES]
        labs = _noted(_lab_answers, skipped)  # read while the unpacked upload is still there
        if not found:
            empty = SubmissionResult("", "en", [], notes=[TEXT["none"], *notes])
            return report.results_json(empty, warning, visibility, summary=True, marker_notes=labs)
        results = grade_found(found, jobs=1, lang=None, shrink=True, on_result=lambda index, result: None)
        best, why = choose(results)
        answers = _noted(_written_answers, found, best)
    best = replace(best, notes=[*why, *notes, *best.notes])
    return report.results_json(best, warning, visibility, summary=True, marker_notes=[*answers, *labs])


def _noted(read, *args) -> list[dict]:
    """The notes ``read(*args)`` gives, or none: a note never costs the grade."""
    try:
        return read(*args)
    except Exception:  # noqa: BLE001 - the score stands without the notes
        return []


def _answer_lines(answers: dict) -> list[dict]:
    """One note per question: its id and the answer (cut at 2,000 characters), or blank."""
    return [
        {lang: f"{question}: {text[:2000] if text else TEXT['blank'][lang]}" for lang in ("en", "ru")} for question, text in answers.items()
    ]


def _written_answers(found: list, best) -> list[dict]:
    """The graded notebook's written answers as notes, one per question, for the person who
    marks them in Gradescope (this autograder scores the 120 automatic points only)."""
    from autograder.grade import written  # (the same)

    item = next((f for f in found if (f.relative or f.path.name) == best.label), None)
    if item is None or item.path.suffix != ".ipynb":
        return []
    _, answers = written.answers_in(item.path)  # the bundle has no sources: the cells the notebook marks
    if not answers:
        return []
    return [dict(TEXT["written"]), *_answer_lines(answers)]


def _lab_answers(skipped: list) -> list[dict]:
    """The written answers of the lab notebook the student uploaded beside (or instead of) the
    assignment: a notebook whose ``metadata.m5.kind`` is "lab" (discovery skipped it), read like
    the assignment's (the cells it marks as answers: answer_dagger, answer_dqn, ...). Of several
    lab notebooks (English and Russian), those with an answer written; the first when none has."""
    from autograder.grade import written  # (the same)

    labs = []
    for item in skipped[:MAX_CANDIDATES]:
        if item.path.suffix == ".ipynb":
            kind, answers = written.answers_in(item.path)
            if kind == "lab" and answers:
                labs.append((item.relative or item.path.name, answers))
    notes = []
    for name, answers in [lab for lab in labs if any(lab[1].values())] or labs[:1]:
        notes += [{lang: t.format(name=name) for lang, t in TEXT["lab_written"].items()}, *_answer_lines(answers)]
    return notes


def read_visibility(root: Path) -> str:
    """The bundle's test visibility (``root/source/m5_gradescope.json``, written by
    :func:`build_bundle`); the default when the file is missing, and when it is unreadable
    or names no Gradescope visibility (said on stderr, which only instructors see)."""
    path = root / "source" / CONFIG_NAME
    try:
        value = json.loads(path.read_text(encoding="utf-8"))["visibility"]
    except FileNotFoundError:
        return DEFAULT_VISIBILITY
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"m5: {path}: unreadable ({exc}); test visibility {DEFAULT_VISIBILITY}", file=sys.stderr)
        return DEFAULT_VISIBILITY
    if value not in VISIBILITIES:
        print(f"m5: {path}: unknown visibility {value!r}; test visibility {DEFAULT_VISIBILITY}", file=sys.stderr)
        return DEFAULT_VISIBILITY
    return value


def write_results(root: Path) -> Path:
    """Grade the upload and write ``root/results/results.json`` (atomically, valid JSON)."""
    from autograder.grade.report import dump_json  # (the same)

    out = root / "results" / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    text = dump_json(grade_upload(root)) + "\n"
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=out.parent, delete=False) as tmp:
        tmp.write(text)
    os.replace(tmp.name, out)
    return out


def protect(root: Path) -> None:
    """As root: make the grader's files unreadable to uid 65534 (student code without
    bubblewrap), keeping the interpreter and the student library reachable, and give
    ``root/results`` to root alone. Does nothing for another user (who cannot hide
    anything from code run as itself; the sandbox's warning says so)."""
    if os.geteuid() != 0:
        return
    from autograder.grade.cache import cache_dir  # (the same)
    from autograder.grade.extract import library_dirs  # (the same)
    from autograder.grade.sandbox import hiding, paths  # (the same)

    cache = cache_dir().resolve()
    # A cache elsewhere (M5_CACHE_DIR) is the grader's fallback's to hide, not this layout's.
    secrets = [root / "source", *([cache] if paths.is_within(cache, root.resolve()) else []), *hiding.installed_copies()]
    hiding.hide([p.resolve() for p in secrets if p.exists()], keep=[*paths.python_roots(), *library_dirs()])
    results = root / "results"
    results.mkdir(mode=0o755, exist_ok=True)
    os.chown(results, 0, 0, follow_symlinks=False)
    os.chmod(results, 0o755, follow_symlinks=False)


def _files():
    for name in INCLUDE:
        path = PROJECT / name
        if path.is_file():
            yield path
        else:
            for child in sorted(path.rglob("*")):
                if child.is_file() and not SKIP_PARTS.intersection(child.parts) and child.suffix != ".pyc":
                    yield child


def build_bundle(out: Path, visibility: str = DEFAULT_VISIBILITY) -> Path:
    """Write the Gradescope autograder zip, its test entries shown to students as ``visibility``
    says (one of :data:`VISIBILITIES`); returns its path."""
    if visibility not in VISIBILITIES:
        raise ValueError(f"visibility: expected one of {', '.join(VISIBILITIES)}, got {visibility!r}")
    config = json.dumps({"visibility": visibility}, indent=2) + "\n"
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    executable = (stat.S_IFREG | 0o755) << 16
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, text in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = executable
            zf.writestr(info, text)
        info = zipfile.ZipInfo(CONFIG_NAME, date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        zf.writestr(info, config)
        for path in _files():
            rel = path.relative_to(PROJECT).as_posix()
            info = zipfile.ZipInfo(rel, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            zf.writestr(info, path.read_bytes())
    return out


if __name__ == "__main__":
    ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("M5_GS_ROOT", "/autograder"))
    try:
        protect(ROOT)
    except OSError as exc:  # the grader's own check then says what stays readable
        print(f"m5: could not hide the grader's files from student code: {exc}", file=sys.stderr)
    write_results(ROOT)
