"""Extract the code to grade from a submission (a notebook or a .py file).

Notebooks: the student's answer cells (nbgrader ``solution`` cells) plus cells that
only import, define or assign constants (a setup cell with ``import numpy as np``).
Without nbgrader metadata, the cells that define a kernel function are taken. Test
cells, heavy lab cells and stored outputs are ignored. IPython magics and shell
escapes are commented out. Each cell stays separate, so a syntax error in one cell
costs only the kernels defined there.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.grade.files import MAX_NOTEBOOK_BYTES, MAX_PYTHON_BYTES, SubmissionError, read_bytes

__all__ = ["Cell", "Submission", "SubmissionError", "extract"]

CYRILLIC = re.compile("[а-яА-ЯёЁ]")


@dataclass(frozen=True)
class Cell:
    id: str
    source: str


@dataclass(frozen=True)
class Submission:
    path: Path
    cells: list[Cell]
    language: str          # "en" or "ru" (detected; --lang overrides)
    kind: str              # "notebook" or "python"


def _strip_magics(source: str) -> str:
    return "\n".join(f"# (removed) {line}" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())


def _is_setup_only(source: str) -> bool:
    """Imports, definitions and literal constants only: safe and cheap to run."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    allowed = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, allowed):
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and _is_literal(node.value):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring or a bare string
        return False
    return True


def _is_literal(node) -> bool:
    if node is None:
        return True
    try:
        ast.literal_eval(node)
        return True
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return isinstance(node, ast.UnaryOp) and _is_literal(node.operand)


def _defines(source: str, names: set[str]) -> bool:
    pattern = re.compile(r"^\s*def\s+(" + "|".join(map(re.escape, names)) + r")\s*\(", re.M)
    return bool(pattern.search(source))


ANSWER_ASSIGNMENT = re.compile(r"^ex\d{2}_\w+\s*=", re.M)


def _detect_language(texts: list[str], declared: str | None) -> str:
    if declared in ("en", "ru"):
        return declared
    cyrillic = sum(len(CYRILLIC.findall(t)) for t in texts)
    return "ru" if cyrillic > 20 else "en"


def _mapping(value) -> dict:
    """``value`` if it is a dict, else an empty one: notebook metadata is student-controlled
    JSON and may hold a list or a string where a dict belongs."""
    return value if isinstance(value, dict) else {}


def _text(source) -> str:
    """A cell's source as text: a string, or a list of pieces joined (non-strings as str)."""
    if isinstance(source, list):
        return "".join(piece if isinstance(piece, str) else str(piece) for piece in source)
    return source if isinstance(source, str) else str(source)


def from_notebook(path: Path, kernels: set[str]) -> Submission:
    try:
        nb = json.loads(read_bytes(path, MAX_NOTEBOOK_BYTES).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SubmissionError(f"{path}: cannot read the notebook ({exc})") from None
    except json.JSONDecodeError as exc:
        raise SubmissionError(f"{path}: not a valid notebook: invalid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise SubmissionError(f"{path}: not a valid notebook: no list of cells")
    nbgrader_seen = False
    cells, texts = [], []
    for index, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict):
            continue
        source = _text(cell.get("source", ""))
        if cell.get("cell_type") == "markdown":
            texts.append(source)
            continue
        if cell.get("cell_type") != "code":
            continue
        meta = _mapping(_mapping(cell.get("metadata")).get("nbgrader"))
        nbgrader_seen = nbgrader_seen or bool(meta)
        cell_id = str(meta.get("grade_id") or cell.get("id") or f"cell-{index}")
        if meta.get("grade") and not meta.get("solution"):
            continue  # an autograder test cell: never the student's code
        source = _strip_magics(source)
        wanted = meta.get("solution") or _defines(source, kernels) or ANSWER_ASSIGNMENT.search(source)
        if wanted or _is_setup_only(source):
            cells.append(Cell(cell_id, source))
    declared = _mapping(_mapping(nb.get("metadata")).get("m5")).get("lang")
    return Submission(path, cells, _detect_language(texts, declared), "notebook")


def from_python(path: Path) -> Submission:
    try:
        source = read_bytes(path, MAX_PYTHON_BYTES).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SubmissionError(f"{path}: cannot read the file ({exc})") from None
    try:
        ast.parse(source)
        chunks = [source]
    except SyntaxError:
        # Grade what parses: split at top-level statements so one broken function
        # costs only itself.
        chunks = re.split(r"\n(?=(?:def |class |import |from |@)\S)", source)
    cells = [Cell(f"chunk-{i}", chunk) for i, chunk in enumerate(chunks)]
    return Submission(path, cells, _detect_language([source], None), "python")


VALIDATION_SOURCE = Path(__file__).resolve().parents[2] / "reference_impl" / "validation.py"
_SUPPORT_TEMPLATE = """
def _m5_install_support(source):
    # The student notebooks import the input-check helpers as `from m5_student import
    # validation as v`; the grading sandbox cannot see the support library, so the
    # same module is built here from its source when it is not importable.
    import sys, types
    try:
        import m5_student.validation
        return
    except ImportError:
        pass
    package = sys.modules.get("m5_student") or types.ModuleType("m5_student")
    if not hasattr(package, "__path__"):
        package.__path__ = []
    module = types.ModuleType("m5_student.validation")
    exec(compile(source, "m5_student/validation.py", "exec"), module.__dict__)
    package.validation = module
    sys.modules["m5_student"] = package
    sys.modules["m5_student.validation"] = module


_m5_install_support({source!r})
del _m5_install_support
"""


def support_cell() -> Cell:
    """A first cell that makes ``m5_student.validation`` importable (sandbox included)."""
    return Cell("m5-support", _SUPPORT_TEMPLATE.format(source=VALIDATION_SOURCE.read_text(encoding="utf-8")))


def _with_support(sub: Submission) -> Submission:
    if not any("m5_student" in cell.source for cell in sub.cells):
        return sub
    return Submission(sub.path, [support_cell(), *sub.cells], sub.language, sub.kind)


def extract(path: Path, kernels: set[str]) -> Submission:
    path = Path(path)
    if path.suffix == ".ipynb":
        return _with_support(from_notebook(path, kernels))
    if path.suffix == ".py":
        return _with_support(from_python(path))
    raise SubmissionError(f"{path}: expected a .ipynb notebook or a .py file")
