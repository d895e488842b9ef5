"""Extract the code to grade from a submission (a notebook or a .py file).

Runs in the grader's process on hostile input, so it only reads: the file (size capped
before reading, see :mod:`autograder.grade.student_files`), the notebook's JSON, and cell
metadata. It never parses or rewrites student code; that happens inside the sandbox
(:mod:`autograder.grade.worker.cellexec`).

Notebooks: every code cell runs, in notebook order, except nbgrader test cells
(``grade`` without ``solution``) and the cells the notebook builder marks as
self-check, heavy lab or setup cells (``metadata["m5"]["role"]``). Helper cells are kept
whatever they contain, so a notebook without nbgrader metadata (a Colab or VS Code
export, cells copied into a fresh notebook) is graded by the kernels and ``exNN_``
answers its cells define. Stored outputs are ignored.

``.py`` files: one cell holding the whole file, decoded as Python decodes it (PEP 263
coding line, BOM); the sandbox runs it statement by statement.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grade.student_files import (
    MAX_NOTEBOOK_BYTES,
    MAX_PYTHON_BYTES,
    SubmissionError,
    as_mapping,
    read_bytes,
    source_text,
)
from autograder.grade.worker import cellexec

__all__ = ["Cell", "Submission", "SubmissionError", "cell_notes", "extract", "library_dirs", "STUDENT_LIBRARY_PARENT"]

CYRILLIC = re.compile("[а-яА-ЯёЁ]")
LATIN = re.compile("[A-Za-z]")
# Cells the grader never runs, by the role the notebook builder writes into their metadata:
# self-checks, the lab's heavy runs, and the setup cell that finds m5_student on the
# student's machine (under grading the library is on the path already).
SKIPPED_ROLES = frozenset({"selfcheck", "heavy", "setup"})
# The folder that holds the public student library m5_student (no secrets): read-only
# on the student process's sys.path, so `from m5_student.checks import check` works.
STUDENT_LIBRARY_PARENT = Path(__file__).resolve().parents[2] / "release" / "module05_en"


def library_dirs() -> list[Path]:
    """The folders to put on the student process's sys.path (``WorkerSession(import_dirs=)``):
    :data:`STUDENT_LIBRARY_PARENT` when this checkout has the built library, else none."""
    return [STUDENT_LIBRARY_PARENT] if (STUDENT_LIBRARY_PARENT / "m5_student" / "__init__.py").is_file() else []


CELL_ID_CHARS = re.compile(r"[^A-Za-z0-9_.-]")
MAX_CELL_ID = 64


@dataclass(frozen=True)
class Cell:
    id: str
    source: str
    kind: str = "cell"  # "cell" (a notebook cell) or "python" (a whole .py file)
    number: int = 0  # position in the notebook, counting every cell from 1 (0: a .py file)


@dataclass(frozen=True)
class Submission:
    path: Path
    cells: list[Cell]
    language: str  # "en" or "ru" (detected; --lang overrides)
    kind: str  # "notebook" or "python"
    # A notebook's JSON as read (its written answers are taken from it: the file is read once)
    notebook: dict | None = field(default=None, compare=False, repr=False)


COMMENT_LINE = re.compile(r"^[ \t]*#(.*)$", re.M)


def _detect_language(texts: list[str], declared: str | None) -> str:
    if declared in ("en", "ru"):
        return declared
    # Russian when the student's prose is substantially Cyrillic: an English notebook
    # that carries a few bilingual lines (ours do) stays English.
    cyrillic = sum(len(CYRILLIC.findall(t)) for t in texts)
    latin = sum(len(LATIN.findall(t)) for t in texts)
    return "ru" if cyrillic > 20 and cyrillic >= latin / 4 else "en"


def _cell_id(raw, number: int, taken: set[str]) -> str:
    """A short, unique, printable id: the nbgrader grade id or the notebook's cell id
    (student-controlled: other characters dropped), else ``cell-<number>``."""
    cell_id = CELL_ID_CHARS.sub("", raw if isinstance(raw, str) else "")[:MAX_CELL_ID] or f"cell-{number}"
    if cell_id in taken:
        cell_id = f"{cell_id}-{number}"
    taken.add(cell_id)
    return cell_id


def is_graded_cell(cell: dict) -> bool:
    """Whether the grader runs this notebook cell: a code cell that is neither an nbgrader
    test cell nor marked by the builder as a self-check or heavy lab cell."""
    if cell.get("cell_type") != "code":
        return False
    metadata = as_mapping(cell.get("metadata"))
    nbgrader = as_mapping(metadata.get("nbgrader"))
    if nbgrader.get("grade") and not nbgrader.get("solution"):
        return False  # an autograder test cell: never the student's code
    return as_mapping(metadata.get("m5")).get("role") not in SKIPPED_ROLES


def read_notebook(path: Path) -> dict:
    """The notebook at ``path`` as a JSON object with a list of cells, read safely
    (size-capped, no links); SubmissionError says in one line why it is not one."""
    try:
        nb = json.loads(read_bytes(path, MAX_NOTEBOOK_BYTES).decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise SubmissionError(f"{path}: cannot read the notebook ({exc})") from None
    except json.JSONDecodeError as exc:
        raise SubmissionError(f"{path}: not a valid notebook: invalid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise SubmissionError(f"{path}: not a valid notebook: nested too deeply") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise SubmissionError(f"{path}: not a valid notebook: no list of cells")
    return nb


def from_notebook(path: Path) -> Submission:
    nb = read_notebook(path)
    cells, texts, taken = [], [], set()
    for number, cell in enumerate(nb["cells"], start=1):
        if not isinstance(cell, dict):
            continue
        source = source_text(cell.get("source", ""))
        if cell.get("cell_type") == "markdown":
            texts.append(source)
        if not is_graded_cell(cell) or not source.strip():
            continue
        raw_id = as_mapping(as_mapping(cell.get("metadata")).get("nbgrader")).get("grade_id") or cell.get("id")
        cells.append(Cell(_cell_id(raw_id, number, taken), source, "cell", number))
    declared = as_mapping(as_mapping(nb.get("metadata")).get("m5")).get("lang")
    return Submission(path, cells, _detect_language(texts, declared), "notebook", nb)


def decode_python(data: bytes, path: Path) -> str:
    """Text of a .py file as Python reads it: a BOM or a PEP 263 coding line picks the
    encoding (UTF-8 otherwise); the BOM itself is dropped."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        raise SubmissionError(f"{path}: cannot read the file ({exc})") from None


def from_python(path: Path) -> Submission:
    source = decode_python(read_bytes(path, MAX_PYTHON_BYTES), path)
    cell = Cell(cellexec.PYTHON_FILE_ID, source, "python", 0)
    # The language is the one the student writes in: comment lines (a notebook exported
    # by nbconvert keeps its markdown as comments), not strings such as a bilingual error.
    comments = COMMENT_LINE.findall(source)
    return Submission(path, [cell], _detect_language(comments, None), "python")


def extract(path: Path, kernels=None) -> Submission:
    """The cells to run of the notebook or .py file at ``path``. ``kernels`` is accepted
    for the callers' convenience and not needed: every helper cell is kept."""
    path = Path(path)
    if path.suffix == ".ipynb":
        return from_notebook(path)
    if path.suffix == ".py":
        return from_python(path)
    raise SubmissionError(f"{path}: expected a .ipynb notebook or a .py file")


# ------------------------------------------------------------------ feedback on cells
LANGS = ("en", "ru")
WHERE = {
    "notebook": {"en": "cell {number} ({id})", "ru": "ячейка {number} ({id})"},
    "python": {"en": "the statement at line {line}", "ru": "инструкция в строке {line}"},
    "line": {"en": ", line {line}", "ru": ", строка {line}"},
}
CELL_FAILED = {
    "en": "{where} could not run: {error}. Only what it defines is missing; the rest is graded.",
    "ru": "{where} не выполнилась: {error}. Не хватает только того, что в ней определено; остальное проверяется.",
}
CELL_TIMED_OUT = {
    "cell": {"en": "it ran past the time limit of one cell{limit}", "ru": "превышен лимит времени на одну ячейку{limit}"},
    "python": {"en": "it ran past the time limit of one statement{limit}", "ru": "превышен лимит времени на одну инструкцию{limit}"},
}
TIME_LIMIT = {"en": " ({seconds:g} s)", "ru": " ({seconds:g} с)"}
# Why the worker stopped a cell or statement (its "reason"; worker.LEFT_OUT_REASONS).
# The subject is a cell or a statement: «ячейка» and «инструкция» are both feminine.
LEFT_OUT = {
    "stopped": {
        "en": "it stopped the grading process (an exit, a crash or too much memory)",
        "ru": "она остановила процесс проверки (выход, сбой или слишком много памяти)",
    },
    "protocol": {"en": "it disturbed the grading process's communication", "ru": "она нарушила обмен данными с процессом проверки"},
    "load_cap": {
        "en": "the cells ran past the time limit of all cells together",
        "ru": "ячейки исчерпали общий лимит времени на все ячейки",
    },
    "left_out_cap": {
        "en": "too many statements had stopped the grading process before it",
        "ru": "до неё слишком много инструкций остановили процесс проверки",
    },
    "idle": {
        "en": "it slept or waited instead of running, past the limit on time not running",
        "ru": "она спала или ждала вместо вычислений дольше допустимого времени простоя",
    },
}
IGNORED_PLACE = {"en": "cell {number}", "ru": "ячейка {number}"}
IGNORED = {
    "en": "Not run by the grader (environment, display and shell commands of the notebook): {items}.",
    "ru": "Не выполняются при проверке (команды окружения, отображения и оболочки ноутбука): {items}.",
}


def _where(cell: Cell | None, entry: dict, lang: str) -> str:
    line = entry.get("line") if isinstance(entry.get("line"), int) else None
    if cell is not None and cell.kind == "python":
        return WHERE["python"][lang].format(line=line if line is not None else "?")
    number = cell.number if cell is not None else "?"
    where = WHERE["notebook"][lang].format(number=number, id=entry.get("id"))
    return where + (WHERE["line"][lang].format(line=line) if line is not None else "")


def _why(cell: Cell | None, entry: dict, lang: str, cell_timeout: float | None) -> str:
    """Why a cell or statement failed: its exception as raised, or, where the grader
    stopped it, that in ``lang``."""
    if entry.get("timed_out"):
        limit = TIME_LIMIT[lang].format(seconds=cell_timeout) if cell_timeout else ""
        return CELL_TIMED_OUT["python" if cell is not None and cell.kind == "python" else "cell"][lang].format(limit=limit)
    if entry.get("reason") in LEFT_OUT:
        return LEFT_OUT[entry["reason"]][lang]
    return entry.get("error") or "?"


def cell_notes(sub: Submission, report_cells: list[dict], *, ignored: bool = True, cell_timeout: float | None = None) -> list[dict]:
    """Feedback notes ({"en", "ru"}) on the worker's load report: one per cell (or .py
    statement) that failed, naming the notebook's cell number and the line (and the
    time limit of one cell, ``cell_timeout``, where one ran past it), and (with
    ``ignored``) one listing the magics and shell escapes the grader did not run."""
    by_id = {cell.id: cell for cell in sub.cells}
    notes, skipped = [], []
    for entry in report_cells:
        cell = by_id.get(entry.get("id"))
        items = ", ".join(str(x) for x in entry.get("ignored") or [] if isinstance(x, str))
        if items and ignored:
            skipped.append((items, cell))
        if not entry.get("ok"):
            notes.append(
                {
                    lang: CELL_FAILED[lang].format(where=_where(cell, entry, lang), error=_why(cell, entry, lang, cell_timeout))
                    for lang in LANGS
                }
            )
    if skipped:
        notes.append(
            {
                lang: IGNORED[lang].format(
                    items="; ".join(
                        f"{items} ({IGNORED_PLACE[lang].format(number=cell.number) if cell and cell.kind == 'cell' else sub.path.name})"
                        for items, cell in skipped
                    )
                )
                for lang in LANGS
            }
        )
    return notes
