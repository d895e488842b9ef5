"""Find the submissions to grade under the paths an instructor names.

Understands nbgrader's course layout (``submitted/<student>/<assignment>/<notebook>``,
likewise ``autograded/``), any folder tree, and plain folders of files. Walks never
follow symbolic links, and nothing is opened except through :func:`files.read_bytes`
(no links, regular files only, size checked first): a planted symlink, FIFO or device
becomes a refused submission with its own one-line reason, and the rest is graded.

Each submission gets its path relative to the common root of everything named (the
identity of its row in grades.csv and the name of its results folder), a student id
and an assignment (from the nbgrader layout, else from the folders), and nbgrader's
``timestamp.txt`` when there is one. Notebooks that are not assignments (the lab, or
an unrelated notebook) are skipped with a reason.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, replace
from pathlib import Path

from autograder.grade.extract import read_notebook
from autograder.grade.late import MOODLE_FOLDER
from autograder.grade.student_files import SubmissionError, as_mapping, read_bytes, source_text

SUFFIXES = (".ipynb", ".py")
NBGRADER_STEPS = ("submitted", "autograded")  # <course>/<step>/<student>/<assignment>/<file>
TIMESTAMP_NAME = "timestamp.txt"
MAX_TIMESTAMP_BYTES = 256
# nbgrader writes "2026-12-01 13:00:00.123456 UTC"; anything else is not shown.
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?( ?(UTC|Z|[+-]\d{2}:?\d{2}))?")


@dataclass(frozen=True)
class Found:
    """One file to grade, or to refuse (``error``), or to skip (``skip``)."""

    path: Path
    relative: str  # path relative to the common root, "/"-separated
    student: str = ""
    assignment: str = ""
    timestamp: str = ""
    error: str | None = None  # refused before grading (a link, a FIFO, too big...)
    skip: str | None = None  # not an assignment: why (English, one line)
    skip_ru: str | None = None  # the same reason in Russian


@dataclass(frozen=True)
class Discovery:
    submissions: list[Found]  # to grade, or refused with a reason (an error row each)
    skipped: list[Found]  # not assignments


# ---------------------------------------------------------------- walking
def _walk(top: Path) -> list[Path]:
    """Candidate files under ``top``: by name, in sorted order, without following a
    symbolic link (to a folder or a file) and without entering hidden folders
    (``.ipynb_checkpoints``, ``.hypothesis``)."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(top, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [Path(folder) / name for name in sorted(files) if name.endswith(SUFFIXES) and not name.startswith(".")]
        # os.walk lists a symlink to a folder among ``dirs`` and never enters it; a
        # link named like a submission is still reported, so it gets its own refusal.
        found += [Path(folder) / d for d in dirs if d.endswith(SUFFIXES) and os.path.islink(Path(folder) / d)]
    return found


def _in_package(path: Path) -> bool:
    """A .py file next to an ``__init__.py`` is support code (``m5_student/``), not a submission."""
    return path.suffix == ".py" and (path.name == "__init__.py" or os.path.lexists(path.parent / "__init__.py"))


def common_root(paths: list[Path], folders: list[Path]) -> Path:
    """The deepest folder holding every named file and folder (a named folder is its own root)."""
    anchors = [str(p.parent) for p in paths] + [str(f) for f in folders]
    return Path(os.path.commonpath([os.path.abspath(a) for a in anchors])) if anchors else Path(".")


# ---------------------------------------------------------------- identity
def identity(path: Path, relative: str) -> tuple[str, str]:
    """(student, assignment) of a submission from where it lies.

    nbgrader layout ``.../submitted/<student>/<assignment>/<file>`` (or ``autograded``)
    first; Moodle's download ``<Full name>_<participant>_assignsubmission_file_/<file>`` (student
    ``<Full name>_<participant>``); otherwise the relative path: ``<student>/<assignment>/<file>``,
    ``<student>/<file>``, or a bare file whose stem is the student id.
    """
    parts = Path(os.path.abspath(path)).parts
    for i in range(len(parts) - 4, -1, -1):  # the innermost step folder with student/assignment/file below
        if parts[i] in NBGRADER_STEPS:
            return parts[i + 1], parts[i + 2]
    rel = relative.split("/")
    moodle = MOODLE_FOLDER.fullmatch(rel[0]) if len(rel) >= 2 else None
    if moodle:  # Moodle's "Download all submissions": <Full name>_<participant>_assignsubmission_file_/...
        return f"{moodle.group('name')}_{moodle.group('id')}", ""
    if len(rel) >= 3:
        return rel[0], rel[1]
    if len(rel) == 2:
        return rel[0], ""
    return Path(rel[0]).stem, ""


def read_timestamp(folder: Path) -> str:
    """nbgrader's submission time from ``folder/timestamp.txt``, or "" when absent or
    not a timestamp (the file is the student's: read safely, with a small cap)."""
    candidate = folder / TIMESTAMP_NAME
    if not os.path.lexists(candidate):
        return ""
    try:
        text = read_bytes(candidate, MAX_TIMESTAMP_BYTES).decode("utf-8").strip()
    except (SubmissionError, UnicodeDecodeError):
        return ""
    return text if TIMESTAMP.fullmatch(text) else ""


# ---------------------------------------------------------------- what a notebook is
NOT_ASSIGNMENT = {
    "kind": {
        "en": "skipped: a {kind} notebook (metadata m5.kind), not an assignment",
        "ru": "пропущено: ноутбук вида {kind} (метаданные m5.kind), а не задание",
    },
    "unrelated": {
        "en": "skipped: defines no kernel and no exNN_ answer and has no m5 metadata: not a Module 5 assignment",
        "ru": "пропущено: нет ни ядер, ни ответов exNN_, ни метаданных m5: это не задание модуля 5",
    },
}


def _assignment_code(kernels: set[str]) -> re.Pattern:
    """A line that defines one of ``kernels`` or assigns an ``exNN_`` answer."""
    names = "|".join(map(re.escape, sorted(kernels)))
    return re.compile(rf"^\s*(?:def\s+(?:{names})\s*\(|ex\d{{2}}_\w+\s*=)", re.M)


def notebook_kind(path: Path, kernels: set[str]) -> str | None:
    """Why the notebook at ``path`` is not an assignment (a key of NOT_ASSIGNMENT with
    the kind), or None when it is one, or when it cannot be read (grading says why).

    The builders write ``metadata.m5.kind`` ("assignment" or "lab"). A notebook without
    it counts as an assignment when it defines a kernel, assigns an ``exNN_`` answer or
    has nbgrader solution cells.
    """
    try:
        nb = read_notebook(path)  # the same reader as grading: one notion of "a notebook"
    except SubmissionError:
        return None
    kind = as_mapping(as_mapping(nb.get("metadata")).get("m5")).get("kind")
    if kind is not None:
        return None if kind == "assignment" else f"kind:{kind}"
    code = _assignment_code(kernels)
    for cell in nb.get("cells") if isinstance(nb.get("cells"), list) else []:
        cell = as_mapping(cell)
        if (
            cell.get("cell_type") == "code"
            and code.search(source_text(cell.get("source", "")))
            or as_mapping(as_mapping(cell.get("metadata")).get("nbgrader")).get("solution")
        ):
            return None
    return "unrelated"


def skip_reason(kind: str) -> dict[str, str]:
    """The one-line reason (EN and RU) for a notebook_kind() result."""
    key, _, value = kind.partition(":")
    return {lang: text.format(kind=repr(value)[:40]) for lang, text in NOT_ASSIGNMENT[key].items()}


def refusal(path: Path) -> str | None:
    """Why ``path`` (found by a walk) is refused before any reading: a symbolic link
    or not a regular file. None for a regular file (its size is checked on reading)."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        return f"{path}: cannot read ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return f"{path}: refused: a symbolic link, not a file"
    if not stat.S_ISREG(info.st_mode):
        return f"{path}: refused: not a regular file"
    return None


# ---------------------------------------------------------------- the front door
def discover(paths: list[str | Path], kernels: set[str], root: Path | None = None) -> Discovery:
    """Everything to grade under ``paths`` (files or folders, recursed), in order.

    Raises FileNotFoundError naming a path that does not exist, ValueError naming one outside
    ``root`` when it is given (relative paths are then taken from it: a regrade names its
    submissions as the class run did). A named folder is entered even through a link (the
    instructor chose it); inside it no link is followed, and a submission file that is a link
    is refused wherever it is.
    """
    files: list[Path] = []
    folders: list[Path] = []
    named: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            folders.append(path)
            named += _walk(path)
        elif os.path.lexists(path):
            files.append(path)
            named.append(path)
        else:
            raise FileNotFoundError(f"{raw}: no such file or directory")
    if root is None:
        root = common_root(files, folders)
    else:
        outside = [p for p in [*files, *folders] if not Path(os.path.abspath(p)).is_relative_to(os.path.abspath(root))]
        if outside:
            raise ValueError(f"{outside[0]} is not inside the class folder {root} the gradebook was graded from")
    submissions, skipped, seen = [], [], set()
    for path in named:
        key = os.path.abspath(path)
        if key in seen or _in_package(path):
            continue
        seen.add(key)
        relative = Path(os.path.relpath(os.path.abspath(path), root)).as_posix()
        student, assignment = identity(path, relative)
        found = Found(path, relative, student, assignment, read_timestamp(path.parent))
        error = refusal(path)
        if error:
            submissions.append(replace(found, error=error))
            continue
        kind = notebook_kind(path, kernels) if path.suffix == ".ipynb" else None
        if kind:
            reason = skip_reason(kind)
            skipped.append(replace(found, skip=reason["en"], skip_ru=reason["ru"]))
        else:
            submissions.append(found)
    return Discovery(submissions, skipped)
